"""``LassoCV`` and ``ElasticNetCV``: the regularisation path by K-fold cross-validation.

scikit-learn's alpha grid: ``alpha_max = max|X_c^T y_c| / (n * l1_ratio)`` (centred, weighted
data, one grid per ``l1_ratio`` from all the data) then ``n_alphas`` log-spaced values down to
``eps * alpha_max``. Each training fold is centred on the device and its Gram statistics
(``X^T X``, ``X^T y``, ``y^T y``) are computed there once; the coordinate sweeps of
``_coordinate_descent`` then walk the path from the largest alpha down on the host copy of
those d^2 numbers, each alpha warm-started from the previous solution. The test residuals of
every alpha are one (n_test, d) x (d, n_alphas) matmul on the device. The best (l1_ratio,
alpha) is refitted on all the data with ``ElasticNet``/``Lasso``.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np

import ember

from ..base import RegressorMixin
from ..utils._param_validation import Interval, StrOptions
from ..utils.validation import (
    check_n_features,
    check_random_state,
    check_sample_weight,
    check_X_y,
    input_kind,
    to_output,
)
from ._base import LinearModel, preprocess_data
from ._coordinate_descent import ElasticNet, Lasso, _cd_gram

__all__ = ["ElasticNetCV", "LassoCV"]

_RES = float(np.finfo(np.float64).resolution)


def _alpha_grid(Xa, ya, w, l1_ratio, fit_intercept, eps, n_alphas, positive):
    if l1_ratio == 0:
        raise ValueError(
            "Automatic alpha grid generation is not supported for l1_ratio=0. Please supply a "
            "grid by providing your estimator with the appropriate `alphas=` argument."
        )
    if fit_intercept:
        if w is None:
            Xm, ym = Xa.mean(axis=0), ya.mean()
        else:
            Xm = (Xa * w[:, None]).sum(axis=0) / w.sum()
            ym = (ya * w).sum() / w.sum()
        yc = ya - ym
    else:
        yc = ya
    yw = yc if w is None else yc * w
    Xy = Xa.T @ yw
    if fit_intercept:
        Xy = Xy - Xm * yw.sum()
    n = Xa.shape[0] if w is None else float(w.sum())
    if positive:
        top = max(0.0, float(Xy.max()))
    else:
        top = float(ember.abs(Xy).max())
    alpha_max = top / (n * l1_ratio)
    if alpha_max <= _RES:
        return np.full(n_alphas, _RES)
    return np.geomspace(alpha_max, alpha_max * eps, num=n_alphas)


def _order_fn(selection, rng):
    if selection == "random":
        seed = int(ember.asnumpy(rng.integers(0, 2**31 - 1, size=1))[0])
        host_rng = np.random.default_rng(seed)
        return host_rng.permutation
    return range


class _LinearModelCV(RegressorMixin, LinearModel):
    _multi_output = False
    _common = {
        "eps": [Interval(Real, 0, None, closed="neither")],
        "alphas": [Interval(Integral, 1, None, closed="left"), "array-like"],
        "fit_intercept": ["boolean"],
        "precompute": [StrOptions({"auto"}), "array-like", "boolean"],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "copy_X": ["boolean"],
        "cv": "no_validation",
        "verbose": [Interval(Integral, 0, None, closed="left"), "boolean"],
        "n_jobs": [Integral, None],
        "positive": ["boolean"],
        "random_state": ["random_state"],
        "selection": [StrOptions({"cyclic", "random"})],
    }

    def _path_mse(self, Xa, ya, w, train, test, l1_ratio, alphas, order):
        """Test MSE of every alpha of the path fitted on ``train`` (host vector)."""
        from ..model_selection._split import _safe_index

        Xtr, ytr = _safe_index(Xa, train), _safe_index(ya, train)
        Xte, yte = _safe_index(Xa, test), _safe_index(ya, test)
        wtr = wte = None
        n = Xtr.shape[0]
        if w is not None:
            wtr, wte = _safe_index(w, train), _safe_index(w, test)
            wtr = wtr * (n / float(wtr.sum()))
        Xc, yc, X_off, y_off = preprocess_data(Xtr, ytr, self.fit_intercept, wtr)
        # Gram statistics on the device; their explicit host copy drives the sweeps.
        G = ember.asnumpy(Xc.T @ Xc).astype(np.float64)
        b = ember.asnumpy(Xc.T @ yc).astype(np.float64)
        yy = float((yc * yc).sum())
        coefs = np.zeros((len(alphas), Xa.shape[1]))
        c = None
        for i, a in enumerate(alphas):
            l1, l2 = a * l1_ratio * n, a * (1.0 - l1_ratio) * n
            c, _, _ = _cd_gram(
                G, b, yy, l1, l2, self.positive, self.max_iter, self.tol, order, c, True
            )
            coefs[i] = c
        C = ember.asarray(coefs.T, device=Xa.device).astype(Xa.dtype)  # (d, A)
        inter = y_off - X_off @ C
        R = Xte @ C + inter[None, :] - yte[:, None]
        R2 = R * R
        if wte is None:
            return ember.asnumpy(R2.mean(axis=0)).astype(np.float64)
        return ember.asnumpy((R2 * wte[:, None]).sum(axis=0) / wte.sum()).astype(np.float64)

    def fit(self, X, y, sample_weight=None):
        """Choose ``alpha_`` (and ``l1_ratio_``) by cross-validation, then refit."""
        self._validate_params()
        from ..model_selection._validation import check_cv

        yh = getattr(y, "shape", None)
        if yh is not None and len(yh) == 2 and yh[1] > 1:
            raise ValueError(f"For multi-task outputs, use MultiTask{type(self).__name__}")
        Xa, ya = check_X_y(X, y, estimator=self, y_numeric=True)
        ya = ya.astype(Xa.dtype)
        check_n_features(self, Xa, reset=True)
        kind = input_kind(X)
        w = None
        if sample_weight is not None and not isinstance(sample_weight, Real):
            w = check_sample_weight(sample_weight, Xa)
        l1_ratios = np.atleast_1d(np.asarray(getattr(self, "l1_ratio", 1.0), dtype=np.float64))
        if isinstance(self.alphas, Integral):
            grids = [
                _alpha_grid(Xa, ya, w, r, self.fit_intercept, self.eps, self.alphas, self.positive)
                for r in l1_ratios
            ]
        else:
            arr = np.asarray(self.alphas, dtype=object).reshape(-1)
            for i, a in enumerate(arr):
                if isinstance(a, bool) or not isinstance(a, (Real, np.number)):
                    raise TypeError(
                        f"alphas[{i}] must be an instance of float, not {type(a).__name__}."
                    )
                if not a >= 0:
                    raise ValueError(f"alphas[{i}] == {a}, must be >= 0.0.")
            base = np.sort(arr.astype(np.float64))[::-1]
            grids = [base.copy() for _ in l1_ratios]
        folds = list(check_cv(self.cv).split(Xa, ya))
        order = _order_fn(self.selection, check_random_state(self.random_state))
        mse = np.empty((len(l1_ratios), len(folds), len(grids[0])))
        for i, (r, grid) in enumerate(zip(l1_ratios, grids, strict=True)):
            for f, (train, test) in enumerate(folds):
                mse[i, f] = self._path_mse(Xa, ya, w, train, test, float(r), grid, order)
        mean = mse.mean(axis=1)
        best_mse = np.inf
        for r, grid, m in zip(l1_ratios, grids, mean, strict=True):
            j = int(np.argmin(m))
            if m[j] < best_mse:
                best_alpha, best_r, best_mse = float(grid[j]), float(r), m[j]
        self.mse_path_ = np.squeeze(np.moveaxis(mse, 2, 1))
        self.alpha_ = best_alpha
        if isinstance(self.alphas, Integral):
            self.alphas_ = np.asarray(grids)
            if len(l1_ratios) == 1:
                self.alphas_ = self.alphas_[0]
        else:
            self.alphas_ = np.asarray(grids[0])
        model = self._refit_model(best_alpha, best_r)
        model.fit(Xa, ya, sample_weight=w)
        if hasattr(self, "l1_ratio"):
            self.l1_ratio_ = best_r
        self.coef_ = to_output(model.coef_, kind)
        self.intercept_ = model.intercept_
        self.dual_gap_ = model.dual_gap_
        self.n_iter_ = model.n_iter_
        return self

    def _common_model_params(self):
        return {
            "fit_intercept": self.fit_intercept,
            "max_iter": self.max_iter,
            "tol": self.tol,
            "positive": self.positive,
            "random_state": self.random_state,
            "selection": self.selection,
        }


class LassoCV(_LinearModelCV):
    """Lasso with ``alpha`` chosen by K-fold cross-validation along the path."""

    _parameter_constraints = dict(_LinearModelCV._common)

    def __init__(
        self,
        *,
        eps=1e-3,
        alphas=100,
        fit_intercept=True,
        precompute="auto",
        max_iter=1000,
        tol=1e-4,
        copy_X=True,
        cv=None,
        verbose=False,
        n_jobs=None,
        positive=False,
        random_state=None,
        selection="cyclic",
    ):
        self.eps = eps
        self.alphas = alphas
        self.fit_intercept = fit_intercept
        self.precompute = precompute
        self.max_iter = max_iter
        self.tol = tol
        self.copy_X = copy_X
        self.cv = cv
        self.verbose = verbose
        self.n_jobs = n_jobs
        self.positive = positive
        self.random_state = random_state
        self.selection = selection

    def _refit_model(self, alpha, l1_ratio):
        return Lasso(alpha=alpha, **self._common_model_params())


class ElasticNetCV(_LinearModelCV):
    """ElasticNet with ``alpha`` and ``l1_ratio`` chosen by K-fold cross-validation."""

    _parameter_constraints = {
        **_LinearModelCV._common,
        "l1_ratio": [Interval(Real, 0, 1, closed="both"), "array-like"],
    }

    def __init__(
        self,
        *,
        l1_ratio=0.5,
        eps=1e-3,
        alphas=100,
        fit_intercept=True,
        precompute="auto",
        max_iter=1000,
        tol=1e-4,
        cv=None,
        copy_X=True,
        verbose=0,
        n_jobs=None,
        positive=False,
        random_state=None,
        selection="cyclic",
    ):
        self.l1_ratio = l1_ratio
        self.eps = eps
        self.alphas = alphas
        self.fit_intercept = fit_intercept
        self.precompute = precompute
        self.max_iter = max_iter
        self.tol = tol
        self.cv = cv
        self.copy_X = copy_X
        self.verbose = verbose
        self.n_jobs = n_jobs
        self.positive = positive
        self.random_state = random_state
        self.selection = selection

    def _refit_model(self, alpha, l1_ratio):
        return ElasticNet(alpha=alpha, l1_ratio=l1_ratio, **self._common_model_params())
