"""Gradients of ember.fft (every transform is linear: its backward is the adjoint of its steps,
PyTorch's convention for complex inputs) against central differences over the real and
imaginary parts, for the 1-d, 2-d and n-d, real and Hermitian transforms, cropping and
padding (n, s), every norm, and a non-last axis; against PyTorch where it is installed."""

from __future__ import annotations

import ember
import numpy as np
import pytest


def _central(f, a, eps=1e-6):
    g = np.zeros(a.shape, dtype=a.dtype)
    for i in np.ndindex(a.shape):
        ap, am = a.copy(), a.copy()
        ap[i] += eps
        am[i] -= eps
        d = (f(ap) - f(am)) / (2 * eps)
        if np.iscomplexobj(a):
            ap, am = a.copy(), a.copy()
            ap[i] += 1j * eps
            am[i] -= 1j * eps
            d = d + 1j * (f(ap) - f(am)) / (2 * eps)
        g[i] = d
    return g


_RNG = np.random.default_rng(0)
_XR = _RNG.normal(size=(3, 6))
_XC = _RNG.normal(size=(3, 6)) + 1j * _RNG.normal(size=(3, 6))
CASES = [
    ("fft", _XR, {}),
    ("fft", _XC, {"n": 8}),
    ("fft", _XR, {"axis": 0, "norm": "ortho"}),
    ("ifft", _XC, {"n": 4, "norm": "ortho"}),
    ("rfft", _XR, {}),
    ("rfft", _XR, {"n": 9, "norm": "forward"}),
    ("irfft", _XC, {}),
    ("irfft", _XC, {"n": 7}),
    ("hfft", _XC, {}),
    ("ihfft", _XR, {"norm": "ortho"}),
    ("fft2", _XC, {}),
    ("ifftn", _XC, {"norm": "forward"}),
    ("rfftn", _XR, {"axes": (0, 1)}),
    ("irfftn", _XC, {"s": (4, 6), "axes": (0, 1)}),
]


@pytest.mark.parametrize("name,x,kw", CASES)
def test_fft_gradients_equal_central_differences(name, x, kw, device):
    y0 = getattr(np.fft, name)(x, **kw)
    wr = _RNG.normal(size=y0.shape)
    wi = _RNG.normal(size=y0.shape)

    def loss_np(a):
        y = getattr(np.fft, name)(a, **kw)
        return float(np.sum(np.real(y) * wr + np.imag(y) * wi))

    xe = ember.asarray(x, device=device).requires_grad_()
    y = getattr(ember.fft, name)(xe, **kw)
    loss = (ember.real(y) * ember.asarray(wr, device=device)).sum()
    if y.dtype.kind == "c":
        loss = loss + (ember.imag(y) * ember.asarray(wi, device=device)).sum()
    loss.backward()
    assert xe.grad.dtype == xe.dtype
    np.testing.assert_allclose(ember.asnumpy(xe.grad), _central(loss_np, x), atol=1e-7)


def test_fft_gradients_equal_torch(device):
    torch = pytest.importorskip("torch")
    x = _RNG.normal(size=(4, 10))
    w = _RNG.normal(size=(4, 6))
    xe = ember.asarray(x, device=device).requires_grad_()
    (ember.abs(ember.fft.rfft(xe, norm="ortho")) * ember.asarray(w, device=device)).sum().backward()
    xt = torch.tensor(x, requires_grad=True)
    (torch.fft.rfft(xt, norm="ortho").abs() * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(ember.asnumpy(xe.grad), xt.grad.numpy(), rtol=1e-10, atol=1e-12)
