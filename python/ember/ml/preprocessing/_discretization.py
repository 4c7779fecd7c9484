"""``KBinsDiscretizer`` (scikit-learn's ``sklearn.preprocessing``): bin edges per feature from
ember reductions on X's device ('uniform': min/max, 'quantile': sorted columns, 'kmeans':
one-dimensional ``KMeans`` from a uniform-grid start); ``searchsorted`` assigns the bins."""

from __future__ import annotations

import numbers
import warnings

import numpy as np

import ember

from ..base import BaseEstimator, TransformerMixin
from ..utils._param_validation import Interval, Options, StrOptions
from ..utils.validation import (
    check_array,
    check_is_fitted,
    check_n_features,
    input_kind,
    is_ember,
    to_device,
    to_output,
)
from ._nonlinear import _subsample_rows

__all__ = ["KBinsDiscretizer"]

_METHODS = {
    "inverted_cdf",
    "averaged_inverted_cdf",
    "closest_observation",
    "interpolated_inverted_cdf",
    "hazen",
    "weibull",
    "linear",
    "median_unbiased",
    "normal_unbiased",
}


def _quantiles(col, probs, method):
    """Quantiles of a 1-D device column at host probabilities, NumPy's ``method``s."""
    if method in ("linear", "lower", "higher", "nearest", "midpoint"):
        return ember.quantile(col, probs.tolist(), method=method)
    s = ember.sort(col)
    n = int(s.shape[0])
    alpha_beta = {
        "hazen": (0.5, 0.5),
        "weibull": (0.0, 0.0),
        "median_unbiased": (1 / 3, 1 / 3),
        "normal_unbiased": (3 / 8, 3 / 8),
        "interpolated_inverted_cdf": (0.0, 1.0),
    }
    if method in alpha_beta:
        a, b = alpha_beta[method]
        v = n * probs + (a + probs * (1 - a - b)) - 1
        lo = np.floor(v)
        gamma = v - lo
    else:  # the discontinuous (inverted-CDF) family: one order statistic or a mean of two
        v = n * probs - (1.5 if method == "closest_observation" else 1.0)
        lo = np.floor(v)
        exact = (v - lo) == 0
        if method == "inverted_cdf":
            gamma = np.where(exact, 0.0, 1.0)
        elif method == "averaged_inverted_cdf":
            gamma = np.where(exact, 0.5, 1.0)
        else:
            gamma = np.where(exact & (lo % 2 == 1), 0.0, 1.0)
    i0 = np.clip(lo, 0, n - 1).astype(np.int64)
    i1 = np.clip(lo + 1, 0, n - 1).astype(np.int64)
    dev = col.device
    s0 = ember.take(s, to_device(i0, dev))
    s1 = ember.take(s, to_device(i1, dev))
    g = to_device(np.asarray(gamma, dtype=np.float64), dev).astype(s.dtype)
    return s0 + g * (s1 - s0)


class KBinsDiscretizer(TransformerMixin, BaseEstimator):
    """Bin continuous features into ``n_bins`` intervals ('onehot' gives a SciPy CSR matrix
    for host inputs as scikit-learn does, and a dense one-hot ember array for ember inputs)."""

    _parameter_constraints = {
        "n_bins": [Interval(numbers.Integral, 2, None, closed="left"), "array-like"],
        "encode": [StrOptions({"onehot", "onehot-dense", "ordinal"})],
        "strategy": [StrOptions({"uniform", "quantile", "kmeans"})],
        "quantile_method": [StrOptions(_METHODS | {"warn"})],
        "dtype": [Options(type, {np.float64, np.float32}), None],
        "subsample": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        n_bins=5,
        *,
        encode="onehot",
        strategy="quantile",
        quantile_method="averaged_inverted_cdf",
        dtype=None,
        subsample=200_000,
        random_state=None,
    ):
        self.n_bins = n_bins
        self.encode = encode
        self.strategy = strategy
        self.quantile_method = quantile_method
        self.dtype = dtype
        self.subsample = subsample
        self.random_state = random_state

    def _n_bins(self, d):
        if isinstance(self.n_bins, numbers.Integral):
            return np.full(d, self.n_bins, dtype=np.int64)
        nb = np.asarray(self.n_bins)
        if nb.ndim > 1 or nb.shape[0] != d:
            raise ValueError("n_bins must be a scalar or array of shape (n_features,).")
        bad = (nb < 2) | (nb != nb.astype(np.int64))
        if bad.any():
            raise ValueError(
                "KBinsDiscretizer received an invalid number of bins at indices "
                f"{', '.join(str(i) for i in np.flatnonzero(bad))}. Number of bins must be at "
                "least 2, and must be an int."
            )
        return nb.astype(np.int64)

    def fit(self, X, y=None, sample_weight=None):
        """Learn the bin edges of every feature."""
        self._validate_params()
        Xa = check_array(X, estimator=self)
        check_n_features(self, Xa, reset=True)
        if sample_weight is not None and self.strategy == "uniform":
            raise ValueError(
                "`sample_weight` was provided but it cannot be used with strategy='uniform'. "
                "Got strategy='uniform' instead."
            )
        d = int(Xa.shape[1])
        n_bins = self._n_bins(d)
        Xf = _subsample_rows(Xa, self.subsample, self.random_state).astype(ember.float64)
        sw = None
        if sample_weight is not None:
            from ..utils.validation import check_sample_weight

            sw = check_sample_weight(sample_weight, Xa, ember.float64)
        lo, hi = Xf.min(axis=0), Xf.max(axis=0)
        lo_h, hi_h = ember.asnumpy(lo), ember.asnumpy(hi)
        method = "linear" if self.quantile_method == "warn" else self.quantile_method
        edges = []
        for j in range(d):
            k = int(n_bins[j])
            if lo_h[j] == hi_h[j]:
                warnings.warn(
                    f"Feature {j} is constant and will be replaced with 0.",
                    UserWarning,
                    stacklevel=2,
                )
                n_bins[j] = 1
                edges.append(np.array([-np.inf, np.inf]))
                continue
            col = Xf[:, j]
            if self.strategy == "uniform":
                e = np.linspace(lo_h[j], hi_h[j], k + 1)
            elif self.strategy == "quantile":
                probs = np.linspace(0, 100, k + 1) / 100
                if sw is None:
                    e = ember.asnumpy(_quantiles(col, probs, method))
                else:
                    e = ember.asnumpy(_weighted_quantiles(col, sw, probs))
            else:
                from ..cluster import KMeans

                grid = np.linspace(lo_h[j], hi_h[j], k + 1)
                init = ((grid[1:] + grid[:-1]) * 0.5)[:, None]
                km = KMeans(n_clusters=k, init=init, n_init=1)
                km.fit(col[:, None], sample_weight=sw)
                centers = np.sort(ember.asnumpy(km.cluster_centers_)[:, 0])
                e = np.r_[lo_h[j], (centers[1:] + centers[:-1]) * 0.5, hi_h[j]]
            if self.strategy in ("quantile", "kmeans"):
                keep = np.ediff1d(e, to_begin=np.inf) > 1e-8
                e = e[keep]
                if len(e) - 1 != k:
                    warnings.warn(
                        f"Bins whose width are too small (i.e., <= 1e-8) in feature {j} are "
                        "removed. Consider decreasing the number of bins.",
                        UserWarning,
                        stacklevel=2,
                    )
                    n_bins[j] = len(e) - 1
            edges.append(np.asarray(e, dtype=np.float64))
        kind = input_kind(X)
        out = np.empty(d, dtype=object)
        for j, e in enumerate(edges):
            out[j] = to_output(ember.asarray(e, device=Xa.device), kind)
        self.bin_edges_ = out
        self.n_bins_ = n_bins
        return self

    def _out_dtype(self, Xa):
        if self.dtype is not None:
            return np.dtype(self.dtype).name
        return "float32" if Xa.dtype == ember.float32 else "float64"

    def transform(self, X):
        """Bin indices ('ordinal') or their one-hot encoding."""
        check_is_fitted(self, "bin_edges_")
        Xa = check_array(X, estimator=self)
        check_n_features(self, Xa, reset=False)
        dev = Xa.device
        cols = []
        for j in range(Xa.shape[1]):
            e = to_device(self.bin_edges_[j], dev).astype(ember.float64)
            inner = e[1:-1]
            x = Xa[:, j].astype(ember.float64)
            if inner.shape[0] == 0:
                b = ember.zeros(x.shape, dtype=ember.int64, device=dev)
            else:
                b = ember.searchsorted(inner, x, side="right").astype(ember.int64)
            cols.append(ember.clip(b, 0, int(self.n_bins_[j]) - 1))
        dt = self._out_dtype(Xa)
        kind = input_kind(X)
        if self.encode == "ordinal":
            return to_output(ember.stack(cols, axis=1).astype(dt), kind)
        blocks = [
            (b[:, None] == ember.arange(int(k), device=dev)[None, :]).astype(dt)
            for b, k in zip(cols, self.n_bins_, strict=True)
        ]
        dense = ember.concatenate(blocks, axis=1)
        if self.encode == "onehot" and kind == "numpy":
            from scipy.sparse import csr_matrix

            return csr_matrix(ember.asnumpy(dense))
        return to_output(dense, kind)

    def inverse_transform(self, X):
        """Bin centres of the bin indices (one-hot inputs decoded first)."""
        check_is_fitted(self, "bin_edges_")
        kind = input_kind(X)
        if hasattr(X, "toarray"):
            X = X.toarray()
        Xa = check_array(X, estimator=self, dtype=None)
        dev = Xa.device
        if self.encode != "ordinal":
            sizes = [int(k) for k in self.n_bins_]
            if Xa.shape[1] != sum(sizes):
                raise ValueError(
                    f"Incorrect number of features. Expecting {sum(sizes)}, received {Xa.shape[1]}."
                )
            idx, start = [], 0
            for k in sizes:
                idx.append(ember.argmax(Xa[:, start : start + k], axis=1))
                start += k
        else:
            if Xa.shape[1] != len(self.n_bins_):
                raise ValueError(
                    f"Incorrect number of features. Expecting {len(self.n_bins_)}, received "
                    f"{Xa.shape[1]}."
                )
            idx = [Xa[:, j].astype(ember.int64) for j in range(Xa.shape[1])]
        out = []
        for j, b in enumerate(idx):
            e = to_device(self.bin_edges_[j], dev).astype(ember.float64)
            centres = (e[1:] + e[:-1]) * 0.5
            out.append(ember.take(centres, ember.clip(b, 0, centres.shape[0] - 1)))
        res = ember.stack(out, axis=1)
        if is_ember(X) or kind == "ember":
            return res.astype(self._out_dtype(Xa))
        return to_output(res, kind)

    def get_feature_names_out(self, input_features=None):
        check_is_fitted(self, "bin_edges_")
        names = input_features
        if names is None:
            names = getattr(self, "feature_names_in_", None)
            if names is None:
                names = [f"x{i}" for i in range(self.n_features_in_)]
        if self.encode == "ordinal":
            return np.asarray([str(n) for n in names], dtype=object)
        return np.asarray(
            [f"{n}_{i}" for n, k in zip(names, self.n_bins_, strict=True) for i in range(int(k))],
            dtype=object,
        )


def _weighted_quantiles(col, w, probs):
    """Weighted quantiles (the inverted CDF of the weights' cumulative sum, averaged at
    exact hits), on the column's device."""
    order = ember.argsort(col)
    s = ember.take(col, order)
    cw = ember.cumsum(ember.take(w, order))
    total = cw[-1]
    targets = to_device(np.asarray(probs), col.device).astype(ember.float64) * total
    i = ember.clip(ember.searchsorted(cw, targets), 0, s.shape[0] - 1)
    return ember.take(s, i)
