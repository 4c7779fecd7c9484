"""``RidgeCV``: ridge regression with the penalty chosen by cross-validation.

The default (``cv=None``) is efficient leave-one-out, scikit-learn's generalised cross-validation:
one decomposition of the centred design on the device serves every alpha. With the hat matrix
``H(a) = B diag(w(a)) B^T`` the leave-one-out residual of sample i is
``(y_i - (H y)_i) / (1 - H_ii)``; ``B`` and ``w`` come from the thin SVD of X (``gcv_mode='svd'``:
``B = U``, ``w = s^2 / (s^2 + a)``), the eigendecomposition of X X^T (n <= p: ``B = Q``,
``w = l / (l + a)``) or of X^T X (p < n: ``B = X V``, ``w = 1 / (l + a)``). The unpenalised
intercept adds ``sw_i / sum(sw)`` to ``H_ii`` (the centred columns are orthogonal to the
sqrt-weight vector). The diagonals for all alphas are one matmul ``(B*B) @ W`` and the fitted
values one more, so every alpha costs a few matmuls and no further factorisation. As
scikit-learn, this runs in float64 and casts the results back to X's float dtype. With
``cv`` given, K-fold cross-validation fits the existing ``Ridge`` on each fold for each alpha
(scikit-learn's grid search; sample weights weigh the fits and the test scores) and refits the
best on all the data.
"""

from __future__ import annotations

from numbers import Real

import numpy as np

import ember

from ..base import RegressorMixin
from ..utils._param_validation import Interval, StrOptions
from ..utils.validation import (
    check_n_features,
    check_sample_weight,
    check_X_y,
    input_kind,
    to_output,
)
from ._base import LinearModel, preprocess_data
from ._ridge import Ridge

__all__ = ["RidgeCV"]

# Elements of one (n, targets, alphas) block of leave-one-out residuals held at a time.
_BLOCK = 1 << 24


class _Identity:
    """A fitted 'estimator' whose predictions are its input (scores given predictions)."""

    def predict(self, X):
        return X


def _check_alphas(alphas, strict):
    """The alphas as host floats; scikit-learn's checks (> 0 for leave-one-out, >= 0 else)."""
    if isinstance(alphas, (np.ndarray, list, tuple)):
        arr = np.asarray(alphas, dtype=object).reshape(-1)
        single = np.ndim(alphas) == 0 or arr.size == 1
        out = []
        for i, a in enumerate(arr):
            name = "alphas" if single else f"alphas[{i}]"
            if isinstance(a, bool) or not isinstance(a, (Real, np.number)):
                raise TypeError(f"{name} must be an instance of float, not {type(a).__name__}.")
            bound = "> 0.0" if strict else ">= 0.0"
            if (strict and not a > 0) or (not strict and not a >= 0):
                raise ValueError(f"{name} == {a}, must be {bound}.")
            out.append(float(a))
        if not out:
            raise ValueError("RidgeCV: alphas must not be empty")
        return np.asarray(out)
    return np.asarray([float(alphas)])


def _decompose(Xc, mode):
    """(B, lam, num, coef_map) with H(a) = B diag(num / (lam + a)) B^T and
    coef(a) = coef_map(per-column weights applied to B^T Y)."""
    n, p = Xc.shape
    if mode == "svd":
        U, s, Vt = ember.linalg.svd(Xc, full_matrices=False)
        lam = s * s

        def coef_map(G):  # G: (r, t) = (1 / (lam + a)) * U^T Y
            return Vt.T @ (s[:, None] * G)

        return U, lam, lam, coef_map
    if n <= p:
        lam, Q = ember.linalg.eigh(Xc @ Xc.T)

        def coef_map(G):  # dual coefficients Q G, then X^T
            return Xc.T @ (Q @ G)

        return Q, lam, lam, coef_map
    lam, V = ember.linalg.eigh(Xc.T @ Xc)
    B = Xc @ V

    def coef_map(G):
        return V @ G

    return B, lam, ember.ones_like(lam), coef_map


class RidgeCV(RegressorMixin, LinearModel):
    """Ridge regression choosing ``alpha`` by leave-one-out (default) or K-fold CV."""

    _parameter_constraints = {
        "alphas": ["array-like", Interval(Real, 0, None, closed="neither")],
        "fit_intercept": ["boolean"],
        "scoring": [str, callable, None],
        "cv": "no_validation",  # an int, a splitter or an iterable of splits (check_cv)
        "gcv_mode": [StrOptions({"auto", "svd", "eigen"}), None],
        "store_cv_results": ["boolean"],
        "alpha_per_target": ["boolean"],
    }

    def __init__(
        self,
        alphas=(0.1, 1.0, 10.0),
        *,
        fit_intercept=True,
        scoring=None,
        cv=None,
        gcv_mode=None,
        store_cv_results=False,
        alpha_per_target=False,
    ):
        self.alphas = alphas
        self.fit_intercept = fit_intercept
        self.scoring = scoring
        self.cv = cv
        self.gcv_mode = gcv_mode
        self.store_cv_results = store_cv_results
        self.alpha_per_target = alpha_per_target

    def fit(self, X, y, sample_weight=None):
        """Choose ``alpha_`` and fit ``coef_``/``intercept_`` with it."""
        self._validate_params()
        alphas = _check_alphas(self.alphas, strict=self.cv is None)
        from ..model_selection._validation import get_scorer

        scorer = None if self.scoring is None else get_scorer(self.scoring)
        for key in ("alpha_", "best_score_", "cv_results_"):
            self.__dict__.pop(key, None)
        if self.cv is None:
            self._fit_loo(X, y, sample_weight, alphas, scorer)
        else:
            if self.store_cv_results:
                raise ValueError("cv!=None and store_cv_results=True are incompatible")
            if self.alpha_per_target:
                raise ValueError("cv!=None and alpha_per_target=True are incompatible")
            self._fit_kfold(X, y, sample_weight, alphas, scorer)
        return self

    # ---- leave-one-out (generalised cross-validation) ----------------------------------------
    def _fit_loo(self, X, y, sample_weight, alphas, scorer):
        Xa, ya = check_X_y(X, y, estimator=self, y_numeric=True, multi_output=True)
        check_n_features(self, Xa, reset=True)
        kind = input_kind(X)
        out_dt = Xa.dtype
        f64 = ember.float64
        X64, y64 = Xa.astype(f64), ya.astype(f64)
        w = None if sample_weight is None else check_sample_weight(sample_weight, X64)
        Xc, yc, X_off, y_off = preprocess_data(X64, y64, self.fit_intercept, w)
        n = int(Xc.shape[0])
        Y = yc[:, None] if yc.ndim == 1 else yc
        t = int(Y.shape[1])
        mode = "svd" if self.gcv_mode == "svd" else "eigen"
        B, lam, num, coef_map = _decompose(Xc, mode)
        r = int(B.shape[1])
        BtY = B.T @ Y
        B2 = B * B
        dev = Xc.device
        lev0 = None
        if self.fit_intercept:  # the unpenalised intercept's share of the leverage
            sw = ember.ones((n,), dtype=f64, device=dev) if w is None else w.astype(f64)
            lev0 = sw / sw.sum()
        sqrt_sw = None if w is None else ember.sqrt(w.astype(f64))
        y_true = ya.astype(f64)
        per_target = self.alpha_per_target and t > 1
        A = len(alphas)
        scores = np.empty((t, A) if per_target else (A,))
        stored = [] if self.store_cv_results else None
        step = max(1, _BLOCK // max(n * t, 1))
        for lo in range(0, A, step):
            a = ember.asarray(alphas[lo : lo + step], dtype=f64, device=dev)
            m = int(a.shape[0])
            W = num[:, None] / (lam[:, None] + a[None, :])  # (r, m) hat weights
            H = B2 @ W  # (n, m) leverages
            if lev0 is not None:
                H = H + lev0[:, None]
            fitted = (B @ (W[:, None, :] * BtY[:, :, None]).reshape(r, t * m)).reshape(n, t, m)
            looe = (Y[:, :, None] - fitted) / (1.0 - H)[:, None, :]
            if scorer is None:
                sq = looe * looe
                if per_target:
                    scores[:, lo : lo + m] = -ember.asnumpy(sq.mean(axis=0))
                else:
                    scores[lo : lo + m] = -ember.asnumpy(sq.mean(axis=(0, 1)))
                block = sq
            else:
                pred = Y[:, :, None] - looe
                if sqrt_sw is not None:
                    pred = pred / sqrt_sw[:, None, None]
                pred = pred + (y_off if y_off.ndim == 0 else y_off[None, :, None])
                for j in range(m):
                    pj = pred[:, :, j]
                    if per_target:
                        for k in range(t):
                            scores[k, lo + j] = self._score(scorer, pj[:, k], y_true[:, k], w)
                    else:
                        pj = pj[:, 0] if y_true.ndim == 1 else pj
                        scores[lo + j] = self._score(scorer, pj, y_true, w)
                block = pred
            if stored is not None:
                stored.append(block)
        # First best alpha (scikit-learn keeps the earlier one on ties).
        if per_target:
            best = np.argmax(scores, axis=1)
            self.alpha_ = alphas[best].copy()
            self.best_score_ = scores[np.arange(t), best]
        else:
            best = np.full(t, int(np.argmax(scores)))
            self.alpha_ = float(alphas[best[0]])
            self.best_score_ = float(scores[best[0]])
        chosen = ember.asarray(alphas[best], dtype=f64, device=dev)  # one alpha per target
        coef = coef_map(BtY / (lam[:, None] + chosen[None, :]))  # (p, t)
        coef = coef.T if ya.ndim == 2 else coef[:, 0]
        inter = y_off - (coef @ X_off)
        self.coef_ = to_output(coef.astype(out_dt), kind)
        if inter.ndim == 0:
            self.intercept_ = float(inter)
        else:
            self.intercept_ = to_output(inter.astype(out_dt), kind)
        if stored is not None:
            res = ember.concatenate(stored, axis=2) if len(stored) > 1 else stored[0]
            if ya.ndim == 1:
                res = res[:, 0, :]
            self.cv_results_ = to_output(res.astype(out_dt), kind)

    @staticmethod
    def _score(scorer, pred, y_true, w):
        kw = {} if w is None else {"sample_weight": w}
        return float(scorer(_Identity(), pred, y_true, **kw))

    # ---- K-fold --------------------------------------------------------------------------------
    def _fit_kfold(self, X, y, sample_weight, alphas, scorer):
        from ..model_selection._split import _safe_index
        from ..model_selection._validation import check_cv

        Xa, ya = check_X_y(X, y, estimator=self, y_numeric=True, multi_output=True)
        check_n_features(self, Xa, reset=True)
        kind = input_kind(X)
        w = None if sample_weight is None else check_sample_weight(sample_weight, Xa)
        splitter = check_cv(self.cv, ya, classifier=False)
        folds = list(splitter.split(Xa, ya))
        means = []
        for a in alphas:
            fold_scores = []
            for train, test in folds:
                est = Ridge(alpha=float(a), fit_intercept=self.fit_intercept)
                est.fit(
                    _safe_index(Xa, train),
                    _safe_index(ya, train),
                    sample_weight=None if w is None else _safe_index(w, train),
                )
                Xt, yt = _safe_index(Xa, test), _safe_index(ya, test)
                # the test part's weights weigh its score too (scikit-learn's grid search)
                kw = {} if w is None else {"sample_weight": _safe_index(w, test)}
                s = est.score(Xt, yt, **kw) if scorer is None else scorer(est, Xt, yt, **kw)
                fold_scores.append(float(s))
            means.append(float(np.mean(fold_scores)))
        means = np.asarray(means)
        finite = np.where(np.isnan(means), -np.inf, means)
        best = int(np.argmax(finite))
        final = Ridge(alpha=float(alphas[best]), fit_intercept=self.fit_intercept)
        final.fit(Xa, ya, sample_weight=w)
        self.alpha_ = float(alphas[best])
        self.best_score_ = float(means[best])
        self.coef_ = to_output(final.coef_, kind)
        b = final.intercept_
        self.intercept_ = b if isinstance(b, float) else to_output(b, kind)
