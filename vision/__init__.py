"""Image in, dice reading out."""
