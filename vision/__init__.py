"""Image in, dice reading out."""

from .reading import Die, Reading

__all__ = ["Die", "Reading"]
