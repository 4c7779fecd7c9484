"""``ember.nn.functional.scaled_dot_product_attention`` (PyTorch's signature and masks), composed
of differentiable ember ops."""

from __future__ import annotations

import math

from .. import _core
from .._matrices import triu
from ..amp import LOW, cast_policy
from ..backends.cuda import _SDP
from . import _flash
from ._functional_activation import softmax
from ._functional_layers import dropout

_NEG = -1e30


def _additive(mask, dtype, like):
    """A boolean mask (True: not allowed) or an additive float mask, as an additive mask."""
    if mask is None:
        return None
    if mask.dtype == _core.bool:
        return _core.where(mask, _NEG if dtype != _core.float16 else -6e4, 0.0).astype(dtype)
    return mask.astype(dtype, copy=False)


@cast_policy(LOW)
def scaled_dot_product_attention(
    query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None, enable_gqa=False
):
    """``softmax(q k^T * scale + mask) v`` over the last two dimensions: query (..., L, E),
    key (..., S, E), value (..., S, Ev). `attn_mask`: boolean (True: take part, as PyTorch's
    SDPA) or additive; `is_causal`: position i sees positions <= i."""
    who = "ember.nn.functional.scaled_dot_product_attention"
    for name, a in (("query", query), ("key", key), ("value", value)):
        if not isinstance(a, _core.ndarray):
            raise TypeError(f"{who}: {name} must be an array, got {type(a).__name__}")
    L, S = query.shape[-2], key.shape[-2]  # noqa: N806
    s = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    if _SDP["flash"] and _flash.supported(query, key, value, attn_mask, dropout_p, enable_gqa):
        return _flash.attention(query, key, value, bool(is_causal), float(s))
    scores = (query @ key.swapaxes(-1, -2)) * s
    if is_causal:
        if attn_mask is not None:
            raise ValueError(f"{who}: give attn_mask or is_causal, not both")
        causal = triu(_core.ones((L, S), dtype=_core.bool, device=query.device), k=1)
        scores = scores + _additive(causal, scores.dtype, scores)
    elif attn_mask is not None:
        if attn_mask.dtype == _core.bool:  # SDPA's boolean masks say which positions take part
            scores = scores + _additive(_core.logical_not(attn_mask), scores.dtype, scores)
        else:
            scores = scores + attn_mask.astype(scores.dtype, copy=False)
    w = softmax(scores, dim=-1)
    if dropout_p:
        w = dropout(w, dropout_p, True)
    return w @ value
