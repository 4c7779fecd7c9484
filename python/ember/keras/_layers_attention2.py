"""ember.keras's dot-product and additive attention layers (Keras 3's ``Attention`` and
``AdditiveAttention``): ``inputs = [query, value]`` or ``[query, value, key]`` of shapes
(batch, Tq, dim) and (batch, Tv, dim). Scores (batch, Tq, Tv): ``query @ key^T``
(``score_mode="dot"``, times a trainable scalar with ``use_scale``); ``w * sum(tanh(scale *
(q + k)), -1)`` over the pairs (``score_mode="concat"``); ``sum(scale * tanh(q + k), -1)``
(``AdditiveAttention``). Masked value positions lose 1e9 before the softmax (``mask=[query_mask,
value_mask]``, ``use_causal_mask``), dropout applies to the weights in training, and the output
``weights @ value`` is zeroed at masked query positions."""

from __future__ import annotations

import ember as _e

from ..nn import functional as F
from ._layer import Layer, register


class _BaseDenseAttention(Layer):
    supports_masking = True
    _score_default = "dot"

    def __init__(self, use_scale=False, score_mode=None, dropout=0.0, seed=None, **kwargs):
        super().__init__(**kwargs)
        mode = self._score_default if score_mode is None else score_mode
        if mode not in ("dot", "concat"):
            raise ValueError(
                f"Invalid value for argument score_mode. Expected one of {{'dot', 'concat'}}. "
                f"Received: score_mode={score_mode!r}"
            )
        if not 0.0 <= float(dropout) <= 1.0:
            raise ValueError(f"{type(self).__name__}: dropout must be in [0, 1], got {dropout!r}")
        self.use_scale = bool(use_scale)
        self.score_mode = mode
        self.dropout = float(dropout)
        self.seed = seed

    def build(self, input_shape):
        self.scale = None
        self.concat_score_weight = None
        if self.use_scale:
            self.scale = self.add_weight((), "ones", name="scale")
        if self.score_mode == "concat":
            self.concat_score_weight = self.add_weight((), "ones", name="concat_score_weight")

    def _scores(self, q, k):
        if self.score_mode == "dot":
            s = _e.matmul(q, _e.swapaxes(k, -1, -2))
            return s if self.scale is None else s * self.scale
        t = _e.expand_dims(q, -2) + _e.expand_dims(k, -3)
        if self.scale is not None:
            t = t * self.scale
        return self.concat_score_weight * _e.sum(_e.tanh(t), axis=-1)

    def call(
        self,
        inputs,
        mask=None,
        training=False,
        return_attention_scores=False,
        use_causal_mask=False,
    ):
        if not isinstance(inputs, (list, tuple)) or len(inputs) not in (2, 3):
            raise ValueError(
                f"{type(self).__name__} layer must be called on a list of inputs, namely "
                f"[query, value] or [query, value, key]. Received: inputs={inputs!r}."
            )
        q, v = inputs[0], inputs[1]
        k = inputs[2] if len(inputs) == 3 else v
        q_mask = v_mask = None
        if mask is not None:
            masks = list(mask) + [None] * (2 - len(mask))
            q_mask, v_mask = masks[0], masks[1]
        scores = self._scores(q, k)
        keep = None
        if v_mask is not None:
            keep = _e.expand_dims(v_mask.astype(_e.bool), -2)
        if use_causal_mask:
            tq, tv = scores.shape[-2], scores.shape[-1]
            causal = _e.tril(_e.ones((tq, tv), dtype=_e.bool, device=scores.device))
            keep = causal if keep is None else keep & causal
        if keep is not None:
            scores = scores - 1e9 * (1.0 - keep.astype(scores.dtype))  # Keras's padding rule
        weights = F.softmax(scores, dim=-1)
        if training and self.dropout > 0:
            weights = F.dropout(weights, self.dropout, training=True)
        out = _e.matmul(weights, v)
        if q_mask is not None:
            out = out * _e.expand_dims(q_mask.astype(out.dtype), -1)
        if return_attention_scores:
            return out, weights
        return out

    def compute_mask(self, inputs, mask=None):
        if mask is None or mask[0] is None:
            return None
        return mask[0]

    def compute_output_shape(self, input_shape):
        q, v = input_shape[0], input_shape[1]
        return tuple(q[:-1]) + (v[-1],)

    def _call_output_shapes(self, shapes, rest, kwargs):
        out = self.compute_output_shape(shapes)
        if kwargs.get("return_attention_scores", False):
            return [out, tuple(shapes[0][:-1]) + (shapes[1][1],)]
        return out

    def get_config(self):
        return {
            **super().get_config(),
            "use_scale": self.use_scale,
            "score_mode": self.score_mode,
            "dropout": self.dropout,
            "seed": self.seed,
        }


@register
class Attention(_BaseDenseAttention):
    """Dot-product (Luong-style) attention: ``score_mode="dot"`` (default) or ``"concat"``."""


@register
class AdditiveAttention(_BaseDenseAttention):
    """Additive (Bahdanau-style) attention: scores ``sum(scale * tanh(q + k), -1)``, ``scale`` a
    trainable vector with ``use_scale=True`` (the default)."""

    def __init__(self, use_scale=True, dropout=0.0, **kwargs):
        kwargs.pop("score_mode", None)
        super().__init__(use_scale=use_scale, dropout=dropout, **kwargs)
        self.score_mode = "additive"

    def build(self, input_shape):
        dim = input_shape[0][-1]
        self.scale = None
        if self.use_scale:
            self.scale = self.add_weight((dim,), "glorot_uniform", name="scale")

    def _scores(self, q, k):
        t = _e.tanh(_e.expand_dims(q, -2) + _e.expand_dims(k, -3))
        if self.scale is not None:
            t = t * self.scale
        return _e.sum(t, axis=-1)

    def get_config(self):
        cfg = super().get_config()
        cfg.pop("score_mode", None)
        return cfg
