"""``ember.ml``: scikit-learn's estimators on ember arrays (what RAPIDS cuML offers).

``from sklearn.cluster import KMeans`` becomes ``from ember.ml.cluster import KMeans``; module
paths, names, parameters, fitted attributes and errors follow scikit-learn. Estimators take
ember arrays (results stay on their device), NumPy arrays, lists and DataFrames (NumPy out).
"""

from __future__ import annotations

import importlib

__all__ = [
    "set_config",
    "get_config",
    "config_context",
    "gaussian_process",
    "cross_decomposition",
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
    "dummy",
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
    "gaussian_process",
    "cross_decomposition",
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
    "dummy",
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


def set_config(transform_output=None, **kwargs):
    """scikit-learn's ``set_config`` (``transform_output``: "default", "pandas", "polars")."""
    from ._set_output import set_config as _set

    _set(transform_output=transform_output, **kwargs)


def get_config():
    """scikit-learn's ``get_config`` (the keys ember.ml reads)."""
    from ._set_output import get_config as _get

    return _get()


def config_context(**kwargs):
    """scikit-learn's ``config_context``: ``with config_context(transform_output="pandas"):``."""
    from ._set_output import config_context as _ctx

    return _ctx(**kwargs)


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
