"""scikit-learn's ``set_output``: a transformer's ``transform`` / ``fit_transform`` results as a
pandas (or polars) DataFrame whose columns are ``get_feature_names_out()`` and whose index is
the input DataFrame's, per estimator (``est.set_output(transform="pandas")``) or for all
(``ember.ml.set_config(transform_output="pandas")``; ``config_context``). "default" keeps
ember's rule (NumPy in, NumPy out; ember arrays stay on their device). A DataFrame container
is host data: asking for one is the explicit copy of a device result."""

from __future__ import annotations

import contextlib
import functools
import threading

import ember

_CONFIG = threading.local()
_CONTAINERS = ("default", "pandas", "polars")


def _global():
    return getattr(_CONFIG, "transform_output", "default")


def set_config(transform_output=None, **kwargs):
    """scikit-learn's ``set_config`` for what ember.ml reads: ``transform_output``. Other keys
    are accepted and ignored (assume_finite, working_memory, ... have no effect here)."""
    if transform_output is not None:
        if transform_output not in _CONTAINERS:
            raise ValueError(
                f"set_config: transform_output must be one of {_CONTAINERS}, got "
                f"{transform_output!r}"
            )
        _CONFIG.transform_output = transform_output


def get_config():
    """The settings ember.ml reads (scikit-learn's ``get_config`` keys)."""
    return {"transform_output": _global()}


@contextlib.contextmanager
def config_context(**kwargs):
    """``with config_context(transform_output="pandas"):`` for the block only."""
    old = _global()
    set_config(**kwargs)
    try:
        yield
    finally:
        _CONFIG.transform_output = old


def check_container(transform, who):
    if transform is not None and transform not in _CONTAINERS:
        raise ValueError(
            f"{who}.set_output: transform must be one of {_CONTAINERS} or None, got {transform!r}"
        )


def container_of(est):
    cfg = getattr(est, "_sklearn_output_config", None) or {}
    return cfg.get("transform") or _global()


def wrap(est, out, X):
    """`out` in the container the estimator's configuration asks for."""
    kind = container_of(est)
    if kind == "default" or out is None or isinstance(out, tuple):
        return out
    import numpy as np
    import pandas as pd

    if kind == "pandas" and isinstance(out, pd.DataFrame):
        return out
    try:
        cols = est.get_feature_names_out()
    except Exception:  # no names: positions, as scikit-learn's fallback
        cols = None
    if hasattr(out, "to_pandas") and not isinstance(out, np.ndarray):
        out = out.to_pandas()  # an ember.frame DataFrame
    if not isinstance(out, pd.DataFrame):
        a = np.asarray(ember.asnumpy(out)) if isinstance(out, ember.ndarray) else np.asarray(out)
        index = X.index if isinstance(X, pd.DataFrame) else None
        out = pd.DataFrame(a, columns=None if cols is None else list(cols), index=index)
    elif cols is not None and len(cols) == out.shape[1]:
        out.columns = list(cols)
    if kind == "polars":
        import polars as pl

        return pl.from_pandas(out)
    return out


def wrap_method(f):
    @functools.wraps(f)
    def wrapped(self, X, *args, **kwargs):
        return wrap(self, f(self, X, *args, **kwargs), X)

    wrapped._ember_set_output = True
    return wrapped
