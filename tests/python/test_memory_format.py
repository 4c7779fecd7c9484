"""Memory formats (PyTorch's channels_last) on ember arrays, modules and convolutions."""

from __future__ import annotations

import pickle

import ember
import ember.nn.functional as F
import numpy as np
import pytest
from ember import nn


def _x(shape, device, seed=0):
    data = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return ember.asarray(data, device=device)


def test_contiguous_and_is_contiguous(device):
    x = _x((2, 3, 5, 6), device)
    assert x.is_contiguous() and not x.is_contiguous(memory_format=ember.channels_last)
    y = x.contiguous(memory_format=ember.channels_last)
    assert y.is_contiguous(memory_format=ember.channels_last) and not y.is_contiguous()
    assert y.shape == x.shape
    np.testing.assert_array_equal(ember.asnumpy(y), ember.asnumpy(x))
    assert y.contiguous(memory_format=ember.channels_last) is y
    z = y.contiguous()
    assert z.is_contiguous() and z.strides == x.strides
    # clone keeps the layout by default (preserve_format), or takes the one asked for
    assert y.clone().is_contiguous(memory_format=ember.channels_last)
    assert y.clone(memory_format=ember.contiguous_format).is_contiguous()
    v = _x((2, 3, 4, 5, 6), device).contiguous(memory_format=ember.channels_last_3d)
    assert v.is_contiguous(memory_format=ember.channels_last_3d)
    # a 1xCx1x1 array is in both formats, as in PyTorch
    one = _x((1, 3, 1, 1), device)
    assert one.is_contiguous(memory_format=ember.channels_last) and one.is_contiguous()


def test_memory_format_errors():
    x = _x((2, 3, 4), "cpu")
    with pytest.raises(RuntimeError, match="4-d"):
        x.contiguous(memory_format=ember.channels_last)
    with pytest.raises(TypeError, match="memory_format"):
        x.contiguous(memory_format="channels_last")
    with pytest.raises(RuntimeError, match="preserve_format"):
        x.contiguous(memory_format=ember.preserve_format)
    assert repr(ember.channels_last) == "ember.channels_last"
    assert pickle.loads(pickle.dumps(ember.channels_last)) is ember.channels_last


@pytest.mark.parametrize("groups", [1, 2, 6])
def test_conv_keeps_the_memory_format(device, groups):
    x = _x((2, 6, 9, 7), device)
    w = _x((6, 6 // groups, 3, 3), device, seed=1)
    b = _x((6,), device, seed=2)
    ref = F.conv2d(x, w, b, padding=1, groups=groups)
    assert ref.is_contiguous()
    xl = x.contiguous(memory_format=ember.channels_last)
    out = F.conv2d(xl, w, b, padding=1, groups=groups)
    assert out.is_contiguous(memory_format=ember.channels_last)
    np.testing.assert_allclose(ember.asnumpy(out), ember.asnumpy(ref), rtol=1e-5, atol=1e-5)


def test_channels_last_gradients_match(device):
    x = _x((2, 4, 6, 6), device)
    w = _x((5, 4, 3, 3), device, seed=1)
    grads = []
    for fmt in (ember.contiguous_format, ember.channels_last):
        xi = x.contiguous(memory_format=fmt)
        xi = xi.clone().requires_grad_()
        wi = w.clone().requires_grad_()
        F.conv2d(xi, wi, stride=2, padding=1).square().sum().backward()
        grads.append((ember.asnumpy(xi.grad), ember.asnumpy(wi.grad)))
    for a, b in zip(grads[0], grads[1], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4)


def test_module_to_channels_last(device):
    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU()).to(device)
    x = _x((2, 3, 8, 8), device)
    ref = ember.asnumpy(model(x))
    weight = model[0].weight
    model.to(memory_format=ember.channels_last)
    assert model[0].weight is weight  # the parameter keeps its identity
    assert weight.is_contiguous(memory_format=ember.channels_last)
    assert model[0].bias.is_contiguous()  # 1-d arrays are left alone
    out = model(x.contiguous(memory_format=ember.channels_last))
    np.testing.assert_allclose(ember.asnumpy(out), ref, rtol=1e-5, atol=1e-5)
    with pytest.raises(TypeError, match="memory_format"):
        model.to(memory_format="nhwc")


def test_a_leaf_keeps_a_gradient_in_its_own_layout(device):
    """A gradient that arrives in the leaf's layout (channels_last for a channels_last leaf) is
    stored as it is, without a copy to C order; one in another layout becomes C-ordered."""
    x = ember.randn(2, 3, 4, 5, device=device).contiguous(memory_format=ember.channels_last)
    x.requires_grad_()
    y = x.transpose((0, 2, 3, 1))  # C-ordered view: its gradient comes back channels_last
    y.backward(ember.ones(y.shape, device=device))
    assert x.grad.strides == x.strides and x.grad.is_contiguous(memory_format=ember.channels_last)
    z = ember.randn(2, 3, 4, 5, device=device).requires_grad_()
    w = z.transpose((0, 2, 3, 1))
    w.backward(ember.ones(w.shape, device=device))
    assert z.grad.flags.c_contiguous
    np.testing.assert_array_equal(ember.asnumpy(x.grad), np.ones((2, 3, 4, 5)))


@pytest.mark.parametrize("perm", [(1, 0, 2), (0, 2, 1), (2, 1, 0)])
def test_elementwise_results_keep_the_operand_layout(perm, device):
    """NumPy's order 'K': a result takes the axis order of its first operand when that operand
    is dense in a permuted order (same strides as NumPy's result), and values are unchanged."""
    a = np.arange(24.0).reshape(2, 3, 4).transpose(perm)
    x = ember.asarray(np.arange(24.0).reshape(2, 3, 4), device=device).transpose(perm)
    for got, want in ((x * 2 + 1, a * 2 + 1), (ember.sin(x), np.sin(a)), (x + x, a + a)):
        assert got.strides == want.strides
        np.testing.assert_allclose(ember.asnumpy(got), want)
    c = ember.randn(2, 8, 5, 5, device=device).contiguous(memory_format=ember.channels_last)
    assert ember.relu(c * 3 + 1).is_contiguous(memory_format=ember.channels_last)
    assert (x[:, ::2] + 1).flags.c_contiguous  # not dense: C order, as before
