"""PyTorch's short-time Fourier transform, ``ember.stft`` and its inverse ``ember.istft``, on
``ember.fft`` (the window functions are in ember/_torch_extra3.py).

Definition (PyTorch's): with the window w zero-padded to ``n_fft`` (centred), frame m of the
(``center``: padded by n_fft // 2 on both sides) signal x is
X[f, m] = sum_k w[k] x[m * hop + k] exp(-2 pi i f k / n_fft), times n_fft^-1/2 when
``normalized``; ``onesided`` keeps f <= n_fft // 2. The frames are a gather with a host-built
index (so the padding modes cost nothing extra and the gradient flows back through it); the
inverse is the windowed overlap-add divided by the summed squared window, the overlap-add done as
ceil(n_fft / hop) shifted sums of hop-long chunks (ember ops, differentiable, on the device)."""

from __future__ import annotations

import builtins
import math

import numpy as np

from . import _core
from . import fft as _fft
from ._array import asarray as _asarray
from ._joining import concat as _concat
from ._torch import _arr, _int
from ._torch_errors import TorchArgumentError as _ArgErr
from .autograd import Function

__all__ = ["istft", "stft"]

_PAD_MODES = ("constant", "reflect", "replicate", "circular")


# ---- differentiable FFTs along the last axis ("backward" norm) -----------------------------------
# ember.fft has no backward; these Functions give it, each backward one of the others (so it is
# differentiable again). Gradients follow PyTorch's convention for complex numbers
# (dL/dRe + i dL/dIm): fft's is n ifft(g), ifft's fft(g) / n; rfft's n irfft(g) with the bins that
# stand for two (not 0 nor n/2) halved, irfft's rfft(g) / n with those bins doubled.


def _bins(n, like, interior):
    """(n // 2 + 1,) factors: 1 at bin 0 (and n/2 for even n), ``interior`` elsewhere."""
    c = np.full(n // 2 + 1, interior)
    c[0] = 1.0
    if n % 2 == 0:
        c[-1] = 1.0
    return _asarray(c.astype(_real(like.dtype)), device=like.device)


class _RFFT(Function):
    @staticmethod
    def forward(ctx, x, n):
        ctx.n = n
        return _fft.rfft(x, axis=-1)

    @staticmethod
    def backward(ctx, g):
        n = ctx.n
        return _irfft(g * _bins(n, g, 0.5), n) * float(n), None


class _IRFFT(Function):
    @staticmethod
    def forward(ctx, y, n):
        ctx.n = n
        return _fft.irfft(y, n=n, axis=-1)

    @staticmethod
    def backward(ctx, g):
        n = ctx.n
        return _rfft(g) * _bins(n, g, 2.0) * (1.0 / n), None


class _FFT(Function):
    @staticmethod
    def forward(ctx, x):
        return _fft.fft(x, axis=-1)

    @staticmethod
    def backward(ctx, g):
        return _ifft(g) * float(g.shape[-1])


class _IFFT(Function):
    @staticmethod
    def forward(ctx, y):
        return _fft.ifft(y, axis=-1)

    @staticmethod
    def backward(ctx, g):
        return _fft_c(g) * (1.0 / g.shape[-1])


def _graph(*arrays):
    return _core._is_grad_enabled() and any(a.requires_grad for a in arrays)


def _rfft(x):
    return _RFFT.apply(x, x.shape[-1]) if _graph(x) else _fft.rfft(x, axis=-1)


def _irfft(y, n):
    return _IRFFT.apply(y, n) if _graph(y) else _fft.irfft(y, n=n, axis=-1)


def _fft_c(x):
    if x.dtype.kind != "c":
        x = x.astype("complex64" if x.dtype.name == "float32" else "complex128")
    return _FFT.apply(x) if _graph(x) else _fft.fft(x, axis=-1)


def _ifft(y):
    return _IFFT.apply(y) if _graph(y) else _fft.ifft(y, axis=-1)


def _pad_index(length, pad, mode):
    """Index into a signal of ``length`` of each position of it padded by ``pad`` on both sides
    in ``mode`` (-1: a zero of constant padding)."""
    p = np.arange(-pad, length + pad)
    if mode == "constant":
        return np.where((p < 0) | (p >= length), -1, p)
    if mode == "replicate":
        return np.clip(p, 0, length - 1)
    if mode == "circular":
        return p % length
    period = 2 * (length - 1)  # reflect: mirror about the end points, without repeating them
    q = np.abs(p) % period if period else np.zeros_like(p)
    return np.where(q >= length, period - q, q)


def _window_n_fft(window, win_length, n_fft, like, device, who):
    if window is None:
        w = _core.ones((win_length,), dtype=like, device=device)
    else:
        w = window
        if w.ndim != 1 or w.shape[0] != win_length:
            raise _ArgErr(
                f"{who}: expected a 1D window tensor of size equal to win_length={win_length}, "
                f"but got window with size {list(w.shape)}"
            )
        if w.device != device:
            raise _ArgErr(
                f"{who}: Expected all tensors to be on the same device, but found {w.device} and "
                f"{device}"
            )
    if win_length < n_fft:
        left = (n_fft - win_length) // 2
        z = _core.zeros
        w = _concat(
            [
                z((left,), dtype=w.dtype, device=w.device),
                w,
                z((n_fft - win_length - left,), dtype=w.dtype, device=w.device),
            ]
        )
    return w


def _lengths(n_fft, hop_length, win_length, who):
    n_fft = _int(n_fft, who, "n_fft")
    hop = n_fft // 4 if hop_length is None else _int(hop_length, who, "hop_length")
    win = n_fft if win_length is None else _int(win_length, who, "win_length")
    if n_fft <= 0:
        raise _ArgErr(f"{who}: expected 0 < n_fft, but got n_fft={n_fft}")
    if hop <= 0:
        raise _ArgErr(f"{who}: expected hop_length > 0, but got hop_length={hop}")
    if not 0 < win <= n_fft:
        raise _ArgErr(
            f"{who}: expected 0 < win_length <= n_fft, but got win_length={win}, n_fft={n_fft}"
        )
    return n_fft, hop, win


def stft(
    input,  # noqa: A002
    n_fft,
    hop_length=None,
    win_length=None,
    window=None,
    center=True,
    pad_mode="reflect",
    normalized=False,
    onesided=None,
    return_complex=None,
):
    """PyTorch's short-time Fourier transform of a signal (L,) or batch (B, L): complex
    (B?, n_fft // 2 + 1 or n_fft, n_frames). ``return_complex`` must be given for real input
    (True: complex output; False: PyTorch's deprecated real view with a trailing (re, im)
    axis). Differentiable in ``input`` and ``window``."""
    who = "stft"
    x = _arr(input, who)
    n_fft, hop, win = _lengths(n_fft, hop_length, win_length, who)
    cplx = x.dtype.kind == "c" or (window is not None and window.dtype.kind == "c")
    if return_complex is None:
        if not cplx:
            raise _ArgErr(
                "stft requires the return_complex parameter be given for real inputs, and will "
                "further require that return_complex=True in a future PyTorch release."
            )
        return_complex = True
    if x.ndim not in (1, 2):
        raise _ArgErr(f"{who}: expected a 1D or 2D tensor, got {x.ndim}D")
    if x.dtype.kind not in "fc":
        raise _ArgErr(
            f"{who}: expected a tensor of floating point or complex values, got {x.dtype.name}"
        )
    if pad_mode not in _PAD_MODES:
        raise _ArgErr(f"{who}: pad_mode must be one of {_PAD_MODES}, got {pad_mode!r}")
    onesided = (not cplx) if onesided is None else builtins.bool(onesided)
    if onesided and cplx:
        raise _ArgErr(f"{who}: Cannot have onesided output if window or input is complex")
    length = x.shape[-1]
    pad = n_fft // 2 if center else 0
    if center and pad_mode == "reflect" and pad >= length:
        raise _ArgErr(
            f"{who}: reflect padding size ({pad}) must be less than the input length ({length})"
        )
    padded = length + 2 * pad
    if not 0 < n_fft <= padded:
        raise _ArgErr(f"{who}: expected 0 < n_fft <= {padded}, but got n_fft={n_fft}")
    frames = 1 + (padded - n_fft) // hop
    src = _pad_index(length, pad, pad_mode) if center else np.arange(length)
    idx = src[np.arange(frames)[:, None] * hop + np.arange(n_fft)[None, :]]  # (frames, n_fft)
    zero = idx < 0
    take = _asarray(np.where(zero, 0, idx).reshape(-1), device=x.device)
    f = _core.take(x, take, axis=-1)
    f = _core.reshape(f, (*x.shape[:-1], frames, n_fft))
    if zero.any():
        keep = _asarray((~zero).astype(_real(x.dtype)), device=x.device)
        f = f * keep
    w = _window_n_fft(window, win, n_fft, _real(x.dtype), x.device, who)
    f = f * w
    spec = _rfft(f) if onesided else _fft_c(f)
    if normalized:
        spec = spec * (1.0 / math.sqrt(n_fft))
    spec = _core.swapaxes(spec, -1, -2)
    if not return_complex:
        from ._joining import stack

        return stack([_core.real(spec), _core.imag(spec)], axis=-1)
    return spec


def _real(dt):
    return {"complex64": "float32", "complex128": "float64"}.get(dt.name, dt.name)


def _overlap_add(frames, hop):
    """sum over m of frames[..., m, :] placed at m * hop: (..., n_fft + hop * (M - 1))."""
    *batch, m, n = frames.shape
    r = -(-n // hop)
    if r * hop > n:
        frames = _concat(
            [
                frames,
                _core.zeros((*batch, m, r * hop - n), dtype=frames.dtype, device=frames.device),
            ],
            axis=-1,
        )
    chunks = _core.reshape(frames, (*batch, m, r, hop))
    total = None
    for j in range(r):
        c = chunks[..., j, :]  # (..., m, hop): goes to blocks j .. j + m - 1
        parts = [c]
        if j:
            parts.insert(0, _core.zeros((*batch, j, hop), dtype=c.dtype, device=c.device))
        if r - 1 - j:
            parts.append(_core.zeros((*batch, r - 1 - j, hop), dtype=c.dtype, device=c.device))
        c = _concat(parts, axis=-2) if len(parts) > 1 else c
        total = c if total is None else total + c
    out = _core.reshape(total, (*batch, (m + r - 1) * hop))
    return out[..., : n + hop * (m - 1)]


def istft(
    input,  # noqa: A002
    n_fft,
    hop_length=None,
    win_length=None,
    window=None,
    center=True,
    normalized=False,
    onesided=None,
    length=None,
    return_complex=False,
):
    """The inverse of :func:`stft` (PyTorch's): the windowed overlap-add of the inverse FFTs of
    the frames, divided by the overlap-added squared window (which must be nonzero: NOLA);
    ``length`` trims or zero-pads the result. Differentiable in ``input`` and ``window``."""
    who = "istft"
    spec = _arr(input, who)
    if spec.dtype.kind != "c":
        raise _ArgErr(
            f"{who}: requires a complex-valued input tensor matching the output from stft with "
            "return_complex=True."
        )
    n_fft, hop, win = _lengths(n_fft, hop_length, win_length, who)
    if spec.ndim not in (2, 3):
        raise _ArgErr(f"{who}: expected a tensor with 2 or 3 dimensions, got {spec.ndim}")
    n_freq, frames = spec.shape[-2], spec.shape[-1]
    if onesided is None:
        onesided = n_freq != n_fft
    if onesided:
        if n_fft // 2 + 1 != n_freq:
            raise _ArgErr(
                f"{who}: expected the frequency dimension (3rd to the last) of the input tensor "
                f"to match n_fft / 2 + 1 when onesided=True, but got {n_freq}"
            )
    elif n_freq != n_fft:
        raise _ArgErr(
            f"{who}: expected the frequency dimension (3rd to the last) of the input tensor to "
            f"match n_fft when onesided=False, but got {n_freq}"
        )
    if onesided and return_complex:
        raise _ArgErr(f"{who}: cannot have onesided output if return_complex=True")
    s = _core.swapaxes(spec, -1, -2)  # (..., frames, freq)
    if normalized:
        s = s * math.sqrt(n_fft)
    if onesided:
        y = _irfft(s, n_fft)
    else:
        y = _ifft(s)
        if not return_complex:
            y = _core.real(y)
    rdt = _real(spec.dtype)
    w = _window_n_fft(window, win, n_fft, rdt, spec.device, who)
    y = y * w
    out = _overlap_add(y, hop)
    ones = _core.ones((frames, 1), dtype=w.dtype, device=w.device)
    env = _overlap_add(_core.reshape(w * w, (1, n_fft)) * ones, hop)
    expected = n_fft + hop * (frames - 1)
    start = n_fft // 2 if center else 0
    if length is not None:
        end = start + _int(length, who, "length")
    else:
        end = expected - n_fft // 2 if center else expected
    end_avail = builtins.min(end, expected)
    env = env[start:end_avail]
    if env.shape[0] and builtins.float(_core.min(_core.abs(env))) < 1e-11:
        raise _ArgErr(
            f"{who}: window overlap add min: {builtins.float(_core.min(_core.abs(env)))} "
            "(the window does not satisfy the nonzero overlap-add constraint, NOLA)"
        )
    out = out[..., start:end_avail] / env
    if end > end_avail:
        z = _core.zeros((*out.shape[:-1], end - end_avail), dtype=out.dtype, device=out.device)
        out = _concat([out, z], axis=-1)
    return out
