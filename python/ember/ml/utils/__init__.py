"""Helpers of ``ember.ml`` (scikit-learn's ``sklearn.utils`` subset)."""

from __future__ import annotations

from ._bunch import Bunch
from ._resample import resample, shuffle
from .validation import (
    as_float_array,
    check_array,
    check_consistent_length,
    check_random_state,
    check_X_y,
    column_or_1d,
)

__all__ = [
    "Bunch",
    "as_float_array",
    "check_array",
    "check_consistent_length",
    "check_random_state",
    "check_X_y",
    "column_or_1d",
    "resample",
    "shuffle",
]

from . import class_weight  # noqa: E402

__all__ += ["class_weight"]
