"""Attention in ember.nn: ``F.scaled_dot_product_attention``, ``MultiheadAttention`` and the
Transformer layers (``TransformerEncoderLayer``, ``TransformerEncoder``,
``TransformerDecoderLayer``, ``TransformerDecoder``), with PyTorch's parameters, layouts, masks
and defaults; composed of differentiable ember ops on either device."""

from __future__ import annotations

import copy
import math

from .. import _core
from .._matrices import triu
from ._container import ModuleList
from ._functional_activation import gelu, relu
from ._functional_attention import scaled_dot_product_attention
from ._functional_mha import multi_head_attention_forward
from ._layers import Dropout, LayerNorm, Linear
from ._module import Module
from ._parameter import Parameter

__all__ = [
    "MultiheadAttention",
    "Transformer",
    "TransformerDecoder",
    "TransformerDecoderLayer",
    "TransformerEncoder",
    "TransformerEncoderLayer",
    "scaled_dot_product_attention",
]


class MultiheadAttention(Module):
    """Multi-head attention (PyTorch's): packed in-projection ``in_proj_weight`` (3E, E) (or
    separate q/k/v weights when kdim/vdim differ), ``out_proj``; ``forward(query, key, value,
    key_padding_mask, need_weights, attn_mask, average_attn_weights, is_causal)`` returns
    ``(attn_output, attn_weights)``. Masks: boolean (True: not allowed) or additive."""

    def __init__(
        self,
        embed_dim,
        num_heads,
        dropout=0.0,
        bias=True,
        add_bias_kv=False,
        add_zero_attn=False,
        kdim=None,
        vdim=None,
        batch_first=False,
        device=None,
        dtype=None,
    ):
        super().__init__()
        who = "ember.nn.MultiheadAttention"
        if embed_dim % num_heads:
            raise ValueError(
                f"{who}: embed_dim {embed_dim} is not divisible by num_heads {num_heads}"
            )
        self.embed_dim, self.num_heads = embed_dim, num_heads
        self.head_dim = embed_dim // num_heads
        self.kdim, self.vdim = kdim or embed_dim, vdim or embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.dropout, self.batch_first = dropout, batch_first
        dtype = dtype or "float32"
        from . import init

        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(
                _core.empty((3 * embed_dim, embed_dim), dtype=dtype, device=device)
            )
            init.xavier_uniform_(self.in_proj_weight)
            self.q_proj_weight = self.k_proj_weight = self.v_proj_weight = None
        else:
            self.in_proj_weight = None
            self.q_proj_weight = Parameter(
                _core.empty((embed_dim, embed_dim), dtype=dtype, device=device)
            )
            self.k_proj_weight = Parameter(
                _core.empty((embed_dim, self.kdim), dtype=dtype, device=device)
            )
            self.v_proj_weight = Parameter(
                _core.empty((embed_dim, self.vdim), dtype=dtype, device=device)
            )
            for w in (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight):
                init.xavier_uniform_(w)
        self.in_proj_bias = (
            Parameter(_core.zeros((3 * embed_dim,), dtype=dtype, device=device)) if bias else None
        )
        self.out_proj = Linear(embed_dim, embed_dim, bias=bias, device=device, dtype=dtype)
        if bias:
            init.zeros_(self.out_proj.bias)
        if add_bias_kv:  # a learned key and value appended to every sequence (PyTorch's init)
            self.bias_k = Parameter(_core.empty((1, 1, embed_dim), dtype=dtype, device=device))
            self.bias_v = Parameter(_core.empty((1, 1, embed_dim), dtype=dtype, device=device))
            init.xavier_normal_(self.bias_k)
            init.xavier_normal_(self.bias_v)
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = bool(add_zero_attn)

    def forward(
        self,
        query,
        key,
        value,
        key_padding_mask=None,
        need_weights=True,
        attn_mask=None,
        average_attn_weights=True,
        is_causal=False,
    ):
        if self.batch_first and query.ndim == 3:
            query, key, value = (a.swapaxes(0, 1) for a in (query, key, value))
        out, weights = multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight,
            self.in_proj_bias, self.bias_k, self.bias_v, self.add_zero_attn, self.dropout,
            self.out_proj.weight, self.out_proj.bias, training=self.training,
            key_padding_mask=key_padding_mask, need_weights=need_weights, attn_mask=attn_mask,
            use_separate_proj_weight=not self._qkv_same_embed_dim,
            q_proj_weight=self.q_proj_weight, k_proj_weight=self.k_proj_weight,
            v_proj_weight=self.v_proj_weight, average_attn_weights=average_attn_weights,
            is_causal=is_causal,
        )  # fmt: skip
        if self.batch_first and query.ndim == 3:
            out = out.swapaxes(0, 1)
        return out, weights


def _activation(act):
    if callable(act):
        return act
    if act == "relu":
        return relu
    if act == "gelu":
        return gelu
    raise ValueError(
        f"ember.nn.Transformer: activation must be 'relu', 'gelu' or a callable, got {act!r}"
    )


class TransformerEncoderLayer(Module):
    """Self-attention and a feed-forward block, each with dropout, a residual connection and
    LayerNorm (after, or before with ``norm_first``)."""

    def __init__(
        self,
        d_model,
        nhead,
        dim_feedforward=2048,
        dropout=0.1,
        activation="relu",
        layer_norm_eps=1e-5,
        batch_first=False,
        norm_first=False,
        bias=True,
        device=None,
        dtype=None,
    ):
        super().__init__()
        kw = dict(device=device, dtype=dtype)
        self.self_attn = MultiheadAttention(
            d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first, **kw
        )
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **kw)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **kw)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, **kw)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, **kw)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.activation = _activation(activation)

    def _sa(self, x, mask, kpm, causal):
        return self.dropout1(
            self.self_attn(
                x, x, x, attn_mask=mask, key_padding_mask=kpm, need_weights=False, is_causal=causal
            )[0]
        )

    def _ff(self, x):
        return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        x = src
        if self.norm_first:
            x = x + self._sa(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            return x + self._ff(self.norm2(x))
        x = self.norm1(x + self._sa(x, src_mask, src_key_padding_mask, is_causal))
        return self.norm2(x + self._ff(x))


class TransformerDecoderLayer(Module):
    """Self-attention, cross-attention over `memory` and a feed-forward block."""

    def __init__(
        self,
        d_model,
        nhead,
        dim_feedforward=2048,
        dropout=0.1,
        activation="relu",
        layer_norm_eps=1e-5,
        batch_first=False,
        norm_first=False,
        bias=True,
        device=None,
        dtype=None,
    ):
        super().__init__()
        kw = dict(device=device, dtype=dtype)
        self.self_attn = MultiheadAttention(
            d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first, **kw
        )
        self.multihead_attn = MultiheadAttention(
            d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first, **kw
        )
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **kw)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **kw)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, **kw)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, **kw)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, **kw)
        self.dropout1, self.dropout2, self.dropout3 = (
            Dropout(dropout),
            Dropout(dropout),
            Dropout(dropout),
        )
        self.activation = _activation(activation)

    def forward(
        self,
        tgt,
        memory,
        tgt_mask=None,
        memory_mask=None,
        tgt_key_padding_mask=None,
        memory_key_padding_mask=None,
        tgt_is_causal=False,
        memory_is_causal=False,
    ):
        def sa(x):
            return self.dropout1(
                self.self_attn(
                    x,
                    x,
                    x,
                    attn_mask=tgt_mask,
                    key_padding_mask=tgt_key_padding_mask,
                    need_weights=False,
                    is_causal=tgt_is_causal,
                )[0]
            )

        def ca(x):
            return self.dropout2(
                self.multihead_attn(
                    x,
                    memory,
                    memory,
                    attn_mask=memory_mask,
                    key_padding_mask=memory_key_padding_mask,
                    need_weights=False,
                    is_causal=memory_is_causal,
                )[0]
            )

        def ff(x):
            return self.dropout3(self.linear2(self.dropout(self.activation(self.linear1(x)))))

        x = tgt
        if self.norm_first:
            x = x + sa(self.norm1(x))
            x = x + ca(self.norm2(x))
            return x + ff(self.norm3(x))
        x = self.norm1(x + sa(x))
        x = self.norm2(x + ca(x))
        return self.norm3(x + ff(x))


class TransformerEncoder(Module):
    """`num_layers` copies of `encoder_layer`, then `norm` (if given)."""

    def __init__(
        self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True, mask_check=True
    ):
        super().__init__()
        self.layers = ModuleList([copy.deepcopy(encoder_layer) for _ in range(num_layers)])
        self.num_layers, self.norm = num_layers, norm

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        x = src
        for layer in self.layers:
            x = layer(
                x,
                src_mask=mask,
                src_key_padding_mask=src_key_padding_mask,
                is_causal=bool(is_causal),
            )
        return self.norm(x) if self.norm is not None else x


class TransformerDecoder(Module):
    """`num_layers` copies of `decoder_layer`, then `norm` (if given)."""

    def __init__(self, decoder_layer, num_layers, norm=None):
        super().__init__()
        self.layers = ModuleList([copy.deepcopy(decoder_layer) for _ in range(num_layers)])
        self.num_layers, self.norm = num_layers, norm

    def forward(
        self,
        tgt,
        memory,
        tgt_mask=None,
        memory_mask=None,
        tgt_key_padding_mask=None,
        memory_key_padding_mask=None,
        tgt_is_causal=None,
        memory_is_causal=False,
    ):
        x = tgt
        for layer in self.layers:
            x = layer(
                x,
                memory,
                tgt_mask,
                memory_mask,
                tgt_key_padding_mask,
                memory_key_padding_mask,
                bool(tgt_is_causal),
                memory_is_causal,
            )
        return self.norm(x) if self.norm is not None else x


class Transformer(Module):
    """Encoder-decoder Transformer (PyTorch's ``nn.Transformer``)."""

    def __init__(
        self,
        d_model=512,
        nhead=8,
        num_encoder_layers=6,
        num_decoder_layers=6,
        dim_feedforward=2048,
        dropout=0.1,
        activation="relu",
        custom_encoder=None,
        custom_decoder=None,
        layer_norm_eps=1e-5,
        batch_first=False,
        norm_first=False,
        bias=True,
        device=None,
        dtype=None,
    ):
        super().__init__()
        kw = dict(device=device, dtype=dtype)
        self.encoder = custom_encoder or TransformerEncoder(
            TransformerEncoderLayer(
                d_model,
                nhead,
                dim_feedforward,
                dropout,
                activation,
                layer_norm_eps,
                batch_first,
                norm_first,
                bias,
                **kw,
            ),
            num_encoder_layers,
            LayerNorm(d_model, eps=layer_norm_eps, **kw),
        )
        self.decoder = custom_decoder or TransformerDecoder(
            TransformerDecoderLayer(
                d_model,
                nhead,
                dim_feedforward,
                dropout,
                activation,
                layer_norm_eps,
                batch_first,
                norm_first,
                bias,
                **kw,
            ),
            num_decoder_layers,
            LayerNorm(d_model, eps=layer_norm_eps, **kw),
        )
        self.d_model, self.nhead, self.batch_first = d_model, nhead, batch_first

    def forward(
        self,
        src,
        tgt,
        src_mask=None,
        tgt_mask=None,
        memory_mask=None,
        src_key_padding_mask=None,
        tgt_key_padding_mask=None,
        memory_key_padding_mask=None,
        src_is_causal=None,
        tgt_is_causal=None,
        memory_is_causal=False,
    ):
        memory = self.encoder(
            src, mask=src_mask, src_key_padding_mask=src_key_padding_mask, is_causal=src_is_causal
        )
        return self.decoder(
            tgt,
            memory,
            tgt_mask,
            memory_mask,
            tgt_key_padding_mask,
            memory_key_padding_mask,
            tgt_is_causal,
            memory_is_causal,
        )

    @staticmethod
    def generate_square_subsequent_mask(sz, device=None, dtype=None):
        """An additive causal mask: 0 on and below the diagonal, -inf above."""
        m = triu(_core.full((sz, sz), -math.inf, dtype=dtype or "float32", device=device), k=1)
        return m
