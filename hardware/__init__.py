"""Cameras, and the optional GPIO button and light."""
