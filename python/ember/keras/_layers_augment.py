"""ember.keras's random augmentation layers: RandomFlip, RandomRotation, RandomZoom,
RandomTranslation, RandomContrast, RandomBrightness, RandomCrop.

Active only in training (``layer(x, training=True)``, or inside ``fit``); in inference they
return the images unchanged (RandomCrop, as Keras's, centre-crops/resizes to its size instead).
Random draws come from ember.random: the layer's own generator when ``seed`` is given (it
advances with each call), else Keras's global one, reseeded by ``keras.utils.set_random_seed``,
so a seeded run repeats exactly. One draw per image (RandomCrop: one window per batch, as
Keras). Rotation, zoom and translation are Keras's affine maps from output to input pixel
coordinates (pixel centres at integers, as TensorFlow's ``ImageProjectiveTransformV3``), sampled
with ``ember.nn.functional.grid_sample``; ``fill_mode`` "reflect" (d c b a | a b c d), "wrap",
"nearest" map the coordinates as TensorFlow does, "constant" fills with ``fill_value``;
``interpolation`` "bilinear" or "nearest".
"""

from __future__ import annotations

import math

import ember as _e

from ..nn import functional as F
from ._layer import Layer, register
from ._layers_act import draw, layer_rng
from ._layers_conv import _data_format
from ._layers_image import resize_images

__all__ = [
    "RandomBrightness",
    "RandomContrast",
    "RandomCrop",
    "RandomFlip",
    "RandomRotation",
    "RandomTranslation",
    "RandomZoom",
]

FILL_MODES = ("reflect", "wrap", "constant", "nearest")
INTERPOLATIONS = ("bilinear", "nearest")


def _factor_pair(factor, who, name, low=-1.0, high=1.0, symmetric=True):
    """Keras's factor argument: a number f -> (-|f|, |f|) (or (f, f) when not `symmetric`), a
    pair -> sorted; every value within [low, high]."""
    msg = (
        f"{who}: the `{name}` argument should be a number (or a list of two numbers) in the "
        f"range [{low}, {high}]. Received: {name}={factor!r}"
    )
    if isinstance(factor, (tuple, list)):
        if len(factor) != 2:
            raise ValueError(msg)
        pair = tuple(factor)
    elif isinstance(factor, (int, float)) and not isinstance(factor, bool):
        pair = (-abs(factor), abs(factor)) if symmetric else (factor, factor)
    else:
        raise ValueError(msg)
    if any(isinstance(v, bool) or not isinstance(v, (int, float)) for v in pair):
        raise ValueError(msg)
    if any(v < low or v > high for v in pair):
        raise ValueError(msg)
    return tuple(sorted(float(v) for v in pair)) if symmetric else tuple(float(v) for v in pair)


def _value_range(v, who):
    if not isinstance(v, (tuple, list)) or len(v) != 2 or v[0] >= v[1]:
        raise ValueError(
            f"{who}: the `value_range` argument should be a list of two numbers, low < high. "
            f"Received: value_range={v!r}"
        )
    return (float(v[0]), float(v[1]))


def _choice(v, options, who, name):
    if v not in options:
        raise ValueError(
            f"{who}: unknown `{name}` {v!r}; expected one of {options}. Received: {name}={v!r}"
        )
    return v


class _RandomImageLayer(Layer):
    """Shared: the seed, channels_last/first axes, unbatched (3-d) images, inference identity."""

    def __init__(self, seed=None, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.seed = seed
        self.__dict__["_rng"] = layer_rng(seed, type(self).__name__)
        self.data_format = _data_format(data_format, type(self).__name__)

    def _hw(self, x):
        return (2, 3) if self.data_format == "channels_first" else (1, 2)

    def call(self, inputs, training=False):
        x = inputs if inputs.dtype.kind == "f" else inputs.astype(self.dtype)
        if not training:
            return self._inference(x)
        single = x.ndim == 3
        if single:
            x = _e.expand_dims(x, axis=0)
        if x.ndim != 4:
            raise ValueError(
                f"{type(self).__name__}: expected images of rank 3 or 4, got shape "
                f"{tuple(inputs.shape)}"
            )
        y = self._augment(x)
        return y[0] if single else y

    def _inference(self, x):
        return x

    def _uniform(self, low, high, n, x):
        return draw(self).uniform(low, high, (n,), dtype=x.dtype, device=x.device)

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        return {**super().get_config(), "seed": self.seed, "data_format": self.data_format}


@register
class RandomFlip(_RandomImageLayer):
    """Flips each image with probability 1/2: "horizontal" (left-right), "vertical", or
    "horizontal_and_vertical" (Keras 3: one draw flips both axes)."""

    MODES = ("horizontal", "vertical", "horizontal_and_vertical")

    def __init__(self, mode="horizontal_and_vertical", seed=None, data_format=None, **kwargs):
        super().__init__(seed, data_format, **kwargs)
        self.mode = _choice(mode, self.MODES, "RandomFlip", "mode")

    def _augment(self, x):
        ha, wa = self._hw(x)
        flip = (self._uniform(0.0, 1.0, x.shape[0], x) <= 0.5).reshape(-1, 1, 1, 1)
        y = x
        if self.mode in ("horizontal", "horizontal_and_vertical"):
            y = _e.where(flip, _e.flip(y, axis=wa), y)
        if self.mode in ("vertical", "horizontal_and_vertical"):
            y = _e.where(flip, _e.flip(y, axis=ha), y)
        return y

    def get_config(self):
        return {**super().get_config(), "mode": self.mode}


def _map_coords(c, n, fill_mode):
    """TensorFlow's out-of-range mapping of pixel coordinates for `fill_mode`."""
    if fill_mode == "reflect":
        if n == 1:
            return c * 0.0
        t = _e.remainder(c, 2.0 * n)
        t = _e.where(t >= n, 2.0 * n - 1.0 - t, t)
        return _e.clip(t, 0.0, n - 1.0)
    if fill_mode == "wrap":
        return _e.clip(_e.remainder(c, float(n)), 0.0, n - 1.0)
    if fill_mode == "nearest":
        return _e.clip(c, 0.0, n - 1.0)
    return c


def affine_transform(x, rows, interpolation, fill_mode, fill_value, data_format):
    """Images `x` (N, H, W, C) sampled at ``(a0 x + a1 y + a2, b0 x + b1 y + b2)`` for each
    output pixel (x, y); `rows` = [a0, a1, a2, b0, b1, b2], each an (N,) array."""
    cf = x if data_format == "channels_first" else _e.permute_dims(x, (0, 3, 1, 2))
    n, _, h, w = cf.shape
    xs = _e.arange(w, dtype=x.dtype, device=x.device).reshape(1, 1, w)
    ys = _e.arange(h, dtype=x.dtype, device=x.device).reshape(1, h, 1)
    a0, a1, a2, b0, b1, b2 = (r.reshape(n, 1, 1) for r in rows)
    xi = _map_coords(a0 * xs + a1 * ys + a2, w, fill_mode)
    yi = _map_coords(b0 * xs + b1 * ys + b2, h, fill_mode)
    grid = _e.stack([(2.0 * xi + 1.0) / w - 1.0, (2.0 * yi + 1.0) / h - 1.0], axis=-1)
    constant = fill_mode == "constant"
    src = cf - fill_value if constant and fill_value else cf
    out = F.grid_sample(
        src,
        grid.astype(cf.dtype),
        mode=interpolation,
        padding_mode="zeros" if constant else "border",
        align_corners=False,
    )
    if constant and fill_value:
        out = out + fill_value
    return out if data_format == "channels_first" else _e.permute_dims(out, (0, 2, 3, 1))


class _AffineLayer(_RandomImageLayer):
    def __init__(
        self,
        fill_mode="reflect",
        interpolation="bilinear",
        seed=None,
        fill_value=0.0,
        data_format=None,
        **kwargs,
    ):
        super().__init__(seed, data_format, **kwargs)
        who = type(self).__name__
        self.fill_mode = _choice(fill_mode, FILL_MODES, who, "fill_mode")
        self.interpolation = _choice(interpolation, INTERPOLATIONS, who, "interpolation")
        if isinstance(fill_value, bool) or not isinstance(fill_value, (int, float)):
            raise ValueError(f"{who}: `fill_value` must be a number. Received: {fill_value!r}")
        self.fill_value = float(fill_value)

    def _augment(self, x):
        ha, wa = self._hw(x)
        rows = self._matrix(x, x.shape[ha], x.shape[wa])
        return affine_transform(
            x, rows, self.interpolation, self.fill_mode, self.fill_value, self.data_format
        )

    def get_config(self):
        return {
            **super().get_config(),
            "fill_mode": self.fill_mode,
            "interpolation": self.interpolation,
            "fill_value": self.fill_value,
        }


@register
class RandomRotation(_AffineLayer):
    """Rotates each image by a random angle in ``factor * 2 pi`` (a number f means [-f, f];
    positive angles turn counter-clockwise), about the image centre."""

    def __init__(
        self,
        factor,
        fill_mode="reflect",
        interpolation="bilinear",
        seed=None,
        fill_value=0.0,
        value_range=(0, 255),
        data_format=None,
        **kwargs,
    ):
        super().__init__(fill_mode, interpolation, seed, fill_value, data_format, **kwargs)
        self.factor = _factor_pair(factor, "RandomRotation", "factor")
        self.value_range = _value_range(value_range, "RandomRotation")

    def _matrix(self, x, h, w):
        lo, hi = self.factor
        angle = self._uniform(lo * 2.0 * math.pi, hi * 2.0 * math.pi, x.shape[0], x)
        c, s = _e.cos(angle), _e.sin(angle)
        x_off = ((w - 1) - (c * (w - 1) - s * (h - 1))) / 2.0
        y_off = ((h - 1) - (s * (w - 1) + c * (h - 1))) / 2.0
        return (c, -s, x_off, s, c, y_off)

    def get_config(self):
        return {
            **super().get_config(),
            "factor": list(self.factor),
            "value_range": list(self.value_range),
        }


@register
class RandomZoom(_AffineLayer):
    """Zooms each image by a random factor ``1 + f`` per axis, f drawn from `height_factor`
    (and `width_factor`; None keeps the aspect ratio): positive f zooms out, negative in."""

    def __init__(
        self,
        height_factor,
        width_factor=None,
        fill_mode="reflect",
        interpolation="bilinear",
        seed=None,
        fill_value=0.0,
        data_format=None,
        **kwargs,
    ):
        super().__init__(fill_mode, interpolation, seed, fill_value, data_format, **kwargs)
        self.height_factor = _factor_pair(height_factor, "RandomZoom", "height_factor")
        self.width_factor = (
            None
            if width_factor is None
            else _factor_pair(width_factor, "RandomZoom", "width_factor")
        )

    def _matrix(self, x, h, w):
        n = x.shape[0]
        zy = self._uniform(1.0 + self.height_factor[0], 1.0 + self.height_factor[1], n, x)
        zx = zy
        if self.width_factor is not None:
            zx = self._uniform(1.0 + self.width_factor[0], 1.0 + self.width_factor[1], n, x)
        zero = zx * 0.0
        return (zx, zero, (w - 1.0) / 2.0 * (1.0 - zx), zero, zy, (h - 1.0) / 2.0 * (1.0 - zy))

    def get_config(self):
        return {
            **super().get_config(),
            "height_factor": list(self.height_factor),
            "width_factor": None if self.width_factor is None else list(self.width_factor),
        }


@register
class RandomTranslation(_AffineLayer):
    """Shifts each image by random fractions of its height and width (positive: down/right)."""

    def __init__(
        self,
        height_factor,
        width_factor,
        fill_mode="reflect",
        interpolation="bilinear",
        seed=None,
        fill_value=0.0,
        data_format=None,
        **kwargs,
    ):
        super().__init__(fill_mode, interpolation, seed, fill_value, data_format, **kwargs)
        self.height_factor = _factor_pair(height_factor, "RandomTranslation", "height_factor")
        self.width_factor = _factor_pair(width_factor, "RandomTranslation", "width_factor")

    def _matrix(self, x, h, w):
        n = x.shape[0]
        dy = self._uniform(self.height_factor[0], self.height_factor[1], n, x) * h
        dx = self._uniform(self.width_factor[0], self.width_factor[1], n, x) * w
        one, zero = dx * 0.0 + 1.0, dx * 0.0
        return (one, zero, -dx, zero, one, -dy)

    def get_config(self):
        return {
            **super().get_config(),
            "height_factor": list(self.height_factor),
            "width_factor": list(self.width_factor),
        }


@register
class RandomContrast(_RandomImageLayer):
    """``(x - mean) * c + mean`` per image and channel (mean over height and width), c drawn
    from [1 - lower, 1 + upper] (a number f: lower = upper = f), clipped to `value_range`."""

    def __init__(self, factor, value_range=(0, 255), seed=None, data_format=None, **kwargs):
        super().__init__(seed, data_format, **kwargs)
        self.factor = _factor_pair(factor, "RandomContrast", "factor", 0.0, 1.0, symmetric=False)
        self.value_range = _value_range(value_range, "RandomContrast")

    def _augment(self, x):
        ha, wa = self._hw(x)
        c = self._uniform(1.0 - self.factor[0], 1.0 + self.factor[1], x.shape[0], x)
        mean = _e.mean(x, axis=(ha, wa), keepdims=True)
        y = (x - mean) * c.reshape(-1, 1, 1, 1) + mean
        return _e.clip(y, self.value_range[0], self.value_range[1])

    def get_config(self):
        return {
            **super().get_config(),
            "factor": list(self.factor),
            "value_range": list(self.value_range),
        }


@register
class RandomBrightness(_RandomImageLayer):
    """Adds ``d * (high - low)`` per image, d drawn from `factor` (a number f: [-f, f]; values
    in [-1, 1]), clipped to `value_range`."""

    def __init__(self, factor, value_range=(0, 255), seed=None, **kwargs):
        data_format = kwargs.pop("data_format", None)
        super().__init__(seed, data_format, **kwargs)
        self.factor = _factor_pair(factor, "RandomBrightness", "factor")
        self.value_range = _value_range(value_range, "RandomBrightness")

    def _augment(self, x):
        lo, hi = self.value_range
        d = self._uniform(self.factor[0], self.factor[1], x.shape[0], x) * (hi - lo)
        return _e.clip(x + d.reshape(-1, 1, 1, 1), lo, hi)

    def get_config(self):
        return {
            **super().get_config(),
            "factor": list(self.factor),
            "value_range": list(self.value_range),
        }


@register
class RandomCrop(_RandomImageLayer):
    """In training, crops a random (height, width) window (one location per batch); in
    inference, or when the images are smaller, takes Keras's largest centred window of the
    target's aspect ratio and resizes it (bilinear) to (height, width)."""

    def __init__(self, height, width, seed=None, data_format=None, **kwargs):
        super().__init__(seed, data_format, **kwargs)
        for name, v in (("height", height), ("width", width)):
            if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
                raise ValueError(f"RandomCrop: `{name}` must be a positive int. Received: {v!r}")
        self.height, self.width = height, width

    def _smart(self, x):
        ha, wa = (
            (x.ndim - 2, x.ndim - 1)
            if self.data_format == "channels_first"
            else (
                x.ndim - 3,
                x.ndim - 2,
            )
        )
        if x.shape[ha] == self.height and x.shape[wa] == self.width:
            return x
        return resize_images(
            x, (self.height, self.width), "bilinear", True, data_format=self.data_format
        )

    def _inference(self, x):
        return self._smart(x)

    def _augment(self, x):
        ha, wa = self._hw(x)
        h, w = x.shape[ha], x.shape[wa]
        if h < self.height or w < self.width:
            return self._smart(x)
        # the offsets are drawn on the host (they become slice bounds): no device read-back
        u = draw(self).uniform(0.0, 1.0, (2,), dtype="float64", device="cpu")
        u = _e.asnumpy(u)
        top = min(int(u[0] * (h - self.height + 1)), h - self.height)
        left = min(int(u[1] * (w - self.width + 1)), w - self.width)
        index = [slice(None)] * 4
        index[ha] = slice(top, top + self.height)
        index[wa] = slice(left, left + self.width)
        return x[tuple(index)]

    def compute_output_shape(self, input_shape):
        shape = list(input_shape)
        n = len(shape)
        ha, wa = (n - 2, n - 1) if self.data_format == "channels_first" else (n - 3, n - 2)
        shape[ha], shape[wa] = self.height, self.width
        return tuple(shape)

    def get_config(self):
        return {**super().get_config(), "height": self.height, "width": self.width}
