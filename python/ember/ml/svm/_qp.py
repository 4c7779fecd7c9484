"""Dual quadratic-programme solvers and kernels shared by the SVM estimators.

``smo`` is libsvm's sequential minimal optimisation (maximal-violating-pair first index,
second-order choice of the second one, the same two-variable update and the same stopping rule
``max violation <= tol``) for ``min 1/2 a'Qa + p'a`` s.t. ``0 <= a <= C``, ``y'a = 0``.
``box_cd`` is greedy dual coordinate descent (liblinear's dual without the equality, the
coordinate with the largest projected gradient first) for the same problem without ``y'a = 0``.

Everything on length-n vectors (masks, arg-max choices, the gradient update by one or two
columns of Q) is ember ops on the data's device; per iteration a handful of scalars (the chosen
indices, the two alphas, bounds, gradients and Q entries) are read back to the host explicitly
to run the clipped two-variable update, exactly as libsvm does it.
"""

from __future__ import annotations

import numpy as np

import ember

__all__ = ["box_cd", "kernel_matrix", "smo", "smo_nu"]

_TAU = 1e-12


def kernel_matrix(A, B, kernel, gamma, degree, coef0):
    """K(A, B) for 'linear', 'rbf', 'poly', 'sigmoid' (ember matmuls on A's device)."""
    G = A @ B.T
    if kernel == "linear":
        return G
    if kernel == "rbf":
        na = (A * A).sum(axis=1)
        nb = (B * B).sum(axis=1)
        D = ember.maximum(na[:, None] + nb[None, :] - 2.0 * G, 0.0)
        return ember.exp(-gamma * D)
    if kernel == "poly":
        return (gamma * G + coef0) ** degree
    if kernel == "sigmoid":
        return ember.tanh(gamma * G + coef0)
    if callable(kernel):
        return ember.asarray(kernel(A, B), device=A.device).astype(A.dtype)
    raise ValueError(f"kernel_matrix: unknown kernel {kernel!r}")


def _host(*vals):
    """Read a few device scalars back to the host in one transfer."""
    return ember.asnumpy(ember.stack([v.reshape(()).astype(ember.float64) for v in vals])).tolist()


def smo(Q, p, y, C, *, tol, max_iter, alpha0=None):
    """libsvm's SMO on the dense Q (n, n) = y_i y_j K_ij; returns (alpha, rho, n_iter).

    ``p``, ``y`` (+1/-1) and ``C`` (per-variable upper bounds) are length-n device vectors;
    ``alpha0`` a feasible starting point (default 0; one-class SVM starts elsewhere).
    """
    dev = Q.device
    n = Q.shape[0]
    dt = Q.dtype
    if alpha0 is None:
        alpha = ember.zeros((n,), dtype=dt, device=dev)
        G = p.astype(dt)
    else:
        alpha = alpha0.astype(dt)
        G = p.astype(dt) + Q @ alpha
    Qd = ember.diagonal(Q)
    pos = y > 0
    inf = float("inf")
    it = 0
    limit = max_iter if max_iter >= 0 else max(10_000_000, 100 * n)
    while it < limit:
        at_lo = alpha <= 0
        at_hi = alpha >= C
        up = ember.where(pos, ~at_hi, ~at_lo)
        low = ember.where(pos, ~at_lo, ~at_hi)
        v = -y * G
        vup = ember.where(up, v, -inf)
        i_d = ember.argmax(vup)
        gmax_d = ember.max(vup)
        gmin_d = ember.min(ember.where(low, v, inf))
        gmax, gmin, i = _host(gmax_d, gmin_d, i_d)
        if gmax - gmin < tol:
            break
        i = int(i)
        Qi = Q[i]
        b = gmax - v
        quad = Qd[i] + Qd - 2.0 * y[i] * y * Qi
        quad = ember.where(quad > 0, quad, _TAU)
        obj = ember.where(low & (b > 0), -(b * b) / quad, inf)
        j = int(ember.argmin(obj))
        Qj = Q[j]
        ai, aj, Ci, Cj, Gi, Gj, yi, yj, Qii, Qjj, Qij = _host(
            alpha[i], alpha[j], C[i], C[j], G[i], G[j], y[i], y[j], Qd[i], Qd[j], Qi[j]
        )
        oi, oj = ai, aj
        if yi != yj:
            q = Qii + Qjj + 2.0 * Qij
            q = q if q > 0 else _TAU
            delta = (-Gi - Gj) / q
            diff = ai - aj
            ai += delta
            aj += delta
            if diff > 0:
                if aj < 0:
                    aj, ai = 0.0, diff
            elif ai < 0:
                ai, aj = 0.0, -diff
            if diff > Ci - Cj:
                if ai > Ci:
                    ai, aj = Ci, Ci - diff
            elif aj > Cj:
                aj, ai = Cj, Cj + diff
        else:
            q = Qii + Qjj - 2.0 * Qij
            q = q if q > 0 else _TAU
            delta = (Gi - Gj) / q
            s = ai + aj
            ai -= delta
            aj += delta
            if s > Ci:
                if ai > Ci:
                    ai, aj = Ci, s - Ci
            elif aj < 0:
                aj, ai = 0.0, s
            if s > Cj:
                if aj > Cj:
                    aj, ai = Cj, s - Cj
            elif ai < 0:
                ai, aj = 0.0, s
        G = G + Qi * (ai - oi) + Qj * (aj - oj)
        alpha[i] = ai
        alpha[j] = aj
        it += 1
    return alpha, _rho(alpha, G, y, C), it


def _pair_update(ai, aj, Ci, Cj, Gi, Gj, Qii, Qjj, Qij):
    """libsvm's clipped update of two variables of the same label (sum ai + aj kept)."""
    q = Qii + Qjj - 2.0 * Qij
    q = q if q > 0 else _TAU
    delta = (Gi - Gj) / q
    s = ai + aj
    ai -= delta
    aj += delta
    if s > Ci:
        if ai > Ci:
            ai, aj = Ci, s - Ci
    elif aj < 0:
        aj, ai = 0.0, s
    if s > Cj:
        if aj > Cj:
            aj, ai = Cj, s - Cj
    elif ai < 0:
        ai, aj = 0.0, s
    return ai, aj


def smo_nu(Q, p, y, C, alpha0, *, tol, max_iter):
    """libsvm's nu-solver: SMO with both equalities ``y'a = const`` and ``e'a = const``, so
    the working pair always shares its label. Starts from the feasible ``alpha0``.

    Returns (alpha, rho, r, n_iter): ``rho = (r1 - r2) / 2`` and ``r = (r1 + r2) / 2`` from the
    free gradients of each label (libsvm's ``Solver_NU::calculate_rho``).
    """
    dt = Q.dtype
    alpha = alpha0.astype(dt)
    G = p.astype(dt) + Q @ alpha
    Qd = ember.diagonal(Q)
    pos = y > 0
    inf = float("inf")
    it = 0
    n = Q.shape[0]
    ypos = host_vector(pos)  # explicit host copy of the n labels (bookkeeping)
    limit = max_iter if max_iter >= 0 else max(10_000_000, 100 * n)
    while it < limit:
        at_lo = alpha <= 0
        at_hi = alpha >= C
        # first index per label: the maximal -G (y=+1, not at C) and G (y=-1, not at 0)
        vp = ember.where(pos & ~at_hi, -G, -inf)
        vn = ember.where(~pos & ~at_lo, G, -inf)
        gp_d, gn_d = ember.max(vp), ember.max(vn)
        gp2_d = ember.max(ember.where(pos & ~at_lo, G, -inf))
        gn2_d = ember.max(ember.where(~pos & ~at_hi, -G, -inf))
        gp, gn, gp2, gn2, ip, in_ = _host(
            gp_d, gn_d, gp2_d, gn2_d, ember.argmax(vp), ember.argmax(vn)
        )
        if max(gp + gp2, gn + gn2) < tol:
            break
        ip, in_ = int(ip), int(in_)
        Qp, Qn = Q[ip], Q[in_]
        diff = ember.where(pos, gp + G, gn - G)
        cand = ember.where(pos, ~at_lo, ~at_hi) & (diff > 0)
        first_d = ember.where(pos, Qd[ip], Qd[in_])
        quad = first_d + Qd - 2.0 * ember.where(pos, Qp, Qn)
        quad = ember.where(quad > 0, quad, _TAU)
        obj = ember.where(cand, -(diff * diff) / quad, inf)
        best, j = _host(ember.min(obj), ember.argmin(obj))
        if best == inf:
            break
        j = int(j)
        i = ip if ypos[j] else in_
        Qi, Qj = Q[i], Q[j]
        ai, aj, Ci, Cj, Gi, Gj, Qii, Qjj, Qij = _host(
            alpha[i], alpha[j], C[i], C[j], G[i], G[j], Qd[i], Qd[j], Qi[j]
        )
        oi, oj = ai, aj
        ai, aj = _pair_update(ai, aj, Ci, Cj, Gi, Gj, Qii, Qjj, Qij)
        G = G + Qi * (ai - oi) + Qj * (aj - oj)
        alpha[i] = ai
        alpha[j] = aj
        it += 1
    rho, r = _rho_nu(alpha, G, y, C)
    return alpha, rho, r, it


def _rho_nu(alpha, G, y, C):
    """Per label: mean gradient over free variables, else the middle of its bounds."""
    at_lo = alpha <= 0
    at_hi = alpha >= C
    free = ~(at_lo | at_hi)
    inf = float("inf")
    rs = []
    for lab in (y > 0, y < 0):
        vals = _host(
            (free & lab).astype(G.dtype).sum(),
            ember.where(free & lab, G, 0.0).sum(),
            ember.min(ember.where(at_lo & lab, G, inf)),
            ember.max(ember.where(at_hi & lab, G, -inf)),
        )
        nf, sf, ub, lb = vals
        rs.append(sf / nf if nf > 0 else (ub + lb) / 2.0)
    r1, r2 = rs
    return (r1 - r2) / 2.0, (r1 + r2) / 2.0


def _rho(alpha, G, y, C):
    """libsvm's offset: mean of y*G over free variables, else the middle of the bounds."""
    yG = y * G
    at_lo = alpha <= 0
    at_hi = alpha >= C
    free = ~(at_lo | at_hi)
    pos = y > 0
    inf = float("inf")
    # upper bound from (hi, y=-1) and (lo, y=+1); lower bound from (hi, y=+1), (lo, y=-1)
    ub_m = (at_hi & ~pos) | (at_lo & pos)
    lb_m = (at_hi & pos) | (at_lo & ~pos)
    nf, sf, ub, lb = _host(
        free.astype(yG.dtype).sum(),
        ember.where(free, yG, 0.0).sum(),
        ember.min(ember.where(ub_m, yG, inf)),
        ember.max(ember.where(lb_m, yG, -inf)),
    )
    if nf > 0:
        return sf / nf
    return (ub + lb) / 2.0


def box_cd(cols, Qd, p, C, *, tol, max_iter, newton_every=10, newton_max=512):
    """Greedy coordinate descent for ``min 1/2 a'Qa + p'a``, ``0 <= a <= C``; ``cols(idx)``
    gives Q[:, idx] for a device index vector (computed on the fly, so Q is never stored).

    Every ``newton_every`` steps the free variables (strictly inside the box, at most
    ``newton_max`` of them) take one Newton step on their sub-problem (a least-squares solve
    of Q_FF d = -g_F, cut back to stay in the box), which removes the zig-zag of plain
    coordinate descent among coupled margin variables. Returns (alpha, n_iter, converged).
    """
    n = p.shape[0]
    dev = p.device
    alpha = ember.zeros((n,), dtype=p.dtype, device=dev)
    G = p
    it = 0
    ok = False
    while it < max_iter:
        # projected gradient (0 for a variable with an empty box, C = 0)
        PG = ember.where(alpha <= 0, ember.minimum(G, 0.0), G)
        PG = ember.where(alpha >= C, ember.maximum(PG, 0.0), PG)
        big, small, t = _host(ember.max(PG), ember.min(PG), ember.argmax(ember.abs(PG)))
        # KKT: every projected gradient is 0; liblinear's max - min rule, with 0 included
        if max(big, 0.0) - min(small, 0.0) <= tol:
            ok = True
            break
        it += 1
        if it % newton_every == 0:
            free = (alpha > 0) & (alpha < C)
            # explicit host copy of the n-long free mask to list the (few) free indices
            F = np.nonzero(host_vector(free))[0]
            if 0 < len(F) <= newton_max:
                Fd = ember.asarray(F, device=dev)
                QF = cols(Fd)
                QFF = ember.take(QF, Fd, axis=0)
                gF = ember.take(G, Fd)
                dN = ember.linalg.lstsq(QFF, -gF, rcond=None)[0]
                # -g_F off the range of a singular Q_FF: the objective falls linearly along
                # that null direction, so follow it to the nearest bound; else Newton
                res = -(gF + QFF @ dN)
                rn, gn = _host((res * res).sum(), (gF * gF).sum())
                tries = [(res, float("inf"))] if rn > 1e-12 * gn else []
                tries.append((dN, 1.0))
                aF = ember.take(alpha, Fd)
                cF = ember.take(C, Fd)
                moved = False
                for dF, cap in tries:
                    lim = ember.where(
                        dF > 0, (cF - aF) / dF, ember.where(dF < 0, -aF / dF, float("inf"))
                    )
                    step, slope = _host(ember.min(lim), (gF * dF).sum())
                    step = min(step, cap)
                    if slope < 0 and 0 < step < float("inf"):
                        newF = ember.clip(aF + step * dF, 0.0, cF)
                        # snap a variable that reached its bound exactly onto it
                        newF = ember.where(newF < 1e-14 * cF, 0.0, newF)
                        newF = ember.where(newF > cF * (1 - 1e-14), cF, newF)
                        G = G + QF @ (newF - aF)
                        alpha[Fd] = newF
                        moved = True
                        break
                if moved:
                    continue
        t = int(t)
        at, gt, ct, qt = _host(alpha[t], G[t], C[t], Qd[t])
        new = min(max(at - gt / qt, 0.0), ct)
        if new != at:
            td = ember.asarray(np.asarray([t]), device=dev)
            G = G + cols(td)[:, 0] * (new - at)
            alpha[t] = new
    return alpha, it, ok


def host_vector(x):
    """An explicit host copy of a length-n vector (for O(n) support-vector bookkeeping)."""
    return np.asarray(ember.asnumpy(x))
