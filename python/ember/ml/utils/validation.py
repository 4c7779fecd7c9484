"""Input checks and conversions shared by the estimators (scikit-learn's ``utils.validation``).

Inputs are ember arrays (kept on their device), NumPy arrays, lists and DataFrames (pandas or
anything with ``to_numpy``); host inputs are computed on ember's default device and the results
are handed back as NumPy (cuML's output-type rule: NumPy in, NumPy out; ember in, ember out).
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np

import ember

from ..exceptions import DataConversionWarning, NotFittedError, sklearn_compatible

__all__ = [
    "as_float_array",
    "check_array",
    "check_consistent_length",
    "check_is_fitted",
    "check_random_state",
    "check_X_y",
    "column_or_1d",
    "input_kind",
    "to_output",
]


def is_ember(x):
    return isinstance(x, ember.ndarray)


def is_ember_frame(x):
    """True for ``ember.frame`` DataFrames and Series (their columns live on a device)."""
    return type(x).__module__.startswith("ember.frame") and hasattr(type(x), "values")


def input_kind(x):
    """'ember' for an ember array or ember.frame object, else 'numpy' (the kind results are
    returned as)."""
    return "ember" if is_ember(x) or is_ember_frame(x) else "numpy"


def device_of(x):
    """The device computations on ``x`` run on: its own, or ember's default one for host data."""
    if is_ember_frame(x):
        x = _host(x)
    return x.device if is_ember(x) else ember.get_default_device()


def to_device(x, device):
    """``x`` as an ember array on ``device`` (no copy when it is already there)."""
    if is_ember(x) and str(x.device) == str(device):
        return x
    if is_ember(x):
        return ember.asarray(x, device=device)
    return ember.asarray(np.asarray(x), device=device)


def to_output(arr, kind):
    """Hand a result back as the caller's kind: NumPy for host inputs, ember otherwise."""
    if arr is None:
        return None
    if kind == "numpy":
        return ember.asnumpy(arr) if is_ember(arr) else np.asarray(arr)
    return arr


def _host(x):
    """NumPy view of a host container (lists, DataFrames, Series); ember arrays pass through."""
    if is_ember(x):
        return x
    if is_ember_frame(x):
        try:
            return x.values  # numeric columns: an ember array on the frame's device
        except TypeError:
            return x.to_numpy()  # strings/categories: the frame's explicit host copy
    if hasattr(x, "to_numpy") and not isinstance(x, np.ndarray):
        return x.to_numpy()
    return np.asarray(x)


def _float_dtype(dt):
    return dt if dt in (ember.float32, ember.float64) else ember.float64


def check_array(
    X,
    *,
    estimator=None,
    input_name="X",
    dtype="float",
    ensure_2d=True,
    allow_nd=False,
    ensure_all_finite=True,
    ensure_min_samples=1,
    ensure_min_features=1,
    device=None,
):
    """Validate ``X`` and return it as an ember array on ``device`` (default: its own)."""
    who = (
        estimator
        if isinstance(estimator, str)
        else (type(estimator).__name__ if estimator is not None else "check_array")
    )
    if hasattr(X, "nnz") and hasattr(X, "toarray"):
        raise TypeError(
            f"{who}: Sparse data was passed for {input_name}, but dense data is required. Use "
            "'.toarray()' to convert to a dense numpy array."
        )
    if estimator is not None and not isinstance(estimator, str):
        # Column names of a DataFrame, read by check_n_features (feature_names_in_).
        cols = getattr(X, "columns", None)
        names = None
        if cols is not None:
            names = np.asarray([c for c in cols], dtype=object)
            if not all(isinstance(c, str) for c in names):
                names = None
        # A re-validation of an already converted array keeps the names just recorded.
        if not (names is None and is_ember(X) and "_seen_feature_names" in estimator.__dict__):
            estimator.__dict__["_seen_feature_names"] = names
    h = _host(X)
    if not is_ember(h):
        if h.dtype.kind == "O":
            h = h.astype(np.float64)  # TypeError for non-numbers, as NumPy's
        if h.dtype.kind in "USV":
            if dtype is None:
                raise TypeError(f"{who}: {input_name} of dtype {h.dtype} is not numeric")
            try:
                h = h.astype(np.float64)
            except (TypeError, ValueError) as exc:
                raise ValueError(
                    f"{who}: could not convert {input_name} of dtype {h.dtype} to float: {exc}"
                ) from None
        if h.dtype.kind == "c":
            raise ValueError(f"{who}: Complex data not supported in {input_name}")
        if h.dtype == np.float16:
            h = h.astype(np.float32)
    dev = device if device is not None else device_of(X)
    A = to_device(h, dev)
    if dtype == "float":
        A = A.astype(_float_dtype(A.dtype)) if A.dtype not in (ember.float32, ember.float64) else A
    elif dtype is not None and dtype != "numeric":
        A = A.astype(dtype)
    if ensure_2d:
        if A.ndim == 0:
            raise ValueError(
                f"{who}: Expected 2D array, got scalar array instead: {input_name}={X!r}. "
                "Reshape your data either using array.reshape(-1, 1) if your data has a single "
                "feature or array.reshape(1, -1) if it contains a single sample."
            )
        if A.ndim == 1:
            raise ValueError(
                f"{who}: Expected 2D array, got 1D array instead: {input_name} of shape "
                f"{tuple(A.shape)}. Reshape your data either using array.reshape(-1, 1) if "
                "your data has a single feature or array.reshape(1, -1) if it contains a "
                "single sample."
            )
        if A.ndim > 2 and not allow_nd:
            raise ValueError(f"{who}: Found array with dim {A.ndim}. Expected <= 2.")
    if ensure_min_samples > 0 and A.ndim >= 1:
        n = A.shape[0]
        if n < ensure_min_samples:
            raise ValueError(
                f"Found array with {n} sample(s) (shape={tuple(A.shape)}) while a minimum of "
                f"{ensure_min_samples} is required by {who}."
            )
    if ensure_min_features > 0 and A.ndim == 2 and A.shape[1] < ensure_min_features:
        raise ValueError(
            f"Found array with {A.shape[1]} feature(s) (shape={tuple(A.shape)}) while a "
            f"minimum of {ensure_min_features} is required by {who}."
        )
    if ensure_all_finite and A.dtype in (ember.float32, ember.float64) and A.size:
        allow_nan = ensure_all_finite == "allow-nan"
        if not allow_nan and bool(ember.isnan(A).any()):
            raise ValueError(f"Input {input_name} contains NaN. ({who})")
        if bool(ember.isinf(A).any()):
            raise ValueError(
                f"Input {input_name} contains infinity or a value too large for "
                f"dtype('{A.dtype}'). ({who})"
            )
    return A


def column_or_1d(y, *, estimator=None, input_name="y", device=None, dtype=None, warn=False):
    """``y`` as a 1-D ember array (a single column is flattened)."""
    who = type(estimator).__name__ if estimator is not None else "column_or_1d"
    h = _host(y)
    shape = tuple(h.shape)
    if len(shape) == 2 and shape[1] == 1:
        if warn:
            warnings.warn(
                "A column-vector y was passed when a 1d array was expected. Please change the "
                "shape of y to (n_samples, ), for example using ravel().",
                sklearn_compatible(DataConversionWarning),
                stacklevel=3,
            )
        h = h.reshape(-1)
    elif len(shape) != 1:
        raise ValueError(
            f"{who}: {input_name} should be a 1d array, got an array of shape {shape} instead."
        )
    dev = device if device is not None else device_of(y)
    A = to_device(h, dev)
    if dtype is not None:
        A = A.astype(dtype)
    return A


def check_consistent_length(*arrays):
    """ValueError unless every non-None argument has the same first dimension."""
    lengths = [len(a) if not hasattr(a, "shape") else a.shape[0] for a in arrays if a is not None]
    if len(set(lengths)) > 1:
        raise ValueError(f"Found input variables with inconsistent numbers of samples: {lengths!r}")


def check_X_y(X, y, *, estimator=None, y_numeric=False, multi_output=False, **kw):
    """Validate ``X`` (2-D) and ``y`` (1-D, or 2-D when ``multi_output``) on X's device."""
    who = type(estimator).__name__ if estimator is not None else "check_X_y"
    if y is None:
        raise ValueError(f"{who} requires y to be passed, but the target y is None")
    Xa = check_array(X, estimator=estimator, **kw)
    hy = _host(y)
    if not is_ember(hy) and hy.dtype.kind == "O" and y_numeric:
        hy = hy.astype(np.float64)
    if is_ember(hy) or hy.dtype.kind not in "OUS":
        if multi_output and len(hy.shape) == 2:
            ya = to_device(hy, Xa.device)
        else:
            ya = column_or_1d(hy, estimator=estimator, device=Xa.device, warn=True)
        if y_numeric:
            ya = ya.astype(_float_dtype(ya.dtype))
        if ya.dtype in (ember.float32, ember.float64) and ya.size:
            if not bool(ember.isfinite(ya).all()):
                raise ValueError(f"Input y contains NaN or infinity. ({who})")
    else:
        if y_numeric:
            raise ValueError(f"{who}: y of dtype {hy.dtype} is not numeric")
        if hy.ndim == 2 and hy.shape[1] == 1:
            warnings.warn(
                "A column-vector y was passed when a 1d array was expected. Please change the "
                "shape of y to (n_samples, ), for example using ravel().",
                sklearn_compatible(DataConversionWarning),
                stacklevel=2,
            )
        ya = hy.reshape(-1) if hy.ndim == 2 and hy.shape[1] == 1 else hy
        if ya.ndim != 1:
            raise ValueError(f"{who}: y should be a 1d array, got shape {hy.shape} instead.")
    check_consistent_length(Xa, ya)
    return Xa, ya


def as_float_array(X, device=None):
    A = to_device(_host(X), device if device is not None else device_of(X))
    return A.astype(_float_dtype(A.dtype))


def check_random_state(seed, device=None):
    """An ember Generator from None, an int, a NumPy RandomState/Generator or a Generator."""
    if isinstance(seed, ember.random.Generator):
        return seed
    if seed is None:
        return ember.random.default_rng()
    if isinstance(seed, numbers.Integral):
        return ember.random.default_rng(int(seed))
    if isinstance(seed, np.random.RandomState):
        return ember.random.default_rng(int(seed.randint(0, 2**31 - 1)))
    if isinstance(seed, np.random.Generator):
        return ember.random.default_rng(int(seed.integers(0, 2**31 - 1)))
    raise ValueError(f"{seed!r} cannot be used to seed a random number generator")


def check_is_fitted(estimator, attributes=None):
    from ..base import check_is_fitted as _c

    _c(estimator, attributes)


def check_n_features(estimator, X, *, reset):
    """Record ``n_features_in_`` (``reset``) or check X against it."""
    n = X.shape[1] if X.ndim >= 2 else 1
    names = estimator.__dict__.pop("_seen_feature_names", None)
    who = type(estimator).__name__
    if reset:
        estimator.n_features_in_ = n
        if names is not None:
            estimator.feature_names_in_ = names
        else:
            estimator.__dict__.pop("feature_names_in_", None)
        return
    fitted = getattr(estimator, "feature_names_in_", None)
    if fitted is not None and names is None:
        warnings.warn(
            f"X does not have valid feature names, but {who} was fitted with feature names",
            UserWarning,
            stacklevel=3,
        )
    elif fitted is None and names is not None:
        warnings.warn(
            f"X has feature names, but {who} was fitted without feature names",
            UserWarning,
            stacklevel=3,
        )
    elif fitted is not None and (len(fitted) != len(names) or any(fitted != names)):
        raise ValueError(
            "The feature names should match those that were passed during fit.\n"
            f"Feature names seen at fit time: {list(fitted)!r}; given: {list(names)!r}"
        )
    expected = getattr(estimator, "n_features_in_", None)
    if expected is not None and n != expected:
        raise ValueError(
            f"X has {n} features, but {type(estimator).__name__} is expecting {expected} "
            "features as input."
        )


def check_sample_weight(sample_weight, X, dtype=None, *, estimator=None):
    """Sample weights as a 1-D ember array beside X (ones when None)."""
    n = X.shape[0]
    dt = dtype if dtype is not None else X.dtype
    if sample_weight is None:
        return ember.ones((n,), dtype=dt, device=X.device)
    if isinstance(sample_weight, numbers.Number):
        return ember.full((n,), sample_weight, dtype=dt, device=X.device)
    w = to_device(_host(sample_weight), X.device).astype(dt)
    if w.ndim != 1:
        raise ValueError("Sample weights must be 1D array or scalar")
    if w.shape[0] != n:
        raise ValueError(f"sample_weight.shape == {tuple(w.shape)}, expected ({n},)!")
    if n and not bool((w != 0).any()):
        raise ValueError("Sample weights must contain at least one non-zero number.")
    return w


def not_fitted(estimator):
    return sklearn_compatible(NotFittedError)(
        f"This {type(estimator).__name__} instance is not fitted yet. Call 'fit' with "
        "appropriate arguments before using this estimator."
    )


def check_classification_targets(y, who):
    """ValueError ('Unknown label type') for continuous targets given to a classifier."""
    if is_ember(y):
        if y.dtype in (ember.float32, ember.float64) and y.size:
            if not bool((y == ember.round(y)).all()):
                raise ValueError(
                    f"{who}: Unknown label type: continuous. Maybe you are trying to fit a "
                    "classifier, which expects discrete classes on a regression target with "
                    "continuous values."
                )
        return
    h = np.asarray(y)
    if h.dtype.kind == "f" and h.size and not np.all(h == np.round(h)):
        raise ValueError(
            f"{who}: Unknown label type: continuous. Maybe you are trying to fit a classifier, "
            "which expects discrete classes on a regression target with continuous values."
        )
    if h.dtype.kind == "O" and h.size:
        if not all(isinstance(v, (str, bytes, int, np.integer, bool)) for v in h.ravel()):
            if any(isinstance(v, float) and v != round(v) for v in h.ravel()):
                raise ValueError(f"{who}: Unknown label type: unknown")
