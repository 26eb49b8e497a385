"""The table service: Flask app, tablet page, live updates, and the loop tying camera, vision and game."""
