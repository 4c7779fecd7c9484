"""TheilSenRegressor (scikit-learn's ``sklearn.linear_model``).

The subsets are chosen on the host exactly as scikit-learn chooses them (every combination when
there are at most ``max_subpopulation`` of them, else ``RandomState.choice`` without replacement
per subpopulation), so the estimate equals scikit-learn's. All least-squares fits run at once on
X's device: the (n_subpopulation, n_subsamples, n_features[+1]) stack of subset matrices goes
through one batched pseudo-inverse (minimum-norm solutions, as LAPACK's gelss). The spatial
median of the fitted weight vectors is found by the modified Weiszfeld iteration on the device;
one convergence flag is read back per step.
"""

from __future__ import annotations

import math
import warnings
from itertools import combinations
from numbers import Integral, Real

import numpy as np

import ember

from ..base import RegressorMixin
from ..exceptions import ConvergenceWarning
from ..model_selection._split import _np_rng
from ..utils._param_validation import Interval
from ..utils.validation import input_kind, to_device, to_output
from ._base import LinearModel, fit_xy

__all__ = ["TheilSenRegressor"]

_EPS = float(np.finfo(np.float64).eps)


def _weiszfeld_step(W, old):
    """One modified Weiszfeld step (Vardi and Zhang) from ``old`` towards the spatial median."""
    n = W.shape[0]
    diff = W - old[None, :]
    norm = ember.sqrt((diff * diff).sum(axis=1))
    keep = norm >= _EPS
    inv = ember.where(keep, 1.0 / ember.where(keep, norm, 1.0), 0.0)
    inside = (n - keep.astype(W.dtype).sum()) > 0  # old is one of the points
    q = ember.sqrt((((diff * inv[:, None]).sum(axis=0)) ** 2).sum())
    ok = q > _EPS
    total = inv.sum()
    total = ember.where(total > 0, total, 1.0)
    direction = ember.where(ok, (W * inv[:, None]).sum(axis=0) / total, 1.0)
    q = ember.where(ok, q, 1.0)
    r = inside.astype(W.dtype) / q
    return ember.maximum(1.0 - r, 0.0) * direction + ember.minimum(r, 1.0) * old


def _spatial_median(W, max_iter, tol):
    """(n_iter, spatial median of the rows of W) as scikit-learn's ``_spatial_median``."""
    if W.shape[1] == 1:
        return 1, ember.median(W.reshape(-1), keepdims=True)
    tol2 = tol * tol
    old = W.mean(axis=0)
    med = old
    n_iter = 0
    converged = False
    for it in range(max_iter):
        n_iter = it
        med = _weiszfeld_step(W, old)
        if float(((old - med) ** 2).sum()) < tol2:
            converged = True
            break
        old = med
    if not converged:
        warnings.warn(
            f"Maximum number of iterations {max_iter} reached in spatial median for TheilSen "
            "regressor.",
            ConvergenceWarning,
            stacklevel=3,
        )
    return n_iter, med


def _breakdown_point(n_samples, n_subsamples):
    return (
        1
        - (0.5 ** (1 / n_subsamples) * (n_samples - n_subsamples + 1) + n_subsamples - 1)
        / n_samples
    )


class TheilSenRegressor(RegressorMixin, LinearModel):
    """Theil-Sen estimator: the spatial median of least-squares fits on many subsets."""

    _multi_output = False
    _parameter_constraints = {
        "fit_intercept": ["boolean"],
        "max_subpopulation": [Interval(Real, 1, None, closed="left")],
        "n_subsamples": [None, Integral],
        "max_iter": [Interval(Integral, 0, None, closed="left")],
        "tol": [Interval(Real, 0.0, None, closed="left")],
        "random_state": ["random_state"],
        "n_jobs": [None, Integral],
        "verbose": [Integral, "boolean"],
    }

    def __init__(
        self,
        *,
        fit_intercept=True,
        max_subpopulation=1e4,
        n_subsamples=None,
        max_iter=300,
        tol=1.0e-3,
        random_state=None,
        n_jobs=None,
        verbose=False,
    ):
        self.fit_intercept = fit_intercept
        self.max_subpopulation = max_subpopulation
        self.n_subsamples = n_subsamples
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    def _check_subparams(self, n_samples, n_features):
        k = self.n_subsamples
        n_dim = n_features + 1 if self.fit_intercept else n_features
        who = type(self).__name__
        if k is not None:
            if k > n_samples:
                raise ValueError(
                    f"{who}: Invalid parameter since n_subsamples > n_samples ({k} > {n_samples})."
                )
            if n_samples >= n_features:
                if n_dim > k:
                    plus = "+1" if self.fit_intercept else ""
                    raise ValueError(
                        f"{who}: Invalid parameter since n_features{plus} > n_subsamples "
                        f"({n_dim} > {k})."
                    )
            elif k != n_samples:
                raise ValueError(
                    f"{who}: Invalid parameter since n_subsamples != n_samples ({k} != "
                    f"{n_samples}) while n_samples < n_features."
                )
        else:
            k = min(n_dim, n_samples)
        n_comb = math.comb(n_samples, k)
        all_comb = max(1.0, float(n_comb) if n_comb < 10**300 else math.inf)
        return k, int(min(self.max_subpopulation, all_comb)), all_comb

    def fit(self, X, y):
        """Fit the spatial median of the subset least-squares solutions."""
        self._validate_params()
        rs = _np_rng(self.random_state)
        Xa, ya, _ = fit_xy(self, X, y, None, multi_output=False)
        n, d = Xa.shape
        k, self.n_subpopulation_, all_comb = self._check_subparams(n, d)
        self.breakdown_ = _breakdown_point(n, k)
        if self.verbose:
            print(f"Breakdown point: {self.breakdown_}")
            print(f"Number of samples: {n}")
            print(f"Tolerable outliers: {int(self.breakdown_ * n)}")
            print(f"Number of subpopulations: {self.n_subpopulation_}")
        if all_comb <= self.max_subpopulation:
            idx = np.array(list(combinations(range(n), k)), dtype=np.int64).reshape(-1, k)
        else:
            idx = np.array(
                [rs.choice(n, size=k, replace=False) for _ in range(self.n_subpopulation_)],
                dtype=np.int64,
            ).reshape(-1, k)
        dev = Xa.device
        flat = to_device(idx.reshape(-1), dev)
        Xs = ember.take(Xa, flat, axis=0).reshape(idx.shape[0], k, d)
        ys = ember.take(ya, flat).reshape(idx.shape[0], k, 1)
        if self.fit_intercept:
            ones = ember.ones((idx.shape[0], k, 1), dtype=Xa.dtype, device=dev)
            Xs = ember.concatenate([ones, Xs], axis=2)
        # Minimum-norm least squares per subset; gelss's cut-off is machine precision.
        W = (ember.linalg.pinv(Xs, rtol=_EPS) @ ys)[:, :, 0]
        n_iter, coefs = _spatial_median(W, self.max_iter, self.tol)
        self.n_iter_ = int(n_iter)
        kind = input_kind(X)
        if self.fit_intercept:
            self.intercept_ = float(coefs[0])
            self.coef_ = to_output(coefs[1:], kind)
        else:
            self.intercept_ = 0.0
            self.coef_ = to_output(coefs, kind)
        return self
