"""ember.keras gaps a 5th first-contact probe found: Conv3D and the 3-D pooling layers, the
functional merge helpers (``layers.concatenate`` ...), a Model subclass built as
``Model(inputs, outputs)`` with its own ``train_step``, ``keras.utils.PyDataset``, and the
``Attention`` / ``AdditiveAttention`` layers; checked against NumPy replays of Keras 3's
formulas."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from ember import keras

L = keras.layers


@pytest.fixture(autouse=True)
def _seed():
    keras.utils.clear_session()
    keras.utils.set_random_seed(0)


def _np(a):
    return np.array(ember.asnumpy(a), copy=True)


def _conv3d_valid(x, k, b):
    """NumPy channels_last 'valid' 3-D convolution: x (N, D, H, W, C), k (kd, kh, kw, C, F)."""
    n, d, h, w, _ = x.shape
    kd, kh, kw, _, f = k.shape
    out = np.zeros((n, d - kd + 1, h - kh + 1, w - kw + 1, f))
    for i in range(out.shape[1]):
        for j in range(out.shape[2]):
            for m in range(out.shape[3]):
                patch = x[:, i : i + kd, j : j + kh, m : m + kw, :]
                out[:, i, j, m, :] = np.tensordot(patch, k, axes=([1, 2, 3, 4], [0, 1, 2, 3]))
    return out + b


def test_conv3d_and_3d_pooling(device):
    x = np.random.default_rng(1).standard_normal((2, 5, 6, 4, 3)).astype(np.float32)
    with ember.device(device):
        conv = L.Conv3D(4, (2, 3, 2))
        y = conv(ember.asarray(x, device=device))
    k, b = (np.asarray(w) for w in conv.get_weights())
    assert k.shape == (2, 3, 2, 3, 4)
    np.testing.assert_allclose(_np(y), _conv3d_valid(x, k, b), rtol=1e-4, atol=1e-4)
    xa = ember.asarray(x, device=device)
    mp = _np(L.MaxPooling3D(2)(xa))
    want = x[:, :4, :6, :4].reshape(2, 2, 2, 3, 2, 2, 2, 3).max(axis=(2, 4, 6))
    np.testing.assert_allclose(mp, want, rtol=1e-6)
    ap = _np(L.AveragePooling3D(2)(xa))
    want = x[:, :4, :6, :4].reshape(2, 2, 2, 3, 2, 2, 2, 3).mean(axis=(2, 4, 6))
    np.testing.assert_allclose(ap, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(_np(L.GlobalAveragePooling3D()(xa)), x.mean(axis=(1, 2, 3)), 1e-5)
    np.testing.assert_allclose(_np(L.GlobalMaxPooling3D()(xa)), x.max(axis=(1, 2, 3)), 1e-6)
    assert L.Conv3D(2, 2, padding="same").compute_output_shape((None, 5, 6, 4, 3)) == (
        None,
        5,
        6,
        4,
        2,
    )
    assert L.Convolution3D is L.Conv3D and L.MaxPool3D is L.MaxPooling3D


def test_functional_merge_helpers():
    a = keras.Input((4,))
    b = keras.Input((4,))
    outs = [
        L.concatenate([a, b]),
        L.add([a, b]),
        L.subtract([a, b]),
        L.multiply([a, b]),
        L.average([a, b]),
        L.maximum([a, b]),
        L.minimum([a, b]),
    ]
    m = keras.Model([a, b], outs)
    x1 = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    x2 = np.random.default_rng(1).standard_normal((3, 4)).astype(np.float32)
    got = [_np(o) for o in m([ember.asarray(x1), ember.asarray(x2)])]
    want = [
        np.concatenate([x1, x2], -1),
        x1 + x2,
        x1 - x2,
        x1 * x2,
        (x1 + x2) / 2,
        np.maximum(x1, x2),
        np.minimum(x1, x2),
    ]
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-6)


def test_model_subclass_built_functionally_keeps_its_train_step():
    calls = []

    class Counting(keras.Model):
        def train_step(self, data):
            x, y = data  # Keras packs (x, y) when there are no sample weights
            calls.append(tuple(x.shape))
            return super().train_step(data)

        def test_step(self, data):
            x, y, sw = keras.utils.unpack_x_y_sample_weight(data)
            return super().test_step(data)

    inp = keras.Input((3,))
    m = Counting(inp, L.Dense(1)(inp))
    assert isinstance(m, Counting) and isinstance(m, keras.Model)
    m.compile("sgd", "mse")
    x = np.random.default_rng(0).random((8, 3)).astype(np.float32)
    y = np.random.default_rng(1).random((8, 1)).astype(np.float32)
    m.fit(x, y, batch_size=4, epochs=2, verbose=0)
    assert calls == [(4, 3)] * 4
    m.evaluate(x, y, verbose=0)
    assert keras.utils.pack_x_y_sample_weight(1) == 1
    assert keras.utils.pack_x_y_sample_weight((1, 2)) == ((1, 2),)
    assert keras.utils.pack_x_y_sample_weight(1, 2, 3) == (1, 2, 3)
    assert keras.utils.unpack_x_y_sample_weight((1, 2)) == (1, 2, None)
    with pytest.raises(ValueError, match="format"):
        keras.utils.unpack_x_y_sample_weight((1, 2, 3, 4))


def test_pydataset_in_fit_evaluate_predict():
    events = []

    class Batches(keras.utils.PyDataset):
        def __init__(self, **kw):
            super().__init__(**kw)
            rng = np.random.default_rng(0)
            self.x = rng.random((12, 3)).astype(np.float32)
            self.y = (self.x.sum(axis=1, keepdims=True) > 1.5).astype(np.float32)

        def __len__(self):
            return 3

        def __getitem__(self, i):
            events.append(i)
            s = slice(4 * i, 4 * i + 4)
            return self.x[s], self.y[s]

        def on_epoch_end(self):
            events.append("end")

    ds = Batches(workers=1, use_multiprocessing=False)
    assert ds.num_batches == 3 and ds.workers == 1
    m = keras.Sequential([keras.Input((3,)), L.Dense(1, activation="sigmoid")])
    m.compile("adam", "binary_crossentropy")
    m.fit(ds, epochs=2, verbose=0, shuffle=False)
    assert events == [0, 1, 2, "end", 0, 1, 2, "end"]
    events.clear()
    m.fit(ds, epochs=1, verbose=0)  # shuffle=True (the default) reorders the batches
    assert sorted(events[:3]) == [0, 1, 2] and events[3] == "end"
    assert np.isfinite(m.evaluate(ds, verbose=0))
    assert _np(m.predict(ds, verbose=0)).shape == (12, 1)
    assert keras.utils.Sequence is keras.utils.PyDataset


def _softmax(s):
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


@pytest.mark.parametrize("score_mode", ["dot", "concat"])
@pytest.mark.parametrize("use_scale", [False, True])
def test_attention_against_numpy(score_mode, use_scale, device):
    rng = np.random.default_rng(2)
    q = rng.standard_normal((2, 3, 4)).astype(np.float32)
    v = rng.standard_normal((2, 5, 4)).astype(np.float32)
    k = rng.standard_normal((2, 5, 4)).astype(np.float32)
    vmask = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], bool)
    qmask = np.array([[1, 0, 1], [1, 1, 1]], bool)
    with ember.device(device):
        layer = L.Attention(use_scale=use_scale, score_mode=score_mode)
        out, w = layer(
            [
                ember.asarray(q, device=device),
                ember.asarray(v, device=device),
                ember.asarray(k, device=device),
            ],
            mask=[ember.asarray(qmask, device=device), ember.asarray(vmask, device=device)],
            return_attention_scores=True,
        )
    if score_mode == "dot":
        s = q @ k.transpose(0, 2, 1)
    else:
        s = np.tanh(q[:, :, None, :] + k[:, None, :, :]).sum(-1)
    s = s - 1e9 * (1 - vmask[:, None, :])
    want_w = _softmax(s)
    want = (want_w @ v) * qmask[:, :, None]
    np.testing.assert_allclose(_np(w), want_w, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(_np(out), want, rtol=1e-5, atol=1e-5)
    names = sorted(x.name for x in layer.weights)
    expect = (["scale"] if use_scale else []) + (
        ["concat_score_weight"] if score_mode == "concat" else []
    )
    assert names == sorted(expect)


def test_additive_attention_and_causal_mask():
    rng = np.random.default_rng(3)
    q = rng.standard_normal((1, 4, 2)).astype(np.float32)
    v = rng.standard_normal((1, 4, 2)).astype(np.float32)
    layer = L.AdditiveAttention()
    out = layer([ember.asarray(q), ember.asarray(v)], use_causal_mask=True)
    scale = np.asarray(layer.get_weights()[0])
    s = (scale * np.tanh(q[:, :, None, :] + v[:, None, :, :])).sum(-1)
    s = s - 1e9 * (1 - np.tril(np.ones((4, 4))))[None]
    np.testing.assert_allclose(_np(out), _softmax(s) @ v, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="score_mode"):
        L.Attention(score_mode="bilinear")
    with pytest.raises(ValueError, match="list of inputs"):
        L.Attention()(ember.ones((1, 2, 2)))
    inp_q, inp_v = keras.Input((3, 4)), keras.Input((5, 4))
    m = keras.Model([inp_q, inp_v], L.Attention()([inp_q, inp_v]))
    assert m.output_shape == (None, 3, 4)
