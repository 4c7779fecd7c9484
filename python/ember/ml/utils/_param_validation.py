"""Constructor-parameter constraints, checked at ``fit`` (scikit-learn's ``_param_validation``).

A constraint is a type, ``None``, ``"boolean"``, ``"random_state"``, ``"array-like"``,
``callable``, an ``Interval`` or a ``StrOptions``; a parameter is valid when it satisfies one
of its constraints, and otherwise ``InvalidParameterError`` (a ValueError and TypeError) names
the parameter, the estimator and the value.
"""

from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np

from ..exceptions import InvalidParameterError, sklearn_compatible

__all__ = ["HasMethods", "Interval", "StrOptions", "Options", "validate_parameter_constraints"]


class Interval:
    """Numbers of ``type`` in [left, right] with ``closed`` in left/right/both/neither."""

    def __init__(self, type, left, right, *, closed):
        self.type = type
        self.left = left
        self.right = right
        self.closed = closed

    def is_satisfied_by(self, val):
        if isinstance(val, bool) or not isinstance(val, self.type):
            if not (self.type is Real and isinstance(val, (np.floating, np.integer))):
                if not (self.type is Integral and isinstance(val, np.integer)):
                    return False
        if isinstance(val, float) and math.isnan(val):
            return False
        lo_ok = (
            self.left is None
            or val > self.left
            or (val == self.left and self.closed in ("left", "both"))
        )
        hi_ok = (
            self.right is None
            or val < self.right
            or (val == self.right and self.closed in ("right", "both"))
        )
        return lo_ok and hi_ok

    def __str__(self):
        kind = "an int" if self.type is Integral else "a float"
        lb = "[" if self.closed in ("left", "both") else "("
        rb = "]" if self.closed in ("right", "both") else ")"
        lo = "-inf" if self.left is None else self.left
        hi = "inf" if self.right is None else self.right
        return f"{kind} in the range {lb}{lo}, {hi}{rb}"


class StrOptions:
    """One of a set of strings."""

    def __init__(self, options):
        self.options = set(options)

    def is_satisfied_by(self, val):
        return isinstance(val, str) and val in self.options

    def __str__(self):
        return f"a str among {sorted(self.options)!r}"


class Options:
    """One of a set of values of a type."""

    def __init__(self, type, options):
        self.type = type
        self.options = set(options)

    def is_satisfied_by(self, val):
        return isinstance(val, self.type) and val in self.options

    def __str__(self):
        return f"one of {sorted(self.options, key=repr)!r}"


class HasMethods:
    """Objects with all of the named methods (an estimator given as a parameter)."""

    def __init__(self, methods):
        self.methods = [methods] if isinstance(methods, str) else list(methods)

    def is_satisfied_by(self, val):
        return all(callable(getattr(val, m, None)) for m in self.methods)

    def __str__(self):
        names = [repr(m) for m in self.methods]
        text = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
        return f"an object implementing {text}"


def _satisfied(constraint, val):
    if constraint is None:
        return val is None
    if constraint == "boolean":
        return isinstance(val, (bool, np.bool_))
    if constraint == "random_state":
        return (
            val is None
            or (isinstance(val, (int, np.integer)) and not isinstance(val, bool) and 0 <= val)
            or isinstance(val, np.random.RandomState)
            or hasattr(val, "integers")
        )
    if constraint == "array-like":
        return not isinstance(val, (str, bytes)) and (
            hasattr(val, "__len__") or hasattr(val, "shape")
        )
    if constraint is callable:
        return callable(val)
    if isinstance(constraint, type):
        return isinstance(val, constraint) and not (
            constraint in (Integral, Real, int, float) and isinstance(val, bool)
        )
    return constraint.is_satisfied_by(val)


def _describe(constraint):
    if constraint is None:
        return "None"
    if constraint == "boolean":
        return "an instance of 'bool'"
    if constraint == "random_state":
        return "an int in the range [0, 4294967295], an instance of 'numpy.random.RandomState'"
    if constraint == "array-like":
        return "an array-like"
    if constraint is callable:
        return "a callable"
    if isinstance(constraint, type):
        return f"an instance of '{constraint.__name__}'"
    return str(constraint)


def validate_parameter_constraints(constraints, params, caller_name):
    """Raise ``InvalidParameterError`` for the first parameter that meets none of its rules."""
    for name, value in params.items():
        rules = constraints.get(name)
        if rules is None or rules == "no_validation":
            continue
        if any(_satisfied(c, value) for c in rules):
            continue
        descs = [_describe(c) for c in rules]
        text = descs[0] if len(descs) == 1 else ", ".join(descs[:-1]) + " or " + descs[-1]
        raise sklearn_compatible(InvalidParameterError)(
            f"The {name!r} parameter of {caller_name} must be {text}. Got {value!r} instead."
        )
