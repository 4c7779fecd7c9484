"""Fits the erfc coefficients of ember.nn.functional's composed erf (run: python tools/fit_erfc.py).

erfc(x) = t * exp(-x^2 + P(2t - 1)) for x >= 0 with t = 1 / (1 + x/2); P is a least-squares
Chebyshev fit on 8000 Chebyshev nodes of t in (0, 1], converted to the power basis in y = 2t - 1
(|y| <= 1 keeps Horner's rule well conditioned). Degree 9 reaches ~1e-7 relative error (float32
and below), degree 24 ~5e-15 for x < 3 and ~6e-14 overall (float64; the rounding of x^2 dominates).
Needs NumPy and SciPy (scipy.special.erfcx is the reference).
"""

import numpy as np
from scipy.special import erfc, erfcx


def fit(degree):
    t = np.cos(np.linspace(0, np.pi, 8001)) * 0.5 + 0.5
    t = t[t > 1e-12]
    x = 2 * (1 - t) / t
    f = np.log(erfcx(x)) - np.log(t)
    c = np.polynomial.chebyshev.Chebyshev.fit(2 * t - 1, f, degree, domain=[-1, 1])
    return c.convert(kind=np.polynomial.Polynomial).coef


def evaluate(coef, x):
    t = 1 / (1 + x / 2)
    y = 2 * t - 1
    s = np.full_like(t, coef[-1])
    for a in coef[-2::-1]:
        s = s * y + a
    return t * np.exp(s - x * x)


if __name__ == "__main__":
    xs = np.concatenate([np.linspace(0, 6, 200001), np.linspace(6, 26, 20001)])
    for degree in (9, 24):
        coef = fit(degree)
        err = np.abs(evaluate(coef, xs) - erfc(xs)) / erfc(xs)
        print(f"degree {degree}: max relative error {err.max():.2e}")
        print("(" + ", ".join(repr(float(v)) for v in coef) + ")")
