"""ConvTranspose3d / F.conv_transpose3d: output shape by PyTorch's formula, the adjoint of
conv3d (<conv_transpose3d(x, W), z> == <x, conv3d(z, W)>), gradients, and PyTorch's values
where torch is installed."""

from __future__ import annotations

import ember
import ember.nn as enn
import ember.nn.functional as F
import numpy as np
import pytest

CASES = [
    dict(stride=1, padding=0, output_padding=0, groups=1, dilation=1),
    dict(stride=2, padding=1, output_padding=1, groups=1, dilation=1),
    dict(stride=(1, 2, 2), padding=(0, 1, 0), output_padding=0, groups=2, dilation=(1, 1, 2)),
]


def _data(kw, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((2, 4, 3, 5, 4))
    w = rng.standard_normal((4, 6 // kw["groups"], 2, 3, 2))
    return x, w


@pytest.mark.parametrize("kw", CASES)
def test_conv_transpose3d_is_the_adjoint_of_conv3d(device, kw):
    x, w = _data(kw)
    X, W = ember.asarray(x, device=device), ember.asarray(w, device=device)
    y = F.conv_transpose3d(X, W, **kw)
    s = [kw["stride"]] * 3 if isinstance(kw["stride"], int) else kw["stride"]
    p = [kw["padding"]] * 3 if isinstance(kw["padding"], int) else kw["padding"]
    d = [kw["dilation"]] * 3 if isinstance(kw["dilation"], int) else kw["dilation"]
    op = kw["output_padding"]
    want = tuple((x.shape[2 + i] - 1) * s[i] - 2 * p[i] + d[i] * (w.shape[2 + i] - 1) + op + 1
                 for i in range(3))  # fmt: skip
    assert tuple(y.shape) == (2, 6, *want)
    z = np.random.default_rng(1).standard_normal(tuple(y.shape))
    cz = F.conv3d(ember.asarray(z, device=device), W, stride=kw["stride"], padding=kw["padding"],
                  dilation=kw["dilation"], groups=kw["groups"])  # fmt: skip
    lhs = float((ember.asnumpy(y) * z).sum())
    rhs = float((x * ember.asnumpy(cz)).sum())
    assert lhs == pytest.approx(rhs, rel=1e-9)


def test_conv_transpose3d_module_and_gradients(device):
    m = enn.ConvTranspose3d(4, 6, (2, 3, 2), stride=2, padding=1, output_padding=1, groups=2,
                            dtype=ember.float64, device=device)  # fmt: skip
    x = ember.tensor(_data(dict(groups=2))[0], device=device, requires_grad=True)
    y = m(x)
    y.sum().backward()
    assert x.grad is not None and m.weight.grad is not None and m.bias.grad is not None
    np.testing.assert_allclose(ember.asnumpy(m.bias.grad), np.full(6, np.prod(y.shape) / 6))


def test_conv_transpose3d_matches_torch(device):
    torch = pytest.importorskip("torch")
    for kw in CASES:
        x, w = _data(kw, seed=3)
        got = F.conv_transpose3d(ember.asarray(x, device=device), ember.asarray(w, device=device),
                                 **kw)  # fmt: skip
        want = torch.nn.functional.conv_transpose3d(torch.from_numpy(x), torch.from_numpy(w), **kw)
        np.testing.assert_allclose(ember.asnumpy(got), want.numpy(), rtol=1e-7, atol=1e-9)
