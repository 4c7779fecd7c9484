"""``ember.nn.functional.multi_head_attention_forward``: PyTorch's functional multi-head
attention (the math of ``nn.MultiheadAttention``), with its arguments: packed or separate
in-projections, ``bias_k``/``bias_v`` (a learned key/value appended to the sequence),
``add_zero_attn`` (a zero key/value appended), ``static_k``/``static_v``, boolean (True: not
allowed) or additive masks, ``is_causal``. Inputs are (L, N, E) or unbatched (L, E). Without
weights, masks and extra keys the attention runs through ``scaled_dot_product_attention`` (the
fused kernel where it applies), as PyTorch's fast path."""

from __future__ import annotations

import math

from .. import _core
from .._joining import concatenate
from .._matrices import triu
from ._functional_activation import softmax
from ._functional_attention import _additive, scaled_dot_product_attention
from ._functional_layers import dropout, linear

_F = "ember.nn.functional.multi_head_attention_forward"


def _pad_last(mask):
    """A mask with one more key position that takes part (False / 0)."""
    if mask is None:
        return None
    extra = _core.zeros((*mask.shape[:-1], 1), dtype=mask.dtype, device=mask.device)
    return concatenate([mask, extra], axis=-1)


def multi_head_attention_forward(
    query,
    key,
    value,
    embed_dim_to_check,
    num_heads,
    in_proj_weight,
    in_proj_bias,
    bias_k,
    bias_v,
    add_zero_attn,
    dropout_p,
    out_proj_weight,
    out_proj_bias,
    training=True,
    key_padding_mask=None,
    need_weights=True,
    attn_mask=None,
    use_separate_proj_weight=False,
    q_proj_weight=None,
    k_proj_weight=None,
    v_proj_weight=None,
    static_k=None,
    static_v=None,
    average_attn_weights=True,
    is_causal=False,
):
    """(attn_output (L, N, E), attn_weights (N, L, S) averaged over heads, (N, H, L, S), or
    None); see the module's documentation."""
    for name, a in (("query", query), ("key", key), ("value", value)):
        if not isinstance(a, _core.ndarray):
            raise TypeError(f"{_F}: {name} must be an array, got {type(a).__name__}")
    unbatched = query.ndim == 2
    if unbatched:
        query, key, value = query[:, None], key[:, None], value[:, None]
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask[None]
    if query.ndim != 3:
        raise ValueError(f"{_F}: query must be (L, N, E) or (L, E), got {tuple(query.shape)}")
    L, N, E = query.shape  # noqa: N806
    if E != embed_dim_to_check:
        raise ValueError(
            f"{_F}: was expecting embedding dimension of {embed_dim_to_check}, but got {E}"
        )
    H = int(num_heads)  # noqa: N806
    if E % H:
        raise ValueError(f"{_F}: embed_dim {E} is not divisible by num_heads {H}")
    Dh = E // H  # noqa: N806
    b = in_proj_bias
    bq, bk, bv = (None, None, None) if b is None else (b[:E], b[E : 2 * E], b[2 * E :])
    if use_separate_proj_weight:
        if q_proj_weight is None or k_proj_weight is None or v_proj_weight is None:
            raise ValueError(
                f"{_F}: use_separate_proj_weight is True but q_proj_weight, k_proj_weight or "
                "v_proj_weight is None"
            )
        wq, wk, wv = q_proj_weight, k_proj_weight, v_proj_weight
    else:
        if in_proj_weight is None:
            raise ValueError(f"{_F}: use_separate_proj_weight is False but in_proj_weight is None")
        wq, wk, wv = in_proj_weight[:E], in_proj_weight[E : 2 * E], in_proj_weight[2 * E :]
    q = linear(query, wq, bq)
    k = linear(key, wk, bk) if static_k is None else None
    v = linear(value, wv, bv) if static_v is None else None
    if is_causal and attn_mask is None:
        S0 = key.shape[0]  # noqa: N806
        attn_mask = triu(_core.ones((L, S0), dtype=_core.bool, device=q.device), k=1)
    if (bias_k is None) != (bias_v is None):
        raise ValueError(f"{_F}: bias_k and bias_v must both be given or both be None")
    if bias_k is not None:
        if static_k is not None or static_v is not None:
            raise ValueError(f"{_F}: bias cannot be added to static key or value")
        k = concatenate([k, _core.broadcast_to(bias_k.reshape(1, 1, E), (1, N, E))], axis=0)
        v = concatenate([v, _core.broadcast_to(bias_v.reshape(1, 1, E), (1, N, E))], axis=0)
        attn_mask, key_padding_mask = _pad_last(attn_mask), _pad_last(key_padding_mask)
    # heads: (N * H, len, Dh), PyTorch's layout (static_k/static_v come in it)
    q = q.reshape(L, N * H, Dh).swapaxes(0, 1)
    k = k.reshape(k.shape[0], N * H, Dh).swapaxes(0, 1) if static_k is None else static_k
    v = v.reshape(v.shape[0], N * H, Dh).swapaxes(0, 1) if static_v is None else static_v
    if add_zero_attn:
        zk = _core.zeros((N * H, 1, Dh), dtype=k.dtype, device=k.device)
        k = concatenate([k, zk], axis=1)
        v = concatenate([v, zk.astype(v.dtype)], axis=1)
        attn_mask, key_padding_mask = _pad_last(attn_mask), _pad_last(key_padding_mask)
    S = k.shape[1]  # noqa: N806
    q4 = q.reshape(N, H, L, Dh)
    k4 = k.reshape(N, H, S, Dh)
    v4 = v.reshape(N, H, S, v.shape[-1])
    p = dropout_p if training else 0.0
    if not need_weights and attn_mask is None and key_padding_mask is None:
        out = scaled_dot_product_attention(q4, k4, v4, dropout_p=p)
        weights = None
    else:
        scores = (q4 @ k4.swapaxes(-1, -2)) * (1.0 / math.sqrt(Dh))
        if attn_mask is not None:
            m = _additive(attn_mask, scores.dtype, scores)
            scores = scores + (m if m.ndim == 2 else m.reshape((N, H, L, S)))
        if key_padding_mask is not None:
            kpm = _additive(key_padding_mask, scores.dtype, scores)
            scores = scores + kpm.reshape((N, 1, 1, S))
        w = softmax(scores, dim=-1)
        if p:
            w = dropout(w, p, True)
        out = w @ v4
        weights = (w.mean(axis=1) if average_attn_weights else w) if need_weights else None
    out = out.transpose((2, 0, 1, 3)).reshape((L, N, E))
    out = linear(out, out_proj_weight, out_proj_bias)
    if unbatched:
        out = out[:, 0]
        if weights is not None:
            weights = weights[0]
    return out, weights
