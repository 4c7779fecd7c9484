"""TSNE (scikit-learn's ``sklearn.manifold.TSNE``) with the exact O(n^2) gradient on the device.

Squared distances (``sq_euclidean``; other metrics through ``pairwise_distances`` then squared)
are rounded to float32 as scikit-learn does, the per-row precision ``beta`` is found by the
same bisection (100 steps, entropy tolerance 1e-5) run for all rows at once, rows freezing as
they converge; ``P = (P_cond + P_cond^T) / sum``. The KL divergence and its gradient are dense
n x n ember expressions (Student-t kernel, ``PQd.sum(1) Y - PQd @ Y``), and the descent is
scikit-learn's: 250 iterations with P exaggerated and momentum 0.5, then momentum 0.8, gains
(+0.2 / x0.8, floored at ``min_gain``), progress checked every 50 iterations
(``n_iter_without_progress``, ``min_grad_norm``). ``method='barnes_hut'`` runs this exact
computation too (``angle`` is ignored); memory is O(n^2), meant for n up to a few thousand.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np

import ember

from ..base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from ..metrics.pairwise import PAIRWISE_DISTANCE_METRICS, sq_euclidean
from ..utils._param_validation import Interval, StrOptions
from ..utils.validation import (
    check_array,
    check_n_features,
    check_random_state,
    input_kind,
    to_device,
    to_output,
)

__all__ = ["TSNE", "trustworthiness"]

MACHINE_EPSILON = float(np.finfo(np.double).eps)
_N_STEPS = 100
_PERPLEXITY_TOLERANCE = 1e-5
_EPSILON_DBL = 1e-8


def _zero_diag(M):
    idx = ember.arange(M.shape[0], device=M.device)
    M[idx, idx] = 0.0
    return M


def _binary_search_perplexity(sqdistances, desired_perplexity):
    """Conditional P (n, n) whose rows have the desired perplexity (bisection on beta)."""
    D = sqdistances.astype(ember.float32).astype(ember.float64)
    n = D.shape[0]
    dev = D.device
    desired_entropy = float(np.log(desired_perplexity))
    beta = ember.ones((n,), dtype=ember.float64, device=dev)
    beta_min = ember.full((n,), -np.inf, dtype=ember.float64, device=dev)
    beta_max = ember.full((n,), np.inf, dtype=ember.float64, device=dev)
    active = ember.ones((n,), dtype=ember.bool, device=dev)
    off = 1.0 - ember.eye(n, dtype=ember.float64, device=dev)

    def cond_p(b):
        P = ember.exp(-D * b[:, None]) * off
        s = P.sum(axis=1)
        s = ember.where(s == 0.0, _EPSILON_DBL, s)
        P = P / s[:, None]
        return P, s

    for step in range(_N_STEPS):
        P, s = cond_p(beta)
        entropy = ember.log(s) + beta * (D * P).sum(axis=1)
        diff = entropy - desired_entropy
        active = active & (ember.abs(diff) > _PERPLEXITY_TOLERANCE)
        if step == _N_STEPS - 1:
            break
        if step % 10 == 9 and not bool(active.any()):  # a sync only every tenth step
            break
        up = active & (diff > 0.0)
        down = active & (diff <= 0.0)
        beta_min = ember.where(up, beta, beta_min)
        beta_max = ember.where(down, beta, beta_max)
        new_up = ember.where(beta_max == np.inf, beta * 2.0, (beta + beta_max) / 2.0)
        new_down = ember.where(beta_min == -np.inf, beta / 2.0, (beta + beta_min) / 2.0)
        beta = ember.where(up, new_up, ember.where(down, new_down, beta))
    return cond_p(beta)[0]


def _joint_probabilities_dense(distances, desired_perplexity):
    """Symmetric joint probabilities P (n, n), zero diagonal, off-diagonal >= machine eps."""
    cond = _binary_search_perplexity(distances, desired_perplexity)
    P = cond + cond.T
    sum_p = ember.maximum(P.sum(), MACHINE_EPSILON)
    P = ember.maximum(P / sum_p, MACHINE_EPSILON)
    return _zero_diag(P)


def _joint_probabilities(distances, desired_perplexity, verbose=0):
    """Condensed joint probabilities (upper triangle, row-major) as scikit-learn's function."""
    D = check_array(distances, estimator="_joint_probabilities", input_name="distances")
    P = _joint_probabilities_dense(D, desired_perplexity)
    iu, ju = (to_device(i, P.device) for i in ember.triu_indices(P.shape[0], k=1))
    return to_output(P[iu, ju], input_kind(distances))


def _sq_dists(Y):
    """Squared distances between the rows of Y (per-component differences for the usual 2-3
    components: no cancellation and no skinny matmul)."""
    c = Y.shape[1]
    if c > 4:
        return sq_euclidean(Y, Y)
    acc = None
    for k in range(c):
        col = Y[:, k]
        d = col[:, None] - col[None, :]
        acc = d * d if acc is None else acc + d * d
    return acc


def _kl_divergence(Y, P, dof, compute_error=True):
    """KL(P || Q) and its gradient for the embedding Y (float64 kernel, grad in Y's dtype)."""
    Y64 = Y.astype(ember.float64)
    sq = _sq_dists(Y64)
    if dof == 1:
        dist = 1.0 / (sq + 1.0)
    else:
        dist = (sq / dof + 1.0) ** ((dof + 1.0) / -2.0)
    dist = _zero_diag(dist)
    Q = ember.maximum(dist / dist.sum(), MACHINE_EPSILON)
    kl = None
    if compute_error:
        kl = float((P * ember.log(ember.maximum(P, MACHINE_EPSILON) / Q)).sum())
    PQd = (P - Q) * dist
    c = Y.shape[1]
    if c > 4:
        grad = PQd.sum(axis=1)[:, None] * Y64 - PQd @ Y64
    else:
        cols = [(PQd * (Y64[:, k][:, None] - Y64[:, k][None, :])).sum(axis=1) for k in range(c)]
        grad = ember.stack(cols, axis=1)
    grad = grad * (2.0 * (dof + 1.0) / dof)
    return kl, grad.astype(Y.dtype)


def _gradient_descent(
    Y,
    P,
    dof,
    it,
    max_iter,
    *,
    n_iter_check,
    n_iter_without_progress,
    momentum,
    learning_rate,
    min_gain,
    min_grad_norm,
    verbose=0,
):
    update = ember.zeros_like(Y)
    gains = ember.ones_like(Y)
    error = best_error = float(np.finfo(float).max)
    best_iter = i = it
    for i in range(it, max_iter):
        check = (i + 1) % n_iter_check == 0
        err, grad = _kl_divergence(Y, P, dof, compute_error=check or i == max_iter - 1)
        if err is not None:
            error = err
        inc = update * grad < 0.0
        gains = ember.where(inc, gains + 0.2, gains * 0.8)
        gains = ember.maximum(gains, min_gain)
        grad = grad * gains
        update = momentum * update - learning_rate * grad
        Y = Y + update
        if check:
            grad_norm = float(ember.sqrt((grad.astype(ember.float64) ** 2).sum()))
            if verbose >= 2:
                print(
                    f"[t-SNE] Iteration {i + 1}: error = {error:.7f}, "
                    f"gradient norm = {grad_norm:.7f}"
                )
            if error < best_error:
                best_error = error
                best_iter = i
            elif i - best_iter > n_iter_without_progress:
                break
            if grad_norm <= min_grad_norm:
                break
    return Y, error, i


def trustworthiness(X, X_embedded, *, n_neighbors=5, metric="euclidean"):
    """How far the local structure is kept (scikit-learn's ``sklearn.manifold.trustworthiness``)."""
    Xa = check_array(X, estimator="trustworthiness")
    E = check_array(
        X_embedded, estimator="trustworthiness", input_name="X_embedded", device=Xa.device
    )
    n = Xa.shape[0]
    if n_neighbors >= n / 2:
        raise ValueError(
            f"trustworthiness: n_neighbors ({n_neighbors}) should be less than "
            f"n_samples / 2 ({n / 2})"
        )
    if metric == "precomputed":
        DX = Xa
    else:
        from ..metrics.pairwise import distances

        DX = distances(Xa, Xa, metric)
    DX = DX.astype(ember.float64)
    idx = ember.arange(n, device=Xa.device)
    DX[idx, idx] = -np.inf  # self first
    order = ember.argsort(DX, axis=1, stable=True)
    ranks = ember.empty((n, n), dtype=ember.int64, device=Xa.device)
    ember.put_along_axis(
        ranks, order, ember.broadcast_to(ember.arange(n, device=Xa.device)[None, :], (n, n)), axis=1
    )
    DE = sq_euclidean(E, E).astype(ember.float64)
    DE[idx, idx] = np.inf
    nn_emb = ember.argsort(DE, axis=1, stable=True)[:, :n_neighbors]
    r = ember.take_along_axis(ranks, nn_emb, axis=1) - n_neighbors
    t = float(ember.maximum(r, 0).astype(ember.float64).sum())
    return 1.0 - t * (2.0 / (n * n_neighbors * (2.0 * n - 3.0 * n_neighbors - 1.0)))


class TSNE(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """t-distributed Stochastic Neighbor Embedding with the exact gradient on the device.

    ``method='barnes_hut'`` (the default, as in scikit-learn) runs the exact computation as
    well; ``angle`` and ``n_jobs`` have no effect. O(n^2) memory.
    """

    _parameter_constraints = {
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "perplexity": [Interval(Real, 0, None, closed="neither")],
        "early_exaggeration": [Interval(Real, 1, None, closed="left")],
        "learning_rate": [StrOptions({"auto"}), Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 250, None, closed="left")],
        "n_iter_without_progress": [Interval(Integral, -1, None, closed="left")],
        "min_grad_norm": [Interval(Real, 0, None, closed="left")],
        "metric": [StrOptions(PAIRWISE_DISTANCE_METRICS | {"precomputed"}), callable],
        "metric_params": [dict, None],
        "init": [StrOptions({"pca", "random"}), "array-like"],
        "verbose": ["boolean", Interval(Integral, 0, None, closed="left")],
        "random_state": ["random_state"],
        "method": [StrOptions({"barnes_hut", "exact"})],
        "angle": [Interval(Real, 0, 1, closed="both")],
        "n_jobs": [None, Integral],
    }

    _EXPLORATION_MAX_ITER = 250
    _N_ITER_CHECK = 50

    def __init__(
        self,
        n_components=2,
        *,
        perplexity=30.0,
        early_exaggeration=12.0,
        learning_rate="auto",
        max_iter=1000,
        n_iter_without_progress=300,
        min_grad_norm=1e-7,
        metric="euclidean",
        metric_params=None,
        init="pca",
        verbose=0,
        random_state=None,
        method="barnes_hut",
        angle=0.5,
        n_jobs=None,
    ):
        self.n_components = n_components
        self.perplexity = perplexity
        self.early_exaggeration = early_exaggeration
        self.learning_rate = learning_rate
        self.max_iter = max_iter
        self.n_iter_without_progress = n_iter_without_progress
        self.min_grad_norm = min_grad_norm
        self.metric = metric
        self.metric_params = metric_params
        self.init = init
        self.verbose = verbose
        self.random_state = random_state
        self.method = method
        self.angle = angle
        self.n_jobs = n_jobs

    def _distances(self, X):
        metric = self.metric
        if metric == "precomputed":
            D = X
        elif metric == "euclidean":
            return sq_euclidean(X, X)
        else:
            from ..metrics.pairwise import pairwise_distances

            # A callable metric runs on the host inside pairwise_distances; named ones on X's
            # device.
            D = to_device(
                pairwise_distances(X, metric=metric, **(self.metric_params or {})), X.device
            )
        if bool((D < 0).any()):
            raise ValueError("All distances should be positive, the metric given is not correct")
        return D * D

    def _init_embedding(self, X, n, rng):
        init = self.init
        c = self.n_components
        if isinstance(init, str) and init == "pca":
            from ..decomposition import PCA

            d = X.shape[1]
            # scikit-learn's 'auto' PCA solver, never its randomized branch: deterministic.
            solver = "covariance_eigh" if d <= 1000 and n >= 10 * d else "full"
            E = PCA(n_components=c, svd_solver=solver).fit_transform(X).astype(ember.float32)
            return E / E[:, 0].std() * 1e-4
        if isinstance(init, str) and init == "random":
            return 1e-4 * rng.standard_normal((n, c), device=X.device).astype(ember.float32)
        E = check_array(init, estimator=self, input_name="init", device=X.device)
        if tuple(E.shape) != (n, c):
            raise ValueError(
                f"TSNE: init array of shape {tuple(E.shape)} does not match "
                f"(n_samples, n_components) = {(n, c)}"
            )
        return E.copy()

    def _fit(self, X):
        self._validate_params()
        who = type(self).__name__
        if self.method == "barnes_hut" and self.n_components > 3:
            raise ValueError(
                "'n_components' should be inferior to 4 for the barnes_hut algorithm as it "
                "relies on quad-tree or oct-tree."
            )
        Xa = check_array(X, estimator=self, ensure_min_samples=2)
        check_n_features(self, Xa, reset=True)
        n = Xa.shape[0]
        if self.metric == "precomputed":
            if isinstance(self.init, str) and self.init == "pca":
                raise ValueError(
                    'The parameter init="pca" cannot be used with metric="precomputed".'
                )
            if Xa.shape[0] != Xa.shape[1]:
                raise ValueError(f"{who}: X should be a square distance matrix")
            if bool((Xa < 0).any()):
                raise ValueError(
                    f"Negative values in data passed to {who}.fit(). With "
                    "metric='precomputed', X should contain positive distances."
                )
        if self.perplexity >= n:
            raise ValueError(f"perplexity ({self.perplexity}) must be less than n_samples ({n})")
        if self.learning_rate == "auto":
            self.learning_rate_ = max(n / self.early_exaggeration / 4, 50)
        else:
            self.learning_rate_ = self.learning_rate
        rng = check_random_state(self.random_state)
        P = _joint_probabilities_dense(self._distances(Xa), self.perplexity)
        Y = self._init_embedding(Xa, n, rng)
        dof = max(self.n_components - 1, 1)
        opt = dict(
            n_iter_check=self._N_ITER_CHECK,
            min_grad_norm=self.min_grad_norm,
            learning_rate=self.learning_rate_,
            min_gain=0.01,
            verbose=self.verbose,
        )
        explore = self._EXPLORATION_MAX_ITER
        Y, kl, it = _gradient_descent(
            Y,
            P * self.early_exaggeration,
            dof,
            0,
            explore,
            n_iter_without_progress=explore,
            momentum=0.5,
            **opt,
        )
        if self.verbose:
            print(
                f"[t-SNE] KL divergence after {it + 1} iterations with early exaggeration: {kl:f}"
            )
        if it < explore or self.max_iter - explore > 0:
            Y, kl, it = _gradient_descent(
                Y,
                P,
                dof,
                it + 1,
                self.max_iter,
                n_iter_without_progress=self.n_iter_without_progress,
                momentum=0.8,
                **opt,
            )
        if self.verbose:
            print(f"[t-SNE] KL divergence after {it + 1} iterations: {kl:f}")
        self.n_iter_ = it
        self.kl_divergence_ = kl
        self.embedding_ = to_output(Y, input_kind(X))
        self._n_features_out = self.n_components
        return self.embedding_

    def fit_transform(self, X, y=None):
        """Fit X into an embedded space and return ``embedding_``."""
        return self._fit(X)

    def fit(self, X, y=None):
        """Fit X into an embedded space (sets ``embedding_``, ``kl_divergence_``, ``n_iter_``)."""
        self._fit(X)
        return self
