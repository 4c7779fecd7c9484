"""Recurrent layers, attention and Transformer layers of ember.nn against NumPy references of
PyTorch's formulas (same weights), with finite-difference gradients on small float64 cases."""

from __future__ import annotations

import math

import ember
import ember.nn as nn
import ember.nn.functional as F
import numpy as np
import pytest
from _nn_helpers import em, gradcheck


def sig(x):
    return 1 / (1 + np.exp(-x))


def np_layer(mode, x, h, c, w_ih, w_hh, b_ih, b_hh, reverse=False):
    """One layer, one direction, over x (L, N, In): outputs (L, N, H) and final h (c)."""
    L = x.shape[0]  # noqa: N806
    out = [None] * L
    for t in range(L - 1, -1, -1) if reverse else range(L):
        gx = x[t] @ w_ih.T + b_ih
        gh = h @ w_hh.T + b_hh
        if mode == "LSTM":
            i, f, g, o = np.split(gx + gh, 4, axis=-1)
            c = sig(f) * c + sig(i) * np.tanh(g)
            h = sig(o) * np.tanh(c)
        elif mode == "GRU":
            xr, xz, xn = np.split(gx, 3, axis=-1)
            hr, hz, hn = np.split(gh, 3, axis=-1)
            r, z = sig(xr + hr), sig(xz + hz)
            n = np.tanh(xn + r * hn)
            h = (1 - z) * n + z * h
        else:
            h = np.tanh(gx + gh)
        out[t] = h
    return np.stack(out), h, c


def np_rnn(m, mode, x):
    """The whole module in NumPy with its own weights (x: (L, N, In))."""
    D = 2 if m.bidirectional else 1  # noqa: N806
    N, H = x.shape[1], m.hidden_size  # noqa: N806
    hn, cn = [], []
    inp = x
    for layer in range(m.num_layers):
        outs = []
        for d in range(D):
            sfx = f"_l{layer}" + ("_reverse" if d else "")
            w = [
                ember.asnumpy(getattr(m, n + sfx).detach())
                for n in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")
            ]
            o, h, c = np_layer(mode, inp, np.zeros((N, H)), np.zeros((N, H)), *w, reverse=bool(d))
            outs.append(o)
            hn.append(h)
            cn.append(c)
        inp = np.concatenate(outs, axis=-1)
    return inp, np.stack(hn), np.stack(cn)


@pytest.mark.parametrize("cls,mode", [(nn.RNN, "RNN"), (nn.LSTM, "LSTM"), (nn.GRU, "GRU")])
def test_recurrent_layers_match_numpy(device, cls, mode):
    ember.manual_seed(0)
    m = cls(3, 4, num_layers=2, bidirectional=True, dtype=ember.float64, device=device)
    x = np.random.default_rng(1).standard_normal((5, 2, 3))
    out, state = m(em(x, device))
    want, h, c = np_rnn(m, mode, x)
    np.testing.assert_allclose(ember.asnumpy(out), want, rtol=1e-10, atol=1e-12)
    hn = state[0] if mode == "LSTM" else state
    np.testing.assert_allclose(ember.asnumpy(hn), h, rtol=1e-10, atol=1e-12)
    if mode == "LSTM":
        np.testing.assert_allclose(ember.asnumpy(state[1]), c, rtol=1e-10, atol=1e-12)
    assert out.shape == (5, 2, 8) and hn.shape == (4, 2, 4)
    # batch_first and unbatched give the same numbers
    mb = cls(
        3, 4, num_layers=2, bidirectional=True, batch_first=True, dtype=ember.float64, device=device
    )
    mb.load_state_dict(m.state_dict())
    ob, _ = mb(em(x.swapaxes(0, 1), device))
    np.testing.assert_allclose(ember.asnumpy(ob).swapaxes(0, 1), want, rtol=1e-10, atol=1e-12)
    ou, _ = m(em(x[:, 0], device))
    np.testing.assert_allclose(ember.asnumpy(ou), want[:, 0], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("cls", [nn.LSTM, nn.GRU])
def test_recurrent_gradients(device, cls):
    ember.manual_seed(2)
    m = cls(2, 3, dtype=ember.float64, device=device)
    x = np.random.default_rng(3).standard_normal((4, 2, 2))
    gradcheck(lambda a: m(a)[0], [x], device=device)
    out, _ = m(em(x, device))
    out.sum().backward()
    assert all(p.grad is not None for p in m.parameters())


def test_cells_match_one_step(device):
    ember.manual_seed(4)
    cell = nn.LSTMCell(3, 5, dtype=ember.float64, device=device)
    x = np.random.default_rng(5).standard_normal((2, 3))
    h, c = cell(em(x, device))
    w = [
        ember.asnumpy(getattr(cell, n).detach())
        for n in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")
    ]
    _, hw, cw = np_layer("LSTM", x[None], np.zeros((2, 5)), np.zeros((2, 5)), *w)
    np.testing.assert_allclose(ember.asnumpy(h), hw, rtol=1e-10)
    np.testing.assert_allclose(ember.asnumpy(c), cw, rtol=1e-10)
    g = nn.GRUCell(3, 5, dtype=ember.float64, device=device)
    r = nn.RNNCell(3, 5, device=device)
    assert g(em(x, device)).shape == (2, 5) and r(em(x, device, np.float32)).shape == (2, 5)


def np_mha(q, k, v, m, mask=None):
    E, H = m.embed_dim, m.num_heads  # noqa: N806
    W = ember.asnumpy(m.in_proj_weight.detach())  # noqa: N806
    b = ember.asnumpy(m.in_proj_bias.detach())
    Wo, bo = ember.asnumpy(m.out_proj.weight.detach()), ember.asnumpy(m.out_proj.bias.detach())  # noqa: N806
    Q, K, V = q @ W[:E].T + b[:E], k @ W[E : 2 * E].T + b[E : 2 * E], v @ W[2 * E :].T + b[2 * E :]  # noqa: N806
    L, N, _ = q.shape  # noqa: N806
    S = k.shape[0]  # noqa: N806
    Dh = E // H  # noqa: N806
    Q = Q.reshape(L, N, H, Dh).transpose(1, 2, 0, 3)  # noqa: N806
    K = K.reshape(S, N, H, Dh).transpose(1, 2, 0, 3)  # noqa: N806
    V = V.reshape(S, N, H, Dh).transpose(1, 2, 0, 3)  # noqa: N806
    s = Q @ K.swapaxes(-1, -2) / math.sqrt(Dh)
    if mask is not None:
        s = np.where(mask, -np.inf, s)
    w = np.exp(s - s.max(-1, keepdims=True))
    w /= w.sum(-1, keepdims=True)
    o = (w @ V).transpose(2, 0, 1, 3).reshape(L, N, E)
    return o @ Wo.T + bo, w.mean(1)


def test_multihead_attention(device):
    ember.manual_seed(6)
    m = nn.MultiheadAttention(8, 2, dtype=ember.float64, device=device)
    rng = np.random.default_rng(7)
    q, k, v = (
        rng.standard_normal((4, 3, 8)),
        rng.standard_normal((5, 3, 8)),
        rng.standard_normal((5, 3, 8)),
    )
    out, w = m(em(q, device), em(k, device), em(v, device))
    want, ww = np_mha(q, k, v, m)
    np.testing.assert_allclose(ember.asnumpy(out), want, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(ember.asnumpy(w), ww, rtol=1e-10, atol=1e-12)
    causal = np.triu(np.ones((4, 5), bool), k=1)
    out, _ = m(em(q, device), em(k, device), em(v, device), attn_mask=em(causal, device))
    np.testing.assert_allclose(
        ember.asnumpy(out), np_mha(q, k, v, m, causal)[0], rtol=1e-10, atol=1e-12
    )
    mb = nn.MultiheadAttention(8, 2, batch_first=True, dtype=ember.float64, device=device)
    mb.load_state_dict(m.state_dict())
    ob, _ = mb(
        em(q.swapaxes(0, 1), device), em(k.swapaxes(0, 1), device), em(v.swapaxes(0, 1), device)
    )
    np.testing.assert_allclose(ember.asnumpy(ob).swapaxes(0, 1), want, rtol=1e-10, atol=1e-12)
    gradcheck(lambda a: m(a, a, a)[0], [q], device=device)


def test_scaled_dot_product_attention(device):
    rng = np.random.default_rng(8)
    q, k, v = (rng.standard_normal((2, 3, 4, 5)) for _ in range(3))
    got = F.scaled_dot_product_attention(
        em(q, device), em(k, device), em(v, device), is_causal=True
    )
    s = q @ k.swapaxes(-1, -2) / math.sqrt(5)
    s = np.where(np.triu(np.ones((4, 4), bool), 1), -np.inf, s)
    w = np.exp(s - s.max(-1, keepdims=True))
    w /= w.sum(-1, keepdims=True)
    np.testing.assert_allclose(ember.asnumpy(got), w @ v, rtol=1e-10, atol=1e-12)
    gradcheck(
        lambda a, b, c: F.scaled_dot_product_attention(a, b, c, is_causal=True),
        [q, k, v],
        device=device,
    )


def test_transformer_layers(device):
    ember.manual_seed(9)
    layer = nn.TransformerEncoderLayer(
        8, 2, dim_feedforward=16, dropout=0.0, dtype=ember.float64, device=device
    )
    enc = nn.TransformerEncoder(layer, num_layers=2)
    x = em(np.random.default_rng(10).standard_normal((6, 2, 8)), device)
    y = enc(
        x,
        mask=nn.Transformer.generate_square_subsequent_mask(6, device=device, dtype=ember.float64),
    )
    assert y.shape == (6, 2, 8)
    # the layer by hand: post-norm residual blocks
    a = layer.self_attn(x, x, x, need_weights=False)[0]
    h = layer.norm1(x + a)
    want = layer.norm2(h + layer.linear2(F.relu(layer.linear1(h))))
    np.testing.assert_allclose(ember.asnumpy(layer(x)), ember.asnumpy(want), rtol=1e-10)
    dec = nn.TransformerDecoder(
        nn.TransformerDecoderLayer(8, 2, 16, 0.0, dtype=ember.float64, device=device), 2
    )
    out = dec(x[:3], y, tgt_is_causal=True)
    assert out.shape == (3, 2, 8)
    out.sum().backward()
    assert all(p.grad is not None for p in dec.parameters())
    t = nn.Transformer(8, 2, 1, 1, 16, 0.0, dtype=ember.float64, device=device)
    assert t(x, x[:2]).shape == (2, 2, 8)


@pytest.mark.parametrize("dtype", ["float64", "bfloat16"])
@pytest.mark.parametrize("causal", [False, True])
def test_attention_without_weights_equals_the_weighted_path(device, dtype, causal):
    """need_weights=False takes PyTorch's fast path (F.scaled_dot_product_attention: the fused
    kernel on the GPU for bf16/fp16 and 64-wide heads); the output is the weighted path's."""
    if dtype == "bfloat16" and device == "cpu":
        dtype = "float32"
    ember.manual_seed(3)
    mha = nn.MultiheadAttention(128, 2, batch_first=True, device=device, dtype=dtype)
    x = em(np.random.default_rng(4).standard_normal((3, 70, 128)), device).astype(dtype)
    mask = nn.Transformer.generate_square_subsequent_mask(70, device=device, dtype=dtype)
    fast = mha(x, x, x, need_weights=False, is_causal=causal)[0]
    slow = mha(x, x, x, need_weights=True, attn_mask=mask if causal else None)[0]
    tol = 3e-2 if dtype == "bfloat16" else (1e-5 if dtype == "float32" else 1e-10)
    np.testing.assert_allclose(
        ember.asnumpy(fast.astype("float64")), ember.asnumpy(slow.astype("float64")),
        rtol=tol, atol=tol,
    )  # fmt: skip
