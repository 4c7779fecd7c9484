"""Probability estimates of the kernel classifiers (``SVC``/``NuSVC(probability=True)``), with
libsvm's method as scikit-learn runs it.

Per pair of classes, decision values of the pair's training samples are obtained by an
internal 5-fold cross-validation (the folds cut from a random permutation drawn as
scikit-learn's libsvm draws it: a 32-bit Mersenne twister seeded from ``random_state`` and
Lemire's bounded integers, so with an integer ``random_state`` the folds are scikit-learn's), a
sigmoid ``P(first class | f) = 1 / (1 + exp(A f + B))`` is fitted to them by Lin, Lin and Weng's
Newton method with backtracking (Platt scaling with regularised targets), and at prediction the
pairwise probabilities are coupled into class probabilities by Wu, Lin and Weng's second
method (libsvm's fixed-point iteration, also for two classes).

The sums of the Newton steps and the coupling iteration are ember ops on the data's device;
per Newton step a few scalars come to the host. Fold bookkeeping (index lists) is host work.
"""

from __future__ import annotations

import math

import numpy as np

import ember

from ._qp import host_vector

__all__ = ["coupled_probability", "libsvm_seed", "pair_probability", "sigmoid_predict"]


def libsvm_seed(random_state):
    """The seed scikit-learn hands to libsvm: ``randint(INT_MAX)`` of ``random_state``."""
    if random_state is None or random_state is np.random:
        rs = np.random.mtrand._rand
    elif isinstance(random_state, np.random.RandomState):
        rs = random_state
    else:
        rs = np.random.RandomState(int(random_state))
    return int(rs.randint(np.iinfo("i").max))


class _MT32:
    """std::mt19937 seeded with ``seed`` (init_genrand) and Lemire's bounded integers."""

    def __init__(self, seed):
        self._seed = int(seed) & 0xFFFFFFFF
        self.reset()

    def reset(self):
        """Back to the seeded state (libsvm's ``svm_train`` reseeds at every call)."""
        self._bg = np.random.MT19937(0)
        self._bg._legacy_seeding(self._seed)
        self._buf = []

    def _next(self):
        if not self._buf:
            self._buf = [int(v) for v in self._bg.random_raw(256)][::-1]
        return self._buf.pop()

    def bounded(self, rng):
        m = self._next() * rng
        low = m & 0xFFFFFFFF
        if low < rng:
            t = (-rng) & 0xFFFFFFFF
            if t >= rng:
                t -= rng
                if t >= rng:
                    t %= rng
            while low < t:
                m = self._next() * rng
                low = m & 0xFFFFFFFF
        return m >> 32


def _permutation(n, gen):
    perm = np.arange(n)
    for i in range(n):
        j = i + gen.bounded(n - i)
        perm[i], perm[j] = perm[j], perm[i]
    return perm


def pair_probability(solve, K, ys, C, gen, n_folds=5):
    """Platt's (A, B) for one binary problem (+1 = the pair's first class).

    ``solve(K_sub, y_sub, C_sub) -> (coef, rho)`` trains the binary machine (coef = y*alpha on
    the sub-problem's device); ``K`` is the pair's kernel matrix, ``ys``/``C`` device vectors.
    """
    dev = K.device
    n = K.shape[0]
    yh = host_vector(ys) > 0  # explicit host copy of the pair's labels (fold bookkeeping)
    perm = _permutation(n, gen)
    dec = ember.zeros((n,), dtype=ember.float64, device=dev)
    for f in range(n_folds):
        b, e = f * n // n_folds, (f + 1) * n // n_folds
        test = perm[b:e]
        train = np.concatenate([perm[:b], perm[e:]])
        npos = int(yh[train].sum())
        nneg = len(train) - npos
        if len(test) == 0:
            continue
        td = ember.asarray(test, device=dev)
        if npos == 0 or nneg == 0:
            val = 0.0 if npos == nneg else (1.0 if npos else -1.0)
            dec[td] = ember.full((len(test),), val, dtype=ember.float64, device=dev)
            continue
        # libsvm regroups the fold's problem by sorted label: the -1 samples come first and
        # take the solver's +1 side; the decision value is turned back to favour +1
        order = np.concatenate([train[~yh[train]], train[yh[train]]])
        od = ember.asarray(order, device=dev)
        Ks = ember.take(ember.take(K, od, axis=0), od, axis=1)
        coef, rho = solve(Ks, -ember.take(ys, od), ember.take(C, od))
        gen.reset()  # the fold's svm_train reseeds libsvm's generator
        Kt = ember.take(ember.take(K, od, axis=0), td, axis=1)
        dec[td] = -(coef @ Kt - rho)
    return _sigmoid_train(dec, ys > 0)


def _sigmoid_loss(dec, t, A, B):
    z = dec * A + B
    # t*z + log(1+exp(-z)) for z >= 0, (t-1)*z + log(1+exp(z)) otherwise
    return (ember.where(z >= 0, t * z, (t - 1.0) * z) + ember.log1p(ember.exp(-ember.abs(z)))).sum()


def _sigmoid_train(dec, pos):
    """Lin-Lin-Weng's Newton method for Platt's sigmoid (libsvm's ``sigmoid_train``)."""
    dt = dec.dtype
    prior1 = float(pos.astype(dt).sum())
    prior0 = dec.shape[0] - prior1
    hi, lo = (prior1 + 1.0) / (prior1 + 2.0), 1.0 / (prior0 + 2.0)
    t = ember.where(pos, hi, lo).astype(dt)
    A, B = 0.0, math.log((prior0 + 1.0) / (prior1 + 1.0))
    fval = float(_sigmoid_loss(dec, t, A, B))
    for _ in range(100):
        z = dec * A + B
        ez = ember.exp(-ember.abs(z))
        # p = 1/(1+exp(z)) and q = 1-p, written without overflow
        p = ember.where(z >= 0, ez / (1.0 + ez), 1.0 / (1.0 + ez))
        q = 1.0 - p
        d2 = p * q
        d1 = t - p
        h11, h22, h21, g1, g2 = (
            ember.asnumpy(
                ember.stack([(dec * dec * d2).sum(), d2.sum(), (dec * d2).sum(),
                             (dec * d1).sum(), d1.sum()])
            ).tolist()
        )  # fmt: skip
        h11 += 1e-12
        h22 += 1e-12
        if abs(g1) < 1e-5 and abs(g2) < 1e-5:
            break
        det = h11 * h22 - h21 * h21
        dA = -(h22 * g1 - h21 * g2) / det
        dB = -(-h21 * g1 + h11 * g2) / det
        gd = g1 * dA + g2 * dB
        step = 1.0
        while step >= 1e-10:
            nA, nB = A + step * dA, B + step * dB
            nf = float(_sigmoid_loss(dec, t, nA, nB))
            if nf < fval + 1e-4 * step * gd:
                A, B, fval = nA, nB, nf
                break
            step /= 2.0
        if step < 1e-10:
            break
    return A, B


def sigmoid_predict(dec, A, B):
    """1 / (1 + exp(A f + B)) for a device vector f, without overflow."""
    z = dec * A + B
    ez = ember.exp(-ember.abs(z))
    return ember.where(z >= 0, ez / (1.0 + ez), 1.0 / (1.0 + ez))


def coupled_probability(dec, probA, probB, k):
    """Class probabilities (m, k) from ovo decision values (m, n_pairs) (libsvm's coupling)."""
    m = dec.shape[0]
    dev, dt = dec.device, dec.dtype
    R = [[None] * k for _ in range(k)]
    t = 0
    for a in range(k):
        for b in range(a + 1, k):
            r = ember.clip(sigmoid_predict(dec[:, t], probA[t], probB[t]), 1e-7, 1 - 1e-7)
            R[a][b], R[b][a] = r, 1.0 - r
            t += 1
    zero = ember.zeros((m,), dtype=dt, device=dev)
    # Q[t][t] = sum_j r_jt^2, Q[t][j] = -r_jt r_tj (a batch of k x k matrices, one per sample)
    rows = []
    for a in range(k):
        row = []
        for b in range(k):
            if a == b:
                row.append(sum((R[j][a] * R[j][a] for j in range(k) if j != a), zero))
            else:
                row.append(-R[b][a] * R[a][b])
        rows.append(ember.stack(row, axis=1))
    Q = ember.stack(rows, axis=1)  # (m, k, k)
    p = ember.full((m, k), 1.0 / k, dtype=dt, device=dev)
    eps = 0.005 / k
    for _ in range(max(100, k)):
        Qp = (Q @ p[:, :, None])[:, :, 0]
        pQp = (p * Qp).sum(axis=1)
        err = ember.max(ember.abs(Qp - pQp[:, None]), axis=1)
        active = err >= eps  # each sample stops at its own convergence, as libsvm
        if not bool(ember.any(active)):
            break
        for a in range(k):
            Qaa = Q[:, a, a]
            diff = ember.where(active, (pQp - Qp[:, a]) / Qaa, 0.0)
            p = ember.concatenate([p[:, :a], (p[:, a] + diff)[:, None], p[:, a + 1 :]], axis=1)
            s = 1.0 + diff
            pQp = (pQp + diff * (diff * Qaa + 2.0 * Qp[:, a])) / s / s
            Qp = (Qp + diff[:, None] * Q[:, a, :]) / s[:, None]
            p = p / s[:, None]
    return p
