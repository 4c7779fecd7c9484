"""PyTorch's everyday tensor API on ember's array (issue: PyTorch code runs unchanged), with
NumPy's API intact where the two differ (the rule in ember/_torch.py), on both devices."""

from __future__ import annotations

import ember
import numpy as np
import pytest


def test_creation_and_default_dtypes(device):
    assert ember.tensor(1.5).dtype == ember.float32
    assert ember.tensor([1, 2]).dtype == ember.int64
    assert ember.tensor([True]).dtype == ember.bool
    assert ember.tensor([1 + 2j]).dtype == ember.complex64
    assert ember.tensor(np.arange(3.0)).dtype == ember.float64  # NumPy data keeps its dtype
    assert ember.randn(2, 3, device=device).dtype == ember.float32
    assert ember.rand((4,), device=device).shape == (4,)
    assert ember.zeros(2, 3, device=device).dtype == ember.float32  # PyTorch's spelling
    assert ember.zeros((2, 3)).dtype == ember.float64  # NumPy's
    assert ember.ones(size=(2, 2)).dtype == ember.float32
    assert ember.empty(2, 3, dtype=ember.int32).dtype == ember.int32
    ember.set_default_dtype(ember.float64)
    try:
        assert ember.tensor(1.5).dtype == ember.float64 and ember.randn(2).dtype == ember.float64
    finally:
        ember.set_default_dtype(ember.float32)
    assert (
        ember.float is ember.float32 and ember.long is ember.int64 and ember.double is ember.float64
    )
    assert ember.half is ember.float16 and ember.int is ember.int32


def test_tensor_copies_from_numpy_shares():
    a = np.arange(4.0)
    t = ember.tensor(a)
    f = ember.from_numpy(a)
    a[0] = 10
    assert float(t[0]) == 0.0 and float(f[0]) == 10.0


def test_randomness_is_seeded(device):
    ember.manual_seed(3)
    a = ember.randn(5, device=device)
    ember.manual_seed(3)
    b = ember.randn(5, device=device)
    np.testing.assert_array_equal(ember.asnumpy(a), ember.asnumpy(b))
    r = ember.randint(0, 10, (100,), device=device)
    assert r.dtype == ember.int64 and 0 <= int(r.min()) and int(r.max()) < 10
    assert ember.randint(5, (3,)).shape == (3,)
    p = ember.asnumpy(ember.randperm(10, device=device))
    assert sorted(p.tolist()) == list(range(10))


def test_size_is_numpys_int_and_pytorchs_call(device):
    x = ember.zeros((2, 3, 4), device=device)
    assert x.size == 24 and x.size + 1 == 25
    assert x.size() == (2, 3, 4) and x.size(0) == 2 and x.size(-1) == 4
    assert x.numel() == 24 and x.nelement() == 24 and x.dim() == 3 and x.ndimension() == 3
    assert x.element_size() == 8 and x.is_cuda == (device == "cuda")


def test_dim_and_keepdim_everywhere(device):
    a = np.arange(24.0).reshape(2, 3, 4)
    x = ember.asarray(a, device=device)
    h = ember.asnumpy
    np.testing.assert_array_equal(h(x.sum(dim=1)), a.sum(axis=1))
    np.testing.assert_array_equal(
        h(ember.sum(x, dim=(0, 2), keepdim=True)), a.sum(axis=(0, 2), keepdims=True)
    )
    np.testing.assert_array_equal(h(x.mean(dim=-1)), a.mean(axis=-1))
    np.testing.assert_array_equal(h(ember.cumsum(x, dim=2)), np.cumsum(a, axis=2))
    np.testing.assert_array_equal(h(ember.stack([x, x], dim=1)), np.stack([a, a], axis=1))
    np.testing.assert_array_equal(h(ember.cat([x, x], dim=2)), np.concatenate([a, a], axis=2))
    # NumPy's spellings stay NumPy's
    np.testing.assert_array_equal(h(x.max(axis=1)), a.max(axis=1))
    np.testing.assert_allclose(h(x.std(axis=0)), a.std(axis=0))


def test_pytorch_spelled_reductions_return_pytorchs_results(device):
    a = np.array([[3.0, 1.0, 4.0], [1.0, 5.0, 9.0]])
    x = ember.asarray(a, device=device)
    v, i = x.max(dim=1)
    np.testing.assert_array_equal(ember.asnumpy(v), [4.0, 9.0])
    np.testing.assert_array_equal(ember.asnumpy(i), [2, 2])
    v, i = ember.min(x, dim=0, keepdim=True)
    assert v.shape == (1, 3) and ember.asnumpy(i).tolist() == [[1, 0, 0]]
    np.testing.assert_allclose(ember.asnumpy(x.std(dim=1)), a.std(axis=1, ddof=1))
    np.testing.assert_allclose(ember.asnumpy(x.var(dim=1, unbiased=False)), a.var(axis=1))
    m = ember.median(x, dim=1)
    np.testing.assert_array_equal(ember.asnumpy(m.values), [3.0, 5.0])
    s = ember.sort(x, dim=1, descending=True)
    np.testing.assert_array_equal(ember.asnumpy(s.values), -np.sort(-a, axis=1))
    np.testing.assert_array_equal(
        ember.asnumpy(ember.argsort(x, dim=1, descending=True)), [[2, 0, 1], [2, 1, 0]]
    )
    vals, idx = x.topk(2, dim=1)
    np.testing.assert_array_equal(ember.asnumpy(vals), [[4.0, 3.0], [9.0, 5.0]])
    kv = ember.kthvalue(x, 2, dim=1)
    np.testing.assert_array_equal(ember.asnumpy(kv.values), [3.0, 5.0])


def test_shape_methods(device):
    a = np.arange(24.0).reshape(2, 3, 4)
    x = ember.asarray(a, device=device)
    h = ember.asnumpy
    assert x.view(-1, 4).shape == (6, 4) and x.view((4, 6)).shape == (4, 6)
    assert x.view(ember.int64).dtype == ember.int64  # NumPy's view(dtype)
    assert x.unsqueeze(1).shape == (2, 1, 3, 4) and x.unsqueeze(1).squeeze(1).shape == (2, 3, 4)
    np.testing.assert_array_equal(h(x.permute(2, 0, 1)), a.transpose(2, 0, 1))
    np.testing.assert_array_equal(h(x.transpose(0, 2)), a.swapaxes(0, 2))
    m = ember.asarray(a[0], device=device)
    np.testing.assert_array_equal(h(m.transpose(0, 1)), a[0].T)
    np.testing.assert_array_equal(h(x.flatten(1)), a.reshape(2, 12))
    np.testing.assert_array_equal(h(x.flatten()), a.ravel())
    np.testing.assert_array_equal(h(m.repeat(2, 3)), np.tile(a[0], (2, 3)))
    np.testing.assert_array_equal(h(m[0].repeat(2)), np.repeat(a[0, 0], 2))  # NumPy's
    e = ember.asarray(np.arange(3.0), device=device).expand(2, -1)
    np.testing.assert_array_equal(h(e), np.broadcast_to(np.arange(3.0), (2, 3)))
    assert x.view_as(ember.zeros((4, 6))).shape == (4, 6)
    assert x.reshape_as(ember.zeros((6, 4))).shape == (6, 4)
    assert x.contiguous() is x and x.is_contiguous() and not x.permute(2, 1, 0).is_contiguous()
    parts = x.chunk(2, dim=2)
    assert [p.shape for p in parts] == [(2, 3, 2), (2, 3, 2)]
    parts = x.split(2, dim=1)
    assert [p.shape for p in parts] == [(2, 2, 4), (2, 1, 4)]
    sec = ember.split(ember.asarray(np.arange(6.0)), 3)  # NumPy's: 3 sections
    assert [p.shape for p in sec] == [(2,), (2,), (2,)]
    assert len(x.unbind(1)) == 3 and x.narrow(2, 1, 2).shape == (2, 3, 2)


def test_dtype_and_copy_methods(device):
    x = ember.asarray(np.array([1.7, -2.2]), device=device)
    assert x.float().dtype == ember.float32 and x.long().dtype == ember.int64
    assert x.int().dtype == ember.int32 and x.double().dtype == ember.float64
    assert x.half().dtype == ember.float16 and x.bool().dtype == ember.bool
    assert x.type_as(ember.zeros(1, dtype=ember.int16)).dtype == ember.int16
    c = x.clone()
    c[0] = 5
    assert float(x[0]) == 1.7
    assert x.new_zeros(2, 2).dtype == ember.float64 and x.new_ones((3,)).shape == (3,)
    assert x.new_full((2,), 7).tolist() == [7.0, 7.0]
    if device == "cpu":
        assert x.numpy().tolist() == [1.7, -2.2]
    else:
        with pytest.raises(TypeError, match=r"x.cpu\(\).numpy\(\)"):
            x.numpy()


def test_inplace_methods(device):
    x = ember.zeros((3,), device=device)
    assert x.fill_(2.0) is x and x.tolist() == [2.0] * 3
    x.add_(1.0).mul_(2.0)
    assert x.tolist() == [6.0] * 3
    x.add_(ember.ones(3, device=device), alpha=2)
    assert x.tolist() == [8.0] * 3
    x.clamp_(max=5.0)
    assert x.tolist() == [5.0] * 3
    x.zero_()
    assert x.tolist() == [0.0] * 3
    x.copy_(np.arange(3.0))
    assert x.tolist() == [0.0, 1.0, 2.0]
    m = x.masked_fill(x > 0.5, -1.0)
    assert m.tolist() == [0.0, -1.0, -1.0]


def test_gather_scatter_index_select(device):
    a = np.arange(12.0).reshape(3, 4)
    x = ember.asarray(a, device=device)
    idx = ember.asarray(np.array([[0, 2], [1, 3], [3, 0]]), device=device)
    np.testing.assert_array_equal(
        ember.asnumpy(x.gather(1, idx)),
        np.take_along_axis(a, np.array([[0, 2], [1, 3], [3, 0]]), 1),
    )
    np.testing.assert_array_equal(
        ember.asnumpy(ember.index_select(x, 0, ember.asarray(np.array([2, 0]), device=device))),
        a[[2, 0]],
    )
    z = ember.zeros((3, 4), device=device)
    z.scatter_(1, idx, ember.ones((3, 2), device=device))
    want = np.zeros((3, 4))
    np.put_along_axis(want, np.array([[0, 2], [1, 3], [3, 0]]), 1.0, 1)
    np.testing.assert_array_equal(ember.asnumpy(z), want)
    acc = ember.zeros(3, device=device).scatter_add_(
        0, ember.asarray(np.array([0, 1, 0, 2, 0]), device=device), ember.ones(5, device=device)
    )
    assert acc.tolist() == [3.0, 1.0, 1.0]
    assert ember.masked_select(x, x > 8).tolist() == [9.0, 10.0, 11.0]


def test_products_norms_and_distances(device):
    rng = np.random.default_rng(0)
    a, b = rng.random((2, 3, 4)), rng.random((2, 4, 5))
    x, y = ember.asarray(a, device=device), ember.asarray(b, device=device)
    np.testing.assert_allclose(ember.asnumpy(ember.bmm(x, y)), a @ b)
    c = rng.random((2, 3, 5))
    np.testing.assert_allclose(
        ember.asnumpy(ember.baddbmm(ember.asarray(c, device=device), x, y, beta=0.5, alpha=2)),
        0.5 * c + 2 * (a @ b),
    )
    np.testing.assert_allclose(float(ember.norm(x)), np.linalg.norm(a.ravel()))
    np.testing.assert_allclose(ember.asnumpy(ember.norm(x, dim=2)), np.linalg.norm(a, axis=2))
    p, q = rng.random((4, 3)), rng.random((5, 3))
    d = ember.cdist(ember.asarray(p, device=device), ember.asarray(q, device=device))
    np.testing.assert_allclose(ember.asnumpy(d), np.sqrt(((p[:, None] - q[None]) ** 2).sum(-1)))
    np.testing.assert_allclose(
        float(ember.dist(ember.asarray(p[0]), ember.asarray(q[0]))), np.linalg.norm(p[0] - q[0])
    )
    assert ember.clamp(ember.asarray([-2.0, 0.5, 3.0]), min=0, max=1).tolist() == [0.0, 0.5, 1.0]


def test_inference_mode_and_data(device):
    w = ember.ones(3, requires_grad=True, device=device)
    with ember.inference_mode():
        y = w * 2
    assert not y.requires_grad
    assert not w.data.requires_grad
    assert "requires_grad=True" in repr(w)
    assert "grad_fn=<" in repr(w * 2)


def test_register_hook(device):
    w = ember.ones(3, requires_grad=True, device=device)
    seen = []
    h = w.register_hook(lambda g: seen.append(ember.asnumpy(g).tolist()))
    (w * 2).sum().backward()
    assert seen == [[2.0, 2.0, 2.0]] and w.grad.tolist() == [2.0, 2.0, 2.0]
    h.remove()
    w.grad = None
    (w * 3).sum().backward()
    assert len(seen) == 1 and w.grad.tolist() == [3.0, 3.0, 3.0]
    # a hook on a non-leaf may replace the gradient flowing back
    x = ember.ones(2, requires_grad=True, device=device)
    y = x * 5
    y.register_hook(lambda g: g * 10)
    y.sum().backward()
    assert x.grad.tolist() == [50.0, 50.0]
    with pytest.raises(TypeError, match="must return an array or None"):
        z = ember.ones(2, requires_grad=True, device=device)
        z.register_hook(lambda g: "nope")
        (z * 1).sum().backward()
    with pytest.raises(Exception, match="does not require grad"):
        ember.ones(2).register_hook(print)
