"""ember.keras.layers against NumPy formulas of Keras's definitions (channels_last, Keras's
weight layouts, TensorFlow's 'same' padding), output shapes and symbolic calls."""

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


def run(layer, x, device, **kw):
    y = layer(ember.asarray(x, device=device), **kw)
    return ember.asnumpy(y) if isinstance(y, ember.ndarray) else [ember.asnumpy(t) for t in y]


def tf_same(n, k, s, d=1):
    out = -(-n // s)
    total = max((out - 1) * s + (k - 1) * d + 1 - n, 0)
    return total // 2, total - total // 2


def np_conv2d(x, w, b, stride, padding, dilation=(1, 1)):
    """Keras's Conv2D: x (n, h, w, c), w (kh, kw, c, f)."""
    kh, kw = w.shape[:2]
    if padding == "same":
        ph = tf_same(x.shape[1], kh, stride[0], dilation[0])
        pw = tf_same(x.shape[2], kw, stride[1], dilation[1])
        x = np.pad(x, ((0, 0), ph, pw, (0, 0)))
    n, h, wd, c = x.shape
    eh, ew = (kh - 1) * dilation[0] + 1, (kw - 1) * dilation[1] + 1
    oh, ow = (h - eh) // stride[0] + 1, (wd - ew) // stride[1] + 1
    out = np.zeros((n, oh, ow, w.shape[-1]), np.float64)
    for i in range(oh):
        for j in range(ow):
            patch = x[
                :,
                i * stride[0] : i * stride[0] + eh : dilation[0],
                j * stride[1] : j * stride[1] + ew : dilation[1],
                :,
            ]
            out[:, i, j, :] = np.einsum("nabc,abcf->nf", patch, w)
    return out + b


@pytest.mark.parametrize(
    "kernel,strides,padding,dilation",
    [(3, 1, "valid", 1), (3, 2, "same", 1), ((2, 3), (2, 1), "same", 1), (3, 1, "same", 2)],
)
def test_conv2d_matches_numpy(device, kernel, strides, padding, dilation):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 7, 6, 3)).astype(np.float32)
    layer = L.Conv2D(4, kernel, strides=strides, padding=padding, dilation_rate=dilation)
    y = run(layer, x, device)
    w, b = layer.get_weights()
    k = layer.kernel_size
    assert w.shape == k + (3, 4)
    s = layer.strides
    ref = np_conv2d(x.astype(np.float64), w, b, s, padding, layer.dilation_rate)
    np.testing.assert_allclose(y, ref, rtol=1e-4, atol=1e-5)
    assert layer.compute_output_shape((None, 7, 6, 3)) == (None,) + ref.shape[1:]


def test_conv1d_causal_and_channels_first(device):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 9, 3)).astype(np.float32)
    layer = L.Conv1D(5, 3, padding="causal", dilation_rate=2)
    y = run(layer, x, device)
    w, b = layer.get_weights()
    xp = np.pad(x, ((0, 0), (4, 0), (0, 0)))
    ref = np.stack([np.einsum("nkc,kcf->nf", xp[:, t : t + 5 : 2], w) for t in range(9)], 1) + b
    np.testing.assert_allclose(y, ref, rtol=1e-4, atol=1e-5)
    cf = L.Conv2D(2, 3, data_format="channels_first")
    x4 = rng.standard_normal((1, 3, 5, 5)).astype(np.float32)
    y4 = run(cf, x4, device)
    w4, b4 = cf.get_weights()
    ref4 = np_conv2d(x4.transpose(0, 2, 3, 1).astype(np.float64), w4, b4, (1, 1), "valid")
    np.testing.assert_allclose(y4, ref4.transpose(0, 3, 1, 2), rtol=1e-4, atol=1e-5)
    with pytest.raises(ValueError, match="expected ndim=4"):
        L.Conv2D(2, 3)(np.ones((2, 5, 5), np.float32))


@pytest.mark.parametrize("padding", ["valid", "same"])
def test_pooling_matches_numpy(device, padding):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 5, 7, 3)).astype(np.float32)
    mx = run(L.MaxPooling2D(pool_size=(2, 3), strides=2, padding=padding), x, device)
    av = run(L.AveragePooling2D(pool_size=(2, 3), strides=2, padding=padding), x, device)
    ph = tf_same(5, 2, 2) if padding == "same" else (0, 0)
    pw = tf_same(7, 3, 2) if padding == "same" else (0, 0)
    xp = np.pad(x, ((0, 0), ph, pw, (0, 0)), constant_values=np.nan)
    oh, ow = (xp.shape[1] - 2) // 2 + 1, (xp.shape[2] - 3) // 2 + 1
    rmax = np.zeros((2, oh, ow, 3))
    ravg = np.zeros((2, oh, ow, 3))
    for i in range(oh):
        for j in range(ow):
            win = xp[:, 2 * i : 2 * i + 2, 2 * j : 2 * j + 3]
            rmax[:, i, j] = np.nanmax(win, axis=(1, 2))
            ravg[:, i, j] = np.nanmean(win, axis=(1, 2))  # TF: the padding is not counted
    np.testing.assert_allclose(mx, rmax, rtol=1e-6)
    np.testing.assert_allclose(av, ravg, rtol=1e-5, atol=1e-6)
    g = run(L.GlobalAveragePooling2D(), x, device)
    np.testing.assert_allclose(g, x.mean((1, 2)), rtol=1e-5)
    g = run(L.GlobalMaxPooling2D(keepdims=True), x, device)
    np.testing.assert_allclose(g, x.max((1, 2), keepdims=True))


def test_shape_layers(device):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    np.testing.assert_array_equal(run(L.Flatten(), x, device), x.reshape(2, -1))
    np.testing.assert_array_equal(run(L.Reshape((-1, 10)), x, device), x.reshape(2, 6, 10))
    np.testing.assert_array_equal(run(L.Permute((3, 1, 2)), x, device), x.transpose(0, 3, 1, 2))
    zp = run(L.ZeroPadding2D(((1, 2), (0, 1))), x, device)
    np.testing.assert_array_equal(zp, np.pad(x, ((0, 0), (1, 2), (0, 1), (0, 0))))
    v = x[:, 0, 0]
    np.testing.assert_array_equal(run(L.RepeatVector(3), v, device), np.repeat(v[:, None], 3, 1))
    np.testing.assert_allclose(
        run(L.Rescaling(1 / 255, offset=-1), x, device), x / 255 - 1, rtol=1e-6
    )
    np.testing.assert_allclose(run(L.Activation("relu"), x, device), np.maximum(x, 0))
    assert L.Reshape((-1, 10)).compute_output_shape((None, 3, 4, 5)) == (None, 6, 10)
    assert L.Flatten().compute_output_shape((None, 3, 4, 5)) == (None, 60)
    with pytest.raises(ValueError, match="total size of the tensor must be unchanged"):
        L.Reshape((7,))(x)
    with pytest.raises(ValueError, match="must be consecutive and start from 1"):
        L.Permute((0, 1))


def test_merge_layers(device):
    rng = np.random.default_rng(4)
    a, b = (rng.standard_normal((2, 3)).astype(np.float32) for _ in range(2))
    ea, eb = ember.asarray(a, device=device), ember.asarray(b, device=device)
    np.testing.assert_allclose(ember.asnumpy(L.Add()([ea, eb])), a + b)
    np.testing.assert_allclose(ember.asnumpy(L.Multiply()([ea, eb])), a * b)
    np.testing.assert_allclose(ember.asnumpy(L.Subtract()([ea, eb])), a - b)
    np.testing.assert_allclose(ember.asnumpy(L.Average()([ea, eb])), (a + b) / 2)
    np.testing.assert_allclose(ember.asnumpy(L.Concatenate()([ea, eb])), np.concatenate([a, b], 1))
    np.testing.assert_allclose(
        ember.asnumpy(L.Concatenate(axis=0)([ea, eb])), np.concatenate([a, b], 0)
    )
    with pytest.raises(ValueError, match="matching shapes except for the concatenation axis"):
        L.Concatenate()([keras.Input((3,)), keras.Input((2, 2))])
    with pytest.raises(ValueError, match="should be called on a list of inputs"):
        L.Add()(ea)


def test_dropout_train_vs_inference(device):
    x = ember.ones((200, 50), dtype=ember.float32, device=device)
    layer = L.Dropout(0.4)
    np.testing.assert_array_equal(ember.asnumpy(layer(x)), 1.0)  # inference: identity
    y = ember.asnumpy(layer(x, training=True))
    kept = y != 0
    np.testing.assert_allclose(y[kept], 1 / 0.6, rtol=1e-6)
    assert 0.55 < kept.mean() < 0.65
    with pytest.raises(ValueError, match="between 0 and 1"):
        L.Dropout(1.5)


def test_embedding(device):
    layer = L.Embedding(10, 4)
    idx = np.array([[1, 2, 9], [0, 0, 3]])
    y = run(layer, idx, device)
    (table,) = layer.get_weights()
    assert np.abs(table).max() <= 0.05  # Keras's uniform(-0.05, 0.05)
    np.testing.assert_array_equal(y, table[idx])
    assert layer.compute_output_shape((None, 3)) == (None, 3, 4)


def test_layer_normalization(device):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((3, 4, 6)).astype(np.float32) * 3 + 1
    layer = L.LayerNormalization()
    y = run(layer, x, device)
    mu, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    np.testing.assert_allclose(y, (x - mu) / np.sqrt(var + 1e-3), rtol=1e-4, atol=1e-5)
    y2 = run(L.LayerNormalization(axis=(1, 2), epsilon=1e-5), x, device)
    mu, var = x.mean((1, 2), keepdims=True), x.var((1, 2), keepdims=True)
    np.testing.assert_allclose(y2, (x - mu) / np.sqrt(var + 1e-5), rtol=1e-4, atol=1e-5)


def test_batch_normalization(device):
    rng = np.random.default_rng(6)
    x = (rng.standard_normal((8, 3, 3, 4)) * 2 + 5).astype(np.float32)
    bn = L.BatchNormalization()
    y = run(bn, x, device, training=True)
    mu, var = x.mean((0, 1, 2)), x.var((0, 1, 2))
    np.testing.assert_allclose(y, (x - mu) / np.sqrt(var + 1e-3), rtol=1e-4, atol=1e-4)
    gamma, beta, mm, mv = bn.get_weights()
    np.testing.assert_allclose(mm, 0.01 * mu, rtol=1e-4)  # momentum 0.99, biased variance
    np.testing.assert_allclose(mv, 0.99 + 0.01 * var, rtol=1e-4)
    assert [w.name for w in bn.non_trainable_weights] == ["moving_mean", "moving_variance"]
    y_inf = run(bn, x, device)
    np.testing.assert_allclose(y_inf, (x - mm) / np.sqrt(mv + 1e-3), rtol=1e-4, atol=1e-4)
    bn.trainable = False  # Keras 3: a frozen BatchNormalization runs in inference mode
    np.testing.assert_allclose(run(bn, x, device, training=True), y_inf, rtol=1e-5)


def _sigmoid(z):
    return 1 / (1 + np.exp(-z))


def test_recurrent_layers_match_numpy(device):
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 5, 3)).astype(np.float32)
    u = 4
    rnn = L.SimpleRNN(u, return_sequences=True)
    y = run(rnn, x, device)
    k, rk, b = rnn.get_weights()
    h = np.zeros((2, u))
    for t in range(5):
        h = np.tanh(x[:, t] @ k + h @ rk + b)
        np.testing.assert_allclose(y[:, t], h, rtol=1e-4, atol=1e-5)
    lstm = L.LSTM(u, return_state=True)
    out, hs, cs = run(lstm, x, device)
    k, rk, b = lstm.get_weights()
    np.testing.assert_array_equal(b, np.r_[np.zeros(u), np.ones(u), np.zeros(2 * u)])
    h, c = np.zeros((2, u)), np.zeros((2, u))
    for t in range(5):
        z = x[:, t] @ k + h @ rk + b
        i, f, g, o = (
            _sigmoid(z[:, :u]),
            _sigmoid(z[:, u : 2 * u]),
            np.tanh(z[:, 2 * u : 3 * u]),
            _sigmoid(z[:, 3 * u :]),
        )
        c = f * c + i * g
        h = o * np.tanh(c)
    np.testing.assert_allclose(out, h, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(cs, c, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(hs, h, rtol=1e-4, atol=1e-5)
    gru = L.GRU(u, go_backwards=True)
    y = run(gru, x, device)
    k, rk, b = gru.get_weights()
    assert b.shape == (2, 3 * u)
    h = np.zeros((2, u))
    for t in reversed(range(5)):
        xz = x[:, t] @ k + b[0]
        inner = h @ rk + b[1]
        z = _sigmoid(xz[:, :u] + inner[:, :u])
        r = _sigmoid(xz[:, u : 2 * u] + inner[:, u : 2 * u])
        hh = np.tanh(xz[:, 2 * u :] + r * inner[:, 2 * u :])
        h = z * h + (1 - z) * hh
    np.testing.assert_allclose(y, h, rtol=1e-4, atol=1e-5)
    # recurrent kernels are orthogonal (Keras's default)
    # (units, 3 * units): orthonormal rows
    np.testing.assert_allclose(rk @ rk.T, np.eye(u), atol=1e-5)
    q = L.SimpleRNN(6).add_weight((6, 6), "orthogonal").numpy()
    np.testing.assert_allclose(q.T @ q, np.eye(6), atol=1e-5)


def test_symbolic_shapes():
    inp = keras.Input(shape=(28, 28, 1))
    t = L.Conv2D(8, 3, strides=2, padding="same")(inp)
    assert t.shape == (None, 14, 14, 8)
    t = L.MaxPooling2D()(t)
    assert t.shape == (None, 7, 7, 8)
    assert L.Flatten()(t).shape == (None, 392)
    seq = keras.Input(shape=(None, 5))
    assert L.LSTM(3, return_sequences=True)(seq).shape == (None, None, 3)
    assert L.GRU(3)(seq).shape == (None, 3)


def test_regularizers_add_losses(device):
    layer = L.Dense(
        3,
        kernel_regularizer=keras.regularizers.l2(0.1),
        bias_regularizer="l1",
        activity_regularizer=keras.regularizers.L1(0.5),
    )
    x = np.random.default_rng(8).standard_normal((4, 2)).astype(np.float32)
    y = run(layer, x, device)
    w, b = layer.get_weights()
    vals = [float(v) for v in layer.losses]
    assert vals[0] == pytest.approx(0.5 * np.abs(y).sum() / 4, rel=1e-5)
    assert sorted(vals[1:]) == pytest.approx(sorted([0.1 * (w**2).sum(), 0.01 * np.abs(b).sum()]))
    m = keras.Sequential([L.Dense(1, kernel_regularizer="l2")])
    m.compile("sgd", "mse")
    loss = m.evaluate(x, np.zeros((4, 1), np.float32), verbose=0)
    (k, _) = m.get_weights()
    pred = m.predict(x, verbose=0)
    assert loss == pytest.approx(np.mean(pred**2) + 0.01 * (k**2).sum(), rel=1e-5)


def test_small_cnn_trains(device):
    (xtr, ytr), (xte, yte) = keras.datasets.digits.load_data()
    xtr = (xtr[..., None] / 16.0).astype(np.float32)
    xte = (xte[..., None] / 16.0).astype(np.float32)
    with ember.device(device):
        m = keras.Sequential(
            [
                keras.Input(shape=(8, 8, 1)),
                L.Conv2D(8, 3, padding="same", activation="relu"),
                L.MaxPooling2D(),
                L.BatchNormalization(),
                L.Flatten(),
                L.Dense(10, activation="softmax"),
            ]
        )
    m.compile(keras.optimizers.Adam(3e-3), "sparse_categorical_crossentropy", metrics=["accuracy"])
    m.fit(xtr, ytr, epochs=4, batch_size=64, verbose=0)
    _, acc = m.evaluate(xte, yte, verbose=0)
    assert acc > 0.85, acc


def test_constraints_after_each_step(device):
    rng = np.random.default_rng(9)
    x = rng.standard_normal((16, 3)).astype(np.float32)
    y = rng.standard_normal((16, 2)).astype(np.float32) * 10
    with ember.device(device):
        m = keras.Sequential(
            [
                keras.Input((3,)),
                L.Dense(
                    2, kernel_constraint=keras.constraints.MaxNorm(0.5), bias_constraint="non_neg"
                ),
            ]
        )
    m.compile(keras.optimizers.SGD(0.5), "mse")
    m.fit(x, y, epochs=2, verbose=0)
    k, b = m.get_weights()
    assert np.all(np.linalg.norm(k, axis=0) <= 0.5 + 1e-5) and np.all(b >= 0)
    w = ember.asarray(np.array([[3.0, 0.0], [4.0, 1.0]], np.float32), device=device)
    np.testing.assert_allclose(
        ember.asnumpy(keras.constraints.UnitNorm()(w)), [[0.6, 0.0], [0.8, 1.0]], rtol=1e-5
    )
    with pytest.raises(ValueError, match="known constraints"):
        keras.constraints.get("maxnorm")


def test_masking_from_embedding(device):
    seqs = np.array([[3, 5, 2, 0, 0], [0, 0, 4, 1, 7]])  # post- and pre-padded
    emb = L.Embedding(10, 4, mask_zero=True)
    lstm = L.LSTM(3)
    with ember.device(device):
        m = keras.Sequential([keras.Input((5,), dtype="int64"), emb, lstm])
        out = m.predict(ember.asarray(seqs, device=device), verbose=0)
        # the same as running the unpadded sequences alone
        alone = [
            keras.Sequential([keras.Input((n,), dtype="int64"), emb, lstm]).predict(
                ember.asarray(s[None], device=device), verbose=0
            )
            for s, n in ((seqs[0, :3], 3), (seqs[1, 2:], 3))
        ]
    np.testing.assert_allclose(out, np.concatenate(alone), rtol=1e-5, atol=1e-6)
    # functional: masked average pooling of the embeddings
    inp = keras.Input((5,), dtype="int64")
    pooled = L.GlobalAveragePooling1D()(emb(inp))
    f = keras.Model(inp, pooled)
    got = f.predict(ember.asarray(seqs, device=device), verbose=0)
    (table,) = emb.get_weights()
    ref = np.stack([table[s[s != 0]].mean(0) for s in seqs])
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)
    # return_sequences: masked steps emit zeros and the mask carries on
    seq = L.SimpleRNN(2, return_sequences=True)
    m2 = keras.Sequential([keras.Input((5,), dtype="int64"), emb, seq])
    y = m2.predict(ember.asarray(seqs, device=device), verbose=0)
    np.testing.assert_array_equal(y[0, 3:], 0)
    np.testing.assert_array_equal(y[1, :2], 0)


def test_ops_namespace(device):
    from ember.keras import ops

    with ember.device(device):
        x = ops.ones((3, 3))
        assert x.dtype == ember.float32 and x.device == ember.Device(device)
        model = keras.Sequential([L.Dense(2, activation="relu"), L.Dense(4)])
        assert model(x).shape == (3, 4)
    np.testing.assert_array_equal(ember.asnumpy(ops.relu(ember.asarray([-1.0, 2.0]))), [0, 2])
    np.testing.assert_array_equal(ember.asnumpy(ops.one_hot([1, 0], 3)), np.eye(3)[[1, 0]])
    assert ops.convert_to_tensor(np.ones(2)).dtype == ember.float32
    assert ops.matmul is ember.matmul and ops.shape(x) == (3, 3)
    with pytest.raises(AttributeError):
        getattr(ops, "no_such_op")  # noqa: B009


def test_shapes_of_layers_without_compute_output_shape(device):
    # Lambda and custom layers get their symbolic output shape by running on zeros
    inp = keras.Input((6,))
    t = L.Lambda(lambda v: ember.concat([v, v * 2], axis=-1))(inp)
    assert t.shape == (None, 12)
    pair = L.Lambda(lambda vs: vs[0] * vs[1])([inp, keras.Input((6,))])
    assert pair.shape == (None, 6)
    m = keras.Model(inp, L.Dense(1)(t))
    x = np.arange(12, dtype=np.float32).reshape(2, 6)
    (k, b) = m.layers[-1].get_weights()
    np.testing.assert_allclose(
        m.predict(ember.asarray(x, device=device), verbose=0),
        np.concatenate([x, 2 * x], 1) @ k + b,
        rtol=1e-5,
    )
