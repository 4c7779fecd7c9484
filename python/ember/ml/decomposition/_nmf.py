"""``NMF`` and ``non_negative_factorization`` (scikit-learn's ``sklearn.decomposition``).

X ~= W H with W, H >= 0, on X's device. Solvers:

- ``'cd'``: cyclic coordinate descent (Cichocki & Phan) on the Frobenius loss. Within one
  component's update the rows of W (columns of H) are independent of one another, so updating
  component t for all rows at once (``W[:, t] = max(W[:, t] - grad / HHt[t, t], 0)``) is exactly
  scikit-learn's sequential sweep; the k components stay sequential (a host loop of k device
  steps), the violation is one host scalar per iteration (the stopping rule).
- ``'mu'``: multiplicative updates for the beta-divergence (Frobenius, Kullback-Leibler,
  Itakura-Saito or any float beta), all matmuls and elementwise ops.

NNDSVD initialisations use the exact thin SVD (scikit-learn uses a randomized SVD that equals it
whenever ``n_components + 10 >= min(X.shape)``; the NNDSVD factors are sign invariant).
``'random'`` and ``'nndsvdar'`` draw from ember's generator (other numbers than NumPy's).
"""

from __future__ import annotations

import math
import warnings
from numbers import Integral, Real

import numpy as np

import ember

from ..base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from ..exceptions import ConvergenceWarning
from ..utils._param_validation import Interval, StrOptions, validate_parameter_constraints
from ..utils.validation import (
    check_array,
    check_is_fitted,
    check_n_features,
    check_random_state,
    input_kind,
    to_device,
    to_output,
)

__all__ = ["NMF", "non_negative_factorization"]

_EPS = float(np.finfo(np.float32).eps)
_EPS64 = float(np.finfo(np.float64).eps)


def _beta_to_float(beta_loss):
    m = {"frobenius": 2.0, "kullback-leibler": 1.0, "itakura-saito": 0.0}
    return m[beta_loss] if isinstance(beta_loss, str) else float(beta_loss)


def _check_non_negative(A, whom):
    if A.size and float(A.min()) < 0:
        raise ValueError(f"Negative values in data passed to {whom}")


def _beta_divergence(X, W, H, beta, square_root=False):
    """Beta-divergence of X and W @ H as a Python float (scikit-learn's definition)."""
    if beta == 2:
        R = X - W @ H
        res = float((R * R).sum()) / 2.0
        return math.sqrt(res * 2) if square_root else res
    WH = W @ H
    mask = X > _EPS
    Xm = ember.where(mask, X, 0.0)
    WHm = ember.maximum(WH, _EPS)
    safe_x = ember.where(mask, X, 1.0)
    if beta == 1:
        sum_wh = float((W.sum(axis=0) * H.sum(axis=1)).sum())
        res = float((Xm * ember.log(safe_x / WHm)).sum()) + sum_wh - float(Xm.sum())
    elif beta == 0:
        div = ember.where(mask, safe_x / WHm, 1.0)
        res = float(ember.where(mask, div, 0.0).sum()) - X.size - float(ember.log(div).sum())
    else:
        sum_wh_beta = float((WH**beta).sum())
        sum_x_wh = float((Xm * ember.where(mask, WHm, 1.0) ** (beta - 1)).sum())
        res = float((Xm**beta).sum()) - beta * sum_x_wh + sum_wh_beta * (beta - 1)
        res /= beta * (beta - 1)
    if square_root:
        return math.sqrt(2 * max(res, 0.0))
    return res


def _svd_init(X, k, init, rng, eps=1e-6):
    """NNDSVD factors (Boutsidis & Gallopoulos) of the thin SVD, on X's device."""
    U, S, Vt = ember.linalg.svd(X, full_matrices=False)
    U, S, V = U[:, :k], S[:k], Vt[:k]
    # Every pair (u_j, v_j) at once: the positive or negative parts, whichever norm product is
    # larger (the first pair: absolute values, its signs agree by the Perron-Frobenius rule).
    up, vp = ember.maximum(U, 0.0), ember.maximum(V, 0.0)
    un, vn = ember.maximum(-U, 0.0), ember.maximum(-V, 0.0)
    nup, nvp = ember.sqrt((up * up).sum(axis=0)), ember.sqrt((vp * vp).sum(axis=1))
    nun, nvn = ember.sqrt((un * un).sum(axis=0)), ember.sqrt((vn * vn).sum(axis=1))
    mp, mn = nup * nvp, nun * nvn
    pos = mp > mn
    nup, nvp = ember.where(nup == 0, 1.0, nup), ember.where(nvp == 0, 1.0, nvp)
    nun, nvn = ember.where(nun == 0, 1.0, nun), ember.where(nvn == 0, 1.0, nvn)
    u = ember.where(pos[None, :], up / nup[None, :], un / nun[None, :])
    v = ember.where(pos[:, None], vp / nvp[:, None], vn / nvn[:, None])
    lbd = ember.sqrt(S * ember.where(pos, mp, mn))
    W = lbd[None, :] * u
    H = lbd[:, None] * v
    s0 = math.sqrt(float(S[0]))
    W[:, 0] = s0 * ember.abs(U[:, 0])
    H[0] = s0 * ember.abs(V[0])
    W = ember.where(W < eps, 0.0, W).astype(X.dtype)
    H = ember.where(H < eps, 0.0, H).astype(X.dtype)
    if init == "nndsvda":
        avg = X.mean()
        W = ember.where(W == 0, avg, W)
        H = ember.where(H == 0, avg, H)
    elif init == "nndsvdar":
        avg = float(X.mean())
        rw = ember.abs(rng.standard_normal(W.shape, device=X.device)).astype(X.dtype) * avg / 100
        rh = ember.abs(rng.standard_normal(H.shape, device=X.device)).astype(X.dtype) * avg / 100
        W = ember.where(W == 0, rw, W)
        H = ember.where(H == 0, rh, H)
    return W, H


def _initialize(X, k, init, random_state):
    n, d = X.shape
    _check_non_negative(X, "NMF initialization")
    if init is not None and init != "random" and k > min(n, d):
        raise ValueError(
            f"init = '{init}' can only be used when n_components <= min(n_samples, n_features)"
        )
    if init is None:
        init = "nndsvda" if k <= min(n, d) else "random"
    rng = check_random_state(random_state)
    if init == "random":
        avg = math.sqrt(float(X.mean()) / k)
        H = ember.abs(rng.standard_normal((k, d), device=X.device)).astype(X.dtype) * avg
        W = ember.abs(rng.standard_normal((n, k), device=X.device)).astype(X.dtype) * avg
        return W, H
    return _svd_init(X, k, init, rng)


def _cd_sweep(A, G, B, l1, l2, order):
    """One coordinate-descent pass over the rows of A (k x m): minimises
    0.5 a^T G a - b^T a per column with a >= 0; returns the summed projected-gradient norm."""
    if l2:
        G = G + l2 * ember.eye(G.shape[0], dtype=G.dtype, device=G.device)
    if l1:
        B = B - l1
    viol = None
    for t in order:
        grad = G[t] @ A - B[t]
        row = A[t]
        pg = ember.where(row == 0, ember.minimum(grad, 0.0), grad)
        v = ember.abs(pg).sum()
        viol = v if viol is None else viol + v
        hess = G[t, t]
        step = ember.where(hess != 0, grad / ember.where(hess != 0, hess, 1.0), 0.0)
        A[t] = ember.where(hess != 0, ember.maximum(row - step, 0.0), row)
    return viol


def _fit_cd(X, W, H, tol, max_iter, regs, update_H, shuffle, random_state):
    l1w, l1h, l2w, l2h = regs
    k = H.shape[0]
    Wt = ember.ascontiguousarray(W.T)
    H = ember.ascontiguousarray(H)
    # Host permutations of k indices, NumPy's stream as scikit-learn draws it.
    if isinstance(random_state, np.random.RandomState):
        rng = random_state
    else:
        rng = np.random.RandomState(random_state if isinstance(random_state, Integral) else None)
    viol_init = None
    n_iter = 0
    for n_iter in range(1, max_iter + 1):  # noqa: B007  (read after the loop)
        order = rng.permutation(k) if shuffle else range(k)
        viol = _cd_sweep(Wt, H @ H.T, H @ X.T, l1w, l2w, [int(t) for t in order])
        if update_H:
            order = rng.permutation(k) if shuffle else range(k)
            viol = viol + _cd_sweep(H, Wt @ Wt.T, Wt @ X, l1h, l2h, [int(t) for t in order])
        viol = float(viol)
        if n_iter == 1:
            viol_init = viol
        if viol_init == 0 or viol / viol_init <= tol:
            break
    return ember.ascontiguousarray(Wt.T), H, n_iter


def _mu_ratio(X, W, H, beta):
    """X / (WH)^(2-beta) with scikit-learn's EPSILON guards (the non-Frobenius numerators)."""
    WH = W @ H
    if beta - 2.0 < 0:
        WHs = ember.maximum(WH, _EPS)
    else:
        WHs = WH
    if beta == 1:
        R = X / WHs
    elif beta == 0:
        R = X / (WHs * WHs)
    else:
        R = X * WHs ** (beta - 2)
    return R, (ember.maximum(WH, _EPS) if beta - 1.0 < 0 else WH)


def _mu_w(X, W, H, beta, l1, l2, gamma):
    if beta == 2:
        num = X @ H.T
        den = W @ (H @ H.T)
    else:
        R, WH = _mu_ratio(X, W, H, beta)
        num = R @ H.T
        if beta == 1:
            den = ember.broadcast_to(H.sum(axis=1)[None, :], W.shape)
        else:
            den = (WH ** (beta - 1)) @ H.T
    if l1 > 0:
        den = den + l1
    if l2 > 0:
        den = den + l2 * W
    den = ember.where(den == 0, _EPS, den)
    delta = num / den
    if gamma != 1:
        delta = delta**gamma
    return W * delta


def _mu_h(X, W, H, beta, l1, l2, gamma):
    if beta == 2:
        num = W.T @ X
        den = (W.T @ W) @ H
    else:
        R, WH = _mu_ratio(X, W, H, beta)
        num = W.T @ R
        if beta == 1:
            ws = W.sum(axis=0)
            ws = ember.where(ws == 0, 1.0, ws)
            den = ember.broadcast_to(ws[:, None], H.shape)
        else:
            den = W.T @ (WH ** (beta - 1))
    if l1 > 0:
        den = den + l1
    if l2 > 0:
        den = den + l2 * H
    den = ember.where(den == 0, _EPS, den)
    delta = num / den
    if gamma != 1:
        delta = delta**gamma
    return H * delta


def _fit_mu(X, W, H, beta, max_iter, tol, regs, update_H):
    l1w, l1h, l2w, l2h = regs
    gamma = 1.0 / (2.0 - beta) if beta < 1 else (1.0 / (beta - 1.0) if beta > 2 else 1.0)
    err0 = _beta_divergence(X, W, H, beta, square_root=True)
    prev = err0
    n_iter = 0
    for n_iter in range(1, max_iter + 1):  # noqa: B007  (read after the loop)
        W = _mu_w(X, W, H, beta, l1w, l2w, gamma)
        if beta < 1:
            W = ember.where(W < _EPS64, 0.0, W)
        if update_H:
            H = _mu_h(X, W, H, beta, l1h, l2h, gamma)
            if beta <= 1:
                H = ember.where(H < _EPS64, 0.0, H)
        if tol > 0 and n_iter % 10 == 0:
            err = _beta_divergence(X, W, H, beta, square_root=True)
            if (prev - err) / err0 < tol:
                break
            prev = err
    return W, H, n_iter


def _check_init(A, shape, whom, device):
    A = check_array(A, estimator=whom, device=device)
    if shape[0] != "auto" and A.shape[0] != shape[0]:
        raise ValueError(
            f"Array with wrong first dimension passed to {whom}. Expected {shape[0]}, "
            f"but got {A.shape[0]}."
        )
    if shape[1] != "auto" and A.shape[1] != shape[1]:
        raise ValueError(
            f"Array with wrong second dimension passed to {whom}. Expected {shape[1]}, "
            f"but got {A.shape[1]}."
        )
    _check_non_negative(A, whom)
    if float(A.max()) == 0:
        raise ValueError(f"Array passed to {whom} is full of zeros.")
    return A


class NMF(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Non-negative matrix factorization X ~= W H (coordinate descent or multiplicative
    updates), computed on X's device."""

    _parameter_constraints = {
        "n_components": [Interval(Integral, 1, None, closed="left"), None, StrOptions({"auto"})],
        "init": [StrOptions({"random", "nndsvd", "nndsvda", "nndsvdar", "custom"}), None],
        "solver": [StrOptions({"mu", "cd"})],
        "beta_loss": [StrOptions({"frobenius", "kullback-leibler", "itakura-saito"}), Real],
        "tol": [Interval(Real, 0, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
        "alpha_W": [Interval(Real, 0, None, closed="left")],
        "alpha_H": [Interval(Real, 0, None, closed="left"), StrOptions({"same"})],
        "l1_ratio": [Interval(Real, 0, 1, closed="both")],
        "verbose": [Interval(Integral, 0, None, closed="left"), "boolean"],
        "shuffle": ["boolean"],
    }

    def __init__(
        self,
        n_components="auto",
        *,
        init=None,
        solver="cd",
        beta_loss="frobenius",
        tol=1e-4,
        max_iter=200,
        random_state=None,
        alpha_W=0.0,
        alpha_H="same",
        l1_ratio=0.0,
        verbose=0,
        shuffle=False,
    ):
        self.n_components = n_components
        self.init = init
        self.solver = solver
        self.beta_loss = beta_loss
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state
        self.alpha_W = alpha_W
        self.alpha_H = alpha_H
        self.l1_ratio = l1_ratio
        self.verbose = verbose
        self.shuffle = shuffle

    def _check_params(self):
        self._n_components = self.n_components
        self._beta_loss = _beta_to_float(self.beta_loss)
        if self.solver != "mu" and self.beta_loss not in (2, "frobenius"):
            raise ValueError(
                f"Invalid beta_loss parameter: solver {self.solver!r} does not handle "
                f"beta_loss = {self.beta_loss!r}"
            )
        if self.solver == "mu" and self.init == "nndsvd":
            warnings.warn(
                "The multiplicative update ('mu') solver cannot update zeros present in the "
                "initialization, and so leads to poorer results when used jointly with "
                "init='nndsvd'. You may try init='nndsvda' or init='nndsvdar' instead.",
                UserWarning,
                stacklevel=4,
            )

    def _check_w_h(self, X, W, H, update_H):
        n, d = X.shape
        k = self._n_components
        if k is None:
            k = self._n_components = d
        if self.init == "custom" and update_H:
            H = _check_init(H, (k, d), "NMF (input H)", X.device)
            W = _check_init(W, (n, k), "NMF (input W)", X.device)
            if k == "auto":
                self._n_components = H.shape[0]
            if H.dtype != X.dtype or W.dtype != X.dtype:
                raise TypeError(
                    "H and W should have the same dtype as X. Got H.dtype = "
                    f"{H.dtype} and W.dtype = {W.dtype}."
                )
            return ember.asarray(W, copy=True), ember.asarray(H, copy=True)
        if not update_H:
            if W is not None:
                warnings.warn(
                    "When update_H=False, the provided initial W is not used.",
                    RuntimeWarning,
                    stacklevel=4,
                )
            H = _check_init(H, (k, d), "NMF (input H)", X.device)
            if k == "auto":
                k = self._n_components = H.shape[0]
            if H.dtype != X.dtype:
                raise TypeError(f"H should have the same dtype as X. Got H.dtype = {H.dtype}.")
            if self.solver == "mu":
                W = ember.full(
                    (n, k), math.sqrt(float(X.mean()) / k), dtype=X.dtype, device=X.device
                )
            else:
                W = ember.zeros((n, k), dtype=X.dtype, device=X.device)
            return W, H
        if W is not None or H is not None:
            warnings.warn(
                "When init!='custom', provided W or H are ignored. Set  init='custom' to use "
                "them as initialization.",
                RuntimeWarning,
                stacklevel=4,
            )
        if k == "auto":
            k = self._n_components = d
        return _initialize(X, k, self.init, self.random_state)

    def _regularization(self, X):
        n, d = X.shape
        aw = self.alpha_W
        ah = self.alpha_W if self.alpha_H == "same" else self.alpha_H
        r = self.l1_ratio
        return d * aw * r, n * ah * r, d * aw * (1.0 - r), n * ah * (1.0 - r)

    def _fit_transform(self, X, W=None, H=None, update_H=True):
        self._check_params()
        _check_non_negative(X, "NMF (input X)")
        if self._beta_loss <= 0 and float(X.min()) == 0:
            raise ValueError(
                "When beta_loss <= 0 and X contains zeros, the solver may diverge. Please add "
                "small values to X, or use a positive beta_loss."
            )
        W, H = self._check_w_h(X, W, H, update_H)
        regs = self._regularization(X)
        if self.solver == "cd":
            W, H, n_iter = _fit_cd(
                X, W, H, self.tol, self.max_iter, regs, update_H, self.shuffle, self.random_state
            )
        else:
            W, H, n_iter = _fit_mu(
                X, W, H, self._beta_loss, self.max_iter, self.tol, regs, update_H
            )
        if n_iter == self.max_iter and self.tol > 0:
            warnings.warn(
                f"Maximum number of iterations {self.max_iter} reached. Increase it to improve "
                "convergence.",
                ConvergenceWarning,
                stacklevel=3,
            )
        return W, H, n_iter

    def fit_transform(self, X, y=None, W=None, H=None):
        """Learn W and H for X; returns W (``components_`` is H)."""
        self._validate_params()
        Xa = check_array(X, estimator=self)
        check_n_features(self, Xa, reset=True)
        W, H, n_iter = self._fit_transform(Xa, W=W, H=H)
        kind = input_kind(X)
        self.reconstruction_err_ = _beta_divergence(Xa, W, H, self._beta_loss, square_root=True)
        self.n_components_ = int(H.shape[0])
        self.components_ = to_output(H, kind)
        self.n_iter_ = n_iter
        return to_output(W, kind)

    def fit(self, X, y=None, **params):
        """Learn the factorization of X."""
        self.fit_transform(X, **params)
        return self

    def transform(self, X):
        """W for X with the fitted ``components_`` held fixed."""
        check_is_fitted(self, "components_")
        Xa = check_array(X, estimator=self)
        check_n_features(self, Xa, reset=False)
        _check_non_negative(Xa, "NMF (input X)")
        H = to_device(self.components_, Xa.device).astype(Xa.dtype)
        W, _, _ = self._fit_transform(Xa, H=H, update_H=False)
        return to_output(W, input_kind(X))

    def inverse_transform(self, X):
        """W @ components_."""
        check_is_fitted(self, "components_")
        kind = input_kind(X)
        Wa = check_array(X, estimator=self)
        H = to_device(self.components_, Wa.device).astype(Wa.dtype)
        return to_output(Wa @ H, kind)

    @property
    def _n_features_out(self):
        return self.components_.shape[0]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.positive_only = True
        return tags


def non_negative_factorization(
    X,
    W=None,
    H=None,
    n_components="auto",
    *,
    init=None,
    update_H=True,
    solver="cd",
    beta_loss="frobenius",
    tol=1e-4,
    max_iter=200,
    alpha_W=0.0,
    alpha_H="same",
    l1_ratio=0.0,
    random_state=None,
    verbose=0,
    shuffle=False,
):
    """(W, H, n_iter) of the NMF of X (scikit-learn's function; H fixed when not update_H)."""
    validate_parameter_constraints(
        {"update_H": ["boolean"]}, {"update_H": update_H}, "non_negative_factorization"
    )
    est = NMF(
        n_components=n_components,
        init=init,
        solver=solver,
        beta_loss=beta_loss,
        tol=tol,
        max_iter=max_iter,
        random_state=random_state,
        alpha_W=alpha_W,
        alpha_H=alpha_H,
        l1_ratio=l1_ratio,
        verbose=verbose,
        shuffle=shuffle,
    )
    est._validate_params()
    Xa = check_array(X, estimator="NMF")
    W, H, n_iter = est._fit_transform(Xa, W=W, H=H, update_H=update_H)
    kind = input_kind(X)
    return to_output(W, kind), to_output(H, kind), n_iter
