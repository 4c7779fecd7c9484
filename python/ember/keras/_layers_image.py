"""ember.keras's resizing and reshaping layers for images and sequences: Resizing, CenterCrop,
UpSampling1D/2D, Cropping1D/2D, and ``resize_images`` (what ``keras.ops.image.resize`` computes).

Resizing follows TensorFlow's ``tf.image.resize`` (Keras's semantics, also JAX's): half-pixel
centers; "nearest" takes ``floor((o + 0.5) * in / out)``; "bilinear" interpolates between the
clamped neighbours; "bicubic" is Keys' cubic (a = -0.5) with the weights of taps outside the
image dropped and the rest renormalized (TensorFlow quantizes the fractional offset to 1/1024,
JAX does not; this follows JAX). Each axis is resized by a small ``(out, in)`` weight matrix
built on the host once per shape and applied as a matrix product (differentiable, any device).
"""

from __future__ import annotations

import functools

import numpy as np

import ember as _e

from ._layer import Layer, register
from ._layers_conv import _data_format

__all__ = [
    "CenterCrop",
    "Cropping1D",
    "Cropping2D",
    "Resizing",
    "UpSampling1D",
    "UpSampling2D",
    "resize_images",
]

INTERPOLATIONS = ("nearest", "bilinear", "bicubic")


def _keys_cubic(t, a=-0.5):
    t = np.abs(t)
    near = ((a + 2.0) * t - (a + 3.0)) * t * t + 1.0
    far = ((a * t - 5.0 * a) * t + 8.0 * a) * t - 4.0 * a
    return np.where(t <= 1.0, near, np.where(t < 2.0, far, 0.0))


@functools.lru_cache(maxsize=256)
def resize_matrix(n_in, n_out, method):
    """The (n_out, n_in) float64 matrix of one axis's resize (TensorFlow's half-pixel rule)."""
    scale = n_in / n_out
    o = np.arange(n_out, dtype=np.float64)
    m = np.zeros((n_out, n_in))
    rows = np.arange(n_out)
    if method == "nearest":
        idx = np.minimum(np.floor((o + 0.5) * scale).astype(np.int64), n_in - 1)
        m[rows, idx] = 1.0
        return m
    src = (o + 0.5) * scale - 0.5
    f = np.floor(src)
    if method == "bilinear":
        lerp = src - f
        lo = np.clip(f.astype(np.int64), 0, n_in - 1)
        hi = np.clip(np.ceil(src).astype(np.int64), 0, n_in - 1)
        np.add.at(m, (rows, lo), 1.0 - lerp)
        np.add.at(m, (rows, hi), lerp)
        return m
    base = f.astype(np.int64)
    for j in range(-1, 3):
        idx = base + j
        w = _keys_cubic(src - idx)
        inside = (idx >= 0) & (idx < n_in)
        np.add.at(m, (rows[inside], idx[inside]), w[inside])
    return m / m.sum(axis=1, keepdims=True)


def _resize_axis(x, n_out, axis, method):
    n_in = x.shape[axis]
    if n_in == n_out:
        return x
    m = resize_matrix(n_in, n_out, method)
    if method == "nearest":
        idx = _e.asarray(np.argmax(m, axis=1), device=x.device)
        return _e.take(x, idx, axis=axis)
    w = _e.asarray(m.T.astype(np.float32), device=x.device).astype(x.dtype)  # (in, out)
    xt = _e.moveaxis(x, axis, -1)
    return _e.moveaxis(_e.matmul(xt, w), -1, axis)


def aspect_crop_box(height, width, target_h, target_w):
    """Keras's ``smart_resize`` window: (top, left, crop_h, crop_w), the largest centred crop
    of the target's aspect ratio."""
    crop_h = max(min(height, int(float(width * target_h) / target_w)), 1)
    crop_w = max(min(width, int(float(height * target_w) / target_h)), 1)
    return int(float(height - crop_h) / 2), int(float(width - crop_w) / 2), crop_h, crop_w


def resize_images(
    images,
    size,
    interpolation="bilinear",
    crop_to_aspect_ratio=False,
    pad_to_aspect_ratio=False,
    fill_value=0.0,
    data_format="channels_last",
):
    """``keras.ops.image.resize``: 3-d (one image) or 4-d images to ``size`` (height, width)."""
    if interpolation not in INTERPOLATIONS:
        raise ValueError(
            f"resize: `interpolation` must be one of {INTERPOLATIONS} in ember.keras. "
            f"Received: interpolation={interpolation!r}"
        )
    if crop_to_aspect_ratio and pad_to_aspect_ratio:
        raise ValueError(
            "Only one of `crop_to_aspect_ratio` and `pad_to_aspect_ratio` can be True."
        )
    x = images
    single = x.ndim == 3
    if single:
        x = _e.expand_dims(x, axis=0)
    if x.ndim != 4:
        raise ValueError(f"resize: images must be 3-d or 4-d, got shape {tuple(images.shape)}")
    if x.dtype.kind != "f":
        x = x.astype(_e.float32)
    cf = data_format == "channels_first"
    ha, wa = (2, 3) if cf else (1, 2)
    th, tw = int(size[0]), int(size[1])
    h, w = x.shape[ha], x.shape[wa]
    if crop_to_aspect_ratio:
        top, left, ch, cw = aspect_crop_box(h, w, th, tw)
        index = [slice(None)] * 4
        index[ha], index[wa] = slice(top, top + ch), slice(left, left + cw)
        x = x[tuple(index)]
    elif pad_to_aspect_ratio:
        ph = max(h, int(float(w * th) / tw))
        pw = max(w, int(float(h * tw) / th))
        hs, ws = int(float(ph - h) / 2), int(float(pw - w) / 2)
        if hs > 0 or ws > 0:
            spec = [0] * 8  # F.pad order: last axis first
            for axis, p in ((ha, hs), (wa, ws)):
                spec[2 * (3 - axis)] = spec[2 * (3 - axis) + 1] = p
            from ..nn import functional as F

            x = F.pad(x, tuple(spec), value=float(fill_value))
    x = _resize_axis(x, th, ha, interpolation)
    x = _resize_axis(x, tw, wa, interpolation)
    return x[0] if single else x


def _size_arg(v, who, name):
    if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
        raise ValueError(f"{who}: `{name}` must be a positive int. Received: {name}={v!r}")
    return v


class _ImageLayer(Layer):
    def _axes(self, ndim):
        if self.data_format == "channels_first":
            return ndim - 2, ndim - 1
        return ndim - 3, ndim - 2

    def compute_output_shape(self, input_shape):
        shape = list(input_shape)
        ha, wa = self._axes(len(shape))
        shape[ha], shape[wa] = self.height, self.width
        return tuple(shape)


@register
class Resizing(_ImageLayer):
    """Resizes images to (height, width): interpolation bilinear (default), nearest or bicubic;
    ``crop_to_aspect_ratio`` first takes the largest centred window of the target's aspect
    ratio; ``pad_to_aspect_ratio`` pads with ``fill_value`` instead (fill_mode "constant")."""

    def __init__(
        self,
        height,
        width,
        interpolation="bilinear",
        crop_to_aspect_ratio=False,
        pad_to_aspect_ratio=False,
        fill_mode="constant",
        fill_value=0.0,
        antialias=False,
        data_format=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.height = _size_arg(height, "Resizing", "height")
        self.width = _size_arg(width, "Resizing", "width")
        if interpolation not in INTERPOLATIONS:
            raise ValueError(
                f"Resizing: `interpolation` must be one of {INTERPOLATIONS} in ember.keras. "
                f"Received: interpolation={interpolation!r}"
            )
        if fill_mode != "constant":
            raise ValueError(
                f"Resizing: `fill_mode` must be 'constant'. Received: fill_mode={fill_mode!r}"
            )
        if antialias:
            raise ValueError("Resizing: `antialias=True` is not supported by ember.keras")
        if crop_to_aspect_ratio and pad_to_aspect_ratio:
            raise ValueError(
                "Resizing: only one of `crop_to_aspect_ratio` and `pad_to_aspect_ratio` can "
                "be True."
            )
        self.interpolation = interpolation
        self.crop_to_aspect_ratio = bool(crop_to_aspect_ratio)
        self.pad_to_aspect_ratio = bool(pad_to_aspect_ratio)
        self.fill_mode, self.fill_value = fill_mode, float(fill_value)
        self.antialias = False
        self.data_format = _data_format(data_format, "Resizing")

    def call(self, inputs):
        return resize_images(
            inputs,
            (self.height, self.width),
            self.interpolation,
            self.crop_to_aspect_ratio,
            self.pad_to_aspect_ratio,
            self.fill_value,
            self.data_format,
        ).astype(self.dtype)

    def get_config(self):
        return {
            **super().get_config(),
            "height": self.height,
            "width": self.width,
            "interpolation": self.interpolation,
            "crop_to_aspect_ratio": self.crop_to_aspect_ratio,
            "pad_to_aspect_ratio": self.pad_to_aspect_ratio,
            "fill_mode": self.fill_mode,
            "fill_value": self.fill_value,
            "antialias": self.antialias,
            "data_format": self.data_format,
        }


def center_crop(x, height, width, data_format):
    """Keras's CenterCrop: a centred (height, width) window, or, when the image is smaller,
    ``smart_resize`` (the largest window of that aspect ratio, resized bilinearly)."""
    cf = data_format == "channels_first"
    ha, wa = (x.ndim - 2, x.ndim - 1) if cf else (x.ndim - 3, x.ndim - 2)
    h, w = x.shape[ha], x.shape[wa]
    dh, dw = h - height, w - width
    if dh >= 0 and dw >= 0:
        index = [slice(None)] * x.ndim
        index[ha] = slice(int(dh / 2), int(dh / 2) + height)
        index[wa] = slice(int(dw / 2), int(dw / 2) + width)
        return x[tuple(index)]
    return resize_images(
        x, (height, width), "bilinear", crop_to_aspect_ratio=True, data_format=data_format
    )


@register
class CenterCrop(_ImageLayer):
    """Crops the centre (height, width) of the images (resizing smaller ones as Keras does)."""

    def __init__(self, height, width, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.height = _size_arg(height, "CenterCrop", "height")
        self.width = _size_arg(width, "CenterCrop", "width")
        self.data_format = _data_format(data_format, "CenterCrop")

    def call(self, inputs):
        x = inputs if inputs.dtype.kind == "f" else inputs.astype(self.dtype)
        return center_crop(x, self.height, self.width, self.data_format).astype(self.dtype)

    def get_config(self):
        return {
            **super().get_config(),
            "height": self.height,
            "width": self.width,
            "data_format": self.data_format,
        }


# ---- upsampling ----------------------------------------------------------------------------------


@register
class UpSampling2D(Layer):
    """Repeats rows and columns `size` times ("nearest") or resizes by that factor
    ("bilinear", "bicubic", as ``keras.ops.image.resize``)."""

    def __init__(self, size=(2, 2), data_format=None, interpolation="nearest", **kwargs):
        super().__init__(**kwargs)
        if isinstance(size, int) and not isinstance(size, bool):
            size = (size, size)
        size = tuple(size)
        if len(size) != 2 or any(
            isinstance(s, bool) or not isinstance(s, int) or s <= 0 for s in size
        ):
            raise ValueError(
                f"UpSampling2D: `size` must be a positive int or a tuple of 2. Received: "
                f"size={size!r}"
            )
        if interpolation not in INTERPOLATIONS:
            raise ValueError(
                f"UpSampling2D: `interpolation` must be one of {INTERPOLATIONS} in "
                f"ember.keras. Received: interpolation={interpolation!r}"
            )
        self.size = size
        self.data_format = _data_format(data_format, "UpSampling2D")
        self.interpolation = interpolation

    def call(self, inputs):
        ha, wa = (2, 3) if self.data_format == "channels_first" else (1, 2)
        if self.interpolation == "nearest":
            x = _e.repeat(inputs, self.size[0], axis=ha)
            return _e.repeat(x, self.size[1], axis=wa)
        size = (inputs.shape[ha] * self.size[0], inputs.shape[wa] * self.size[1])
        return resize_images(inputs, size, self.interpolation, data_format=self.data_format).astype(
            inputs.dtype if inputs.dtype.kind == "f" else self.dtype
        )

    def compute_output_shape(self, input_shape):
        shape = list(input_shape)
        ha, wa = (2, 3) if self.data_format == "channels_first" else (1, 2)
        for a, s in ((ha, self.size[0]), (wa, self.size[1])):
            shape[a] = None if shape[a] is None else shape[a] * s
        return tuple(shape)

    def get_config(self):
        return {
            **super().get_config(),
            "size": list(self.size),
            "data_format": self.data_format,
            "interpolation": self.interpolation,
        }


@register
class UpSampling1D(Layer):
    """Repeats each time step `size` times: (batch, steps, features) -> (batch, steps*size, ...)."""

    def __init__(self, size=2, **kwargs):
        super().__init__(**kwargs)
        if isinstance(size, bool) or not isinstance(size, int) or size <= 0:
            raise ValueError(
                f"UpSampling1D: `size` must be a positive int. Received: size={size!r}"
            )
        self.size = size

    def call(self, inputs):
        return _e.repeat(inputs, self.size, axis=1)

    def compute_output_shape(self, input_shape):
        n = input_shape[1]
        return (input_shape[0], None if n is None else n * self.size) + tuple(input_shape[2:])

    def get_config(self):
        return {**super().get_config(), "size": self.size}


# ---- cropping ------------------------------------------------------------------------------------


def _pair(v, who):
    if isinstance(v, int) and not isinstance(v, bool):
        return (v, v)
    v = tuple(v)
    if len(v) != 2 or any(isinstance(i, bool) or not isinstance(i, int) or i < 0 for i in v):
        raise ValueError
    return v


class _Cropping(Layer):
    rank = 2

    def __init__(self, cropping, data_format=None, **kwargs):
        super().__init__(**kwargs)
        who = type(self).__name__
        try:
            if self.rank == 1:
                crops = (_pair(cropping, who),)
            elif isinstance(cropping, int) and not isinstance(cropping, bool):
                crops = ((cropping, cropping),) * 2
            elif len(cropping) == 2 and all(isinstance(c, int) for c in cropping):
                crops = tuple((c, c) for c in _pair(cropping, who))
            elif len(cropping) == 2:
                crops = tuple(_pair(c, who) for c in cropping)
            else:
                raise ValueError
            if any(c < 0 for p in crops for c in p):
                raise ValueError
        except (ValueError, TypeError):
            raise ValueError(
                f"{who}: `cropping` must be a non-negative int, a tuple of 2 ints or (2-D) a tuple "
                f"of 2 tuples of 2 ints. Received: cropping={cropping!r}"
            ) from None
        self.cropping = crops
        self.data_format = _data_format(data_format, who) if self.rank == 2 else "channels_last"

    def _first(self):
        return 2 if self.data_format == "channels_first" else 1

    def _check(self, shape):
        first = self._first()
        for i, (lo, hi) in enumerate(self.cropping):
            n = shape[first + i]
            if n is not None and lo + hi >= n:
                raise ValueError(
                    f"{type(self).__name__}: values in `cropping` ({self.cropping}) should be "
                    f"smaller than the corresponding spatial dimension of the input "
                    f"{tuple(shape)}"
                )

    def call(self, inputs):
        self._check(tuple(inputs.shape))
        first = self._first()
        index = [slice(None)] * inputs.ndim
        for i, (lo, hi) in enumerate(self.cropping):
            index[first + i] = slice(lo, inputs.shape[first + i] - hi)
        return inputs[tuple(index)]

    def compute_output_shape(self, input_shape):
        self._check(input_shape)
        shape = list(input_shape)
        first = self._first()
        for i, (lo, hi) in enumerate(self.cropping):
            if shape[first + i] is not None:
                shape[first + i] -= lo + hi
        return tuple(shape)

    def get_config(self):
        config = {**super().get_config(), "cropping": [list(c) for c in self.cropping]}
        if self.rank == 1:
            config["cropping"] = list(self.cropping[0])
        else:
            config["data_format"] = self.data_format
        return config


@register
class Cropping2D(_Cropping):
    """Removes ((top, bottom), (left, right)) rows and columns."""

    rank = 2

    def __init__(self, cropping=((0, 0), (0, 0)), data_format=None, **kwargs):
        super().__init__(cropping, data_format, **kwargs)


@register
class Cropping1D(_Cropping):
    """Removes (start, end) steps of (batch, steps, features)."""

    rank = 1

    def __init__(self, cropping=(1, 1), **kwargs):
        super().__init__(cropping, None, **kwargs)
