"""Argument checks of sort_values / sort_index (the sorting is keys.argsort_columns)."""

from __future__ import annotations


def check_sort_args(by, ascending, na_position, func):
    if na_position not in ("first", "last"):
        raise ValueError(f"ember.frame.{func}: invalid na_position: {na_position!r}")
    if isinstance(ascending, (list, tuple)):
        if len(ascending) != len(by):
            raise ValueError(
                f"ember.frame.{func}: Length of ascending ({len(ascending)}) != length of by "
                f"({len(by)})"
            )
        asc = list(ascending)
    else:
        asc = [ascending] * len(by)
    for a in asc:
        if not isinstance(a, (bool, int)) or a not in (0, 1):
            raise ValueError(
                f'ember.frame.{func}: For argument "ascending" expected type bool, '
                f"received type {type(a).__name__}."
            )
    return [bool(a) for a in asc]


def key_columns(series_list, key, func):
    """The columns to sort by: each Series, or ``key(Series)`` (a vectorized function returning
    a Series of the same length, e.g. ``lambda s: s.str.lower()``)."""
    if key is None:
        return [s._col for s in series_list]
    if not callable(key):
        raise TypeError(f"ember.frame.{func}: key must be callable, got {type(key).__name__}")
    out = []
    for s in series_list:
        r = key(s)
        col = getattr(r, "_col", None)
        if col is None or len(col) != len(s):
            raise ValueError(
                f"ember.frame.{func}: key must return a Series of the same length as its input"
            )
        out.append(col)
    return out
