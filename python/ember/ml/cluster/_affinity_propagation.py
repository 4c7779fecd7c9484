"""AffinityPropagation and affinity_propagation (scikit-learn's ``sklearn.cluster``).

The similarity matrix S, the responsibilities R and the availabilities A are dense n x n ember
arrays on the input's device; every message-passing round is a handful of elementwise ops, two
row maxima and one column sum. The exemplar indicator's run length (how many rounds each
sample's "is an exemplar" flag has stayed the same) replaces scikit-learn's circular history
buffer: the window of the last ``convergence_iter`` flags is constant exactly when the run is at
least that long. One flag is read back per round once ``convergence_iter`` rounds have passed.

The tiny noise that breaks ties is drawn from NumPy's RandomState exactly as scikit-learn draws
it (one ``standard_normal((n, n))``), so labels equal scikit-learn's on the same data.
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np

import ember

from ..base import BaseEstimator, ClusterMixin
from ..exceptions import ConvergenceWarning
from ..metrics.pairwise import sq_euclidean
from ..model_selection._split import _np_rng
from ..utils._param_validation import Interval, StrOptions, validate_parameter_constraints
from ..utils.validation import (
    _host,
    check_array,
    check_is_fitted,
    check_n_features,
    input_kind,
    to_device,
    to_output,
)

__all__ = ["AffinityPropagation", "affinity_propagation"]


def _equal_similarities(S, pref, eye):
    """True when every off-diagonal similarity is the same and so is every preference."""
    if not bool((pref == pref.reshape(-1)[0]).all()):
        return False
    return bool(ember.where(eye, True, S == S[0, 1]).all())


def _run(S, pref, *, convergence_iter, max_iter, damping, rs):
    """Message passing on the (copied) similarities S. Returns (centre indices, labels,
    n_iter, S with the preference on its diagonal and the noise added)."""
    n = S.shape[0]
    dev = S.device
    dt = S.dtype
    eye = ember.eye(n, dtype=ember.bool, device=dev)
    if n == 1 or _equal_similarities(S, pref, eye):
        warnings.warn(
            "All samples have mutually equal similarities. Returning arbitrary cluster center(s).",
            stacklevel=3,
        )
        if float(pref.reshape(-1)[0]) > float(S.reshape(-1)[n - 1]):
            idx = ember.arange(n, dtype=ember.int64, device=dev)
            return idx, idx, 0, S
        return (
            ember.zeros((1,), dtype=ember.int64, device=dev),
            ember.zeros((n,), dtype=ember.int64, device=dev),
            0,
            S,
        )
    S = ember.where(eye, pref.reshape(1, -1) if pref.ndim else pref, S)
    finfo = np.finfo(np.float32 if dt == ember.float32 else np.float64)
    noise = to_device(rs.standard_normal(size=(n, n)), dev).astype(dt)
    S = S + (finfo.eps * S + finfo.tiny * 100) * noise

    cols = ember.arange(n, device=dev)
    A = ember.zeros((n, n), dtype=dt, device=dev)
    R = ember.zeros((n, n), dtype=dt, device=dev)
    run = ember.zeros((n,), dtype=ember.int64, device=dev)
    prev = ember.zeros((n,), dtype=ember.bool, device=dev)
    neg_inf = float("-inf")
    never_converged = True
    it = 0
    for it in range(max_iter):
        # Responsibilities: s(i,k) minus the best competing a(i,k') + s(i,k').
        T = A + S
        best = ember.argmax(T, axis=1)
        first = cols[None, :] == best[:, None]
        Y = ember.max(T, axis=1)
        Y2 = ember.max(ember.where(first, neg_inf, T), axis=1)
        Rn = ember.where(first, S - Y2[:, None], S - Y[:, None])
        R = R * damping + Rn * (1 - damping)
        # Availabilities: column sums of the positive responsibilities.
        P = ember.where(eye, R, ember.maximum(R, 0.0))
        P = P - P.sum(axis=0)[None, :]
        P = ember.where(eye, P, ember.maximum(P, 0.0))
        A = A * damping - P * (1 - damping)
        E = (ember.diagonal(A) + ember.diagonal(R)) > 0
        run = ember.where(E == prev, run + 1, 1) if it else ember.ones_like(run)
        prev = E
        if it >= convergence_iter:
            if bool((run >= convergence_iter).all() & E.any()):
                never_converged = False
                break
    I = ember.flatnonzero(E)
    K = int(I.shape[0])
    if K == 0:
        warnings.warn(
            "Affinity propagation did not converge and this model will not have any cluster "
            "centers.",
            ConvergenceWarning,
            stacklevel=3,
        )
        return (
            ember.zeros((0,), dtype=ember.int64, device=dev),
            ember.full((n,), -1, dtype=ember.int64, device=dev),
            it + 1,
            S,
        )
    if never_converged:
        warnings.warn(
            "Affinity propagation did not converge, this model may return degenerate cluster "
            "centers and labels.",
            ConvergenceWarning,
            stacklevel=3,
        )
    ks = ember.arange(K, dtype=ember.int64, device=dev)

    def assign(I):
        c = ember.argmax(ember.take(S, I, axis=1), axis=1).astype(ember.int64)
        hit = cols[:, None] == I[None, :]  # n x K: sample i is exemplar k
        return ember.where(hit.any(axis=1), ember.argmax(hit, axis=1).astype(ember.int64), c)

    c = assign(I)
    # Refine each exemplar: the member with the largest summed similarity from its cluster.
    M = c[None, :] == ks[:, None]  # K x n membership
    T = M.astype(dt) @ S  # T[k, j] = sum over members i of cluster k of S[i, j]
    I = ember.argmax(ember.where(M, T, neg_inf), axis=1).astype(ember.int64)
    c = assign(I)
    labels = ember.take(I, c)
    centers = ember.unique(labels)
    labels = ember.searchsorted(centers, labels).astype(ember.int64)
    return centers.astype(ember.int64), labels, it + 1, S


def _check_common(damping, max_iter, convergence_iter, preference, random_state, who):
    validate_parameter_constraints(
        {
            "damping": [Interval(Real, 0.5, 1.0, closed="left")],
            "max_iter": [Interval(Integral, 1, None, closed="left")],
            "convergence_iter": [Interval(Integral, 1, None, closed="left")],
            "preference": ["array-like", Interval(Real, None, None, closed="neither"), None],
            "random_state": ["random_state"],
        },
        {
            "damping": damping,
            "max_iter": max_iter,
            "convergence_iter": convergence_iter,
            "preference": preference,
            "random_state": random_state,
        },
        caller_name=who,
    )


class AffinityPropagation(ClusterMixin, BaseEstimator):
    """Clustering by passing responsibility and availability messages between samples."""

    _parameter_constraints = {
        "damping": [Interval(Real, 0.5, 1.0, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "convergence_iter": [Interval(Integral, 1, None, closed="left")],
        "copy": ["boolean"],
        "preference": ["array-like", Interval(Real, None, None, closed="neither"), None],
        "affinity": [StrOptions({"euclidean", "precomputed"})],
        "verbose": [Integral, "boolean"],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        *,
        damping=0.5,
        max_iter=200,
        convergence_iter=15,
        copy=True,
        preference=None,
        affinity="euclidean",
        verbose=False,
        random_state=None,
    ):
        self.damping = damping
        self.max_iter = max_iter
        self.convergence_iter = convergence_iter
        self.copy = copy
        self.preference = preference
        self.affinity = affinity
        self.verbose = verbose
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.affinity == "precomputed"
        return tags

    def fit(self, X, y=None):
        """Cluster X (samples, or a square similarity matrix when affinity='precomputed')."""
        self._validate_params()
        Xa = check_array(X, estimator=self)
        check_n_features(self, Xa, reset=True)
        if self.affinity == "precomputed":
            S = Xa + 0.0  # a copy: the diagonal and the noise go into it
        else:
            S = -sq_euclidean(Xa, Xa)
            idx = ember.arange(S.shape[0], device=S.device)
            S = ember.where(idx[:, None] == idx[None, :], 0.0, S).astype(Xa.dtype)
        if S.shape[0] != S.shape[1]:
            raise ValueError(
                "AffinityPropagation: The matrix of similarities must be a square array. "
                f"Got {tuple(S.shape)} instead."
            )
        if self.preference is None:
            pref = ember.median(S)
        else:
            pref = to_device(_host(self.preference), S.device).astype(S.dtype)
            if pref.ndim == 1 and pref.shape[0] not in (1, S.shape[0]):
                raise ValueError(
                    f"AffinityPropagation: preference must be a scalar or have {S.shape[0]} "
                    f"entries, got {pref.shape[0]}"
                )
        centers, labels, n_iter, S = _run(
            S,
            pref,
            convergence_iter=self.convergence_iter,
            max_iter=self.max_iter,
            damping=float(self.damping),
            rs=_np_rng(self.random_state),
        )
        kind = input_kind(X)
        self.affinity_matrix_ = to_output(S, kind)
        self.cluster_centers_indices_ = to_output(centers, kind)
        self.labels_ = to_output(labels, kind)
        self.n_iter_ = int(n_iter)
        if self.affinity != "precomputed":
            self.cluster_centers_ = to_output(ember.take(Xa, centers, axis=0), kind)
        else:
            self.__dict__.pop("cluster_centers_", None)
        return self

    def predict(self, X):
        """Index of the closest exemplar of each sample."""
        check_is_fitted(self, "cluster_centers_indices_")
        Xa = check_array(X, estimator=self)
        check_n_features(self, Xa, reset=False)
        if not hasattr(self, "cluster_centers_"):
            raise ValueError(
                "AffinityPropagation: Predict method is not supported when affinity='precomputed'."
            )
        C = to_device(self.cluster_centers_, Xa.device)
        if C.shape[0] == 0:
            warnings.warn(
                "This model does not have any cluster centers because affinity propagation did "
                "not converge. Labeling every sample as '-1'.",
                ConvergenceWarning,
                stacklevel=2,
            )
            lab = ember.full((Xa.shape[0],), -1, dtype=ember.int64, device=Xa.device)
        else:
            lab = ember.argmin(sq_euclidean(Xa.astype(C.dtype), C), axis=1).astype(ember.int64)
        return to_output(lab, input_kind(X))

    def fit_predict(self, X, y=None):
        """Cluster X and return ``labels_``."""
        return self.fit(X).labels_


def affinity_propagation(
    S,
    *,
    preference=None,
    convergence_iter=15,
    max_iter=200,
    damping=0.5,
    copy=True,
    verbose=False,
    return_n_iter=False,
    random_state=None,
):
    """Affinity propagation on a precomputed similarity matrix: (centre indices, labels[,
    n_iter])."""
    _check_common(
        damping, max_iter, convergence_iter, preference, random_state, "affinity_propagation"
    )
    est = AffinityPropagation(
        damping=damping,
        max_iter=max_iter,
        convergence_iter=convergence_iter,
        copy=copy,
        preference=preference,
        affinity="precomputed",
        verbose=verbose,
        random_state=random_state,
    ).fit(S)
    if return_n_iter:
        return est.cluster_centers_indices_, est.labels_, est.n_iter_
    return est.cluster_centers_indices_, est.labels_
