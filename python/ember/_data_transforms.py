"""ember.data.transforms: what an image training loop does to each batch, done to the whole
(N, C, H, W) batch at once on the batch's device (no per-image Python loop, no host trip).

Functions: ``normalize``, ``random_crop`` (with padding: constant, edge, reflect), ``random_
horizontal_flip``, ``random_vertical_flip``, ``resize`` (nearest, bilinear, bicubic), ``center_
crop``; the classes ``Normalize``, ``RandomCrop``, ``RandomHorizontalFlip``, ``RandomVertical
Flip``, ``Resize``, ``CenterCrop``, ``Compose`` call them. Random transforms draw an independent
choice per image (torchvision's transforms applied to a batch draw one for all) from an
``ember.random`` generator on the batch's device: pass ``generator=`` for reproducibility.
"""

from __future__ import annotations

import numbers

import numpy as np

from . import _core
from ._array import asarray

__all__ = [
    "CenterCrop",
    "Compose",
    "Normalize",
    "RandomCrop",
    "RandomHorizontalFlip",
    "RandomVerticalFlip",
    "Resize",
    "center_crop",
    "normalize",
    "random_crop",
    "random_horizontal_flip",
    "random_vertical_flip",
    "resize",
]

_T = "ember.data.transforms."


def _batch(x, who):
    if not isinstance(x, _core.ndarray):
        raise TypeError(f"{who}: expected an ember array batch, got {type(x).__name__}")
    if x.ndim != 4:
        raise ValueError(f"{who}: expected an (N, C, H, W) batch, got shape {tuple(x.shape)}")
    if x.dtype.kind != "f":
        raise TypeError(f"{who}: expected a floating-point batch, got dtype {x.dtype}")
    return x


def _pair(v, who, name):
    if isinstance(v, numbers.Integral) and not isinstance(v, bool):
        v = (int(v), int(v))
    else:
        v = tuple(v)
        if len(v) == 1:
            v = v * 2
    if len(v) != 2 or not all(isinstance(a, numbers.Integral) and a > 0 for a in v):
        raise ValueError(f"{who}: {name} must be a positive int or (h, w), got {v!r}")
    return int(v[0]), int(v[1])


def _rng(generator):
    if generator is not None:
        return generator
    from . import random

    return random.default_rng()


def normalize(x, mean, std, inplace=False):
    """``(x - mean) / std`` per channel."""
    who = _T + "normalize"
    _batch(x, who)
    c = x.shape[1]
    m = asarray(mean, dtype=x.dtype, device=x.device).reshape((-1,))
    s = asarray(std, dtype=x.dtype, device=x.device).reshape((-1,))
    if m.shape[0] not in (1, c) or s.shape[0] not in (1, c):
        raise ValueError(f"{who}: mean and std need 1 or {c} values (one per channel)")
    if not isinstance(std, _core.ndarray) and (np.asarray(std) == 0).any():
        raise ValueError(f"{who}: std must not be zero, got {std!r}")
    m, s = m.reshape((1, -1, 1, 1)), s.reshape((1, -1, 1, 1))
    if inplace:
        x -= m
        x /= s
        return x
    return (x - m) / s


def _padded(x, padding, fill, padding_mode, who):
    if padding_mode not in ("constant", "edge", "reflect"):
        raise ValueError(
            f"{who}: padding_mode must be 'constant', 'edge' or 'reflect', got {padding_mode!r}"
        )
    if isinstance(padding, numbers.Integral):
        pads = (int(padding),) * 4  # left, top, right, bottom
    else:
        p = tuple(int(v) for v in padding)
        pads = {1: p * 4, 2: (p[0], p[1], p[0], p[1]), 4: p}.get(len(p))
        if pads is None:
            raise ValueError(f"{who}: padding must be an int or 1, 2 or 4 ints, got {padding!r}")
    if any(v < 0 for v in pads):
        raise ValueError(f"{who}: padding must not be negative, got {padding!r}")
    if not any(pads):
        return x
    from .nn.functional import pad

    mode = {"edge": "replicate"}.get(padding_mode, padding_mode)
    left, top, right, bottom = pads
    return pad(x, (left, right, top, bottom), mode=mode, value=float(fill))


def _crop_at(x, top, left, h, w):
    """Per-image crops: x (N, C, H, W), top/left int64 (N,) arrays -> (N, C, h, w), one gather."""
    n = x.shape[0]
    dev = x.device
    rows = top.reshape((n, 1, 1)) + _core.arange(h, dtype="int64", device=dev).reshape((1, h, 1))
    cols = left.reshape((n, 1, 1)) + _core.arange(w, dtype="int64", device=dev).reshape((1, 1, w))
    batch = _core.arange(n, dtype="int64", device=dev).reshape((n, 1, 1))
    return x.transpose((0, 2, 3, 1))[batch, rows, cols].transpose((0, 3, 1, 2))


def random_crop(
    x, size, padding=None, pad_if_needed=False, fill=0, padding_mode="constant", generator=None
):
    """A random (h, w) window of each image (each its own), after optional padding."""
    who = _T + "random_crop"
    _batch(x, who)
    h, w = _pair(size, who, "size")
    if padding is not None:
        x = _padded(x, padding, fill, padding_mode, who)
    if pad_if_needed and (x.shape[2] < h or x.shape[3] < w):
        dh, dw = max(0, h - x.shape[2]), max(0, w - x.shape[3])
        x = _padded(x, (dw, dh, dw, dh), fill, padding_mode, who)
    H, W = x.shape[2], x.shape[3]  # noqa: N806
    if H < h or W < w:
        raise ValueError(f"{who}: crop size {(h, w)} is larger than the image {(H, W)}")
    rng = _rng(generator)
    n = x.shape[0]
    top = rng.integers(0, H - h + 1, size=(n,), device=x.device)
    left = rng.integers(0, W - w + 1, size=(n,), device=x.device)
    return _crop_at(x, top, left, h, w)


def center_crop(x, size):
    """The central (h, w) window of every image."""
    who = _T + "center_crop"
    _batch(x, who)
    h, w = _pair(size, who, "size")
    H, W = x.shape[2], x.shape[3]  # noqa: N806
    if H < h or W < w:
        raise ValueError(f"{who}: crop size {(h, w)} is larger than the image {(H, W)}")
    top, left = int(round((H - h) / 2.0)), int(round((W - w) / 2.0))
    return x[:, :, top : top + h, left : left + w]


def _random_flip(x, p, axis, generator, who):
    _batch(x, who)
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"{who}: p must be in [0, 1], got {p!r}")
    rng = _rng(generator)
    flip = rng.random(size=(x.shape[0], 1, 1, 1), dtype="float32", device=x.device) < p
    flipped = x[:, :, ::-1, :] if axis == 2 else x[:, :, :, ::-1]
    return _core.where(flip, flipped, x)


def random_horizontal_flip(x, p=0.5, generator=None):
    """Each image mirrored left-right with probability p."""
    return _random_flip(x, p, 3, generator, _T + "random_horizontal_flip")


def random_vertical_flip(x, p=0.5, generator=None):
    """Each image flipped upside down with probability p."""
    return _random_flip(x, p, 2, generator, _T + "random_vertical_flip")


def resize(x, size, interpolation="bilinear", antialias=False):
    """Every image resized to `size` ((h, w), or an int for the shorter side, keeping the aspect
    ratio), by ``ember.nn.functional.interpolate``."""
    who = _T + "resize"
    _batch(x, who)
    if interpolation not in ("nearest", "bilinear", "bicubic"):
        raise ValueError(
            f"{who}: interpolation must be 'nearest', 'bilinear' or 'bicubic', "
            f"got {interpolation!r}"
        )
    if antialias:
        raise ValueError(f"{who}: antialias=True is not supported; pass antialias=False")
    H, W = x.shape[2], x.shape[3]  # noqa: N806
    if isinstance(size, numbers.Integral) or len(tuple(size)) == 1:
        s = int(size if isinstance(size, numbers.Integral) else tuple(size)[0])
        if s <= 0:
            raise ValueError(f"{who}: size must be positive, got {size!r}")
        h, w = (s, max(1, int(s * W / H))) if H <= W else (max(1, int(s * H / W)), s)
    else:
        h, w = _pair(size, who, "size")
    from .nn.functional import interpolate

    kwargs = {} if interpolation == "nearest" else {"align_corners": False}
    return interpolate(x, size=(h, w), mode=interpolation, **kwargs)


class _Transform:
    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in vars(self).items() if k != "generator")
        return f"{type(self).__name__}({args})"


class Normalize(_Transform):
    def __init__(self, mean, std, inplace=False):
        self.mean, self.std, self.inplace = mean, std, inplace

    def __call__(self, x):
        return normalize(x, self.mean, self.std, self.inplace)


class RandomCrop(_Transform):
    def __init__(
        self,
        size,
        padding=None,
        pad_if_needed=False,
        fill=0,
        padding_mode="constant",
        generator=None,
    ):
        self.size, self.padding, self.pad_if_needed = size, padding, pad_if_needed
        self.fill, self.padding_mode, self.generator = fill, padding_mode, generator

    def __call__(self, x):
        return random_crop(
            x,
            self.size,
            self.padding,
            self.pad_if_needed,
            self.fill,
            self.padding_mode,
            self.generator,
        )


class CenterCrop(_Transform):
    def __init__(self, size):
        self.size = size

    def __call__(self, x):
        return center_crop(x, self.size)


class RandomHorizontalFlip(_Transform):
    def __init__(self, p=0.5, generator=None):
        self.p, self.generator = p, generator

    def __call__(self, x):
        return random_horizontal_flip(x, self.p, self.generator)


class RandomVerticalFlip(_Transform):
    def __init__(self, p=0.5, generator=None):
        self.p, self.generator = p, generator

    def __call__(self, x):
        return random_vertical_flip(x, self.p, self.generator)


class Resize(_Transform):
    def __init__(self, size, interpolation="bilinear", antialias=False):
        self.size, self.interpolation, self.antialias = size, interpolation, antialias

    def __call__(self, x):
        return resize(x, self.size, self.interpolation, self.antialias)


class Compose:
    """The transforms applied in order."""

    def __init__(self, transforms):
        self.transforms = list(transforms)

    def __call__(self, x):
        for t in self.transforms:
            x = t(x)
        return x

    def __repr__(self):
        inner = "".join(f"\n    {t!r}" for t in self.transforms)
        return f"Compose({inner}\n)"
