"""Photoreal training scenes: trays of dice rendered with Blender's Cycles, labelled from geometry.

    pip install -e '.[render]'
    python -m tools.render --out /tmp/renders --seed 1 --count 1

Planning, dice maths, projection, labels and the camera's processing need no Blender (plan, geometry,
labels, post); only tools/render/blender.py imports bpy. See docs/rendering.md.
"""
