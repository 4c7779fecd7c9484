"""ember.compile's matmul epilogues (issue 29): F.linear / nn.Linear followed by a ReLU or a tanh
GELU is one library call (cuBLASLt's bias+activation epilogue on CUDA; ember's composed ops on
the CPU, equal to eager bit for bit); a pre-activation used elsewhere keeps the matmul alone;
gradients equal eager's; batch sizes never recompile. Also the gradient of a reduction's
elementwise epilogue (``x.sum() * 2 + 1``), which a compiled call once dropped."""

from __future__ import annotations

import ember
import ember.nn.functional as F
import numpy as np
import pytest
from ember import nn
from ember.nn import _cublaslt
from ember.nn._linear_act import linear_act


def _arr(shape, device, dtype="float32", seed=0):
    a = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return ember.asarray(a, device=device).astype(dtype)


def _np(x):
    return ember.asnumpy(x.astype(ember.float32) if x.dtype.name in ("float16", "bfloat16") else x)


class _MLP(nn.Module):
    def __init__(self, device, dtype="float32"):
        super().__init__()
        self.fc1 = nn.Linear(16, 32, device=device, dtype=getattr(ember, dtype))
        self.fc2 = nn.Linear(32, 32, device=device, dtype=getattr(ember, dtype))
        self.fc3 = nn.Linear(32, 4, device=device, dtype=getattr(ember, dtype))

    def forward(self, x):
        x = F.relu(self.fc1(x))
        x = F.gelu(self.fc2(x), approximate="tanh")
        return self.fc3(x).relu()


def _tol(device, dtype):
    if device == "cpu":
        return 0.0  # the same composed ops as eager
    return {"float32": 2e-2, "float16": 2e-2, "bfloat16": 8e-2}[dtype]  # TF32 / one rounding


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_mlp_forward_and_gradients_equal_eager(device, dtype):
    if device == "cpu" and dtype != "float32":
        pytest.skip("half-precision matmuls are a GPU concern here")
    m = _MLP(device, dtype)
    cm = ember.compile(m)
    x = _arr((8, 16), device, dtype)
    calls = _cublaslt.CALLS[0]
    want = m(x)
    got = cm(x)
    tol = _tol(device, dtype)
    np.testing.assert_allclose(_np(got), _np(want), rtol=tol, atol=tol)
    fused = [e for e in cm.events if e[0] == "fused" and e[2][:1] == ("linear",)]
    assert ("linear", "relu") in [e[2] for e in fused]
    assert ("linear", "gelu_tanh") in [e[2] for e in fused]
    if device == "cuda":
        assert _cublaslt.CALLS[0] - calls >= 3, "the cuBLASLt epilogue path did not run"
    # gradients
    for p in m.parameters():
        p.grad = None
    (m(x).astype(ember.float32) * _arr((8, 4), device)).sum().backward()
    g_eager = [_np(p.grad) for p in m.parameters()]
    for p in m.parameters():
        p.grad = None
    (cm(x).astype(ember.float32) * _arr((8, 4), device)).sum().backward()
    for p, ge in zip(m.parameters(), g_eager, strict=True):
        assert p.grad is not None
        scale = max(1.0, float(np.abs(ge).max()))
        np.testing.assert_allclose(_np(p.grad), ge, rtol=tol, atol=tol * scale)


def test_pre_activation_used_elsewhere_keeps_the_matmul_alone(device):
    fc = nn.Linear(8, 8, device=device)

    def f(x):
        h = fc(x)
        return F.relu(h) + h

    cf = ember.compile(f)
    x = _arr((5, 8), device)
    got = cf(x)
    np.testing.assert_allclose(_np(got), _np(f(x)), rtol=_tol(device, "float32"), atol=1e-6)
    kinds = [(e[0], e[2]) for e in cf.events if e[0] in ("fused", "eager")]
    assert ("fused", ("linear",)) in kinds
    assert ("eager", ("relu",)) in kinds
    assert ("fused", ("linear", "relu")) not in kinds


def test_what_follows_the_activation_fuses_as_before(device):
    fc = nn.Linear(8, 6, device=device)

    def f(x, r):
        return (F.relu(fc(x)) * 2 + r).sum(axis=1)

    cf = ember.compile(f)
    x, r = _arr((4, 8), device), _arr((4, 6), device, seed=3)
    got = cf(x, r)
    np.testing.assert_allclose(_np(got), _np(f(x, r)), rtol=_tol(device, "float32"), atol=1e-5)
    assert ("linear", "relu") in [e[2] for e in cf.events if e[0] == "fused"]


def test_batch_sizes_never_recompile():
    m = _MLP("cpu")
    cm = ember.compile(m)
    for b in (1, 3, 8, 17, 64, 5, 2, 100, 33, 9, 12):
        x = _arr((b, 16), "cpu", seed=b)
        np.testing.assert_array_equal(_np(cm(x)), _np(m(x)))
    assert cm.stats["recompiles"] == 0


def test_no_grad_and_bias_free_layers(device):
    fc = nn.Linear(8, 3, bias=False, device=device)
    cf = ember.compile(lambda x: F.gelu(fc(x), approximate="tanh"))
    x = _arr((2, 3, 8), device)  # leading dimensions are flattened into the matmul's rows
    with ember.no_grad():
        got = cf(x)
        want = F.gelu(fc(x), approximate="tanh")
    assert got.shape == (2, 3, 3) and not got.requires_grad
    np.testing.assert_allclose(_np(got), _np(want), rtol=_tol(device, "float32"), atol=1e-6)


def test_exact_gelu_is_not_taken_as_the_tanh_epilogue():
    fc = nn.Linear(4, 4)
    cf = ember.compile(lambda x: F.gelu(fc(x)))
    x = _arr((3, 4), "cpu")
    np.testing.assert_array_equal(_np(cf(x)), _np(F.gelu(fc(x))))
    assert ("linear", "gelu_tanh") not in [e[2] for e in cf.events]


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: x.sum(axis=1) * 2 + 1,
        lambda x: (x * x).sum() * 3 + 1,
        lambda x: (x * x).mean() * 3 - x.sum(),
        lambda x: (x * x).sum(axis=1, keepdims=True) * 3 + 1,
        lambda x: ember.sqrt((x * x).sum(axis=0, keepdims=True)),
    ],
)
def test_reduction_epilogue_gradients_equal_eager(fn, device):
    x = _arr((3, 5), device).requires_grad_()
    fn(x).sum().backward()
    want = _np(x.grad)
    x.grad = None
    cf = ember.compile(fn)
    cf(x).sum().backward()
    assert x.grad is not None, "the compiled call dropped the gradient"
    np.testing.assert_allclose(_np(x.grad), want, rtol=1e-6, atol=1e-6)


def test_linear_act_rejects_an_unknown_activation():
    with pytest.raises(ValueError, match="gelu_tanh"):
        linear_act(_arr((2, 3), "cpu"), _arr((4, 3), "cpu"), None, "swish")


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("act", [None, "relu", "gelu_tanh"])
@pytest.mark.parametrize("bias", [True, False])
def test_cublaslt_epilogue_equals_the_composed_ops(dtype, act, bias, device):
    if device != "cuda":
        pytest.skip("cuBLASLt is a CUDA library")
    x = _arr((37, 24), device, dtype)
    w = _arr((19, 24), device, dtype, seed=1)
    b = _arr((19,), device, dtype, seed=2) if bias else None
    calls = _cublaslt.CALLS[0]
    got = linear_act(x, w, b, act)
    assert _cublaslt.CALLS[0] == calls + 1, _cublaslt.load_error()
    from ember.nn._linear_act import _composed

    ref = _composed(x.astype(ember.float64), w.astype(ember.float64), None, None)
    if b is not None:
        ref = ref + b.astype(ember.float64)
    if act == "relu":
        ref = ember.maximum(ref, 0)
    elif act == "gelu_tanh":
        ref = F.gelu(ref, approximate="tanh")
    tol = {"float32": 5e-3, "float16": 1e-2, "bfloat16": 5e-2}[dtype]  # TF32 for float32
    np.testing.assert_allclose(_np(got), ember.asnumpy(ref), rtol=tol, atol=tol)


def test_cublaslt_odd_layouts_still_give_the_right_answer(device):
    if device != "cuda":
        pytest.skip("cuBLASLt is a CUDA library")
    big = _arr((9, 33), device)
    x = big[:, 1:]  # rows 132 bytes apart, an address 4 bytes off: a less aligned problem
    w = _arr((7, 32), device, seed=1)
    b = _arr((7,), device, seed=2)
    got = linear_act(x, w, b, "relu")
    want = np.maximum(_np(x) @ _np(w).T + _np(b), 0)
    np.testing.assert_allclose(_np(got), want, rtol=5e-3, atol=5e-3)
    xt = _arr((32, 9), device).T  # columns contiguous: composed, not the library
    np.testing.assert_allclose(
        _np(linear_act(xt, w, b, None)), _np(xt) @ _np(w).T + _np(b), rtol=5e-3, atol=5e-3
    )


def test_compiled_mlp_in_a_cuda_graph(device):
    if device != "cuda":
        pytest.skip("CUDA graphs")
    m = _MLP(device)
    cm = ember.compile(m, mode="reduce-overhead")
    x = _arr((16, 16), device)
    with ember.no_grad():
        want = _np(m(x))
        for _ in range(4):
            got = _np(cm(x))
    np.testing.assert_allclose(got, want, rtol=2e-2, atol=2e-2)
