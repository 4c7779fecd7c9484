"""More of PyTorch's everyday API (ember/_torch_more.py; lr schedulers in test_lr_scheduler.py)
and NumPy's function-backed methods: each against NumPy/SciPy or PyTorch's documented
semantics, on both devices."""

from __future__ import annotations

import ember
import ember as torch
import numpy as np
import pytest
from scipy import special

F = ember.nn.functional


def _n(x):
    return ember.asnumpy(x)


def _x(device, shape=(4, 5), seed=0):
    a = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return ember.asarray(a, device=device), a


def test_tensor_type_and_legacy_constructors(device):
    x, _ = _x(device)
    assert isinstance(x, torch.Tensor) and issubclass(ember.ndarray, torch.Tensor)
    assert not isinstance(np.ones(2), torch.Tensor) and torch.is_tensor(x)
    t = torch.Tensor([1, 2])
    assert t.dtype == torch.float32 and _n(t).tolist() == [1.0, 2.0]
    assert torch.Tensor(2, 3).shape == (2, 3) and torch.Tensor(2, 3).dtype == torch.float32
    for cls, dt in ((torch.LongTensor, "int64"), (torch.IntTensor, "int32"),
                    (torch.DoubleTensor, "float64"), (torch.BoolTensor, "bool"),
                    (torch.ByteTensor, "uint8"), (torch.HalfTensor, "float16")):  # fmt: skip
        assert str(cls([1, 0]).dtype) == dt and str(cls(3).dtype) == dt
    assert str(torch.FloatTensor([1], device=device).device).startswith(device)
    with pytest.raises(TypeError, match="expected data or sizes"):
        torch.Tensor(2, 1.5)
    assert torch.is_floating_point(x) and not torch.is_floating_point(torch.LongTensor([1]))
    assert torch.is_complex(x.astype("complex64")) and not x.is_complex()
    assert x.type() == ("ember.cuda.FloatTensor" if device == "cuda" else "ember.FloatTensor")
    assert x.type(torch.float64).dtype == torch.float64
    assert x.type(torch.LongTensor).dtype == torch.int64


def test_as_tensor_shares_host_memory():
    a = np.arange(3.0)
    t = torch.as_tensor(a, device="cpu")
    a[0] = 9
    assert _n(t)[0] == 9.0


def test_to_forms(device):
    x, a = _x(device)
    assert x.to(device) is x and x.to(x.dtype) is x and x.to(x) is x
    assert x.to(torch.float16).dtype == torch.float16
    y = x.to("cpu", torch.float64)
    assert y.dtype == torch.float64 and y.device.type == "cpu"
    np.testing.assert_allclose(_n(y), a.astype(np.float64))
    z = x.to(dtype=torch.int32, device="cpu")
    assert z.dtype == torch.int32 and z.device.type == "cpu"
    assert x.to(y).dtype == torch.float64 and x.to(y).device.type == "cpu"
    c = x.to(device, copy=True)
    assert c is not x and np.array_equal(_n(c), a)


def test_repeat_interleave(device):
    x = ember.asarray(np.array([[1, 2], [3, 4]]), device=device)
    np.testing.assert_array_equal(_n(torch.repeat_interleave(x, 2)), np.repeat([[1, 2], [3, 4]], 2))
    r = ember.asarray(np.array([1, 2]), device=device)
    np.testing.assert_array_equal(_n(x.repeat_interleave(r, dim=0)), [[1, 2], [3, 4], [3, 4]])
    np.testing.assert_array_equal(_n(torch.repeat_interleave(r)), [0, 1, 1])


def test_multinomial(device):
    torch.manual_seed(0)
    w = ember.asarray(np.array([[0.0, 1.0, 3.0, 0.0], [2.0, 0.0, 0.0, 2.0]]), device=device)
    s = torch.multinomial(w, 4000, replacement=True)
    assert s.shape == (2, 4000) and s.dtype == torch.int64
    c0 = np.bincount(_n(s[0]), minlength=4) / 4000
    c1 = np.bincount(_n(s[1]), minlength=4) / 4000
    np.testing.assert_allclose(c0, [0, 0.25, 0.75, 0], atol=0.03)
    np.testing.assert_allclose(c1, [0.5, 0, 0, 0.5], atol=0.03)
    for _ in range(20):  # without replacement: distinct, never a zero weight
        d = _n(torch.multinomial(w, 2))
        assert sorted(d[0]) == [1, 2] and sorted(d[1]) == [0, 3]
    one = torch.multinomial(ember.asarray(np.array([1.0, 1.0, 1.0]), device=device), 3)
    assert one.shape == (3,) and sorted(_n(one)) == [0, 1, 2]
    with pytest.raises(RuntimeError, match="without replacement"):
        torch.multinomial(w, 5)
    with pytest.raises(RuntimeError, match="invalid probability"):
        torch.multinomial(w, 3)  # only 2 non-zero categories per row
    with pytest.raises(RuntimeError, match="invalid probability"):
        torch.multinomial(ember.asarray(np.array([1.0, -1.0]), device=device), 1, True)


def test_bernoulli_and_random_fills(device):
    torch.manual_seed(1)
    p = ember.full((20000,), 0.3, device=device)
    b = torch.bernoulli(p)
    assert b.dtype == p.dtype and set(np.unique(_n(b))) <= {0.0, 1.0}
    assert abs(float(b.mean()) - 0.3) < 0.02
    assert float(torch.bernoulli(ember.zeros(100, device=device)).sum()) == 0
    x = ember.empty(20000, device=device, dtype="float32")
    assert x.normal_(2.0, 0.5) is x
    assert abs(float(x.mean()) - 2.0) < 0.02 and abs(float(x.std()) - 0.5) < 0.02
    x.uniform_(-1, 3)
    assert float(x.min()) >= -1 and float(x.max()) < 3 and abs(float(x.mean()) - 1) < 0.05
    x.exponential_(2.0)
    assert float(x.min()) >= 0 and abs(float(x.mean()) - 0.5) < 0.02
    x.bernoulli_(0.25)
    assert abs(float(x.mean()) - 0.25) < 0.02
    i = ember.empty(1000, dtype="int64", device=device).random_(3, 7)
    assert set(np.unique(_n(i))) == {3, 4, 5, 6}


def test_logsumexp_lerp_addc(device):
    x, a = _x(device)
    for dim, keep in ((1, False), (0, True), ((0, 1), False)):
        got = torch.logsumexp(x, dim, keepdim=keep)
        np.testing.assert_allclose(_n(got), special.logsumexp(a, axis=dim, keepdims=keep),
                                   rtol=1e-5)  # fmt: skip
    m = ember.asarray(np.array([[-np.inf, -np.inf], [0.0, 1.0]]), device=device)
    np.testing.assert_allclose(_n(m.logsumexp(1)), [-np.inf, np.log(1 + np.e)])
    g = x.detach().requires_grad_()
    torch.logsumexp(g, 1).sum().backward()
    np.testing.assert_allclose(_n(g.grad), special.softmax(a, axis=1), rtol=1e-5)
    y, b = _x(device, seed=1)
    np.testing.assert_allclose(_n(torch.lerp(x, y, 0.3)), a + 0.3 * (b - a), rtol=1e-5)
    np.testing.assert_allclose(_n(x.clone().lerp_(y, 0.5)), a + 0.5 * (b - a), rtol=1e-5)
    np.testing.assert_allclose(_n(torch.addcmul(x, x, y, value=2)), a + 2 * a * b, rtol=1e-5)
    z = x.clone()
    assert z.addcdiv_(x, y + 10, value=0.5) is z
    np.testing.assert_allclose(_n(z), a + 0.5 * a / (b + 10), rtol=1e-5)


def test_det_inverse_logdet(device):
    a = np.array([[2.0, 1.0], [1.0, 3.0]])
    m = ember.asarray(a, device=device)
    np.testing.assert_allclose(float(torch.det(m)), 5.0)
    np.testing.assert_allclose(_n(m.inverse()), np.linalg.inv(a))
    np.testing.assert_allclose(float(torch.logdet(m)), np.log(5.0))
    assert np.isnan(float(torch.logdet(ember.asarray(-a, device=device)[:1, :1])))


def test_nonzero_where_triu_linspace(device):
    x, a = _x(device)
    assert isinstance(torch.nonzero(x > 0), tuple)  # NumPy's form without as_tuple
    np.testing.assert_array_equal(_n(torch.nonzero(x > 0, as_tuple=False)), np.argwhere(a > 0))
    got = torch.nonzero(x > 0, as_tuple=True)
    for g, w in zip(got, np.nonzero(a > 0), strict=True):
        np.testing.assert_array_equal(_n(g), w)
    np.testing.assert_array_equal(_n((x > 0).nonzero(as_tuple=False)), np.argwhere(a > 0))
    for g, w in zip(torch.where(x > 0), np.where(a > 0), strict=True):
        np.testing.assert_array_equal(_n(g), w)
    o = ember.ones((3, 3), device=device)
    np.testing.assert_array_equal(_n(torch.triu(o, diagonal=1)), np.triu(np.ones((3, 3)), 1))
    np.testing.assert_array_equal(_n(torch.tril(o, diagonal=-1)), np.tril(np.ones((3, 3)), -1))
    np.testing.assert_allclose(_n(torch.linspace(0, 1, steps=5, device=device)),
                               np.linspace(0, 1, 5))  # fmt: skip


def test_inplace_unary_methods(device):
    x, a = _x(device)
    pos = ember.abs(x) + 0.5
    for name, ref in (("abs", np.abs), ("exp", np.exp), ("neg", np.negative), ("tanh", np.tanh),
                      ("floor", np.floor), ("sigmoid", special.expit),
                      ("relu", lambda v: np.maximum(v, 0))):  # fmt: skip
        y = x.clone()
        assert getattr(y, f"{name}_")() is y
        np.testing.assert_allclose(_n(y), ref(a), rtol=1e-5, atol=1e-6, err_msg=name)
    pa = np.abs(a) + 0.5
    for name, ref in (("sqrt", np.sqrt), ("log", np.log), ("rsqrt", lambda v: 1 / np.sqrt(v)),
                      ("reciprocal", lambda v: 1 / v)):  # fmt: skip
        y = pos.clone()
        getattr(y, f"{name}_")()
        np.testing.assert_allclose(_n(y), ref(pa), rtol=1e-5, err_msg=name)
    y = x.clone().pow_(2)
    np.testing.assert_allclose(_n(y), a**2, rtol=1e-5)
    np.testing.assert_allclose(_n(x.clone().clamp_min_(0.1)), np.maximum(a, 0.1))


def test_normalize(device):
    x, a = _x(device)
    for p, dim in ((2.0, 1), (1.0, 0), (3.0, -1)):
        want = a / np.maximum(np.sum(np.abs(a) ** p, axis=dim, keepdims=True) ** (1 / p), 1e-12)
        np.testing.assert_allclose(_n(F.normalize(x, p=p, dim=dim)), want, rtol=1e-5)
    z = ember.zeros((2, 3), device=device)
    assert float(F.normalize(z).sum()) == 0.0  # eps keeps zero rows finite


def test_numpy_methods_that_are_functions(device):
    """NumPy's ndarray methods backed by ember functions (found by the same probe)."""
    x, a = _x(device, (5, 5))
    np.testing.assert_allclose(_n(x.round(2)), a.round(2))
    np.testing.assert_allclose(_n(x.dot(x)), a.dot(a), rtol=1e-5)
    np.testing.assert_allclose(float(x.trace(1)), a.trace(1), rtol=1e-5)
    np.testing.assert_array_equal(_n(x.diagonal(-1)), a.diagonal(-1))
    assert x.tobytes() == a.tobytes()
    y = x.copy()
    y.put([0, 7], [9.0, 8.0])
    b = a.copy()
    b.put([0, 7], [9.0, 8.0])
    np.testing.assert_array_equal(_n(y), b)


def test_logsumexp_takes_scipy_names_and_is_quiet_on_minus_inf(device):
    import warnings

    from scipy.special import logsumexp as sp_lse

    a = np.array([[-np.inf, -np.inf], [0.0, 1.0], [3.0, -2.0]])
    x = ember.asarray(a, device=device)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = ember.logsumexp(x, axis=1)
    np.testing.assert_allclose(ember.asnumpy(got), sp_lse(a, axis=1))
    np.testing.assert_allclose(
        ember.asnumpy(ember.logsumexp(x, axis=0, keepdims=True)), sp_lse(a, axis=0, keepdims=True)
    )
    np.testing.assert_allclose(float(ember.logsumexp(x[1:])), sp_lse(a[1:]))
    with pytest.raises(TypeError, match="dim or axis"):
        ember.logsumexp(x, 0, axis=1)
