"""Image in, dice reading out."""

from .annotate import annotate
from .reader import read_dice
from .reading import Die, Problem, Reading

__all__ = ["Die", "Problem", "Reading", "annotate", "read_dice"]
