"""Image in, dice reading out."""

from .annotate import annotate
from .reader import DiceReader, FrameTooSmall, default_reader, read_dice
from .reading import Die, Problem, ProblemKind, Reading
from .tray import Tray

__all__ = ["DiceReader", "Die", "FrameTooSmall", "Problem", "ProblemKind", "Reading", "Tray", "annotate",
           "default_reader", "read_dice"]
