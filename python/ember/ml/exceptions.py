"""Exceptions and warnings of ``ember.ml`` (scikit-learn's ``sklearn.exceptions``).

When scikit-learn is already imported, the errors and warnings ember raises are also instances
of scikit-learn's classes of the same name (``sklearn_compatible``), so scikit-learn's own
tooling (``estimator_checks``, ``GridSearchCV``) recognises them; ember never imports
scikit-learn itself.
"""

from __future__ import annotations

import sys

__all__ = [
    "ConvergenceWarning",
    "DataConversionWarning",
    "FitFailedWarning",
    "InvalidParameterError",
    "NotFittedError",
    "UndefinedMetricWarning",
    "sklearn_compatible",
]


class NotFittedError(ValueError, AttributeError):
    """Raised when an estimator is used before ``fit`` (a ValueError and an AttributeError)."""


class ConvergenceWarning(UserWarning):
    """Warned when an iterative solver stops at ``max_iter`` before reaching ``tol``."""


class DataConversionWarning(UserWarning):
    """Warned when input data is implicitly converted (e.g. a column-vector y)."""


class FitFailedWarning(RuntimeWarning):
    """Warned when fitting an estimator fails during a search (its score is ``error_score``)."""


class InvalidParameterError(ValueError, TypeError):
    """Raised when a constructor parameter has a wrong type or value (as scikit-learn's)."""


class UndefinedMetricWarning(UserWarning):
    """Warned when a metric is not defined for the given data (its result is 0 or nan)."""


_COMPAT: dict = {}


def sklearn_compatible(cls):
    """``cls``, or a subclass of it and scikit-learn's class of the same name when
    scikit-learn has been imported by the program."""
    if "sklearn" not in sys.modules:
        return cls
    if cls in _COMPAT:
        return _COMPAT[cls]
    try:
        import sklearn.exceptions as skexc

        other = getattr(skexc, cls.__name__, None)
        if cls is InvalidParameterError:
            from sklearn.utils._param_validation import InvalidParameterError as other
    except Exception:  # a broken or partial scikit-learn must not break ember
        other = None
    if other is None or issubclass(cls, other):
        _COMPAT[cls] = cls
    else:
        _COMPAT[cls] = type(cls.__name__, (cls, other), {"__module__": cls.__module__})
    return _COMPAT[cls]
