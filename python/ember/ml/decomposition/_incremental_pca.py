"""``IncrementalPCA``: PCA from mini-batches (scikit-learn's incremental SVD update).

Each ``partial_fit`` updates the running mean and variance (Chan's pairwise formulas) and takes
the thin SVD of the previous ``singular_values_ * components_`` stacked over the centred batch
and a mean-correction row, all on the batch's device; signs follow ``svd_flip`` on the rows of
``components_``. Projection and the probabilistic-PCA methods are ``PCA``'s.
"""

from __future__ import annotations

import math
from numbers import Integral

import ember

from ..utils._param_validation import Interval
from ..utils.extmath import svd_flip
from ..utils.validation import check_array, check_n_features, input_kind, to_device, to_output
from ._pca import PCA

__all__ = ["IncrementalPCA"]


def _gen_batches(n, batch_size, min_batch_size=0):
    start = 0
    for _ in range(n // batch_size):
        end = start + batch_size
        if end + min_batch_size > n:
            continue
        yield slice(start, end)
        start = end
    if start < n:
        yield slice(start, n)


class IncrementalPCA(PCA):
    """Principal component analysis fitted batch by batch (``partial_fit``)."""

    _parameter_constraints = {
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
        "whiten": ["boolean"],
        "copy": ["boolean"],
        "batch_size": [Interval(Integral, 1, None, closed="left"), None],
    }

    def __init__(self, n_components=None, *, whiten=False, copy=True, batch_size=None):
        self.n_components = n_components
        self.whiten = whiten
        self.copy = copy
        self.batch_size = batch_size

    def fit(self, X, y=None):
        """Fit on X in batches of ``batch_size`` rows (5 * n_features by default)."""
        self._validate_params()
        Xa = check_array(X, estimator=self)
        n, d = Xa.shape
        for key in ("components_", "n_samples_seen_", "mean_", "var_"):
            self.__dict__.pop(key, None)
        self.batch_size_ = 5 * d if self.batch_size is None else self.batch_size
        kind = input_kind(X)
        for sl in _gen_batches(n, self.batch_size_, min_batch_size=self.n_components or 0):
            self._partial(Xa[sl], kind)
        return self

    def fit_transform(self, X, y=None):
        """Fit, then project X."""
        return self.fit(X).transform(X)

    def partial_fit(self, X, y=None, check_input=True):
        """Update the model with one batch X."""
        if not hasattr(self, "components_"):
            self._validate_params()
        Xa = check_array(X, estimator=self) if check_input else X
        if not hasattr(self, "batch_size_"):
            self.batch_size_ = 5 * Xa.shape[1] if self.batch_size is None else self.batch_size
        self._partial(Xa, input_kind(X))
        return self

    def _partial(self, X, kind):
        first = getattr(self, "components_", None) is None
        check_n_features(self, X, reset=first)
        n, d = X.shape
        k = self.n_components
        if k is None:
            k = min(n, d) if first else self.components_.shape[0]
        elif k > d:
            raise ValueError(
                f"n_components={k!r} invalid for n_features={d}, need more rows than columns "
                "for IncrementalPCA processing"
            )
        elif k > n:
            raise ValueError(
                f"n_components={k!r} must be less or equal to the batch number of samples {n}"
            )
        if not first and self.components_.shape[0] != k:
            raise ValueError(
                f"Number of input features has changed from {self.components_.shape[0]} to "
                f"{k} between calls to partial_fit! Try setting n_components to a fixed value."
            )
        dev = X.device
        seen = 0 if first else int(self.n_samples_seen_)
        batch_mean = X.mean(axis=0)
        D = X - batch_mean
        batch_var = (D * D).mean(axis=0)
        total = seen + n
        if seen == 0:
            mean, var = batch_mean, batch_var
            Z = D
        else:
            last_mean = to_device(self.mean_, dev).astype(X.dtype)
            last_var = to_device(self.var_, dev).astype(X.dtype)
            mean = (last_mean * seen + batch_mean * n) / total
            delta = last_mean - batch_mean
            var = (last_var * seen + batch_var * n + delta * delta * (seen * n / total)) / total
            corr = math.sqrt(seen / total * n) * delta
            S0 = to_device(self.singular_values_, dev).astype(X.dtype)
            C0 = to_device(self.components_, dev).astype(X.dtype)
            Z = ember.concatenate([S0[:, None] * C0, D, corr[None, :]], axis=0)
        U, S, Vt = ember.linalg.svd(Z, full_matrices=False)
        U, Vt = svd_flip(U, Vt, u_based_decision=False)
        ev = S * S / (total - 1)
        evr = S * S / (var * total).sum()
        self.n_samples_seen_ = total
        self.components_ = to_output(Vt[:k], kind)
        self.singular_values_ = to_output(S[:k], kind)
        self.mean_ = to_output(mean, kind)
        self.var_ = to_output(var, kind)
        self.explained_variance_ = to_output(ev[:k], kind)
        self.explained_variance_ratio_ = to_output(evr[:k], kind)
        if k not in (n, d) and ev.shape[0] > k:
            self.noise_variance_ = float(ev[k:].mean())
        else:
            self.noise_variance_ = 0.0
        self.n_components_ = k
        self._n_features_out = k
