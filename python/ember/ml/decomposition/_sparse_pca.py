"""SparsePCA (scikit-learn's ``sklearn.decomposition``): dictionary learning on X.T with a lasso
penalty on the components.

Each outer round of scikit-learn's ``dict_learning`` alternates a sparse coding step (one lasso
per feature against the current dictionary) and a block coordinate update of the dictionary
atoms. Here both are ember ops on X's device:

* The lassos share one Gram matrix G = D D^T (n_components x n_components), so all of them are
  solved at once: coordinate descent sweeps update one coefficient of every lasso per op, and
  the result is then polished on its active set (one batched solve of the masked normal
  equations, kept where the lasso optimality conditions hold). The solutions are therefore the
  exact lasso minimisers that scikit-learn's LARS ('lars') finds and that its coordinate
  descent ('cd', tol 1e-8) approaches, so components agree within solver tolerance.
* The dictionary update is scikit-learn's sequential atom update (matrix-vector ops per atom);
  atoms that fell out of use are re-drawn with NumPy's RandomState as scikit-learn draws them.

One float (the cost) is read back per outer round, one flag per coordinate-descent sweep.
"""

from __future__ import annotations

from numbers import Integral, Real

import ember

from ..base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from ..model_selection._split import _np_rng
from ..utils._param_validation import Interval, StrOptions
from ..utils.extmath import svd_flip
from ..utils.validation import (
    _host,
    check_array,
    check_is_fitted,
    check_n_features,
    input_kind,
    to_device,
    to_output,
)

__all__ = ["SparsePCA"]


def _soft(x, t):
    return ember.sign(x) * ember.maximum(ember.abs(x) - t, 0.0)


def _lasso_gram(G, C, alpha, W, max_sweeps=1000):
    """argmin_w 0.5 w'Gw - c'w + alpha |w|_1 for every column c of C (k x m), from W (k x m)."""
    k = G.shape[0]
    d = ember.diagonal(G)
    dsafe = ember.where(d > 0, d, 1.0)
    live = d > 0
    for _ in range(max_sweeps):
        old = W + 0.0
        for j in range(k):
            rho = C[j] - G[j] @ W + d[j] * W[j]
            W[j] = ember.where(live[j], _soft(rho, alpha) / dsafe[j], 0.0)
        scale = float(ember.abs(W).max()) if W.size else 0.0
        if float(ember.abs(W - old).max()) <= 1e-11 * max(scale, 1.0):
            break
    # Active-set polish: solve G_SS w_S = c_S - alpha sign(w_S) for every column at once.
    m = C.shape[1]
    M = (W != 0).T.astype(G.dtype)  # m x k
    s = ember.sign(W).T
    eye = ember.eye(k, dtype=G.dtype, device=G.device)
    A = G[None, :, :] * (M[:, :, None] * M[:, None, :]) + eye[None] * (1.0 - M)[:, None, :]
    rhs = M * (C.T - alpha * s)
    # pinv: an active set with dependent atoms has no unique solution; its column fails the
    # checks below and keeps the coordinate-descent result.
    P = (ember.linalg.pinv(A) @ rhs[:, :, None])[:, :, 0] * M  # m x k
    grad = C.T - P @ G  # c - G w for each column
    tol = 1e-9 * (alpha + 1.0)
    ok_active = ((ember.sign(P) == s) | (M == 0)).all(axis=1)
    ok_inactive = ((ember.abs(grad) <= alpha + tol) | (M == 1)).all(axis=1)
    ok = ok_active & ok_inactive & ember.isfinite(P).all(axis=1)
    return ember.where(ok[None, :], P.T, W) if m else W


def _update_dict(D, Y, code, rs, A=None, B=None):
    """Block coordinate update of the atoms (rows of D, k x n) for Y ~ code @ D, in place
    (A = code'code and B = Y'code unless given, as the online algorithm's statistics)."""
    n_rows, k = code.shape
    A = code.T @ code if A is None else A
    B = Y.T @ code if B is None else B
    diag = ember.asnumpy(ember.diagonal(A))
    for j in range(k):
        if diag[j] > 1e-6:
            D[j] = D[j] + (B[:, j] - A[j] @ D) / A[j, j]
        else:
            newd = Y[int(rs.choice(n_rows))]
            std = float(newd.std())
            noise = rs.normal(0, 0.01 * (std or 1), size=newd.shape[0])
            D[j] = newd + to_device(noise, D.device).astype(D.dtype)
            code[:, j] = 0.0
        nrm = ember.sqrt((D[j] * D[j]).sum())
        D[j] = D[j] / ember.maximum(nrm, 1.0)
    return D, code


def _dict_learning(Y, k, alpha, max_iter, tol, code, D, rs):
    """scikit-learn's ``dict_learning`` (lasso coding) on Y (rows = samples of the problem)."""
    if code is None or D is None:
        U, S, Vt = ember.linalg.svd(Y, full_matrices=False)
        U, Vt = svd_flip(U, Vt)
        code, D = U, S[:, None] * Vt
    r = D.shape[0]
    if k <= r:
        code, D = code[:, :k], D[:k, :]
    else:
        code = ember.concatenate(
            [code, ember.zeros((code.shape[0], k - r), dtype=Y.dtype, device=Y.device)], axis=1
        )
        D = ember.concatenate(
            [D, ember.zeros((k - r, D.shape[1]), dtype=Y.dtype, device=Y.device)], axis=0
        )
    code, D = code + 0.0, D + 0.0
    errors = []
    ii = -1
    for ii in range(max_iter):
        G = D @ D.T
        W = _lasso_gram(G, D @ Y.T, alpha, code.T + 0.0)
        code = W.T + 0.0
        D, code = _update_dict(D, Y, code, rs)
        R = Y - code @ D
        errors.append(float(0.5 * (R * R).sum() + alpha * ember.abs(code).sum()))
        if ii > 0 and errors[-2] - errors[-1] < tol * errors[-1]:
            break
    return code, D, errors, ii + 1


class _BaseSparsePCA(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """What SparsePCA and MiniBatchSparsePCA share: transform, inverse_transform, tags."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags

    def _set_components(self, comp, mean, kind):
        """Unit-norm rows of comp as ``components_`` (zero rows kept), with ``mean_``."""
        nrm = ember.sqrt((comp * comp).sum(axis=1))
        comp = comp / ember.where(nrm == 0, 1.0, nrm)[:, None]
        self.mean_ = to_output(mean, kind)
        self.components_ = to_output(comp, kind)
        self.n_components_ = int(comp.shape[0])
        self._n_features_out = self.n_components_

    def transform(self, X):
        """Least-squares projection (ridge ``ridge_alpha``) of X on the sparse components."""
        check_is_fitted(self, "components_")
        Xa = check_array(X, estimator=self)
        check_n_features(self, Xa, reset=False)
        C = to_device(self.components_, Xa.device)
        Xc = Xa.astype(C.dtype) - to_device(self.mean_, Xa.device)
        k = C.shape[0]
        G = C @ C.T + self.ridge_alpha * ember.eye(k, dtype=C.dtype, device=C.device)
        U = ember.linalg.solve(G, C @ Xc.T).T
        return to_output(U.astype(Xa.dtype), input_kind(X))

    def inverse_transform(self, X):
        """Back to the feature space: X @ components_ + mean_."""
        check_is_fitted(self, "components_")
        Xa = check_array(X, estimator=self)
        C = to_device(self.components_, Xa.device)
        out = Xa.astype(C.dtype) @ C + to_device(self.mean_, Xa.device)
        return to_output(out, input_kind(X))


class SparsePCA(_BaseSparsePCA):
    """Sparse principal components: the sparse code of the features in a learned dictionary."""

    _parameter_constraints = {
        "n_components": [None, Interval(Integral, 1, None, closed="left")],
        "alpha": [Interval(Real, 0.0, None, closed="left")],
        "ridge_alpha": [Interval(Real, 0.0, None, closed="left")],
        "max_iter": [Interval(Integral, 0, None, closed="left")],
        "tol": [Interval(Real, 0.0, None, closed="left")],
        "method": [StrOptions({"lars", "cd"})],
        "n_jobs": [Integral, None],
        "U_init": [None, "array-like"],
        "V_init": [None, "array-like"],
        "verbose": [Integral, "boolean"],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        n_components=None,
        *,
        alpha=1,
        ridge_alpha=0.01,
        max_iter=1000,
        tol=1e-8,
        method="lars",
        n_jobs=None,
        U_init=None,
        V_init=None,
        verbose=False,
        random_state=None,
    ):
        self.n_components = n_components
        self.alpha = alpha
        self.ridge_alpha = ridge_alpha
        self.max_iter = max_iter
        self.tol = tol
        self.method = method
        self.n_jobs = n_jobs
        self.U_init = U_init
        self.V_init = V_init
        self.verbose = verbose
        self.random_state = random_state

    def fit(self, X, y=None):
        """Learn the sparse components of X."""
        self._validate_params()
        rs = _np_rng(self.random_state)
        Xa = check_array(X, estimator=self)
        check_n_features(self, Xa, reset=True)
        dev = Xa.device
        mean = Xa.mean(axis=0)
        Xc = Xa - mean
        k = Xa.shape[1] if self.n_components is None else int(self.n_components)
        code0 = D0 = None
        if self.U_init is not None and self.V_init is not None:
            code0 = to_device(_host(self.V_init), dev).astype(Xa.dtype).T
            D0 = to_device(_host(self.U_init), dev).astype(Xa.dtype).T
        code, D, errors, n_iter = _dict_learning(
            Xc.T, k, float(self.alpha), self.max_iter, float(self.tol), code0, D0, rs
        )
        code, D = svd_flip(code, D)
        self._set_components(code.T, mean, input_kind(X))
        self.error_ = errors
        self.n_iter_ = int(n_iter)
        return self
