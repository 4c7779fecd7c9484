"""Keras's ``MultiHeadAttention`` over ember.nn.functional's scaled_dot_product_attention.

Weights are Keras's: four EinsumDense projections built in the order query, key, value,
attention_output, each with a kernel and (``use_bias``) a bias: query/key kernels
``(dim, num_heads, key_dim)`` with biases ``(num_heads, key_dim)``, the value kernel
``(dim, num_heads, value_dim)``, the output kernel ``(num_heads, value_dim, *output_shape)`` with
bias ``output_shape`` (default: the query's last dimension), so ``get_weights``/``set_weights``
follow Keras 3's order. Attention runs over the sequence axis of ``(batch, seq, features)``
inputs (Keras's default ``attention_axes`` for rank-3 inputs)."""

from __future__ import annotations

import contextlib
import math

import numpy as _np

import ember as _e

from ..nn import functional as F
from . import constraints, initializers, regularizers
from ._layer import Layer, register
from ._layers_core import _positive_int, _ser_init, _ser_reg

__all__ = ["MultiHeadAttention"]

_NEG = -1e9  # Keras's Softmax adds (1 - mask) * -1e9 (float32)


class EinsumDense(Layer):
    """The projection of Keras's EinsumDense as MultiHeadAttention builds it: the last `bound`
    axes of the input contract with the first `bound` axes of ``kernel (*in_dims, *out_dims)``;
    ``bias`` has shape ``out_dims`` (Keras's bias_axes are the output letters)."""

    def __init__(self, equation, bound, out_dims, use_bias, common, name):
        super().__init__(name=name, activity_regularizer=common["activity_regularizer"])
        self.equation = equation
        self.bound = bound
        self.out_dims = tuple(out_dims)
        self.use_bias = use_bias
        self._common = common

    def build(self, input_shape):
        c = self._common
        in_dims = tuple(input_shape[-self.bound :])
        if any(d is None for d in in_dims):
            raise ValueError(
                f"MultiHeadAttention: the feature dimension of the {self.name} input must be "
                f"known, got shape {tuple(input_shape)}"
            )
        self.kernel = self.add_weight(
            in_dims + self.out_dims,
            c["kernel_initializer"],
            regularizer=c["kernel_regularizer"],
            constraint=c["kernel_constraint"],
            name="kernel",
        )
        self.bias = None
        if self.use_bias:
            self.bias = self.add_weight(
                self.out_dims,
                c["bias_initializer"],
                regularizer=c["bias_regularizer"],
                constraint=c["bias_constraint"],
                name="bias",
            )

    def call(self, inputs):
        y = _e.tensordot(inputs, self.kernel, axes=self.bound)
        return y if self.bias is None else y + self.bias

    def compute_output_shape(self, input_shape):
        return tuple(input_shape[: -self.bound]) + self.out_dims


def _check_axes(attention_axes):
    if isinstance(attention_axes, bool) or not (
        attention_axes is None or isinstance(attention_axes, (int, list, tuple))
    ):
        raise ValueError(
            "`attention_axes` must be an int, list, or tuple. Received: "
            f"attention_axes={attention_axes!r}"
        )
    axes = (attention_axes,) if isinstance(attention_axes, int) else attention_axes
    if axes is not None and tuple(axes) not in ((1,), (-2,)):
        raise ValueError(
            f"MultiHeadAttention: attention_axes={attention_axes!r} is not supported by "
            "ember.keras: attention runs over the sequence axis of (batch, seq, features) "
            "inputs (attention_axes=None, 1 or -2)"
        )
    return None if axes is None else tuple(axes)


def _check_output_shape(output_shape):
    if not output_shape:
        return None
    shape = (output_shape,) if isinstance(output_shape, int) else output_shape
    try:
        shape = tuple(shape)
    except TypeError:
        shape = None
    if shape is None or not all(
        isinstance(d, int) and not isinstance(d, bool) and d > 0 for d in shape
    ):
        raise ValueError(
            f"Invalid `output_shape`: {output_shape!r}. When specified, the `output_shape` "
            "should be of type tuple, list, or int (positive sizes)."
        )
    return shape


def _as_mask(m, device, who):
    """A boolean ember array on `device` from a mask given as ember/NumPy/list (nonzero: True)."""
    if m is None:
        return None
    if not isinstance(m, _e.ndarray):
        m = _e.asarray(_np.asarray(m), device=device)
    elif m.device != device:
        if m.device.type != "cpu":  # host data goes to the device; GPU data never moves implicitly
            raise ValueError(
                f"MultiHeadAttention: {who} is on {m.device} but the inputs are on {device}"
            )
        m = m.to(device)
    if m.dtype != _e.bool:
        m = m != 0
    return m


@register
class MultiHeadAttention(Layer):
    """Keras's multi-head attention: project query/key/value per head, ``softmax(q k^T /
    sqrt(key_dim))`` over the value sequence (masked by `attention_mask`, the inputs' masks and
    ``use_causal_mask``), dropout, weighted values, output projection."""

    supports_masking = True

    def __init__(
        self,
        num_heads,
        key_dim,
        value_dim=None,
        dropout=0.0,
        use_bias=True,
        output_shape=None,
        attention_axes=None,
        flash_attention=None,
        kernel_initializer="glorot_uniform",
        bias_initializer="zeros",
        kernel_regularizer=None,
        bias_regularizer=None,
        activity_regularizer=None,
        kernel_constraint=None,
        bias_constraint=None,
        seed=None,
        **kwargs,
    ):
        super().__init__(**kwargs)
        who = "MultiHeadAttention"
        self._num_heads = _positive_int(num_heads, who, "num_heads")
        self._key_dim = _positive_int(key_dim, who, "key_dim")
        self._value_dim = _positive_int(value_dim, who, "value_dim") if value_dim else key_dim
        if (
            isinstance(dropout, bool)
            or not isinstance(dropout, (int, float))
            or not 0.0 <= dropout < 1.0
        ):
            raise ValueError(
                f"Invalid value received for argument `dropout`. Expected a float value in "
                f"[0, 1). Received: dropout={dropout!r}"
            )
        self._dropout = float(dropout)
        self._use_bias = bool(use_bias)
        self._output_shape = _check_output_shape(output_shape)
        self._attention_axes = _check_axes(attention_axes)
        if flash_attention not in (None, True, False):
            raise ValueError(
                f"MultiHeadAttention: flash_attention must be None, True or False. Received: "
                f"flash_attention={flash_attention!r}"
            )
        if flash_attention and self._dropout > 0.0:
            raise ValueError(
                "Dropout is not supported when flash attention is enabled. Please set dropout "
                "to 0.0 to use flash attention."
            )
        self._flash_attention = flash_attention
        self._kernel_initializer = initializers.get(kernel_initializer)
        self._bias_initializer = initializers.get(bias_initializer)
        self._kernel_regularizer = regularizers.get(kernel_regularizer)
        self._bias_regularizer = regularizers.get(bias_regularizer)
        self._activity_regularizer = regularizers.get(activity_regularizer)
        self._kernel_constraint = constraints.get(kernel_constraint)
        self._bias_constraint = constraints.get(bias_constraint)
        self.seed = seed
        self._inverse_sqrt_key_dim = 1.0 / math.sqrt(float(self._key_dim))

    num_heads = property(lambda self: self._num_heads)
    key_dim = property(lambda self: self._key_dim)
    value_dim = property(lambda self: self._value_dim)
    dropout = property(lambda self: self._dropout)
    use_bias = property(lambda self: self._use_bias)
    attention_axes = property(lambda self: self._attention_axes)
    query_dense = property(lambda self: self._query_dense)
    key_dense = property(lambda self: self._key_dense)
    value_dense = property(lambda self: self._value_dense)
    output_dense = property(lambda self: self._output_dense)

    # ---- building ----

    def _common(self):
        return {
            "kernel_initializer": self._kernel_initializer,
            "bias_initializer": self._bias_initializer,
            "kernel_regularizer": self._kernel_regularizer,
            "bias_regularizer": self._bias_regularizer,
            "activity_regularizer": self._activity_regularizer,
            "kernel_constraint": self._kernel_constraint,
            "bias_constraint": self._bias_constraint,
        }

    def _check_shapes(self, query_shape, value_shape, key_shape):
        for name, s in (("query", query_shape), ("value", value_shape), ("key", key_shape)):
            if len(s) != 3:
                raise ValueError(
                    f"MultiHeadAttention: ember.keras attends over the sequence axis of rank-3 "
                    f"(batch, seq, features) inputs; got {name} of shape {tuple(s)}"
                )
        if tuple(value_shape[1:-1]) != tuple(key_shape[1:-1]):
            raise ValueError(
                "All dimensions of `value` and `key`, except the last one, must be equal. "
                f"Received: value_shape={tuple(value_shape)} and key_shape={tuple(key_shape)}"
            )

    def build(self, query_shape, value_shape=None, key_shape=None):
        if value_shape is None and _is_shape_list(query_shape):  # [query, value(, key)] shapes
            shapes = list(query_shape) + [None] * (3 - len(query_shape))
            query_shape, value_shape, key_shape = shapes[:3]
        if value_shape is None:
            raise ValueError("MultiHeadAttention.build: value_shape must be given")
        query_shape, value_shape = tuple(query_shape), tuple(value_shape)
        key_shape = value_shape if key_shape is None else tuple(key_shape)
        self._check_shapes(query_shape, value_shape, key_shape)
        n, kd, vd = self._num_heads, self._key_dim, self._value_dim
        c, ub = self._common(), self._use_bias
        self._query_dense = EinsumDense("abc,cde->abde", 1, (n, kd), ub, c, "query")
        self._query_dense._maybe_build(query_shape)
        self._key_dense = EinsumDense("abc,cde->abde", 1, (n, kd), ub, c, "key")
        self._key_dense._maybe_build(key_shape)
        self._value_dense = EinsumDense("abc,cde->abde", 1, (n, vd), ub, c, "value")
        self._value_dense._maybe_build(value_shape)
        out = self._output_shape or (query_shape[-1],)
        letters = "efghij"[: len(out)]
        self._output_dense = EinsumDense(
            f"abcd,cd{letters}->ab{letters}", 2, out, ub, c, "attention_output"
        )
        self._output_dense._maybe_build(query_shape[:2] + (n, vd))
        if self._attention_axes is None:
            self._attention_axes = (1,)  # what Keras's build records
        d = self.__dict__
        d["built"] = True
        d["_build_shapes"] = [query_shape, value_shape, key_shape]

    def _build_for(self, query, value, key):
        shapes = [
            None if t is None else tuple(t.shape if hasattr(t, "shape") else _np.shape(t))
            for t in (query, value, key)
        ]
        dev = query.device if isinstance(query, _e.ndarray) else None
        with dev if dev is not None else contextlib.nullcontext():
            self.build(*shapes)

    def __call__(self, query, value=None, key=None, **kwargs):
        if value is None:
            raise TypeError(
                "MultiHeadAttention: call it with query and value: layer(query, value, key=None)"
            )
        value, key = self._convert_input(value), self._convert_input(key)
        if not self.built:
            self._build_for(query, value, key)
        return super().__call__(query, value, key, **kwargs)

    def get_build_config(self):
        if self._build_shapes is None:
            return None
        q, v, k = self._build_shapes
        return {"query_shape": list(q), "value_shape": list(v), "key_shape": list(k)}

    def build_from_config(self, config):
        if config and not self.built:
            if "query_shape" in config:
                shapes = [config["query_shape"], config["value_shape"], config.get("key_shape")]
            else:
                shapes = list(config["input_shape"])
            self.build(*[None if s is None else tuple(s) for s in shapes])

    # ---- calling ----

    def _attention_mask(self, q, v, query_mask, value_mask, key_mask, attention_mask, causal):
        """Keras's rule: the query mask (B, T, 1), the value and key masks (B, 1, S), the causal
        mask (1, T, S) and `attention_mask` (B, T, S), AND-ed; None when there is none."""
        dev = q.device
        auto = None
        for name, m, axis in (
            ("query_mask", query_mask, -1),
            ("value_mask", value_mask, -2),
            ("key_mask", key_mask, -2),
        ):
            m = _as_mask(m, dev, name)
            if m is not None:
                m = _e.expand_dims(m, axis=axis)
                auto = m if auto is None else auto & m
        if causal:
            t, s = q.shape[1], v.shape[1]
            m = _e.expand_dims(_e.arange(t, device=dev), 1) >= _e.arange(s, device=dev)
            m = _e.expand_dims(m, axis=0)
            auto = m if auto is None else auto & m
        mask = _as_mask(attention_mask, dev, "attention_mask")
        if auto is not None:
            mask = auto if mask is None else mask & auto
        if mask is not None:
            while mask.ndim < 4:  # (B, T, S) -> (B, 1, T, S): the same for every head
                mask = _e.expand_dims(mask, axis=-3)
        return mask

    def call(
        self,
        query,
        value,
        key=None,
        query_mask=None,
        value_mask=None,
        key_mask=None,
        attention_mask=None,
        return_attention_scores=False,
        training=False,
        use_causal_mask=False,
    ):
        if key is None:
            key = value
        for name, t in (("query", query), ("value", value), ("key", key)):
            if t.ndim != 3:
                raise ValueError(
                    f"MultiHeadAttention: ember.keras attends over the sequence axis of rank-3 "
                    f"(batch, seq, features) inputs; got {name} of shape {tuple(t.shape)}"
                )
        if self._flash_attention and return_attention_scores:
            raise ValueError(
                "Returning attention scores is not supported when flash attention is enabled. "
                "Please disable flash attention to access attention scores."
            )
        # a causal mask alone (square) goes to the attention kernel as is_causal
        only_causal = (
            use_causal_mask
            and not return_attention_scores
            and attention_mask is None
            and query_mask is None
            and value_mask is None
            and key_mask is None
            and query.shape[1] == value.shape[1]
        )
        mask = None
        if not only_causal:
            mask = self._attention_mask(
                query, value, query_mask, value_mask, key_mask, attention_mask, use_causal_mask
            )
        # (B, T, N, H) -> (B, N, T, H): heads lead, as the attention kernel takes them
        q = _e.permute_dims(self._query_dense(query), (0, 2, 1, 3))
        k = _e.permute_dims(self._key_dense(key), (0, 2, 1, 3))
        v = _e.permute_dims(self._value_dense(value), (0, 2, 1, 3))
        rate = self._dropout if training else 0.0
        scores = None
        if return_attention_scores:
            logits = _e.matmul(q * self._inverse_sqrt_key_dim, _e.swapaxes(k, -1, -2))
            if mask is not None:
                logits = logits + _e.where(mask, 0.0, _NEG).astype(logits.dtype)
            scores = F.softmax(logits, dim=-1)
            probs = F.dropout(scores, rate, training=True) if rate else scores
            ctx = _e.matmul(probs, v)
        else:
            ctx = F.scaled_dot_product_attention(
                q,
                k,
                v,
                attn_mask=mask,
                dropout_p=rate,
                is_causal=bool(only_causal),
                scale=self._inverse_sqrt_key_dim,
            )
        out = self._output_dense(_e.permute_dims(ctx, (0, 2, 1, 3)))
        if return_attention_scores:
            return out, scores
        return out

    # ---- shapes and config ----

    def compute_output_shape(self, query_shape, value_shape=None, key_shape=None):
        if value_shape is None and _is_shape_list(query_shape):
            shapes = list(query_shape) + [None] * (3 - len(query_shape))
            query_shape, value_shape, key_shape = shapes[:3]
        query_shape = tuple(query_shape)
        value_shape = query_shape if value_shape is None else tuple(value_shape)
        key_shape = value_shape if key_shape is None else tuple(key_shape)
        self._check_shapes(query_shape, value_shape, key_shape)
        if self._output_shape:
            return query_shape[:-1] + self._output_shape
        return query_shape

    def _call_output_shapes(self, shapes, rest, kwargs):
        args = list(rest) + [None, None]
        value = kwargs.get("value", args[0])
        key = kwargs.get("key", args[1])

        def shape(t):
            return None if t is None else tuple(t.shape)

        out = self.compute_output_shape(shapes, shape(value), shape(key))
        if kwargs.get("return_attention_scores", False):
            scores = (shapes[0], self._num_heads, shapes[1], shape(value)[1])
            return [out, scores]
        return out

    def get_config(self):
        return {
            **super().get_config(),
            "num_heads": self._num_heads,
            "key_dim": self._key_dim,
            "value_dim": self._value_dim,
            "dropout": self._dropout,
            "use_bias": self._use_bias,
            "output_shape": None if self._output_shape is None else list(self._output_shape),
            "attention_axes": None if self._attention_axes is None else list(self._attention_axes),
            "kernel_initializer": _ser_init(self._kernel_initializer),
            "bias_initializer": _ser_init(self._bias_initializer),
            "kernel_regularizer": _ser_reg(self._kernel_regularizer),
            "bias_regularizer": _ser_reg(self._bias_regularizer),
            "activity_regularizer": _ser_reg(self._activity_regularizer),
            "seed": self.seed,
        }


def _is_shape_list(s):
    """True for a list of shapes ([query, value, key]), False for one shape."""
    return isinstance(s, (list, tuple)) and bool(s) and isinstance(s[0], (list, tuple))
