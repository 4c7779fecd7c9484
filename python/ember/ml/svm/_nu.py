"""The nu formulations of libsvm: ``NuSVC``, ``NuSVR`` and ``OneClassSVM``.

``NuSVC`` and ``NuSVR`` solve their duals with ``_qp.smo_nu`` (libsvm's nu-solver: both
equality constraints, so the working pair shares its label), started from libsvm's feasible
point (the nu budget filled greedily in sample order, computed on the device as a clipped
``cumsum``). ``NuSVC`` rescales the solution by libsvm's ``r`` (so ``dual_coef_``/``intercept_``
are those of the equivalent C-SVC) and otherwise shares ``SVC``'s one-vs-one machinery,
probability estimates included. As scikit-learn's libsvm, the bounds of the nu problems are the
sample weights (``class_weight`` is validated and stored in ``class_weight_`` but does not
enter the nu problems), and a pair of classes whose weight totals make ``nu`` infeasible raises
``ValueError('specified nu is infeasible')``. ``OneClassSVM`` solves
``min 1/2 a'Ka``, ``0 <= a_i <= w_i``, ``sum a = nu * sum w`` with ``_qp.smo`` from the same
greedy start.
"""

from __future__ import annotations

from numbers import Real

import numpy as np

import ember

from ..base import RegressorMixin
from ..utils._param_validation import Interval, StrOptions
from ..utils.validation import (
    check_array,
    check_n_features,
    check_sample_weight,
    check_X_y,
    input_kind,
    is_ember,
    to_device,
    to_output,
)
from ._kernel import _BaseSVC, _BaseSVM, _warn_max_iter
from ._qp import host_vector, smo, smo_nu

__all__ = ["NuSVC", "NuSVR", "OneClassSVM"]

_NU = [Interval(Real, 0.0, 1.0, closed="right")]


def _greedy_fill(C, budget, mask=None):
    """libsvm's start: ``a_i = min(C_i, what is left of budget)`` in sample order."""
    Cm = C if mask is None else ember.where(mask, C, 0.0)
    before = ember.cumsum(Cm) - Cm
    return ember.clip(budget - before, 0.0, Cm)


class NuSVC(_BaseSVC):
    """Nu-support vector classification (libsvm's nu-SVC, one-vs-one for several classes)."""

    _parameter_constraints = {
        **{k: v for k, v in _BaseSVM._parameter_constraints.items() if k != "C"},
        "nu": _NU,
        "probability": ["boolean", StrOptions({"deprecated"})],
        "class_weight": [StrOptions({"balanced"}), dict, None],
        "decision_function_shape": [StrOptions({"ovr", "ovo"})],
        "break_ties": ["boolean"],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        *,
        nu=0.5,
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
        self.nu = nu
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
        return sw

    def _check_pairs(self, counts):
        for a in range(len(counts)):
            for b in range(a + 1, len(counts)):
                n1, n2 = counts[a], counts[b]
                if self.nu * (n1 + n2) / 2 > min(n1, n2):
                    raise ValueError("specified nu is infeasible")

    def _solve_binary(self, K, ys, C):
        pos = ys > 0
        half = float(C.sum()) * self.nu / 2.0
        alpha0 = _greedy_fill(C, half, pos) + _greedy_fill(C, half, ~pos)
        Q = ys[:, None] * ys[None, :] * K
        zeros = ember.zeros((K.shape[0],), dtype=ember.float64, device=K.device)
        alpha, rho, r, it = smo_nu(Q, zeros, ys, C, alpha0, tol=self.tol, max_iter=self.max_iter)
        return ys * alpha / r, rho / r, it


class _NuRegressorBase(_BaseSVM):
    def _finish(self, Xa, coef, rho, it, kind):
        dev = Xa.device
        support = np.nonzero(coef != 0)[0]
        self._set_support(Xa, support, kind)
        self._dual = ember.asarray(coef[support][None, :], device=dev)
        self._rho = ember.asarray(np.asarray([rho]), device=dev)
        self.dual_coef_ = to_output(self._dual, kind)
        self.intercept_ = to_output(-self._rho, kind)
        self._n_support = np.asarray([0, 0], dtype=np.int32)
        self.n_support_ = np.asarray([len(support)], dtype=np.int32)
        self.fit_status_ = 0
        self.shape_fit_ = tuple(Xa.shape)
        self.n_iter_ = it

    def _dec(self, X):
        Kt = self._test_kernel(X)
        return to_device(self._dual, Kt.device)[0] @ Kt - to_device(self._rho, Kt.device)[0]

    @property
    def coef_(self):
        """Primal weights (linear kernel only), shape (1, n_features)."""
        if self.kernel != "linear":
            raise AttributeError("coef_ is only available when using a linear kernel")
        from ..utils.validation import check_is_fitted

        check_is_fitted(self, "support_")
        return to_output(self._dual @ self._sv, "ember" if is_ember(self.support_) else "numpy")


class NuSVR(RegressorMixin, _NuRegressorBase):
    """Nu-support vector regression (libsvm's nu-SVR: ``nu`` bounds the fraction of errors
    and support vectors; the tube width is found by the solver)."""

    _parameter_constraints = {**_BaseSVM._parameter_constraints, "nu": _NU}

    def __init__(
        self,
        *,
        nu=0.5,
        C=1.0,
        kernel="rbf",
        degree=3,
        gamma="scale",
        coef0=0.0,
        shrinking=True,
        tol=1e-3,
        cache_size=200,
        verbose=False,
        max_iter=-1,
    ):
        self.nu = nu
        self.C = C
        self.kernel = kernel
        self.degree = degree
        self.gamma = gamma
        self.coef0 = coef0
        self.shrinking = shrinking
        self.tol = tol
        self.cache_size = cache_size
        self.verbose = verbose
        self.max_iter = max_iter

    def fit(self, X, y, sample_weight=None):
        """Solve the nu-SVR dual; sets ``support_``, ``dual_coef_``, ``intercept_``."""
        self._validate_params()
        Xa, ya = check_X_y(X, y, estimator=self, y_numeric=True)
        check_n_features(self, Xa, reset=True)
        Xa = Xa.astype(ember.float64)
        ya = ya.astype(ember.float64)
        dev = Xa.device
        self._validate_fit_X(Xa)
        n = Xa.shape[0]
        sw = check_sample_weight(sample_weight, Xa)
        K = Xa if self.kernel == "precomputed" else self._kern(Xa, Xa)
        K2 = ember.concatenate(
            [ember.concatenate([K, -K], axis=1), ember.concatenate([-K, K], axis=1)], axis=0
        )
        ones = ember.ones((n,), dtype=ember.float64, device=dev)
        y2 = ember.concatenate([ones, -ones])
        Cv = self.C * sw
        a0 = _greedy_fill(Cv, float(Cv.sum()) * self.nu / 2.0)
        alpha, rho, _, it = smo_nu(
            K2,
            ember.concatenate([-ya, ya]),
            y2,
            ember.concatenate([Cv, Cv]),
            ember.concatenate([a0, a0]),
            tol=self.tol,
            max_iter=self.max_iter,
        )
        _warn_max_iter(self.max_iter, [it])
        coef = host_vector(alpha[:n] - alpha[n:])  # explicit host copy: n numbers
        self._finish(Xa, coef, rho, it, input_kind(X))
        return self

    def predict(self, X):
        """sum_k dual_coef_k K(sv_k, x) + intercept_."""
        return to_output(self._dec(X), input_kind(X))


class OneClassSVM(_NuRegressorBase):
    """Unsupervised outlier detection (Schoelkopf's one-class SVM, libsvm's formulation)."""

    _estimator_type = "outlier_detector"

    _parameter_constraints = {
        **{k: v for k, v in _BaseSVM._parameter_constraints.items() if k != "C"},
        "nu": _NU,
    }

    def __init__(
        self,
        *,
        kernel="rbf",
        degree=3,
        gamma="scale",
        coef0=0.0,
        tol=1e-3,
        nu=0.5,
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
        self.nu = nu
        self.shrinking = shrinking
        self.cache_size = cache_size
        self.verbose = verbose
        self.max_iter = max_iter

    def fit(self, X, y=None, sample_weight=None):
        """Solve the one-class dual; sets ``support_``, ``dual_coef_``, ``offset_``."""
        self._validate_params()
        Xa = check_array(X, estimator=self)
        check_n_features(self, Xa, reset=True)
        Xa = Xa.astype(ember.float64)
        dev = Xa.device
        self._validate_fit_X(Xa)
        n = Xa.shape[0]
        sw = check_sample_weight(sample_weight, Xa)
        K = Xa if self.kernel == "precomputed" else self._kern(Xa, Xa)
        ones = ember.ones((n,), dtype=ember.float64, device=dev)
        a0 = _greedy_fill(sw, float(sw.sum()) * self.nu)
        alpha, rho, it = smo(
            K, ember.zeros((n,), dtype=ember.float64, device=dev), ones, sw,
            tol=self.tol, max_iter=self.max_iter, alpha0=a0,
        )  # fmt: skip
        _warn_max_iter(self.max_iter, [it])
        kind = input_kind(X)
        self._finish(Xa, host_vector(alpha), rho, it, kind)
        self.offset_ = to_output(self._rho, kind)
        return self

    def decision_function(self, X):
        """Signed distance to the boundary: positive for inliers (``score_samples - offset_``)."""
        return to_output(self._dec(X), input_kind(X))

    def score_samples(self, X):
        """Unshifted scoring function ``sum_k dual_coef_k K(sv_k, x)``."""
        d = self._dec(X)
        return to_output(d + to_device(self._rho, d.device)[0], input_kind(X))

    def predict(self, X):
        """+1 for inliers, -1 for outliers (libsvm: decision value > 0)."""
        d = self._dec(X)
        out = ember.where(d > 0, 1, -1).astype(ember.int64)
        return to_output(out, input_kind(X))

    def fit_predict(self, X, y=None, **kwargs):
        """Fit, then label the training data (+1 inlier, -1 outlier)."""
        return self.fit(X, **kwargs).predict(X)
