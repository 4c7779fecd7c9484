"""Mixed precision: ember.autocast's cast policy per op, and ember.amp.GradScaler's rules."""

from __future__ import annotations

import ember
import ember.nn.functional as F
import numpy as np
import pytest
from ember import nn


def _arr(shape, device, dtype="float32", seed=0, requires_grad=False):
    x = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
    return ember.asarray(x, device=device).requires_grad_(requires_grad)


@pytest.mark.parametrize("low", ["bfloat16", "float16"])
def test_autocast_dtype_per_op(device, low):
    x = _arr((4, 8), device)
    w = _arr((3, 8), device, seed=1)
    b = _arr((3,), device, seed=2)
    img = _arr((2, 3, 6, 6), device, seed=3)
    k = _arr((4, 3, 3, 3), device, seed=4)
    kind = "cuda" if device == "cuda" else "cpu"
    with ember.autocast(kind, dtype=getattr(ember, low)):
        assert ember.amp.is_autocast_enabled(kind)
        assert ember.amp.get_autocast_dtype(kind) == getattr(ember, low)
        y = F.linear(x, w, b)
        assert y.dtype == getattr(ember, low)
        assert F.conv2d(img, k, padding=1).dtype == getattr(ember, low)
        assert ember.amp.matmul(x, w.T).dtype == getattr(ember, low)
        # sensitive ops run in float32, whatever their input
        assert F.softmax(y, dim=1).dtype == ember.float32
        assert F.log_softmax(y, dim=1).dtype == ember.float32
        assert F.layer_norm(y, (3,)).dtype == ember.float32
        t = ember.asarray(np.array([0, 1, 2, 0]), device=device)
        assert F.cross_entropy(y, t).dtype == ember.float32
        assert F.mse_loss(y, y.astype(ember.float32)).dtype == ember.float32
        # float64 and integer arrays are left alone
        x64 = _arr((4, 8), device, "float64")
        assert F.linear(x64, _arr((3, 8), device, "float64")).dtype == ember.float64
        # a region of the other device type does not apply
        other = "cpu" if kind == "cuda" else "cuda"
        with ember.autocast(other, dtype=getattr(ember, low)):
            pass
        with ember.autocast(kind, enabled=False):
            assert F.linear(x, w).dtype == ember.float32
    assert not ember.amp.is_autocast_enabled(kind)
    assert F.linear(x, w, b).dtype == ember.float32


def test_autocast_values_and_gradients(device):
    kind = "cuda" if device == "cuda" else "cpu"
    x = _arr((5, 16), device)
    lin = nn.Linear(16, 4).to(device)
    with ember.autocast(kind, dtype=ember.bfloat16):
        out = lin(x)
        loss = F.cross_entropy(out, ember.asarray(np.array([0, 1, 2, 3, 0]), device=device))
    loss.backward()
    assert lin.weight.grad.dtype == ember.float32
    assert lin.bias.grad.dtype == ember.float32
    # the low-precision result is close to float32's
    ref = np.asarray(ember.asnumpy(x)) @ ember.asnumpy(lin.weight).T + ember.asnumpy(lin.bias)
    got = ember.asnumpy(out.astype(ember.float32))
    np.testing.assert_allclose(got, ref, rtol=3e-2, atol=3e-2)
    # gradients match those of the float32 computation within bfloat16 tolerance
    g_low = ember.asnumpy(lin.weight.grad).copy()
    lin.weight.grad = None
    lin.bias.grad = None
    loss32 = F.cross_entropy(lin(x), ember.asarray(np.array([0, 1, 2, 3, 0]), device=device))
    loss32.backward()
    np.testing.assert_allclose(g_low, ember.asnumpy(lin.weight.grad), rtol=5e-2, atol=2e-2)


def test_autocast_caches_parameter_casts(device):
    kind = "cuda" if device == "cuda" else "cpu"
    lin = nn.Linear(8, 8).to(device)
    x = _arr((2, 8), device)
    with ember.autocast(kind):
        a = ember.amp._cast(lin.weight, ember.amp.LOW)
        b = ember.amp._cast(lin.weight, ember.amp.LOW)
        assert a is b  # one cast per region
        lin(x)
    with ember.autocast(kind):
        c = ember.amp._cast(lin.weight, ember.amp.LOW)
    assert c is not a  # a new region casts again (the weight may have changed)
    with ember.autocast(kind, cache_enabled=False):
        assert ember.amp._cast(lin.weight, ember.amp.LOW) is not ember.amp._cast(
            lin.weight, ember.amp.LOW
        )


def test_autocast_decorator_nesting_and_errors():
    @ember.autocast("cpu", dtype=ember.bfloat16)
    def f(a, b):
        return F.linear(a, b)

    a, b = _arr((2, 3), "cpu"), _arr((4, 3), "cpu")
    assert f(a, b).dtype == ember.bfloat16
    with ember.autocast("cpu", dtype=ember.float16):
        with ember.autocast("cpu", dtype=ember.bfloat16):
            assert F.linear(a, b).dtype == ember.bfloat16
        assert F.linear(a, b).dtype == ember.float16
    with pytest.raises(ValueError, match="device_type"):
        ember.autocast("tpu")
    with pytest.raises(ValueError, match="float16 or bfloat16"):
        ember.autocast("cpu", dtype=ember.float64)
    assert ember.amp.CAST_POLICY["conv2d"] == ember.amp.LOW
    assert ember.amp.CAST_POLICY["softmax"] == ember.amp.FLOAT32


class _Opt:
    """A stand-in optimizer that records whether step() ran."""

    def __init__(self, params):
        self.param_groups = [{"params": params}]
        self.steps = 0

    def step(self):
        self.steps += 1


def test_grad_scaler_skips_step_on_injected_inf(device):
    p = _arr((3,), device, requires_grad=True)
    q = _arr((2,), device, requires_grad=True)
    scaler = ember.amp.GradScaler(init_scale=8.0, growth_interval=2)
    opt = _Opt([p, q])
    loss = (p * p).sum() + q.sum()
    scaler.scale(loss).backward()
    np.testing.assert_allclose(ember.asnumpy(p.grad), 16 * ember.asnumpy(p), rtol=1e-6)
    scaler.step(opt)
    np.testing.assert_allclose(ember.asnumpy(p.grad), 2 * ember.asnumpy(p), rtol=1e-6)
    assert opt.steps == 1
    scaler.update()
    assert scaler.get_scale() == 8.0
    # an injected inf: the step is skipped, the scale backs off
    p.grad = None
    q.grad = None
    loss = (p * p).sum() + q.sum() * float("inf")
    scaler.scale(loss).backward()
    assert scaler.step(opt) is None
    assert opt.steps == 1
    scaler.update()
    assert scaler.get_scale() == 4.0
    # NaN too
    p.grad = ember.asarray(np.array([1.0, np.nan, 0.0], dtype=np.float32), device=device)
    q.grad = None
    scaler.step(opt)
    scaler.update()
    assert opt.steps == 1 and scaler.get_scale() == 2.0
    # growth after growth_interval clean steps in a row
    for _ in range(2):
        p.grad = ember.ones(3, dtype=ember.float32, device=device)
        scaler.step(opt)
        scaler.update()
    assert opt.steps == 3 and scaler.get_scale() == 4.0
    state = scaler.state_dict()
    other = ember.amp.GradScaler()
    other.load_state_dict(state)
    assert other.get_scale() == 4.0 and other.get_growth_interval() == 2


def test_grad_scaler_rules_and_errors(device):
    scaler = ember.amp.GradScaler()
    assert scaler.get_scale() == 2.0**16
    assert scaler.get_growth_factor() == 2.0 and scaler.get_backoff_factor() == 0.5
    assert scaler.get_growth_interval() == 2000
    p = _arr((2,), device, requires_grad=True)
    opt = _Opt([p])
    p.grad = ember.ones(2, dtype=ember.float32, device=device)
    scaler.unscale_(opt)
    with pytest.raises(RuntimeError, match="unscale_"):
        scaler.unscale_(opt)
    with pytest.raises(ValueError, match="growth_factor"):
        ember.amp.GradScaler(growth_factor=0.5)
    with pytest.raises(ValueError, match="backoff_factor"):
        ember.amp.GradScaler(backoff_factor=2)
    with pytest.raises(TypeError, match="outputs"):
        scaler.scale("loss")
    off = ember.amp.GradScaler(enabled=False)
    assert off.get_scale() == 1.0
    loss = (p * 2).sum()
    assert off.scale(loss) is loss


@pytest.mark.parametrize("low", ["float16", "bfloat16"])
def test_mixed_precision_training_converges(device, low):
    kind = "cuda" if device == "cuda" else "cpu"
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((256, 10)).astype(np.float32)
    w_true = rng.standard_normal((10, 3)).astype(np.float32)
    ys = (xs @ w_true).argmax(axis=1)
    x = ember.asarray(xs, device=device)
    y = ember.asarray(ys, device=device)
    model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 3)).to(device)
    opt = ember.optim.Adam(model.parameters(), lr=1e-2)
    scaler = ember.amp.GradScaler(enabled=(low == "float16"))
    for _ in range(150):
        opt.zero_grad()
        with ember.autocast(kind, dtype=getattr(ember, low)):
            loss = F.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
    acc = float((model(x).argmax(dim=1) == y).astype(ember.float32).mean())
    assert acc > 0.9
    assert all(p.dtype == ember.float32 for p in model.parameters())
