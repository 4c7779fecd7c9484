"""ember.topk on both devices against a stable NumPy sort (and PyTorch's values where NaN is
involved): the GPU's selection kernel (small k, rows of >= 256) and the sort path."""

from __future__ import annotations

import ember
import ember._topk_gpu as _tk
import numpy as np
import pytest


@pytest.fixture(autouse=True, params=["select", "sort"])
def path(request, monkeypatch):
    """Each test on both GPU paths: the selection kernel and the sort (the CPU has one)."""
    monkeypatch.setattr(_tk, "ENABLED", request.param == "select")
    return request.param


def _expected(a, k, largest, axis):
    """Indices of a stable sort's first k (ties: lower index first) along ``axis``."""
    b = np.moveaxis(a, axis, -1)
    if b.dtype.kind == "f":
        key = np.where(np.isnan(b), np.inf, b) if largest else b
    else:
        key = b
    if largest:  # descending and stable: sort the negated values (exact in float64/int64)
        neg = -key.astype(np.float64 if b.dtype.kind == "f" else np.int64)
        order = np.argsort(neg, axis=-1, kind="stable")
    else:
        order = np.argsort(key, axis=-1, kind="stable")
    return np.moveaxis(order[..., :k], -1, axis)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
@pytest.mark.parametrize("k", [1, 7, 32])
@pytest.mark.parametrize("largest", [True, False])
def test_topk_matches_a_stable_sort(device, dtype, k, largest):
    rng = np.random.default_rng(k)
    if dtype.startswith("int"):
        a = rng.integers(-50, 50, size=(5, 3000)).astype(dtype)  # many ties
    else:
        a = rng.standard_normal((5, 3000)).astype(dtype)
        a[:, ::97] = a[:, 1:2]  # ties across the row
    x = ember.asarray(a, device=device)
    v, i = ember.topk(x, k, dim=1, largest=largest)
    want = _expected(a, k, largest, 1)
    np.testing.assert_array_equal(ember.asnumpy(i), want)
    np.testing.assert_array_equal(ember.asnumpy(v), np.take_along_axis(a, want, axis=1))
    assert v.dtype == x.dtype and i.dtype == ember.int64


@pytest.mark.parametrize(
    "shape,dim", [((300,), 0), ((4, 700, 3), 1), ((4, 3, 700), 2), ((2, 513, 3), -2)]
)
def test_topk_any_axis_and_strides(device, shape, dim):
    rng = np.random.default_rng(1)
    a = rng.standard_normal(shape).astype("float32")
    x = ember.asarray(a, device=device)
    for src in (x, x[..., ::1]):
        v, i = ember.topk(src, 5, dim=dim)
        want = _expected(a, 5, True, dim)
        np.testing.assert_array_equal(ember.asnumpy(i), want)
    # a transposed (non-contiguous) input
    t = ember.asarray(rng.standard_normal((600, 4)).astype("float32"), device=device).T
    v, i = ember.topk(t, 3, dim=1, largest=False)
    np.testing.assert_array_equal(ember.asnumpy(i), _expected(ember.asnumpy(t), 3, False, 1))


def test_topk_nan_and_inf_as_pytorch(device):
    torch = pytest.importorskip("torch")
    a = np.random.default_rng(2).standard_normal((3, 1000)).astype("float32")
    a[0, [5, 600]] = np.nan
    a[1, 10] = np.inf
    a[2, 20] = -np.inf
    x = ember.asarray(a, device=device)
    for largest in (True, False):
        v, i = ember.topk(x, 4, dim=1, largest=largest)
        tv, ti = torch.topk(torch.from_numpy(a), 4, dim=1, largest=largest)
        np.testing.assert_array_equal(ember.asnumpy(v), tv.numpy())
        np.testing.assert_array_equal(ember.asnumpy(i), ti.numpy())


def test_topk_values_carry_gradients(device):
    a = np.random.default_rng(3).standard_normal((2, 1024)).astype("float32")
    x = ember.tensor(a, device=device, requires_grad=True)
    v, i = ember.topk(x, 3, dim=1)
    v.sum().backward()
    g = np.zeros_like(a)
    np.put_along_axis(g, ember.asnumpy(i), 1.0, axis=1)
    np.testing.assert_array_equal(ember.asnumpy(x.grad), g)


def test_topk_k_larger_than_the_row_fails(device):
    x = ember.zeros((2, 300), device=device)
    with pytest.raises((ValueError, IndexError, RuntimeError)):
        ember.topk(x, 301, dim=1)
