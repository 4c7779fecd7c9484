"""``ember.ml``: scikit-learn's estimators on ember arrays (what RAPIDS cuML offers).

``from sklearn.cluster import KMeans`` becomes ``from ember.ml.cluster import KMeans``; module
paths, names, parameters, fitted attributes and errors follow scikit-learn. Estimators take
ember arrays (results stay on their device), NumPy arrays, lists and DataFrames (NumPy out).
"""

from __future__ import annotations

import importlib

__all__ = [
    "calibration",
    "tree",
    "svm",
    "manifold",
    "ensemble",
    "base",
    "clone",
    "cluster",
    "compose",
    "datasets",
    "decomposition",
    "discriminant_analysis",
    "exceptions",
    "feature_selection",
    "impute",
    "kernel_ridge",
    "linear_model",
    "metrics",
    "mixture",
    "model_selection",
    "multiclass",
    "multioutput",
    "naive_bayes",
    "neighbors",
    "pipeline",
    "preprocessing",
    "utils",
]

_SUBMODULES = {
    "calibration",
    "tree",
    "svm",
    "manifold",
    "ensemble",
    "base",
    "cluster",
    "compose",
    "datasets",
    "decomposition",
    "discriminant_analysis",
    "exceptions",
    "feature_selection",
    "impute",
    "kernel_ridge",
    "linear_model",
    "metrics",
    "mixture",
    "model_selection",
    "multiclass",
    "multioutput",
    "naive_bayes",
    "neighbors",
    "pipeline",
    "preprocessing",
    "utils",
}


def clone(estimator, *, safe=True):
    """A new unfitted estimator with the same parameters (``sklearn.base.clone``)."""
    from .base import clone as _clone

    return _clone(estimator, safe=safe)


def __getattr__(name):
    if name in _SUBMODULES:
        mod = importlib.import_module(f"{__name__}.{name}")
        globals()[name] = mod
        return mod
    raise AttributeError(f"module 'ember.ml' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | _SUBMODULES)
