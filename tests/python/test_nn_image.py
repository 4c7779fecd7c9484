"""BatchNorm2d/3d, GroupNorm, InstanceNorm, Dropout2d and interpolate against NumPy formulas and
finite differences, on both devices."""

from __future__ import annotations

import ember
import ember.nn as nn
import ember.nn.functional as F
import numpy as np
import pytest
from _nn_helpers import em, gradcheck


def test_batchnorm2d_3d(device):
    x = np.random.default_rng(0).standard_normal((4, 3, 5, 6))
    bn = nn.BatchNorm2d(3, dtype=ember.float64, device=device)
    y = ember.asnumpy(bn(em(x, device)))
    m, v = x.mean(axis=(0, 2, 3), keepdims=True), x.var(axis=(0, 2, 3), keepdims=True)
    np.testing.assert_allclose(y, (x - m) / np.sqrt(v + 1e-5), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(ember.asnumpy(bn.running_mean), 0.1 * m.ravel(), rtol=1e-10)
    bn.eval()
    y2 = ember.asnumpy(bn(em(x, device)))
    rm, rv = ember.asnumpy(bn.running_mean), ember.asnumpy(bn.running_var)
    np.testing.assert_allclose(
        y2, (x - rm[None, :, None, None]) / np.sqrt(rv[None, :, None, None] + 1e-5), rtol=1e-10
    )
    with pytest.raises(ValueError, match="expected 4D input"):
        bn(em(x[0], device))
    assert nn.BatchNorm3d(3)(ember.randn(2, 3, 2, 2, 2)).shape == (2, 3, 2, 2, 2)


def test_group_and_instance_norm(device):
    x = np.random.default_rng(1).standard_normal((2, 6, 3, 4))
    g = x.reshape(2, 3, -1)
    want = ((g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True) + 1e-5)).reshape(
        x.shape
    )
    np.testing.assert_allclose(
        ember.asnumpy(nn.GroupNorm(3, 6, dtype=ember.float64, device=device)(em(x, device))),
        want,
        rtol=1e-10,
    )
    inst = (x - x.mean((2, 3), keepdims=True)) / np.sqrt(x.var((2, 3), keepdims=True) + 1e-5)
    np.testing.assert_allclose(ember.asnumpy(nn.InstanceNorm2d(6)(em(x, device))), inst, rtol=1e-10)
    w, b = np.linspace(0.5, 1.5, 6), np.linspace(-1, 1, 6)
    gradcheck(lambda a, ww, bb: F.group_norm(a, 2, ww, bb), [x[:1, :, :2, :2], w, b], device=device)
    gradcheck(lambda a: F.instance_norm(a), [x[:1, :2, :2, :3]], device=device)
    with pytest.raises(ValueError, match="not divisible"):
        nn.GroupNorm(4, 6)


def test_dropout2d_zeroes_whole_channels(device):
    ember.manual_seed(0)
    x = ember.ones((8, 16, 4, 4), device=device)
    y = ember.asnumpy(nn.Dropout2d(0.5)(x))
    per_channel = y.reshape(8, 16, -1)
    assert set(np.unique(per_channel.std(-1))) == {0.0}  # each channel all zero or all 2
    assert set(np.unique(y)) <= {0.0, 2.0} and 0 < (y == 0).mean() < 1
    m = nn.Dropout2d(0.5)
    m.eval()
    assert ember.asnumpy(m(x)).min() == 1.0


def np_linear_resize(x, n_out, align):
    n_in = x.shape[-1]
    o = np.arange(n_out, dtype=np.float64)
    src = o * (n_in - 1) / (n_out - 1) if align else np.maximum((o + 0.5) * n_in / n_out - 0.5, 0)
    lo = np.minimum(np.floor(src).astype(int), n_in - 1)
    hi = np.minimum(lo + 1, n_in - 1)
    t = src - lo
    return x[..., lo] * (1 - t) + x[..., hi] * t


def np_cubic_resize(x, n_out, align):
    n_in = x.shape[-1]
    o = np.arange(n_out, dtype=np.float64)
    src = o * (n_in - 1) / (n_out - 1) if align else (o + 0.5) * n_in / n_out - 0.5
    f = np.floor(src)
    t = src - f
    a = -0.75

    def near(v):
        return ((a + 2) * v - (a + 3)) * v * v + 1

    def far(v):
        return ((a * v - 5 * a) * v + 8 * a) * v - 4 * a

    w = [far(t + 1), near(t), near(1 - t), far(2 - t)]
    out = 0
    for j in range(4):
        idx = np.clip(f.astype(int) - 1 + j, 0, n_in - 1)
        out = out + x[..., idx] * w[j]
    return out


@pytest.mark.parametrize("align", [False, True])
def test_interpolate_modes(device, align):
    x = np.random.default_rng(2).standard_normal((1, 2, 5, 7))
    near = ember.asnumpy(F.interpolate(em(x, device), scale_factor=2, mode="nearest"))
    np.testing.assert_array_equal(near, x.repeat(2, axis=2).repeat(2, axis=3))
    bil = ember.asnumpy(
        F.interpolate(em(x, device), size=(8, 11), mode="bilinear", align_corners=align)
    )
    want = np_linear_resize(np_linear_resize(x.swapaxes(2, 3), 8, align).swapaxes(2, 3), 11, align)
    np.testing.assert_allclose(bil, want, rtol=1e-12, atol=1e-12)
    bic = ember.asnumpy(
        F.interpolate(em(x, device), size=(9, 4), mode="bicubic", align_corners=align)
    )
    want = np_cubic_resize(np_cubic_resize(x.swapaxes(2, 3), 9, align).swapaxes(2, 3), 4, align)
    np.testing.assert_allclose(bic, want, rtol=1e-12, atol=1e-12)
    gradcheck(
        lambda a: F.interpolate(a, size=(3, 4), mode="bilinear", align_corners=align),
        [x[:, :1, :2, :3]],
        device=device,
    )
    assert nn.Upsample(scale_factor=2, mode="bilinear")(em(x, device)).shape == (1, 2, 10, 14)
