"""Test support for ember.nn / ember.optim: gradient checks against central finite differences
(float64), conversions, and torch helpers (torch is optional: on the GPU machine only)."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from _helpers import to_numpy


# Imported by the nn/optim test modules, where it is autouse.
@pytest.fixture(autouse=True)
def _cpu_by_default():
    # arrays made without a device stay on the CPU even where a GPU is the default, so tests
    # without the device fixture check the CPU (whose bad-index checks are synchronous)
    with ember.device("cpu"):
        yield


def em(a, device="cpu", dtype=None):
    """A fresh ember array from array-like `a` (a private copy)."""
    a = np.array(a, dtype=dtype, copy=True)
    return ember.asarray(a, device=device)


def no_grad():
    return ember.no_grad()


def gradcheck(fn, inputs, *, wrt=None, device="cpu", eps=1e-6, rtol=1e-5, atol=1e-7, seed=0):
    """Checks the gradients autograd gives for ``fn(*inputs)`` against central differences.

    `inputs` are NumPy arrays (float64 ones are differentiated unless `wrt` lists the indices
    to check); the scalar objective is ``sum(fn(*x) * c)`` with a fixed random cotangent c,
    so every output element's gradient takes part. Raises AssertionError naming the input and
    the worst element on a mismatch. Returns the analytic gradients.
    """
    inputs = [np.array(a, copy=True) for a in inputs]
    if wrt is None:
        wrt = [i for i, a in enumerate(inputs) if a.dtype == np.float64]
    rng = np.random.default_rng(seed)

    def run(arrays, track):
        xs = [ember.asarray(np.array(a, copy=True), device=device) for a in arrays]
        if track:
            for i in wrt:
                xs[i].requires_grad_(True)
        return xs, fn(*xs)

    xs, out = run(inputs, True)
    cot = rng.standard_normal(out.shape)
    obj = (out * ember.asarray(cot, device=device)).sum()
    obj.backward()
    analytic = []
    for i in wrt:
        g = xs[i].grad
        analytic.append(np.zeros_like(inputs[i]) if g is None else to_numpy(g).astype(np.float64))

    def objective(arrays):
        with no_grad():
            _, o = run(arrays, False)
            return float(np.sum(to_numpy(o).astype(np.float64) * cot))

    for k, i in enumerate(wrt):
        x = inputs[i]
        num = np.zeros_like(x)
        for idx in np.ndindex(x.shape):
            orig = x[idx]
            x[idx] = orig + eps
            fp = objective(inputs)
            x[idx] = orig - eps
            fm = objective(inputs)
            x[idx] = orig
            num[idx] = (fp - fm) / (2 * eps)
        bad = ~(np.abs(analytic[k] - num) <= atol + rtol * np.abs(num))
        if bad.any():
            j = np.unravel_index(np.argmax(np.abs(analytic[k] - num)), num.shape)
            raise AssertionError(
                f"gradient of input {i} differs from finite differences at {tuple(map(int, j))}: "
                f"autograd {analytic[k][j]!r}, numeric {num[j]!r} "
                f"({int(bad.sum())} of {bad.size} elements off)"
            )
    return analytic


def to_torch(torch, a, requires_grad=False):
    t = torch.tensor(np.array(to_numpy(a) if isinstance(a, ember.ndarray) else a, copy=True))
    if requires_grad:
        t.requires_grad_(True)
    return t
