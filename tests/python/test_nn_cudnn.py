"""GPU convolutions through cuDNN (ember/nn/_cudnn.py) against the composed path of the same
device (``backends.cudnn.enabled = False``) and against the CPU: forward and both gradients,
over dtypes, strides, padding (also asymmetric 'same'), dilation, groups (depthwise too),
1-, 2- and 3-d, channels_last; the plan cache, benchmark mode, deterministic, and double
backward (which recomputes through the composed path). GPU only: CPU convolutions never use
cuDNN."""

from __future__ import annotations

import ember
import ember.nn.functional as F
import numpy as np
import pytest

pytestmark = pytest.mark.skipif(not ember.cuda.is_available(), reason="needs a GPU")


@pytest.fixture(autouse=True)
def _switches():
    b = ember.backends.cudnn
    saved = (b.enabled, b.benchmark, b.deterministic, b.allow_tf32)
    yield
    b.enabled, b.benchmark, b.deterministic, b.allow_tf32 = saved


def test_cudnn_loads_on_the_gpu_machine():
    assert ember.backends.cudnn.is_available(), ember.nn._cudnn.load_error()
    assert ember.backends.cudnn.version() >= 90000
    assert ember.show_config(mode="dicts")["CUDA"]["convolution"].startswith("cuDNN 9.")


def _run(conv, x, w, b, grads, **kw):
    xs = ember.asarray(x, device="cuda").requires_grad_()
    ws = ember.asarray(w, device="cuda").requires_grad_()
    bs = None if b is None else ember.asarray(b, device="cuda").requires_grad_()
    y = conv(xs, ws, bs, **kw)
    (y * ember.asarray(grads(y.shape), device="cuda")).sum().backward()
    out = [ember.asnumpy(y), ember.asnumpy(xs.grad), ember.asnumpy(ws.grad)]
    return out + ([] if b is None else [ember.asnumpy(bs.grad)])


CASES = [
    (F.conv2d, (2, 3, 9, 11), (4, 3, 3, 3), {}),
    (F.conv2d, (2, 4, 10, 10), (6, 2, 3, 3), {"stride": 2, "padding": 1, "groups": 2}),
    (F.conv2d, (1, 8, 7, 9), (8, 1, 3, 3), {"padding": 1, "groups": 8}),  # depthwise
    (F.conv2d, (2, 3, 12, 12), (5, 3, 3, 3), {"dilation": 2, "padding": "same"}),
    (F.conv2d, (2, 3, 8, 8), (5, 3, 4, 4), {"padding": "same"}),  # asymmetric padding
    (F.conv2d, (3, 16, 7, 7), (32, 16, 1, 1), {}),
    (F.conv2d, (1, 2, 1, 1), (3, 2, 3, 3), {"padding": 1}),  # kernel larger than the image
    (F.conv1d, (2, 3, 17), (4, 3, 5), {"stride": 3, "padding": 2}),
    (F.conv3d, (1, 2, 5, 6, 7), (3, 2, 3, 3, 3), {"padding": 1}),
]


@pytest.mark.parametrize("case", range(len(CASES)))
@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "bfloat16"])
def test_cudnn_equals_the_composed_path(case, dtype):
    conv, xs, wsh, kw = CASES[case]
    rng = np.random.default_rng(case)
    x = rng.standard_normal(xs).astype(np.float32)
    w = rng.standard_normal(wsh).astype(np.float32) / np.sqrt(np.prod(wsh[1:]))
    b = rng.standard_normal(wsh[0]).astype(np.float32)
    dt = getattr(ember, dtype)

    def grads(shape):
        return np.random.default_rng(99).standard_normal(shape).astype(np.float32)

    def run(enabled):
        ember.backends.cudnn.enabled = enabled
        ember.backends.cudnn.allow_tf32 = False
        xx = ember.asarray(x, device="cuda").astype(dt).requires_grad_()
        ww = ember.asarray(w, device="cuda").astype(dt).requires_grad_()
        bb = ember.asarray(b, device="cuda").astype(dt).requires_grad_()
        y = conv(xx, ww, bb, **kw)
        g = ember.asarray(grads(y.shape), device="cuda").astype(dt)
        (y * g).sum().backward()
        return [ember.asnumpy(a.astype(ember.float64)) for a in (y, xx.grad, ww.grad, bb.grad)]

    before = ember.nn._cudnn.plan_cache_size()
    got, want = run(True), run(False)
    assert ember.nn._cudnn.plan_cache_size() > before or before >= 1
    tol = {"float64": 1e-10, "float32": 1e-4, "float16": 2e-2, "bfloat16": 1.5e-1}[dtype]
    for a, e in zip(got, want, strict=True):
        scale = max(1.0, float(np.abs(e).max()))
        np.testing.assert_allclose(a, e, rtol=tol, atol=tol * scale)


def test_channels_last_stays_channels_last_and_matches():
    rng = np.random.default_rng(3)
    x = ember.asarray(rng.standard_normal((4, 8, 14, 14)).astype(np.float32), device="cuda")
    w = ember.asarray(rng.standard_normal((16, 8, 3, 3)).astype(np.float32), device="cuda")
    xl = x.contiguous(memory_format=ember.channels_last)
    ember.backends.cudnn.allow_tf32 = False
    y = F.conv2d(xl, w, padding=1)
    assert y.is_contiguous(memory_format=ember.channels_last)
    ref = F.conv2d(x.cpu(), w.cpu(), padding=1)
    np.testing.assert_allclose(ember.asnumpy(y), ember.asnumpy(ref), rtol=1e-4, atol=1e-4)


def test_benchmark_and_deterministic_modes():
    rng = np.random.default_rng(4)
    x = ember.asarray(rng.standard_normal((8, 16, 20, 20)).astype(np.float16), device="cuda")
    w = ember.asarray(rng.standard_normal((32, 16, 3, 3)).astype(np.float16), device="cuda")
    ref = F.conv2d(x, w, padding=1)
    ember.backends.cudnn.benchmark = True
    ember.backends.cudnn.deterministic = True
    y = F.conv2d(x, w, padding=1)
    np.testing.assert_allclose(
        ember.asnumpy(y).astype(np.float32), ember.asnumpy(ref).astype(np.float32), atol=5e-2
    )
    assert ember.cuda.memory_stats()["cudnn_plan_cache"] >= 2


def test_double_backward_goes_through_the_composed_path():
    rng = np.random.default_rng(5)
    x = ember.asarray(rng.standard_normal((2, 2, 6, 6)), device="cuda").requires_grad_()
    w = ember.asarray(rng.standard_normal((3, 2, 3, 3)), device="cuda").requires_grad_()
    (gx,) = ember.autograd.grad([F.conv2d(x, w).sum()], [x], create_graph=True)
    (gx * gx).sum().backward()
    xc = x.detach().cpu().requires_grad_()
    wc = w.detach().cpu().requires_grad_()
    (gxc,) = ember.autograd.grad([F.conv2d(xc, wc).sum()], [xc], create_graph=True)
    (gxc * gxc).sum().backward()
    np.testing.assert_allclose(ember.asnumpy(w.grad), ember.asnumpy(wc.grad), rtol=1e-9)


def test_conv_layers_and_autocast_use_cudnn():
    m = ember.nn.Conv2d(3, 8, 3, padding=1).to("cuda")
    x = ember.randn(2, 3, 16, 16, device="cuda")
    with ember.autocast("cuda", dtype=ember.float16):
        y = m(x)
    assert y.dtype == ember.float16 and y.shape == (2, 8, 16, 16)
    y.float().sum().backward()
    assert m.weight.grad is not None and m.weight.grad.dtype == ember.float32
