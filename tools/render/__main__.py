"""python -m tools.render: render labelled scenes from seeds into a folder (see tools/render/__init__.py)."""

import sys

from .cli import main

sys.exit(main())
