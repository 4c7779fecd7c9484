"""Limited-memory BFGS over ember arrays (used by LogisticRegression).

The iterate, gradient and the (s, y) history stay on the device; only the scalars the line
search and the stopping rule need (loss values, dot products, max |g|) are read back.
"""

from __future__ import annotations

import ember

__all__ = ["lbfgs_minimize"]


def _dot(a, b):
    return float((a * b).sum())


def lbfgs_minimize(fun, x0, *, max_iter=100, gtol=1e-4, ftol=None, m=10):
    """Minimise ``fun(x) -> (value, grad)`` from ``x0``.

    Stops when ``max|g| <= gtol`` (scipy's projected-gradient rule for unbounded problems) or
    the relative decrease falls below ``ftol``; returns ``(x, value, n_iter, converged)``.
    """
    if ftol is None:
        ftol = 64 * float(ember.finfo(x0.dtype).eps)
    x = x0
    f, g = fun(x)
    S, Y, RHO = [], [], []
    n_iter = 0
    if float(ember.abs(g).max()) <= gtol:
        return x, f, 0, True
    for n_iter in range(1, max_iter + 1):
        # Two-loop recursion: d = -H g.
        q = g
        alphas = []
        for s, y, rho in zip(reversed(S), reversed(Y), reversed(RHO), strict=True):
            a = rho * _dot(s, q)
            alphas.append(a)
            q = q - a * y
        if S:
            gamma = _dot(S[-1], Y[-1]) / _dot(Y[-1], Y[-1])
        else:
            gamma = 1.0 / max(float(ember.sqrt((g * g).sum())), 1e-12)
        r = q * gamma
        for (s, y, rho), a in zip(zip(S, Y, RHO, strict=True), reversed(alphas), strict=True):
            b = rho * _dot(y, r)
            r = r + (a - b) * s
        d = -r
        gd = _dot(g, d)
        if gd >= 0:  # not a descent direction: restart from steepest descent
            S, Y, RHO = [], [], []
            d = -g
            gd = -_dot(g, g)
        # Backtracking line search with the Armijo condition.
        t = 1.0
        while True:
            xn = x + t * d
            fn, gn = fun(xn)
            if fn <= f + 1e-4 * t * gd or t < 1e-20:
                break
            t *= 0.5
        s = xn - x
        y = gn - g
        sy = _dot(s, y)
        if sy > 1e-10 * _dot(y, y):
            S.append(s)
            Y.append(y)
            RHO.append(1.0 / sy)
            if len(S) > m:
                S.pop(0)
                Y.pop(0)
                RHO.pop(0)
        df = f - fn
        x, f, g = xn, fn, gn
        if float(ember.abs(g).max()) <= gtol:
            return x, f, n_iter, True
        if df <= ftol * max(abs(f), abs(fn), 1.0) and t >= 1e-20 and df >= 0 and n_iter > 1:
            return x, f, n_iter, True
    return x, f, n_iter, False


def fista_minimize(fun, x0, prox, nonsmooth, *, max_iter=100, tol=1e-4):
    """Accelerated proximal gradient (FISTA, backtracking on the Lipschitz estimate, restart
    when the objective rises) for ``f(x) + h(x)``: ``fun(x) -> (f, grad f)``,
    ``prox(v, step)`` the proximal map of ``step * h`` and ``nonsmooth(x) = h(x)``.

    Stops when the largest coordinate change is at most ``tol`` times the largest coordinate
    (scikit-learn's SAGA rule); returns ``(x, objective, n_iter, converged)``.
    """
    x = x0
    y = x0
    fx, _ = fun(x)
    obj = fx + nonsmooth(x)
    L = 1.0
    tk = 1.0
    for it in range(1, max_iter + 1):
        fy, gy = fun(y)
        while True:
            xn = prox(y - gy / L, 1.0 / L)
            d = xn - y
            fxn, _ = fun(xn)
            if fxn <= fy + _dot(gy, d) + 0.5 * L * _dot(d, d) or L > 1e20:
                break
            L *= 2.0
        obj_n = fxn + nonsmooth(xn)
        change = float(ember.abs(xn - x).max())
        scale = float(ember.abs(xn).max())
        if change <= tol * max(scale, 1e-300):
            if obj_n <= obj:
                x, obj = xn, obj_n
            return x, obj, it, True
        if obj_n > obj + 1e-15 * abs(obj):  # adaptive restart: drop the momentum
            tk = 1.0
            y = x
            continue
        tn = (1.0 + (1.0 + 4.0 * tk * tk) ** 0.5) / 2.0
        y = xn + ((tk - 1.0) / tn) * (xn - x)
        x, obj, tk = xn, obj_n, tn
        L *= 0.9  # let the step grow back
    return x, obj, max_iter, False
