"""ember.keras's Bidirectional, MultiHeadAttention, TextVectorization and the TensorBoard callback
against NumPy formulas of Keras 3's definitions (Keras/TensorFlow are not installed here):
numerics, weight layouts and order, masks, symbolic shapes, training, saving, bad arguments."""

from __future__ import annotations

import collections
import json
import math
import sys

import ember
import numpy as np
import pytest
from ember import keras

L = keras.layers


@pytest.fixture(autouse=True)
def _seed():
    keras.utils.clear_session()
    keras.utils.set_random_seed(0)


def host(a):
    """A NumPy copy (on the CPU an ember array and its NumPy view share memory)."""
    return np.array(ember.asnumpy(a), copy=True)


def weights(layer):
    return [np.array(w, copy=True) for w in layer.get_weights()]


def weights_file(tmp_path, name):
    """Keras 3's `.weights.h5` when h5py is there (a test dependency), else ember's
    `.weights.safetensors` (the same paths)."""
    try:
        import h5py  # noqa: F401
    except ImportError:
        return tmp_path / f"{name}.weights.safetensors"
    return tmp_path / f"{name}.weights.h5"


# ---- NumPy recurrent layers (Keras's formulas) --------------------------------------------------


def _sig(z):
    return 1 / (1 + np.exp(-z))


def np_rnn(kind, ws, x, go_backwards=False, mask=None, init=None):
    """(sequence outputs in processing order, final states) of Keras's SimpleRNN/LSTM/GRU;
    a masked step keeps the states and emits zeros."""
    k, rk, b = (w.astype(np.float64) for w in ws)
    n, t, _ = x.shape
    u = rk.shape[0]
    n_states = 2 if kind == "LSTM" else 1
    states = [np.zeros((n, u))] * n_states if init is None else [s.astype(float) for s in init]
    outs = []
    for i in reversed(range(t)) if go_backwards else range(t):
        xt = x[:, i].astype(np.float64)
        if kind == "SimpleRNN":
            new = [np.tanh(xt @ k + states[0] @ rk + b)]
        elif kind == "LSTM":
            h, c = states
            z = xt @ k + h @ rk + b
            ig, fg, gg, og = (z[:, j * u : (j + 1) * u] for j in range(4))
            c = _sig(fg) * c + _sig(ig) * np.tanh(gg)
            new = [_sig(og) * np.tanh(c), c]
        else:  # GRU, reset_after=True: bias (2, 3u)
            h = states[0]
            xz, inner = xt @ k + b[0], h @ rk + b[1]
            z = _sig(xz[:, :u] + inner[:, :u])
            r = _sig(xz[:, u : 2 * u] + inner[:, u : 2 * u])
            hh = np.tanh(xz[:, 2 * u :] + r * inner[:, 2 * u :])
            new = [z * h + (1 - z) * hh]
        out = new[0]
        if mask is not None:
            m = mask[:, i][:, None]
            new = [np.where(m, a, s) for a, s in zip(new, states, strict=True)]
            out = np.where(m, new[0], 0.0)
        outs.append(out)
        states = new
    return np.stack(outs, 1), states


def np_merge(mode, y, y_rev):
    return {
        "concat": lambda: np.concatenate([y, y_rev], -1),
        "sum": lambda: y + y_rev,
        "mul": lambda: y * y_rev,
        "ave": lambda: (y + y_rev) / 2,
        None: lambda: [y, y_rev],
    }[mode]()


def np_bidirectional(bi, kind, x, mask=None, init=None):
    """Keras's Bidirectional from its two layers' weights: forward, and backward reversed."""
    fw, bw = weights(bi.forward_layer), weights(bi.backward_layer)
    half = None if init is None else len(init) // 2
    ys, fs = np_rnn(kind, fw, x, mask=mask, init=None if init is None else init[:half])
    yb, bs = np_rnn(kind, bw, x, True, mask=mask, init=None if init is None else init[half:])
    if bi.return_sequences:
        y, y_rev = ys, yb[:, ::-1]
    else:
        y, y_rev = fs[0], bs[0]
    return np_merge(bi.merge_mode, y, y_rev), fs + bs


# ---- Bidirectional ------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["LSTM", "GRU", "SimpleRNN"])
@pytest.mark.parametrize("merge_mode", ["concat", "sum", "mul", "ave", None])
@pytest.mark.parametrize("return_sequences", [True, False])
def test_bidirectional_matches_forward_plus_reversed_backward(
    device, kind, merge_mode, return_sequences
):
    x = np.random.default_rng(1).standard_normal((3, 5, 4)).astype("float32")
    inner = getattr(L, kind)(6, return_sequences=return_sequences)
    bi = L.Bidirectional(inner, merge_mode=merge_mode)
    y = bi(ember.asarray(x, device=device))
    ref, _ = np_bidirectional(bi, kind, x)
    got = [host(t) for t in y] if merge_mode is None else host(y)
    np.testing.assert_allclose(got, ref, rtol=2e-4, atol=2e-5)
    assert not inner.built  # fresh copies run; the given layer is left alone
    assert bi.forward_layer.name == f"forward_{inner.name}" and not bi.forward_layer.go_backwards
    assert bi.backward_layer.name == f"backward_{inner.name}" and bi.backward_layer.go_backwards
    # weights: the forward layer's, then the backward layer's (two distinct sets)
    fw, bw = weights(bi.forward_layer), weights(bi.backward_layer)
    assert [w.shape for w in weights(bi)] == [w.shape for w in fw + bw]
    assert not np.allclose(fw[0], bw[0])
    shape = bi.compute_output_shape((None, 5, 4))
    width = 12 if merge_mode == "concat" else 6
    one = (None, 5, width) if return_sequences else (None, width)
    assert shape == ([one, one] if merge_mode is None else one)


def test_bidirectional_return_state_and_initial_state(device):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 4, 3)).astype("float32")
    bi = L.Bidirectional(L.LSTM(5, return_state=True, return_sequences=True))
    out = bi(ember.asarray(x, device=device))
    assert len(out) == 5  # output, forward h and c, backward h and c (Keras's order)
    ref, states = np_bidirectional(bi, "LSTM", x)
    for got, want in zip(out, [ref] + states, strict=True):
        np.testing.assert_allclose(host(got), want, rtol=2e-4, atol=2e-5)
    init = [rng.standard_normal((2, 5)).astype("float32") for _ in range(4)]
    out = bi(ember.asarray(x, device=device), initial_state=[ember.asarray(s) for s in init])
    ref, states = np_bidirectional(bi, "LSTM", x, init=init)
    for got, want in zip(out, [ref] + states, strict=True):
        np.testing.assert_allclose(host(got), want, rtol=2e-4, atol=2e-5)
    none = L.Bidirectional(L.GRU(3, return_state=True), merge_mode=None)
    y, y_rev, hf, hb = none(ember.asarray(x, device=device))
    np.testing.assert_allclose(host(y), host(hf), rtol=1e-6)  # a GRU's output is its state
    np.testing.assert_allclose(host(y_rev), host(hb), rtol=1e-6)
    assert none.compute_output_shape((None, 4, 3)) == [(None, 3)] * 4
    with pytest.raises(ValueError, match="initial_state"):
        bi(ember.asarray(x, device=device), initial_state=[ember.asarray(init[0])] * 3)


def test_bidirectional_with_masking_skips_padding(device):
    """Embedding(mask_zero=True): both directions skip the trailing padding, so the result
    equals the NumPy layers run on the unpadded steps only."""
    ids = np.array([[3, 1, 4, 0, 0], [2, 7, 1, 8, 2]])
    with ember.device(device):
        emb = L.Embedding(10, 4, mask_zero=True)
        bi = L.Bidirectional(L.GRU(3))
        m = keras.Sequential([keras.Input((5,), dtype="int64"), emb, bi])
    got = m.predict(ids, verbose=0)
    e = weights(emb)[0][ids]
    ref, _ = np_bidirectional(bi, "GRU", e, mask=ids != 0)
    np.testing.assert_allclose(got, ref, rtol=2e-4, atol=2e-5)
    short, _ = np_bidirectional(bi, "GRU", e[:1, :3])  # the first row without its padding
    np.testing.assert_allclose(got[0], short[0], rtol=2e-4, atol=2e-5)


def test_bidirectional_custom_backward_layer_and_errors():
    fw = L.LSTM(4, return_sequences=True)
    bw = L.LSTM(4, activation="relu", return_sequences=True, go_backwards=True)
    bi = L.Bidirectional(fw, backward_layer=bw)
    assert (
        bi.backward_layer is bw and bi.backward_layer.activation is not bi.forward_layer.activation
    )
    assert bi(ember.ones((2, 3, 5))).shape == (2, 3, 8)
    with pytest.raises(ValueError, match="merge mode.*Received: first"):
        L.Bidirectional(L.LSTM(2), merge_mode="first")
    with pytest.raises(ValueError, match="keras.layers.Layer"):
        L.Bidirectional("lstm")
    with pytest.raises(ValueError, match="backward_layer"):
        L.Bidirectional(L.LSTM(2), backward_layer=42)
    with pytest.raises(ValueError, match="`layer` must be a recurrent layer.*Dense"):
        L.Bidirectional(L.Dense(2))
    with pytest.raises(ValueError, match="different `go_backwards`"):
        L.Bidirectional(L.LSTM(2), backward_layer=L.LSTM(2))
    with pytest.raises(ValueError, match='"return_sequences"'):
        L.Bidirectional(
            L.LSTM(2), backward_layer=L.LSTM(2, go_backwards=True, return_sequences=True)
        )


def test_bidirectional_trains_saves_and_loads(device, tmp_path):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((32, 6, 3)).astype("float32")
    y = x[:, ::-1, 0].cumsum(1)[:, -1:]  # depends on the order of the steps
    with ember.device(device):
        inp = keras.Input((6, 3))
        h = L.Bidirectional(L.LSTM(8, return_sequences=True), merge_mode="sum")(inp)
        h = L.Bidirectional(L.GRU(4))(h)
        model = keras.Model(inp, L.Dense(1)(h))
    assert model.outputs[0].shape == (None, 1)
    model.compile(optimizer=keras.optimizers.Adam(0.02), loss="mse")
    hist = model.fit(x, y, epochs=8, batch_size=8, verbose=0)
    assert hist.history["loss"][-1] < 0.7 * hist.history["loss"][0]
    pred = model.predict(x, verbose=0)
    model.save(tmp_path / "bi.keras")
    back = keras.models.load_model(tmp_path / "bi.keras")
    np.testing.assert_allclose(back.predict(x, verbose=0), pred, rtol=1e-5, atol=1e-6)
    bi = back.layers[1]
    assert type(bi).__name__ == "Bidirectional" and bi.merge_mode == "sum"
    assert bi.backward_layer.go_backwards and bi.forward_layer.return_sequences
    wpath = weights_file(tmp_path, "bi")
    model.save_weights(wpath)
    fresh = keras.Model.from_config(model.get_config())
    assert not np.allclose(fresh.predict(x, verbose=0), pred)
    fresh.load_weights(wpath)
    np.testing.assert_allclose(fresh.predict(x, verbose=0), pred, rtol=1e-5, atol=1e-6)
    conf = bi.get_config()
    again = L.Bidirectional.from_config(conf)
    assert again.get_config()["layer"]["config"] == conf["layer"]["config"]


# ---- MultiHeadAttention -------------------------------------------------------------------------


def _softmax(z):
    z = z - z.max(-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(-1, keepdims=True)


def np_mha(layer, q, v, k=None, mask=None, causal=False, query_mask=None, value_mask=None):
    """Keras's MultiHeadAttention as einsums over the layer's weights (in Keras's order)."""
    ws = [w.astype(np.float64) for w in weights(layer)]
    if not layer.use_bias:
        ws = [ws[0], 0, ws[1], 0, ws[2], 0, ws[3], 0]
    qk, qb, kk, kb, vk, vb, ok, ob = ws
    k = v if k is None else k
    Q = np.einsum("btd,dnh->btnh", q, qk) + qb
    K = np.einsum("bsd,dnh->bsnh", k, kk) + kb
    V = np.einsum("bsd,dnh->bsnh", v, vk) + vb
    logits = np.einsum("bsnh,btnh->bnts", K, Q / math.sqrt(layer.key_dim))
    b, t, s = q.shape[0], q.shape[1], v.shape[1]
    allowed = np.ones((b, t, s), bool)
    if mask is not None:
        allowed &= np.broadcast_to(mask.astype(bool), (b, t, s))
    if causal:
        allowed &= np.tril(np.ones((t, s), bool))
    if query_mask is not None:
        allowed &= query_mask[:, :, None]
    if value_mask is not None:
        allowed &= value_mask[:, None, :]
    logits = logits + np.where(allowed[:, None], 0.0, -1e9)
    p = _softmax(logits)
    ctx = np.einsum("bnts,bsnh->btnh", p, V)
    nh, vd = layer.num_heads, layer.value_dim
    out = np.einsum("btnh,nho->bto", ctx, ok.reshape(nh, vd, -1)) + np.reshape(ob, -1)
    return out.reshape((b, t) + ok.shape[2:]), p


@pytest.mark.parametrize(
    "case", ["self", "cross", "key", "mask", "causal", "mask+causal", "no_bias", "output_shape"]
)
def test_multi_head_attention_matches_numpy(device, case):
    rng = np.random.default_rng(4)
    b, t, s, d = 2, 5, 7 if case in ("cross", "key", "mask") else 5, 6
    q = rng.standard_normal((b, t, d)).astype("float32")
    v = q if case in ("self", "causal") else rng.standard_normal((b, s, d)).astype("float32")
    k = rng.standard_normal((b, s, 4)).astype("float32") if case == "key" else None
    kw = {}
    if case == "no_bias":
        kw = {"use_bias": False, "value_dim": 3}
    if case == "output_shape":
        kw = {"output_shape": (2, 3)}
    layer = L.MultiHeadAttention(num_heads=3, key_dim=4, **kw)
    mask = None
    if "mask" in case:
        mask = rng.random((b, t, s)) > 0.4
        mask[:, :, 0] = True  # every query sees something (fully masked rows are ill-defined)
    causal = "causal" in case
    on = lambda a: None if a is None else ember.asarray(a, device=device)  # noqa: E731
    args = {"key": on(k), "attention_mask": on(mask), "use_causal_mask": causal}
    out = layer(on(q), on(v), **args)
    out2, scores = layer(on(q), on(v), return_attention_scores=True, **args)
    ref, p = np_mha(layer, q, v, k, mask=mask, causal=causal)
    np.testing.assert_allclose(host(out), ref, rtol=2e-4, atol=2e-5)  # the fused kernel path
    np.testing.assert_allclose(host(out2), ref, rtol=2e-4, atol=2e-5)  # the explicit path
    assert scores.shape == (b, 3, t, s)
    np.testing.assert_allclose(host(scores), p, rtol=2e-4, atol=2e-6)
    ow = weights(layer)
    vd, od = kw.get("value_dim", 4), kw.get("output_shape", (d,))
    shapes = [(d, 3, 4), (3, 4), (4 if case == "key" else d, 3, 4), (3, 4), (d, 3, vd), (3, vd)]
    shapes += [(3, vd) + tuple(od), tuple(od)]
    if case == "no_bias":
        shapes = shapes[::2]
    assert [w.shape for w in ow] == shapes  # Keras 3's layout and order
    assert layer.compute_output_shape((None, t, d), (None, s, d)) == (None, t) + tuple(od)


def test_multi_head_attention_set_weights_and_dropout(device):
    rng = np.random.default_rng(5)
    q = ember.asarray(rng.standard_normal((2, 4, 8)).astype("float32"), device=device)
    a = L.MultiHeadAttention(2, 5, dropout=0.5)
    b = L.MultiHeadAttention(2, 5, dropout=0.5)
    ya, yb = a(q, q), b(q, q)
    assert not np.allclose(host(ya), host(yb))
    b.set_weights(a.get_weights())
    np.testing.assert_allclose(host(b(q, q)), host(ya), rtol=1e-6)
    assert [w.path for w in a.weights][::2] == [
        "query/kernel",
        "key/kernel",
        "value/kernel",
        "attention_output/kernel",
    ]
    # dropout acts in training only; the returned scores are the softmax before dropout
    y1, y2 = host(a(q, q, training=True)), host(a(q, q, training=True))
    assert not np.allclose(y1, y2) and not np.allclose(y1, host(ya))
    _, sc = a(q, q, training=True, return_attention_scores=True)
    np.testing.assert_allclose(host(sc).sum(-1), 1.0, rtol=1e-5)
    np.testing.assert_allclose(host(a(q, q, training=False)), host(ya), rtol=1e-6)


def test_multi_head_attention_masks_from_embedding(device):
    """A functional model passes the Embedding's mask of `query`/`value` as query_mask and
    value_mask (Keras 3), which equals giving them explicitly."""
    ids = np.array([[5, 2, 9, 0, 0, 0], [1, 4, 4, 7, 3, 0]])
    with ember.device(device):
        inp = keras.Input((6,), dtype="int64")
        emb = L.Embedding(12, 8, mask_zero=True)
        mha = L.MultiHeadAttention(2, 4)
        e = emb(inp)
        model = keras.Model(inp, mha(e, e))
    got = model.predict(ids, verbose=0)
    m = ids != 0
    x = ember.asarray(weights(emb)[0][ids], device=device)
    mk = ember.asarray(m, device=device)
    explicit = host(mha(x, x, query_mask=mk, value_mask=mk))
    np.testing.assert_allclose(got, explicit, rtol=1e-5, atol=1e-6)
    ref, _ = np_mha(mha, weights(emb)[0][ids], weights(emb)[0][ids], query_mask=m, value_mask=m)
    np.testing.assert_allclose(got[m], ref[m], rtol=2e-4, atol=2e-5)  # the non-padding queries
    unmasked = host(mha(x, x))
    assert not np.allclose(unmasked[m], got[m], atol=1e-4)


def test_multi_head_attention_trains_saves_and_loads(device, tmp_path):
    rng = np.random.default_rng(6)
    x = rng.standard_normal((48, 6, 4)).astype("float32")
    y = (x[:, :, :1] * x[:, ::-1, 1:2]).sum(1)
    with ember.device(device):
        inp = keras.Input((6, 4))
        att, scores = L.MultiHeadAttention(2, 4, name="mha")(inp, inp, return_attention_scores=True)
        assert att.shape == (None, 6, 4) and scores.shape == (None, 2, 6, 6)
        h = L.MultiHeadAttention(2, 3, value_dim=5, output_shape=8)(att, inp, use_causal_mask=True)
        out = L.Dense(1)(L.GlobalAveragePooling1D()(h))
        model = keras.Model(inp, out)
    model.compile(optimizer=keras.optimizers.Adam(0.02), loss="mse")
    hist = model.fit(x, y, epochs=10, batch_size=16, verbose=0)
    assert hist.history["loss"][-1] < 0.7 * hist.history["loss"][0]
    pred = model.predict(x, verbose=0)
    model.save(tmp_path / "mha.keras")
    back = keras.models.load_model(tmp_path / "mha.keras")
    np.testing.assert_allclose(back.predict(x, verbose=0), pred, rtol=1e-5, atol=1e-6)
    layer = back.get_layer("mha") if hasattr(back, "get_layer") else back.layers[1]
    conf = layer.get_config()
    assert (conf["num_heads"], conf["key_dim"], conf["value_dim"]) == (2, 4, 4)
    assert layer.get_build_config()["query_shape"] == [None, 6, 4]
    again = L.MultiHeadAttention.from_config(conf)
    assert again.get_config() == conf
    wpath = weights_file(tmp_path, "mha")
    model.save_weights(wpath)
    fresh = keras.Model.from_config(model.get_config())
    fresh.load_weights(wpath)
    np.testing.assert_allclose(fresh.predict(x, verbose=0), pred, rtol=1e-5, atol=1e-6)


def test_multi_head_attention_bad_arguments():
    for kw, name in [
        ({"num_heads": 0, "key_dim": 2}, "num_heads=0"),
        ({"num_heads": 2, "key_dim": "4"}, "key_dim='4'"),
        ({"num_heads": 2, "key_dim": 4, "dropout": 1.5}, "dropout=1.5"),
        ({"num_heads": 2, "key_dim": 4, "attention_axes": (2,)}, r"attention_axes=\(2,\)"),
        ({"num_heads": 2, "key_dim": 4, "attention_axes": "seq"}, "attention_axes='seq'"),
        ({"num_heads": 2, "key_dim": 4, "output_shape": "big"}, "output_shape"),
        ({"num_heads": 2, "key_dim": 4, "output_shape": (3, -1)}, "output_shape"),
    ]:
        with pytest.raises(ValueError, match=name):
            L.MultiHeadAttention(**kw)
    assert L.MultiHeadAttention(2, 4, attention_axes=1).attention_axes == (1,)
    mha = L.MultiHeadAttention(2, 4)
    with pytest.raises(ValueError, match=r"rank-3.*query of shape \(2, 3, 4, 5\)"):
        mha(ember.ones((2, 3, 4, 5)), ember.ones((2, 3, 4, 5)))
    with pytest.raises(ValueError, match="value_shape=.*key_shape"):
        mha(ember.ones((2, 3, 4)), ember.ones((2, 5, 4)), key=ember.ones((2, 6, 4)))
    with pytest.raises(TypeError, match="query and value"):
        L.MultiHeadAttention(2, 4)(ember.ones((2, 3, 4)))


# ---- TextVectorization --------------------------------------------------------------------------


def test_text_vectorization_keras_examples():
    # the examples of Keras 3's docstring, with their documented outputs
    tv = L.TextVectorization(max_tokens=5000, output_mode="int", output_sequence_length=4)
    tv.adapt(["foo bar", "bar baz", "baz bada boom"])
    out = tv([["foo qux bar"], ["qux baz"]])
    assert isinstance(out, ember.ndarray) and out.dtype == ember.int64
    np.testing.assert_array_equal(host(out), [[4, 1, 3, 0], [1, 2, 0, 0]])
    tv = L.TextVectorization(
        max_tokens=5000, output_sequence_length=4, vocabulary=["earth", "wind", "and", "fire"]
    )
    assert tv.get_vocabulary() == ["", "[UNK]", "earth", "wind", "and", "fire"]
    assert tv.vocabulary_size() == 6
    np.testing.assert_array_equal(host(tv(["Wind, and FIRE!"])), [[3, 4, 5, 0]])


def _expected_vocab(texts, max_tokens=None, start=2):
    """Keras's adapt order: descending count, ties by descending UTF-8 bytes."""
    counts = collections.Counter(t for s in texts for t in s.split())
    order = sorted(counts, key=lambda t: (counts[t], t.encode()), reverse=True)
    return order if max_tokens is None else order[: max_tokens - start]


def test_text_vectorization_adapt_order_and_lookup(device):
    rng = np.random.default_rng(7)
    words = ["ab", "abc", "b", "ba", "zz", "z", "é", "x"]
    texts = [" ".join(rng.choice(words, rng.integers(1, 7))) for _ in range(40)]
    tv = L.TextVectorization(max_tokens=8)
    tv.adapt(np.array(texts)[:, None])  # (n, 1) strings, as Keras takes them
    learned = tv.get_vocabulary(include_special_tokens=False)
    assert learned == _expected_vocab(texts, 8)
    assert tv.get_vocabulary()[:2] == ["", "[UNK]"] and tv.vocabulary_size() == 8
    with ember.device(device):
        out = host(tv(np.array(texts)))
    index = {t: i for i, t in enumerate(tv.get_vocabulary())}
    width = max(len(s.split()) for s in texts)
    ref = np.zeros((len(texts), width), np.int64)
    for i, s in enumerate(texts):
        ids = [index.get(t, 1) for t in s.split()]
        ref[i, : len(ids)] = ids
    np.testing.assert_array_equal(out, ref)
    # ties: equal counts order by descending token bytes ("b" > "ab" > "a")
    tie = L.TextVectorization()
    tie.adapt(["a ab b", "b ab a"])
    assert tie.get_vocabulary(include_special_tokens=False) == ["b", "ab", "a"]


def test_text_vectorization_standardize_split_ngrams():
    tv = L.TextVectorization(vocabulary=["hello", "world", "café"])
    # Keras: ASCII lowercasing (tf.strings.lower) and its punctuation set
    np.testing.assert_array_equal(host(tv(["Hello, WORLD! café.", "ÇA"])), [[2, 3, 4], [1, 0, 0]])
    keep = L.TextVectorization(standardize=None, vocabulary=["Hi!", "hi"])
    np.testing.assert_array_equal(host(keep(["Hi! hi HI"])), [[2, 3, 1]])
    chars = L.TextVectorization(split="character", standardize="lower")
    chars.adapt(["abba", "Ab c"])
    assert chars.get_vocabulary()[2:] == ["b", "a", "c", " "]
    grams = L.TextVectorization(ngrams=2)
    grams.adapt(["x y z"])
    assert set(grams.get_vocabulary()[2:]) == {"x", "y", "z", "x y", "y z"}
    np.testing.assert_array_equal(
        host(grams(["x y z"])),
        [[grams.get_vocabulary().index(t) for t in ["x", "y", "z", "x y", "y z"]]],
    )
    only_bi = L.TextVectorization(ngrams=(2,), vocabulary=["a b"])
    np.testing.assert_array_equal(host(only_bi(["a b a"])), [[2, 1]])
    custom = L.TextVectorization(
        standardize=lambda s: s.replace("-", " "), split=lambda s: s.split("|"), vocabulary=["a b"]
    )
    np.testing.assert_array_equal(host(custom(["a-b|c"])), [[2, 1]])
    cut = L.TextVectorization(vocabulary=["a"], output_sequence_length=2)
    np.testing.assert_array_equal(host(cut(["a a a b", "b"])), [[2, 2], [1, 0]])
    assert host(cut("a b")).tolist() == [2, 1]  # one string: one sequence
    with pytest.raises(ValueError, match="last shape dimension must be 1"):
        cut(np.array([["a", "b"]]))


@pytest.mark.parametrize("mode", ["multi_hot", "count", "tf_idf"])
def test_text_vectorization_dense_modes_match_python(device, mode):
    texts = ["the cat sat", "the cat ate the rat", "a dog", "the the dog dog dog"]
    tv = L.TextVectorization(output_mode=mode, max_tokens=5)
    tv.adapt(texts)
    vocab = tv.get_vocabulary()
    assert vocab[0] == "[UNK]" and "" not in vocab and len(vocab) == 5  # no padding token
    assert vocab[1:] == _expected_vocab(texts, 5, start=1)
    queries = ["the dog sat on the mat", "cat cat", ""]
    with ember.device(device):
        out = tv(queries)
    assert out.dtype == ember.float32 and out.shape == (3, 5)
    counts = np.zeros((3, 5))
    for i, s in enumerate(queries):
        for t in s.split():
            counts[i, vocab.index(t) if t in vocab else 0] += 1
    if mode == "multi_hot":
        ref = np.minimum(counts, 1)
    elif mode == "count":
        ref = counts
    else:
        df = np.array([sum(t in s.split() for s in texts) for t in vocab[1:]])
        idf = np.log(1 + len(texts) / (1 + df))
        ref = counts * np.r_[idf.mean(), idf]
        np.testing.assert_allclose(tv.get_config()["idf_weights"], np.r_[idf.mean(), idf], 1e-6)
    np.testing.assert_allclose(host(out), ref, rtol=1e-6)
    padded = L.TextVectorization(output_mode=mode, max_tokens=9, pad_to_max_tokens=True)
    padded.set_vocabulary(vocab[1:], **({"idf_weights": [1.0] * 4} if mode == "tf_idf" else {}))
    assert padded(queries).shape == (3, 9) and padded.compute_output_shape((None, 1)) == (None, 9)


def test_text_vectorization_set_vocabulary_rules():
    tv = L.TextVectorization(max_tokens=5)
    tv.set_vocabulary(["", "[UNK]", "a", "b"])  # Keras's special tokens, in place
    assert tv.get_vocabulary() == ["", "[UNK]", "a", "b"]
    tv.set_vocabulary(np.array(["c", "d", "e"]))
    assert tv.get_vocabulary() == ["", "[UNK]", "c", "d", "e"]
    with pytest.raises(ValueError, match="repeated term.*'c'"):
        tv.set_vocabulary(["c", "d", "c"])
    with pytest.raises(ValueError, match="mask token at unexpected location"):
        tv.set_vocabulary(["c", "", "d"])
    with pytest.raises(ValueError, match="vocabulary size is 6; `max_tokens` is 5"):
        tv.set_vocabulary(["a", "b", "c", "d"])
    with pytest.raises(ValueError, match="empty vocabulary"):
        tv.set_vocabulary([])
    with pytest.raises(ValueError, match="`idf_weights` must be set"):
        L.TextVectorization(output_mode="tf_idf").set_vocabulary(["a"])
    with pytest.raises(ValueError, match="idf_weights.*tf_idf"):
        L.TextVectorization().set_vocabulary(["a"], idf_weights=[1.0])
    idf = L.TextVectorization(output_mode="tf_idf", vocabulary=["a", "b"], idf_weights=[2.0, 4.0])
    np.testing.assert_allclose(host(idf(["a b b z"])), [[3.0, 2.0, 8.0]])  # OOV: mean weight
    fixed = L.TextVectorization(vocabulary=["a"])
    with pytest.raises(ValueError, match="Cannot adapt layer"):
        fixed.adapt(["a b"])
    with pytest.raises(RuntimeError, match="must set the layer's vocabulary"):
        L.TextVectorization(output_mode="count")(["a"])
    with pytest.raises(ValueError, match="`idf_weights` must be provided"):
        L.TextVectorization(output_mode="tf_idf", max_tokens=5, pad_to_max_tokens=True)(["a"])


def test_text_vectorization_bad_arguments():
    for kw, pat in [
        ({"output_mode": "bogus"}, "output_mode='bogus'"),
        ({"output_mode": "one_hot"}, "output_mode='one_hot'"),
        ({"standardize": "upper"}, "standardize='upper'"),
        ({"split": "comma"}, "split='comma'"),
        ({"ngrams": 0}, "ngrams=0"),
        ({"ngrams": "2"}, "ngrams='2'"),
        ({"ngrams": [1, 2]}, r"ngrams=\[1, 2\]"),
        ({"output_mode": "count", "output_sequence_length": 3}, "output_sequence_length=3"),
        ({"output_sequence_length": 2.5}, "output_sequence_length=2.5"),
        ({"max_tokens": 1}, "max_tokens=1"),
        ({"max_tokens": "10"}, "max_tokens='10'"),
        ({"pad_to_max_tokens": True}, "max_tokens=None"),
        ({"sparse": True}, "sparse=True"),
        ({"ragged": True}, "ragged=True"),
        ({"output_mode": "tf_idf", "vocabulary": ["a"]}, "idf_weights"),
    ]:
        with pytest.raises(ValueError, match=pat):
            L.TextVectorization(**kw)
    with pytest.raises(TypeError, match="strings"):
        L.TextVectorization(vocabulary=["a"])(np.ones((2, 1)))


def test_text_vectorization_in_models_fit_and_save(device, tmp_path):
    rng = np.random.default_rng(8)
    good, bad = ["great", "fine", "superb", "nice"], ["awful", "poor", "bad", "dull"]
    filler = ["movie", "plot", "the", "was", "a"]
    texts, labels = [], []
    for _ in range(64):
        lab = int(rng.integers(2))
        words = list(rng.choice(filler, 3)) + [rng.choice(good if lab else bad)]
        rng.shuffle(words)
        texts.append(" ".join(words).capitalize() + "!")
        labels.append(lab)
    texts = np.array(texts)[:, None]
    y = np.array(labels, "float32")[:, None]
    with ember.device(device):
        tv = L.TextVectorization(max_tokens=20, output_sequence_length=6)
        tv.adapt(texts)
        inp = keras.Input((1,), dtype="string")
        seq = tv(inp)
        assert seq.shape == (None, 6) and seq.dtype == "int64"
        h = L.GlobalAveragePooling1D()(L.Embedding(20, 8)(seq))
        model = keras.Model(inp, L.Dense(1, activation="sigmoid")(h))
        bag = keras.Sequential([L.TextVectorization(output_mode="multi_hot"), L.Dense(1)])
        bag.layers[0].adapt(texts)
    model.compile(optimizer=keras.optimizers.Adam(0.05), loss="binary_crossentropy")
    hist = model.fit(texts, y, epochs=6, batch_size=16, verbose=0, validation_split=0.25)
    assert hist.history["loss"][-1] < 0.8 * hist.history["loss"][0]
    assert "val_loss" in hist.history
    pred = model.predict(texts, verbose=0)
    assert pred.shape == (64, 1)
    model.save(tmp_path / "text.keras")
    back = keras.models.load_model(tmp_path / "text.keras")
    assert back.layers[1].get_vocabulary() == tv.get_vocabulary()
    np.testing.assert_allclose(back.predict(texts, verbose=0), pred, rtol=1e-5, atol=1e-6)
    again = L.TextVectorization.from_config(tv.get_config())
    np.testing.assert_array_equal(host(again(texts[:5])), host(tv(texts[:5])))
    again.adapt(["zz yy"])  # a learned vocabulary stays adaptable after a reload (as Keras's)
    assert again.get_vocabulary()[2:] == ["zz", "yy"]
    bag.compile(optimizer=keras.optimizers.Adam(0.05), loss="mse")
    h2 = bag.fit(texts, y, epochs=5, batch_size=16, verbose=0)
    assert h2.history["loss"][-1] < h2.history["loss"][0]
    assert bag.layers[1].kernel.shape == (bag.layers[0].vocabulary_size(), 1)


# ---- TensorBoard --------------------------------------------------------------------------------


def _read_events(path):
    """{tag: [(step, value)]} read back with TensorBoard's own EventAccumulator."""
    event_accumulator = pytest.importorskip(
        "tensorboard.backend.event_processing.event_accumulator"
    )
    from tensorboard.util import tensor_util

    acc = event_accumulator.EventAccumulator(str(path), size_guidance={"tensors": 0})
    acc.Reload()
    return {
        tag: [(e.step, tensor_util.make_ndarray(e.tensor_proto)) for e in acc.Tensors(tag)]
        for tag in acc.Tags()["tensors"]
    }


def _tiny_model(device):
    with ember.device(device):
        m = keras.Sequential([keras.Input((3,)), L.Dense(4, activation="relu"), L.Dense(1)])
    m.compile(optimizer=keras.optimizers.SGD(0.05), loss="mse", metrics=["mae"])
    return m


def test_tensorboard_writes_keras_event_files(device, tmp_path):
    pytest.importorskip("tensorboard")  # a test dependency (pyproject's `test` extra)
    rng = np.random.default_rng(9)
    x = rng.standard_normal((40, 3)).astype("float32")
    y = x @ np.array([[1.0], [-2.0], [0.5]], "float32")
    model = _tiny_model(device)
    tb = keras.callbacks.TensorBoard(tmp_path / "logs", histogram_freq=1, update_freq="batch")
    hist = model.fit(
        x[:30],
        y[:30],
        epochs=3,
        batch_size=10,
        validation_data=(x[30:], y[30:]),
        verbose=0,
        callbacks=[tb],
    )
    train, val = _read_events(tmp_path / "logs/train"), _read_events(tmp_path / "logs/validation")
    for name in ("loss", "mae"):
        steps, values = zip(*train[f"epoch_{name}"], strict=True)
        assert steps == (0, 1, 2)
        np.testing.assert_allclose(values, hist.history[name], rtol=1e-6)
        steps, values = zip(*val[f"epoch_{name}"], strict=True)
        assert steps == (0, 1, 2)
        np.testing.assert_allclose(values, hist.history[f"val_{name}"], rtol=1e-6)
        # each validation pass: the metric against the optimizer's iteration count
        steps, values = zip(*val[f"evaluation_{name}_vs_iterations"], strict=True)
        assert steps == (3, 6, 9)
        np.testing.assert_allclose(values, hist.history[f"val_{name}"], rtol=1e-6)
    np.testing.assert_allclose([v for _, v in train["epoch_learning_rate"]], [0.05] * 3, 1e-6)
    assert [s for s, _ in train["batch_loss"]] == list(range(1, 10))
    assert not any(t.startswith("batch_") for t in val)
    kernel = train["dense/kernel/histogram"]
    assert [s for s, _ in kernel] == [0, 1, 2] and kernel[0][1].shape[1] == 3  # left, right, n
    assert kernel[-1][1][:, 2].sum() == 12  # the (3, 4) kernel's values
    assert {"dense/bias/histogram", "dense_1/kernel/histogram"} <= set(train)
    graph = json.loads(train["keras"][0][1].item().decode())
    assert graph["class_name"] == "Sequential"


def test_tensorboard_update_freq_and_arguments(tmp_path):
    pytest.importorskip("tensorboard")
    x = np.random.default_rng(10).standard_normal((24, 3)).astype("float32")
    model = _tiny_model("cpu")
    tb = keras.callbacks.TensorBoard(tmp_path / "a", update_freq=2, write_graph=False)
    model.fit(x, x[:, :1], epochs=2, batch_size=4, verbose=0, callbacks=[tb])
    train = _read_events(tmp_path / "a/train")
    assert [s for s, _ in train["batch_loss"]] == [2, 4, 6, 8, 10, 12]
    assert "keras" not in train and not (tmp_path / "a/validation").exists()
    tb = keras.callbacks.TensorBoard(str(tmp_path / "b"))  # update_freq="epoch": epochs only
    model.fit(x, x[:, :1], epochs=1, batch_size=4, verbose=0, callbacks=[tb])
    assert not any(t.startswith("batch_") for t in _read_events(tmp_path / "b/train"))
    for kw, pat in [
        ({"update_freq": "sometimes"}, "update_freq='sometimes'"),
        ({"update_freq": 0}, "update_freq=0"),
        ({"histogram_freq": -1}, "histogram_freq=-1"),
        ({"histogram_freq": 0.5}, "histogram_freq=0.5"),
        ({"write_images": True}, "write_images=True"),
        ({"profile_batch": 2}, "profile_batch=2"),
    ]:
        with pytest.raises(ValueError, match=pat):
            keras.callbacks.TensorBoard(tmp_path / "c", **kw)


def test_tensorboard_without_the_package(monkeypatch):
    for name in [m for m in sys.modules if m == "tensorboard" or m.startswith("tensorboard.")]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setitem(sys.modules, "tensorboard", None)
    with pytest.raises(ImportError, match="pip install tensorboard"):
        keras.callbacks.TensorBoard("logs")
