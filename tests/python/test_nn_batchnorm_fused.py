"""Training-mode batch norm through the fused kernels (float32, float16, bfloat16): outputs,
running statistics and gradients against the composed float64 computation, NCHW and
channels_last (the output keeps the input's memory order), with and without affine parameters,
1-d to 3-d spatial inputs, on both devices."""

from __future__ import annotations

import ember
import numpy as np
import pytest

F = ember.nn.functional


def _case(shape, dtype, device, channels_last, seed=0):
    rng = np.random.default_rng(seed)
    x64 = rng.standard_normal(shape) * 3 + 5  # a mean far from 0: no cancellation allowed
    x = ember.asarray(x64, device=device).astype(dtype)
    if channels_last and x.ndim == 4:
        x = x.contiguous(memory_format=ember.channels_last)
    c = shape[1]
    w = ember.asarray(rng.uniform(0.5, 1.5, c), device=device).astype("float32")
    b = ember.asarray(rng.standard_normal(c), device=device).astype("float32")
    dy = ember.asarray(rng.standard_normal(shape), device=device).astype(dtype)
    return x, w, b, dy


def _run(x, w, b, dy, affine, dtype):
    x = (x if x.dtype == dtype else x.astype(dtype)).detach().requires_grad_()
    ws = [t.astype("float64" if dtype == "float64" else "float32").detach().requires_grad_()
          for t in (w, b)] if affine else [None, None]  # fmt: skip
    rm = ember.zeros(x.shape[1], device=x.device)
    rv = ember.ones(x.shape[1], device=x.device)
    y = F.batch_norm(x, rm, rv, ws[0], ws[1], training=True, momentum=0.2, eps=1e-5)
    (y.astype("float64") * dy.astype("float64")).sum().backward()
    grads = [x.grad] + ([ws[0].grad, ws[1].grad] if affine else [])
    return y, rm, rv, grads


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("shape", [(8, 3, 5, 7), (4, 6, 9), (2, 4, 3, 3, 3), (16, 5)])
@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("channels_last", [False, True])
def test_fused_batch_norm_matches_the_composed_float64(device, dtype, shape, affine,
                                                       channels_last):  # fmt: skip
    if channels_last and len(shape) != 4:
        pytest.skip("channels_last is 4-d")
    x, w, b, dy = _case(shape, dtype, device, channels_last)
    y, rm, rv, grads = _run(x, w, b, dy, affine, dtype)
    y64, rm64, rv64, grads64 = _run(x, w, b, dy, affine, "float64")  # the composed path
    tol = {"float32": 1e-4, "float16": 2e-2, "bfloat16": 6e-2}[dtype]
    assert y.dtype == x.dtype and y.strides == x.strides  # the input's memory order
    np.testing.assert_allclose(ember.asnumpy(y.astype("float64")), ember.asnumpy(y64),
                               rtol=tol, atol=tol)  # fmt: skip
    np.testing.assert_allclose(ember.asnumpy(rm), ember.asnumpy(rm64), rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(ember.asnumpy(rv), ember.asnumpy(rv64), rtol=1e-3, atol=1e-3)
    for g, g64 in zip(grads, grads64, strict=True):
        scale = float(np.abs(ember.asnumpy(g64)).max()) + 1e-12
        np.testing.assert_allclose(ember.asnumpy(g.astype("float64")) / scale,
                                   ember.asnumpy(g64) / scale, atol=tol)  # fmt: skip


def test_batch_norm_module_in_a_training_step(device):
    ember.manual_seed(0)
    m = ember.nn.Sequential(ember.nn.Conv2d(3, 4, 3), ember.nn.BatchNorm2d(4), ember.nn.ReLU()).to(
        device
    )
    x = ember.asarray(np.random.default_rng(1).standard_normal((2, 3, 8, 8)), device=device)
    x = x.astype("float32")
    y = m(x)
    y.sum().backward()
    assert m[1].weight.grad is not None and m[1].bias.grad is not None
    assert m[1].num_batches_tracked == 1 if hasattr(m[1], "num_batches_tracked") else True
    np.testing.assert_allclose(ember.asnumpy(m[1].running_mean),
                               0.1 * ember.asnumpy(m[0](x).mean(axis=(0, 2, 3))),
                               rtol=1e-4, atol=1e-6)  # fmt: skip


def test_per_channel_kernels_equal_the_eager_arithmetic(device):
    """The GPU's fused per-channel steps (coefficients, backward factors, running statistics)
    give the eager ops' results bit for bit (run here through ember.fuse on either device)."""
    from ember.nn import _batchnorm_fused as B

    rng = np.random.default_rng(4)
    var, w, s1, s2 = (ember.asarray(rng.random(7).astype(np.float32) + 0.1, device=device)
                      for _ in range(4))  # fmt: skip
    inv, scale = B._coef(var, w, 1e-5)
    inv_e = 1.0 / ember.sqrt(var + 1e-5)
    assert (ember.asnumpy(inv) == ember.asnumpy(inv_e)).all()
    assert (ember.asnumpy(scale) == ember.asnumpy(inv_e * w)).all()
    n = 12345
    outs = B._coef_bwd(s1, s2, inv_e, w, float(n))
    eager = (inv_e * w, s1 / n, s2 * inv_e * inv_e / n, s2 * inv_e)
    for a, e in zip(outs, eager, strict=True):
        assert (ember.asnumpy(a) == ember.asnumpy(e)).all()
    k1 = B._coef_bwd(s1, s2, inv_e, 1.0, float(n))[0]  # no affine weight: the factor is invstd
    assert (ember.asnumpy(k1) == ember.asnumpy(inv_e)).all()
    r = ember.asarray(rng.random(7), device=device)  # float64 running stats, float32 batch stats
    got = B._running(r, var, 0.9, 0.1 * n / (n - 1))
    ref = r * 0.9 + var.astype("float64") * (0.1 * n / (n - 1))
    assert (ember.asnumpy(got) == ember.asnumpy(ref)).all()
    r2 = r.copy()
    B.update_running(r2, var, 0.1, 0.1 * n / (n - 1))
    assert (ember.asnumpy(r2) == ember.asnumpy(ref)).all()
