"""Image in, dice reading out."""

from .annotate import annotate
from .reader import read_dice
from .reading import Die, Reading

__all__ = ["Die", "Reading", "annotate", "read_dice"]
