"""MiniBatchSparsePCA (scikit-learn's ``sklearn.decomposition``): online dictionary learning on
X.T (scikit-learn's ``MiniBatchDictionaryLearning``), then one lasso coding of all features.

The dictionary starts from scikit-learn's randomized SVD, replayed with the same NumPy
RandomState draws (Gaussian test matrix, LU-normalised power iterations, QR, SVD, sign flip) as
ember ops on X's device; the rows are shuffled with the same RandomState. Every mini-batch step
is a batched exact lasso (``_sparse_pca._lasso_gram``), the inner statistics A and B with
scikit-learn's forgetting factor, and the sequential atom update; the early stopping (small
dictionary change, or no improvement of the averaged batch cost) reads back two floats a step.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np

import ember

from ..model_selection._split import _np_rng
from ..utils._param_validation import Interval, StrOptions
from ..utils.extmath import svd_flip
from ..utils.validation import check_array, check_n_features, input_kind, to_device
from ._sparse_pca import _BaseSparsePCA, _lasso_gram, _update_dict

__all__ = ["MiniBatchSparsePCA"]


def _lu_pl(A):
    P, L, _ = ember.linalg.lu(A)
    return P @ L


def _randomized_svd(M, k, rs):
    """scikit-learn's ``randomized_svd(M, k, random_state=rs)`` with its default options."""
    n_random = k + 10
    n_iter = 7 if k < 0.1 * min(M.shape) else 4
    transpose = M.shape[0] < M.shape[1]
    if transpose:
        M = M.T
    Q = to_device(rs.normal(size=(M.shape[1], n_random)), M.device).astype(M.dtype)
    for _ in range(n_iter):  # n_iter >= 4: LU normalisation
        Q = _lu_pl(M @ Q)
        Q = _lu_pl(M.T @ Q)
    Q, _ = ember.linalg.qr(M @ Q)
    Uh, s, Vt = ember.linalg.svd(Q.T @ M, full_matrices=False)
    U = Q @ Uh
    U, Vt = svd_flip(U, Vt, u_based_decision=not transpose)
    if transpose:
        return Vt[:k].T, s[:k], U[:, :k].T
    return U[:, :k], s[:k], Vt[:k]


def _encode(Y, D, alpha):
    """Lasso codes (rows of Y against the atoms D) as scikit-learn's 'lasso_lars' coding."""
    k = D.shape[0]
    init = ember.zeros((k, Y.shape[0]), dtype=Y.dtype, device=Y.device)
    return _lasso_gram(D @ D.T, D @ Y.T, alpha, init).T + 0.0


class _Online:
    """State of scikit-learn's ``MiniBatchDictionaryLearning.fit`` on Y (rows = samples)."""

    def __init__(self, est, Y, k, rs):
        self.est, self.k, self.rs = est, k, rs
        n, d = Y.shape
        self.batch = min(est.batch_size, n)
        _, S, D = _randomized_svd(Y, k, rs)
        D = S[:, None] * D
        if k > D.shape[0]:
            pad = ember.zeros((k - D.shape[0], d), dtype=Y.dtype, device=Y.device)
            D = ember.concatenate([D, pad], axis=0)
        self.D = D[:k] + 0.0
        if est.shuffle:
            Y = ember.take(Y, to_device(rs.permutation(n), Y.device), axis=0)
        self.Y = Y
        self.A = ember.zeros((k, k), dtype=Y.dtype, device=Y.device)
        self.B = ember.zeros((d, k), dtype=Y.dtype, device=Y.device)
        self.ewa = self.ewa_min = None
        self.no_improvement = 0

    def step(self, Xb, i):
        bs = Xb.shape[0]
        alpha = float(self.est.alpha)
        code = _encode(Xb, self.D, alpha)
        R = Xb - code @ self.D
        cost = float(0.5 * (R * R).sum() + alpha * ember.abs(code).sum()) / bs
        theta = (i + 1) * bs if i < bs - 1 else bs**2 + i + 1 - bs
        beta = (theta + 1 - bs) / (theta + 1)
        self.A = self.A * beta + code.T @ code / bs
        self.B = self.B * beta + Xb.T @ code / bs
        self.D, _ = _update_dict(self.D, Xb, code, self.rs, A=self.A, B=self.B)
        return cost

    def converged(self, bs, cost, old, n, i):
        est = self.est
        if i + 1 <= min(100, n / bs):
            return False
        if self.ewa is None:
            self.ewa = cost
        else:
            a = min(bs / (n + 1), 1)
            self.ewa = self.ewa * (1 - a) + cost * a
        diff = float(ember.sqrt(((self.D - old) ** 2).sum())) / self.k
        if est.tol > 0 and diff <= est.tol:
            return True
        if self.ewa_min is None or self.ewa < self.ewa_min:
            self.no_improvement = 0
            self.ewa_min = self.ewa
        else:
            self.no_improvement += 1
        return est.max_no_improvement is not None and self.no_improvement >= (
            est.max_no_improvement
        )

    def run(self):
        n = self.Y.shape[0]
        per_iter = int(np.ceil(n / self.batch))
        n_steps = self.est.max_iter * per_iter
        starts = list(range(0, n, self.batch))
        i = -1
        old = self.D + 0.0
        for i in range(n_steps):
            s = starts[i % len(starts)]
            Xb = self.Y[s : s + self.batch]
            cost = self.step(Xb, i)
            if self.converged(Xb.shape[0], cost, old, n, i):
                break
            if self.est.callback is not None:
                self.est.callback(locals())
            old = self.D + 0.0
        return self.D, float(np.ceil((i + 1) / per_iter))  # a float, as scikit-learn's


class MiniBatchSparsePCA(_BaseSparsePCA):
    """Sparse principal components learned by online (mini-batch) dictionary learning."""

    _parameter_constraints = {
        "n_components": [None, Interval(Integral, 1, None, closed="left")],
        "alpha": [Interval(Real, 0.0, None, closed="left")],
        "ridge_alpha": [Interval(Real, 0.0, None, closed="left")],
        "max_iter": [Interval(Integral, 0, None, closed="left")],
        "tol": [Interval(Real, 0.0, None, closed="left")],
        "method": [StrOptions({"lars", "cd"})],
        "n_jobs": [Integral, None],
        "verbose": [Integral, "boolean"],
        "random_state": ["random_state"],
        "callback": [None, callable],
        "batch_size": [Interval(Integral, 1, None, closed="left")],
        "shuffle": ["boolean"],
        "max_no_improvement": [Interval(Integral, 0, None, closed="left"), None],
    }

    def __init__(
        self,
        n_components=None,
        *,
        alpha=1,
        ridge_alpha=0.01,
        max_iter=1000,
        callback=None,
        batch_size=3,
        verbose=False,
        shuffle=True,
        n_jobs=None,
        method="lars",
        random_state=None,
        tol=1e-3,
        max_no_improvement=10,
    ):
        self.n_components = n_components
        self.alpha = alpha
        self.ridge_alpha = ridge_alpha
        self.max_iter = max_iter
        self.callback = callback
        self.batch_size = batch_size
        self.verbose = verbose
        self.shuffle = shuffle
        self.n_jobs = n_jobs
        self.method = method
        self.random_state = random_state
        self.tol = tol
        self.max_no_improvement = max_no_improvement

    def fit(self, X, y=None):
        """Learn the sparse components of X by mini-batches of features."""
        self._validate_params()
        rs = _np_rng(self.random_state)
        Xa = check_array(X, estimator=self)
        check_n_features(self, Xa, reset=True)
        mean = Xa.mean(axis=0)
        Y = (Xa - mean).T + 0.0
        k = Xa.shape[1] if self.n_components is None else int(self.n_components)
        D, n_iter = _Online(self, Y, k, rs).run()
        self._set_components(_encode(Y, D, float(self.alpha)).T, mean, input_kind(X))
        self.n_iter_ = n_iter
        return self
