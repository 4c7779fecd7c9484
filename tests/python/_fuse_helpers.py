"""What the ember.fuse and ember.compile tests share: values with each dtype's special cases,
the bitwise comparison of results with eager ember's, and the op-table rows a dtype takes."""

from __future__ import annotations

import ember
import numpy as np

OPS = ember._core.elementwise_ops()


def values(dtype, n=23, seed=0, device="cpu"):
    """Values with the dtype's special cases (NaN, inf, -0.0, extremes, zero)."""
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return ember.asarray(rng.integers(0, 2, n).astype(bool), device=device)
    if dtype[0] in "iu":
        info = np.iinfo(dtype)
        v = rng.integers(max(info.min, -100), min(info.max, 100), n, endpoint=True)
        v = v.astype(dtype)
        v[:3] = [info.min, info.max, 0]
        return ember.asarray(v, device=device)
    base = rng.standard_normal(n) * 3
    base[:5] = [np.nan, np.inf, -np.inf, -0.0, 0.5]
    if dtype.startswith("complex"):
        return ember.asarray((base + 1j * rng.standard_normal(n)).astype(dtype), device=device)
    if dtype == "bfloat16":
        return ember.asarray(base, device=device).astype("bfloat16")
    return ember.asarray(base.astype(dtype), device=device)


def bits(a):
    v = np.ascontiguousarray(ember.asnumpy(a))
    return v.dtype, v.shape, v.view(np.uint8).tobytes()


def equal_results(got, want, device):
    """Bitwise equal on the CPU (and for integers anywhere). Complex products: GCC's x86-64-v3
    code may use an FMA in one of the eager loop's (vectorized) and the fused loop's complex
    multiplication and not in the other; the GPU build is not compared bit for bit: within a
    few ulps."""
    g, w = ember.asnumpy(got), ember.asnumpy(want)
    assert got.dtype == want.dtype and g.shape == w.shape
    if (device == "cpu" and g.dtype.kind != "c") or g.dtype.kind in "biu":
        assert bits(got) == bits(want)
    else:
        np.testing.assert_allclose(
            g.astype(np.complex128 if g.dtype.kind == "c" else np.float64),
            w.astype(np.complex128 if w.dtype.kind == "c" else np.float64),
            rtol=4 * float(np.finfo(np.float16 if g.dtype.itemsize == 2 else g.dtype).eps),
            atol=0,
            equal_nan=True,
        )


def supported_ops(dtype):
    """The (name, arity) rows of the op table that eager ember takes for `dtype`."""
    x = values(dtype)
    good = []
    with np.errstate(all="ignore"):
        for name, arity in OPS:
            try:
                getattr(ember, name)(*[x] * arity)
            except (TypeError, ValueError):
                continue
            good.append((name, arity))
    return good
