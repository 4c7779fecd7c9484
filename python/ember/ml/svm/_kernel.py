"""Kernel support vector machines: ``SVC`` (one-vs-one pairs as libsvm) and ``SVR``.

The kernel matrix of the training set lives on the data's device (O(n^2) memory: this is a
dense solver for small and medium n) and the dual is solved by ``_qp.smo`` (libsvm's SMO).
The support-vector bookkeeping (which samples have non-zero alphas, the libsvm layout of
``dual_coef_``) is O(n) work done on an explicit host copy of the alphas; prediction is ember
matmuls on the device. A callable ``kernel`` is called with ember arrays (scikit-learn passes
NumPy arrays) and must return the Gram matrix. ``probability=True`` fits libsvm's Platt
scaling (``_platt.py``); ``shrinking`` and ``cache_size`` are accepted and ignored (the whole
kernel matrix is on the device).
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np

import ember

from ..base import BaseEstimator, ClassifierMixin, RegressorMixin
from ..exceptions import ConvergenceWarning, NotFittedError
from ..utils._labels import decode_labels, encode_labels
from ..utils._param_validation import Interval, StrOptions
from ..utils.validation import (
    check_array,
    check_classification_targets,
    check_is_fitted,
    check_n_features,
    check_sample_weight,
    check_X_y,
    input_kind,
    is_ember,
    to_device,
    to_output,
)
from ._platt import _MT32, coupled_probability, libsvm_seed, pair_probability
from ._qp import host_vector, kernel_matrix, smo

__all__ = ["SVC", "SVR"]  # (_BaseSVC and _BaseSVM are shared with _nu.py)


def _warn_max_iter(max_iter, n_iter):
    if max_iter >= 0 and any(it >= max_iter for it in n_iter):
        warnings.warn(
            f"Solver terminated early (max_iter={max_iter}).  Consider pre-processing your "
            "data with StandardScaler or MinMaxScaler.",
            ConvergenceWarning,
            stacklevel=3,
        )


class _BaseSVM(BaseEstimator):
    _parameter_constraints = {
        "kernel": [StrOptions({"linear", "poly", "rbf", "sigmoid", "precomputed"}), callable],
        "degree": [Interval(Integral, 0, None, closed="left")],
        "gamma": [StrOptions({"scale", "auto"}), Interval(Real, 0.0, None, closed="left")],
        "coef0": [Interval(Real, None, None, closed="neither")],
        "tol": [Interval(Real, 0.0, None, closed="neither")],
        "C": [Interval(Real, 0.0, None, closed="neither")],
        "shrinking": ["boolean"],
        "cache_size": [Interval(Real, 0, None, closed="neither")],
        "verbose": ["boolean", Interval(Integral, 0, None, closed="left")],
        "max_iter": [Interval(Integral, -1, None, closed="left")],
    }

    def _validate_fit_X(self, Xa):
        n, d = Xa.shape
        if self.kernel == "precomputed":
            if n != d:
                raise ValueError(
                    f"Precomputed matrix must be a square matrix. Input is a {n}x{d} matrix."
                )
            self._gamma = 0.0
            return
        g = self.gamma
        if g == "scale":
            var = float(Xa.var()) if Xa.size else 0.0
            self._gamma = 1.0 / (d * var) if var != 0 else 1.0
        elif g == "auto":
            self._gamma = 1.0 / d
        else:
            self._gamma = float(g)

    def _kern(self, A, B):
        return kernel_matrix(A, B, self.kernel, self._gamma, self.degree, self.coef0)

    def _test_kernel(self, X):
        """K(support vectors, X) (n_SV, m) on X's device."""
        check_is_fitted(self, "support_")
        Xa = check_array(X, estimator=self)
        check_n_features(self, Xa, reset=False)
        Xa = Xa.astype(ember.float64)
        if self.kernel == "precomputed":
            if Xa.shape[1] != self.shape_fit_[0]:
                raise ValueError(
                    f"X.shape[1] = {Xa.shape[1]} should be equal to {self.shape_fit_[0]}, the "
                    "number of samples at training time"
                )
            sup = to_device(self._support, Xa.device)
            return ember.take(Xa, sup, axis=1).T
        return self._kern(to_device(self._sv, Xa.device), Xa)

    def _set_support(self, Xa, support, kind):
        dev = Xa.device
        self._support = support.astype(np.int64)
        self.support_ = to_output(ember.asarray(support.astype(np.int32), device=dev), kind)
        if self.kernel == "precomputed":
            self._sv = ember.zeros((0, 0), dtype=ember.float64, device=dev)
        else:
            self._sv = ember.take(Xa, ember.asarray(self._support, device=dev), axis=0)
        self.support_vectors_ = to_output(self._sv, kind)


class _BaseSVC(ClassifierMixin, _BaseSVM):
    """One-vs-one kernel classifiers; subclasses give the binary solver and the bounds."""

    def _pair_bounds(self, sw, cw, yi):
        """Per-sample upper bounds of the dual variables (device vector)."""
        raise NotImplementedError  # pragma: no cover (abstract)

    def _solve_binary(self, K, ys, C):
        """(coef = y * alpha, rho, n_iter) of one binary problem (abstract)."""
        raise NotImplementedError  # pragma: no cover (abstract)

    def _check_pairs(self, counts):
        """Hook to reject infeasible problems before solving (per-class weight totals)."""

    def _check_proba(self):
        if self.probability == "deprecated" or not self.probability:
            raise AttributeError("predict_proba is not available when probability=False")
        return True

    @property
    def predict_proba(self):
        """Class probabilities (n, n_classes) by libsvm's Platt scaling and pair coupling."""
        self._check_proba()
        return self._predict_proba

    @property
    def predict_log_proba(self):
        """Logarithm of ``predict_proba``."""
        self._check_proba()
        return self._predict_log_proba

    def _proba(self, X):
        check_is_fitted(self, "support_")
        if self._probA.size == 0:
            raise NotFittedError(
                "predict_proba is not available when fitted with probability=False"
            )
        dec = self._ovo(X)
        return coupled_probability(
            dec, self._probA.tolist(), self._probB.tolist(), len(self._starts) - 1
        )

    def _predict_proba(self, X):
        return to_output(self._proba(X), input_kind(X))

    def _predict_log_proba(self, X):
        return to_output(ember.log(self._proba(X)), input_kind(X))

    @property
    def probA_(self):
        """Platt's A per pair of classes (empty without probability)."""
        check_is_fitted(self, "support_")
        return self._probA

    @property
    def probB_(self):
        """Platt's B per pair of classes (empty without probability)."""
        check_is_fitted(self, "support_")
        return self._probB

    def fit(self, X, y, sample_weight=None):
        """Solve one dual QP per pair of classes; sets ``support_``, ``dual_coef_``, ..."""
        from ..linear_model._logistic import compute_class_weight

        self._validate_params()
        Xa, ya = check_X_y(X, y, estimator=self)
        check_classification_targets(ya, type(self).__name__)
        check_n_features(self, Xa, reset=True)
        Xa = Xa.astype(ember.float64)
        dev = Xa.device
        kind = input_kind(X)
        classes, yi = encode_labels(ya, dev)
        ch = ember.asnumpy(classes) if is_ember(classes) else np.asarray(classes)
        k = len(ch)
        if k < 2:
            raise ValueError(f"The number of classes has to be greater than one; got {k} class")
        self._validate_fit_X(Xa)
        sw = check_sample_weight(sample_weight, Xa)
        # scikit-learn's libsvm classifiers balance by class counts (sample weights aside)
        cw = compute_class_weight(self.class_weight, classes=ch, y=ya)
        self.class_weight_ = np.asarray(cw, dtype=np.float64)
        Cv = self._pair_bounds(sw, cw, yi)
        K = Xa if self.kernel == "precomputed" else self._kern(Xa, Xa)
        yh = host_vector(yi)  # explicit host copy of the n class indices (bookkeeping)
        groups = [np.nonzero(yh == c)[0] for c in range(k)]
        self._check_pairs(
            [
                float(x)
                for x in ember.asnumpy(
                    ember.stack(
                        [ember.take(sw, ember.asarray(g, device=dev)).sum() for g in groups]
                    )
                )
            ]
        )
        proba = self.probability not in (False, "deprecated")
        gen = _MT32(libsvm_seed(self.random_state)) if proba else None
        n = Xa.shape[0]
        pairs = []
        nonzero = np.zeros(n, dtype=bool)
        n_iter = []
        probA, probB = [], []
        for a in range(k):
            for b in range(a + 1, k):
                idx = np.concatenate([groups[a], groups[b]])
                idx_d = ember.asarray(idx, device=dev)
                Ks = ember.take(ember.take(K, idx_d, axis=0), idx_d, axis=1)
                ys = ember.asarray(
                    np.r_[np.ones(len(groups[a])), -np.ones(len(groups[b]))], device=dev
                )
                Cs = ember.take(Cv, idx_d)
                if proba:
                    pa, pb = pair_probability(
                        lambda Kf, yf, Cf: self._solve_binary(Kf, yf, Cf)[:2], Ks, ys, Cs, gen
                    )
                    probA.append(pa)
                    probB.append(pb)
                coef_d, rho, it = self._solve_binary(Ks, ys, Cs)
                coef = host_vector(coef_d)
                nonzero[idx[coef != 0]] = True
                pairs.append((a, b, idx, coef, rho))
                n_iter.append(it)
        self._probA = np.asarray(probA, dtype=np.float64)
        self._probB = np.asarray(probB, dtype=np.float64)
        _warn_max_iter(self.max_iter, n_iter)
        support = np.concatenate([g[nonzero[g]] for g in groups])
        n_sup = np.asarray([int(nonzero[g].sum()) for g in groups], dtype=np.int32)
        col = np.full(n, -1)
        col[support] = np.arange(len(support))
        dual = np.zeros((k - 1, len(support)))
        rhos = np.zeros(len(pairs))
        for t, (a, b, idx, coef, rho) in enumerate(pairs):
            na = len(groups[a])
            for part, row in ((slice(0, na), b - 1), (slice(na, None), a)):
                m = coef[part] != 0
                dual[row, col[idx[part][m]]] = coef[part][m]
            rhos[t] = rho
        self._dual = ember.asarray(dual, device=dev)
        self._rho = ember.asarray(rhos, device=dev)
        self._starts = np.r_[0, np.cumsum(n_sup)]
        self._set_support(Xa, support, kind)
        sign = -1.0 if k == 2 else 1.0
        self.dual_coef_ = to_output(self._dual * sign, kind)
        self.intercept_ = to_output(self._rho * sign * -1.0, kind)
        self.classes_ = classes if kind == "ember" else ch
        self.n_support_ = n_sup
        self._n_support = n_sup
        self.fit_status_ = 0
        self.shape_fit_ = tuple(Xa.shape)
        self.n_iter_ = np.asarray(n_iter, dtype=np.int32)
        return self

    def _ovo(self, X):
        """libsvm decision values (m, n_pairs): positive favours the first class of the pair."""
        Kt = self._test_kernel(X)
        dual = to_device(self._dual, Kt.device)
        rho = to_device(self._rho, Kt.device)
        s = self._starts
        k = len(s) - 1
        cols = []
        t = 0
        for a in range(k):
            for b in range(a + 1, k):
                sa, sb = slice(s[a], s[a + 1]), slice(s[b], s[b + 1])
                cols.append(dual[b - 1, sa] @ Kt[sa] + dual[a, sb] @ Kt[sb] - rho[t])
                t += 1
        return ember.stack(cols, axis=1)

    @staticmethod
    def _ovr(dec, k):
        """scikit-learn's one-vs-rest shape of ovo values: votes + squashed confidences."""
        m = dec.shape[0]
        votes = [ember.zeros((m,), dtype=dec.dtype, device=dec.device) for _ in range(k)]
        conf = [ember.zeros((m,), dtype=dec.dtype, device=dec.device) for _ in range(k)]
        t = 0
        for a in range(k):
            for b in range(a + 1, k):
                d = dec[:, t]
                conf[a] = conf[a] + d
                conf[b] = conf[b] - d
                win = (d >= 0).astype(dec.dtype)
                votes[a] = votes[a] + win
                votes[b] = votes[b] + (1.0 - win)
                t += 1
        V = ember.stack(votes, axis=1)
        S = ember.stack(conf, axis=1)
        return V + S / (3.0 * (ember.abs(S) + 1.0))

    def decision_function(self, X):
        """(n,) for two classes; (n, n_classes) ('ovr') or (n, n_pairs) ('ovo') otherwise."""
        dec = self._ovo(X)
        k = len(self._starts) - 1
        if k == 2:
            out = -dec[:, 0]
        elif self.decision_function_shape == "ovr":
            out = self._ovr(dec, k)
        else:
            out = dec
        return to_output(out, input_kind(X))

    def predict(self, X):
        """Class labels: libsvm's one-vs-one vote (ties to the smaller class index)."""
        if self.break_ties and self.decision_function_shape == "ovo":
            raise ValueError("break_ties must be False when decision_function_shape is 'ovo'")
        dec = self._ovo(X)
        k = len(self._starts) - 1
        if k == 2:
            idx = (dec[:, 0] <= 0).astype(ember.int64)
        elif self.break_ties:
            idx = ember.argmax(self._ovr(dec, k), axis=1)
        else:
            votes = []
            m = dec.shape[0]
            votes = [ember.zeros((m,), dtype=ember.int64, device=dec.device) for _ in range(k)]
            t = 0
            for a in range(k):
                for b in range(a + 1, k):
                    win = (dec[:, t] > 0).astype(ember.int64)
                    votes[a] = votes[a] + win
                    votes[b] = votes[b] + (1 - win)
                    t += 1
            idx = ember.argmax(ember.stack(votes, axis=1), axis=1)
        return decode_labels(self.classes_, idx, input_kind(X))

    @property
    def coef_(self):
        """Primal weights per pair (linear kernel only)."""
        if self.kernel != "linear":
            raise AttributeError("coef_ is only available when using a linear kernel")
        check_is_fitted(self, "support_")
        s = self._starts
        k = len(s) - 1
        rows = []
        for a in range(k):
            for b in range(a + 1, k):
                sa, sb = slice(s[a], s[a + 1]), slice(s[b], s[b + 1])
                rows.append(self._dual[b - 1, sa] @ self._sv[sa] + self._dual[a, sb] @ self._sv[sb])
        W = ember.stack(rows, axis=0)
        if k == 2:
            W = -W
        return to_output(W, "ember" if is_ember(self.support_) else "numpy")


class SVC(_BaseSVC):
    """C-support vector classification (libsvm's SMO, one-vs-one for several classes)."""

    _parameter_constraints = {
        **_BaseSVM._parameter_constraints,
        "probability": ["boolean", StrOptions({"deprecated"})],
        "class_weight": [StrOptions({"balanced"}), dict, None],
        "decision_function_shape": [StrOptions({"ovr", "ovo"})],
        "break_ties": ["boolean"],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        *,
        C=1.0,
        kernel="rbf",
        degree=3,
        gamma="scale",
        coef0=0.0,
        shrinking=True,
        probability=False,
        tol=1e-3,
        cache_size=200,
        class_weight=None,
        verbose=False,
        max_iter=-1,
        decision_function_shape="ovr",
        break_ties=False,
        random_state=None,
    ):
        self.C = C
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.shrinking = shrinking
        self.probability = probability
        self.tol = tol
        self.cache_size = cache_size
        self.class_weight = class_weight
        self.verbose = verbose
        self.max_iter = max_iter
        self.decision_function_shape = decision_function_shape
        self.break_ties = break_ties
        self.random_state = random_state

    def _pair_bounds(self, sw, cw, yi):
        return sw * ember.take(ember.asarray(cw * self.C, device=sw.device), yi)

    def _solve_binary(self, K, ys, C):
        Q = ys[:, None] * ys[None, :] * K
        p = -ember.ones((K.shape[0],), dtype=ember.float64, device=K.device)
        alpha, rho, it = smo(Q, p, ys, C, tol=self.tol, max_iter=self.max_iter)
        return ys * alpha, rho, it


class SVR(RegressorMixin, _BaseSVM):
    """Epsilon-support vector regression (libsvm's 2n-variable dual, solved by SMO)."""

    _parameter_constraints = {
        **_BaseSVM._parameter_constraints,
        "epsilon": [Interval(Real, 0.0, None, closed="left")],
    }

    def __init__(
        self,
        *,
        kernel="rbf",
        degree=3,
        gamma="scale",
        coef0=0.0,
        tol=1e-3,
        C=1.0,
        epsilon=0.1,
        shrinking=True,
        cache_size=200,
        verbose=False,
        max_iter=-1,
    ):
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.tol = tol
        self.C = C
        self.epsilon = epsilon
        self.shrinking = shrinking
        self.cache_size = cache_size
        self.verbose = verbose
        self.max_iter = max_iter

    def fit(self, X, y, sample_weight=None):
        """Solve the epsilon-SVR dual; sets ``support_``, ``dual_coef_``, ``intercept_``."""
        self._validate_params()
        Xa, ya = check_X_y(X, y, estimator=self, y_numeric=True)
        check_n_features(self, Xa, reset=True)
        Xa = Xa.astype(ember.float64)
        ya = ya.astype(ember.float64)
        dev = Xa.device
        kind = input_kind(X)
        self._validate_fit_X(Xa)
        n = Xa.shape[0]
        sw = check_sample_weight(sample_weight, Xa)
        K = Xa if self.kernel == "precomputed" else self._kern(Xa, Xa)
        K2 = ember.concatenate(
            [ember.concatenate([K, -K], axis=1), ember.concatenate([-K, K], axis=1)], axis=0
        )
        y2 = ember.concatenate(
            [ember.ones((n,), dtype=ember.float64, device=dev), -ember.ones((n,), device=dev)]
        ).astype(ember.float64)
        p = ember.concatenate([self.epsilon - ya, self.epsilon + ya])
        Cv = self.C * sw
        alpha, rho, it = smo(
            K2, p, y2, ember.concatenate([Cv, Cv]), tol=self.tol, max_iter=self.max_iter
        )
        _warn_max_iter(self.max_iter, [it])
        coef = host_vector(alpha[:n] - alpha[n:])  # explicit host copy: n numbers
        support = np.nonzero(coef != 0)[0]
        self._set_support(Xa, support, kind)
        self._dual = ember.asarray(coef[support][None, :], device=dev)
        self._rho = ember.asarray(np.asarray([rho]), device=dev)
        self.dual_coef_ = to_output(self._dual, kind)
        self.intercept_ = to_output(-self._rho, kind)
        self.n_support_ = np.asarray([len(support)], dtype=np.int32)
        self._n_support = np.asarray([0, 0], dtype=np.int32)
        self.fit_status_ = 0
        self.shape_fit_ = tuple(Xa.shape)
        self.n_iter_ = it
        return self

    def predict(self, X):
        """sum_k dual_coef_k K(sv_k, x) + intercept_."""
        Kt = self._test_kernel(X)
        out = to_device(self._dual, Kt.device)[0] @ Kt - to_device(self._rho, Kt.device)[0]
        return to_output(out, input_kind(X))

    @property
    def coef_(self):
        """Primal weights (linear kernel only), shape (1, n_features)."""
        if self.kernel != "linear":
            raise AttributeError("coef_ is only available when using a linear kernel")
        check_is_fitted(self, "support_")
        return to_output(self._dual @ self._sv, "ember" if is_ember(self.support_) else "numpy")
