"""ember.keras's stateful RNNs (``stateful=True``, ``reset_state``/``reset_states``, state carried
across ``fit`` batches) and Keras 2's legacy HDF5 files (``load_model("m.h5")``,
``model.save("m.h5")``, ``save_weights("w.h5")``). The Keras 2 fixtures are written here with
h5py in the layout Keras 2 / tf.keras write (root ``model_config``/``training_config``/
``keras_version``/``backend`` attributes, ``model_weights`` with ``layer_names`` and per-layer
``weight_names``); predictions are checked against NumPy forwards of those weights."""

from __future__ import annotations

import json

import ember
import numpy as np
import pytest
from ember import keras

L = keras.layers
h5py = pytest.importorskip("h5py")


@pytest.fixture(autouse=True)
def _seed():
    keras.utils.clear_session()
    keras.utils.set_random_seed(0)


def host(a):
    return np.array(ember.asnumpy(a), copy=True)


def _sig(z):
    return 1 / (1 + np.exp(-z))


def np_rnn(kind, x, w, units, h0=None, reset_after=True, return_sequences=False):
    """Keras's SimpleRNN/LSTM/GRU over (n, t, f) with weights `w` (kernel, recurrent, bias)."""
    k, r, b = w
    n = x.shape[0]
    h = np.zeros((n, units), np.float64) if h0 is None else h0[0].astype(np.float64)
    c = np.zeros((n, units)) if h0 is None or len(h0) < 2 else h0[1].astype(np.float64)
    u, outs = units, []
    for i in range(x.shape[1]):
        xp = x[:, i] @ k
        if kind == "SimpleRNN":
            h = np.tanh(xp + h @ r + b)
        elif kind == "LSTM":
            z = xp + h @ r + b
            ig, fg = _sig(z[:, :u]), _sig(z[:, u : 2 * u])
            c = fg * c + ig * np.tanh(z[:, 2 * u : 3 * u])
            h = _sig(z[:, 3 * u :]) * np.tanh(c)
        elif reset_after:
            xp = xp + b[0]
            inner = h @ r + b[1]
            zg = _sig(xp[:, :u] + inner[:, :u])
            rg = _sig(xp[:, u : 2 * u] + inner[:, u : 2 * u])
            h = zg * h + (1 - zg) * np.tanh(xp[:, 2 * u :] + rg * inner[:, 2 * u :])
        else:
            xp = xp + b
            zg = _sig(xp[:, :u] + h @ r[:, :u])
            rg = _sig(xp[:, u : 2 * u] + h @ r[:, u : 2 * u])
            h = zg * h + (1 - zg) * np.tanh(xp[:, 2 * u :] + (rg * h) @ r[:, 2 * u :])
        outs.append(h)
    return np.stack(outs, 1) if return_sequences else h


# ---- stateful RNNs ------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["LSTM", "GRU", "SimpleRNN"])
def test_stateful_chunks_equal_one_call_over_the_whole_sequence(device, kind):
    x = np.random.default_rng(1).standard_normal((3, 10, 4)).astype("float32")
    xd = ember.asarray(x, device=device)
    whole = getattr(L, kind)(5, return_sequences=True)
    full = host(whole(xd))
    layer = getattr(L, kind)(5, return_sequences=True, stateful=True)
    layer(xd[:, :1])  # builds: batch size 3 from the first call
    layer.set_weights(whole.get_weights())
    layer.reset_state()
    chunks = [host(layer(xd[:, i : i + 4])) for i in range(0, 10, 4)]  # 4 + 4 + 2 steps
    np.testing.assert_allclose(np.concatenate(chunks, axis=1), full, rtol=1e-5, atol=1e-6)
    # the states are non-trainable Variables on the layer's device, not among its weights
    n_states = 2 if kind == "LSTM" else 1
    assert len(layer.states) == n_states and len(layer.weights) == 3
    for s in layer.states:
        assert not s.trainable and tuple(s.shape) == (3, 5) and s.device == layer.kernel.device
    np.testing.assert_allclose(host(layer.states[0]), full[:, -1], rtol=1e-5, atol=1e-6)
    # a second pass continues from the end, so it differs; reset_state starts over
    again = host(layer(xd[:, :4]))
    assert not np.allclose(again, full[:, :4], atol=1e-4)
    layer.reset_state()
    assert not host(layer.states[0]).any()
    np.testing.assert_allclose(host(layer(xd[:, :4])), full[:, :4], rtol=1e-5, atol=1e-6)
    # the numbers are Keras's recurrences (NumPy), continued across the chunk boundary
    ref = np_rnn(kind, x, whole.get_weights(), 5, return_sequences=True)
    np.testing.assert_allclose(full, ref, rtol=1e-4, atol=1e-5)


def test_reset_states_keras2_values_and_model_reset(device):
    x = np.random.default_rng(2).standard_normal((2, 6, 3)).astype("float32")
    with ember.device(device):
        model = keras.Sequential(
            [keras.Input(shape=(6, 3), batch_size=2), L.LSTM(4, stateful=True), L.Dense(1)]
        )
    lstm = model.layers[0]
    h0 = np.random.default_rng(3).standard_normal((2, 4)).astype("float32")
    c0 = np.random.default_rng(4).standard_normal((2, 4)).astype("float32")
    lstm.reset_states([h0, c0])
    got = host(lstm(ember.asarray(x, device=device)))
    ref = np_rnn("LSTM", x, lstm.get_weights(), 4, h0=[h0, c0])
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-5)
    model.predict(x, batch_size=2, verbose=0)
    assert host(lstm.states[1]).any()
    model.reset_states()  # Keras 2's spelling; Keras 3's reset_state below
    assert not any(host(s).any() for s in lstm.states)
    first = model.predict(x, batch_size=2, verbose=0)
    model.reset_state()
    np.testing.assert_allclose(model.predict(x, batch_size=2, verbose=0), first, rtol=1e-6)
    with pytest.raises(ValueError, match="states"):
        lstm.reset_states([h0])  # LSTM has two states
    with pytest.raises(ValueError, match="states"):
        lstm.reset_states([h0[:1], c0])
    with pytest.raises(ValueError, match="batch"):
        lstm(ember.asarray(x[:1], device=device))  # built for batch size 2
    with pytest.raises(ValueError, match="stateful"):
        L.GRU(2).reset_states([h0])


def test_stateful_needs_a_fixed_batch_size_and_bad_flag():
    with pytest.raises(ValueError, match="batch size"):
        keras.Sequential([keras.Input(shape=(5, 2)), L.GRU(3, stateful=True)])
    with pytest.raises(ValueError, match="batch size"):
        L.LSTM(3, stateful=True)(keras.Input(shape=(5, 2)))
    with pytest.raises(TypeError, match="stateful"):
        L.LSTM(3, stateful="yes")
    # batch_input_shape= on the first layer, and a Sequential's first call, fix it
    m = keras.Sequential([L.SimpleRNN(3, stateful=True, batch_input_shape=(4, 5, 2))])
    assert tuple(m.layers[0].states[0].shape) == (4, 3)
    m2 = keras.Sequential([L.GRU(3, stateful=True)])
    m2(np.zeros((6, 5, 2), "float32"))
    assert tuple(m2.layers[0].states[0].shape) == (6, 3)
    assert m2.layers[0].get_config()["stateful"] is True


def test_fit_carries_state_across_batches_without_cross_batch_gradients(device):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((8, 4, 3)).astype("float32")
    y = rng.standard_normal((8, 1)).astype("float32")
    with ember.device(device):
        model = keras.Sequential(
            [keras.Input(shape=(4, 3), batch_size=2), L.LSTM(6, stateful=True), L.Dense(1)]
        )
    model.compile(optimizer="sgd", loss="mse")
    lstm = model.layers[0]
    hist = model.fit(x, y, batch_size=2, epochs=2, shuffle=False, verbose=0)
    assert len(hist.history["loss"]) == 2 and np.isfinite(hist.history["loss"]).all()
    # check against the layer run batch by batch from zero (same weights, no training)
    lstm.reset_state()
    for i in range(0, 8, 2):
        model.predict_on_batch(x[i : i + 2])
    h_ref = host(lstm.states[0])
    lstm.reset_state()
    model.predict(x, batch_size=2, verbose=0)  # predict carries the state the same way
    np.testing.assert_allclose(host(lstm.states[0]), h_ref, rtol=1e-6)
    assert h_ref.any()
    # one training step's gradient equals the one with the carried state given as a constant
    lstm.reset_state()
    model.predict_on_batch(x[:2])
    carried = [host(s) for s in lstm.states]
    before = [host(v) for v in model.trainable_weights]
    model.train_on_batch(x[2:4], y[2:4])
    step_stateful = [host(v) - b for v, b in zip(model.trainable_weights, before, strict=True)]
    inp = keras.Input(shape=(4, 3))
    h_in, c_in = keras.Input(shape=(6,)), keras.Input(shape=(6,))
    lstm2 = L.LSTM(6)
    out = L.Dense(1)(lstm2(inp, initial_state=[h_in, c_in]))
    ref = keras.Model([inp, h_in, c_in], out)
    ref.set_weights(before)
    ref.compile(optimizer="sgd", loss="mse")
    ref.train_on_batch([x[2:4], carried[0], carried[1]], y[2:4])
    step_ref = [host(v) - b for v, b in zip(ref.trainable_weights, before, strict=True)]
    for a, b in zip(step_stateful, step_ref, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-7)


def test_bidirectional_over_stateful_layers(device):
    x = np.random.default_rng(6).standard_normal((2, 6, 3)).astype("float32")
    xd = ember.asarray(x, device=device)
    bi = L.Bidirectional(L.GRU(4, stateful=True))
    bi(xd)
    assert bi.stateful and len(bi.states) == 2
    fw, bw = (host(s) for s in bi.states)
    assert fw.any() and bw.any()
    ref = np_rnn("GRU", x, bi.forward_layer.get_weights(), 4)
    np.testing.assert_allclose(fw, ref, rtol=1e-4, atol=1e-5)
    bi.reset_state()
    assert not any(host(s).any() for s in bi.states)
    bi.reset_states([fw, bw])
    np.testing.assert_allclose(host(bi.states[1]), bw)
    with pytest.raises(ValueError, match="states"):
        bi.reset_states([fw])


def test_stateful_model_saves_and_reloads_keras(tmp_path):
    x = np.random.default_rng(7).standard_normal((2, 5, 3)).astype("float32")
    model = keras.Sequential(
        [keras.Input(shape=(5, 3), batch_size=2), L.LSTM(4, stateful=True), L.Dense(2)]
    )
    model.save(tmp_path / "s.keras")
    back = keras.models.load_model(tmp_path / "s.keras")
    assert back.layers[0].stateful and tuple(back.layers[0].states[0].shape) == (2, 4)
    np.testing.assert_allclose(
        back.predict(x, batch_size=2, verbose=0), ember.asnumpy(model(x)), rtol=1e-5
    )


# ---- Keras 2 legacy .h5 fixtures ----------------------------------------------------------------


def _init(name, **config):
    return {"class_name": name, "config": config}


GLOROT, ZEROS, ONES = _init("GlorotUniform", seed=None), _init("Zeros"), _init("Ones")
NO_REG = {"kernel_regularizer": None, "bias_regularizer": None, "activity_regularizer": None}
NO_CON = {"kernel_constraint": None, "bias_constraint": None}


def k2_dense(name, units, activation, **extra):
    config = {
        "name": name,
        "trainable": True,
        "dtype": "float32",
        "units": units,
        "activation": activation,
        "use_bias": True,
        "kernel_initializer": GLOROT,
        "bias_initializer": ZEROS,
        **NO_REG,
        **NO_CON,
        **extra,
    }
    return {"class_name": "Dense", "config": config}


def k2_rnn(kind, name, units, **extra):
    config = {
        "name": name,
        "trainable": True,
        "dtype": "float32",
        "return_sequences": False,
        "return_state": False,
        "go_backwards": False,
        "stateful": False,
        "unroll": False,
        "time_major": False,
        "units": units,
        "activation": "tanh",
        "use_bias": True,
        "kernel_initializer": GLOROT,
        "recurrent_initializer": _init("Orthogonal", gain=1.0, seed=None),
        "bias_initializer": ZEROS,
        "kernel_regularizer": None,
        "recurrent_regularizer": None,
        "bias_regularizer": None,
        "activity_regularizer": None,
        "kernel_constraint": None,
        "recurrent_constraint": None,
        "bias_constraint": None,
        "dropout": 0.0,
        "recurrent_dropout": 0.0,
        "implementation": 2,
    }
    if kind != "SimpleRNN":
        config["recurrent_activation"] = "sigmoid"
    if kind == "LSTM":
        config["unit_forget_bias"] = True
    if kind == "GRU":
        config["reset_after"] = True
    config.update(extra)
    return {"class_name": kind, "config": config}


def write_keras2(path, model_config, layers, training_config=None, version=b"2.4.0"):
    """A Keras 2 `model.save("m.h5")` file: `layers` is [(layer name, [(weight name, array)])]
    in `model.layers` order (a layer without weights has an empty list)."""
    with h5py.File(path, "w") as f:
        f.attrs["keras_version"] = version
        f.attrs["backend"] = b"tensorflow"
        f.attrs["model_config"] = json.dumps(model_config).encode("utf8")
        if training_config is not None:
            f.attrs["training_config"] = json.dumps(training_config).encode("utf8")
        g = f.create_group("model_weights")
        g.attrs["layer_names"] = np.asarray([n.encode("utf8") for n, _ in layers])
        g.attrs["backend"] = b"tensorflow"
        g.attrs["keras_version"] = version
        for name, ws in sorted(layers, key=lambda item: item[0]):
            lg = g.create_group(name)
            lg.attrs["weight_names"] = np.asarray([w.encode("utf8") for w, _ in ws], dtype="S")
            for wname, value in ws:
                lg.create_dataset(wname, data=value)


def _rand(rng, *shape, scale=0.5):
    return (rng.standard_normal(shape) * scale).astype("float32")


def _softmax(z):
    z = z - z.max(-1, keepdims=True)
    return np.exp(z) / np.exp(z).sum(-1, keepdims=True)


def mlp_fixture(path, style):
    """tf.keras 2.4's Sequential (InputLayer, Dense, Dropout, BatchNormalization with its
    built `axis: [1]`, Dense softmax), or Keras 2.2's (batch_input_shape on the first layer,
    a dtype Policy dict, optimizer `lr`, a TensorShape-encoded build_input_shape)."""
    rng = np.random.default_rng(10)
    w = {
        "k1": _rand(rng, 4, 8),
        "b1": _rand(rng, 8),
        "gamma": 1 + _rand(rng, 8, scale=0.1),
        "beta": _rand(rng, 8, scale=0.1),
        "mean": _rand(rng, 8, scale=0.1),
        "var": 1 + np.abs(_rand(rng, 8, scale=0.2)),
        "k2": _rand(rng, 8, 3),
        "b2": _rand(rng, 3),
    }
    bn = {
        "name": "batch_normalization",
        "trainable": True,
        "dtype": "float32",
        "axis": [1],
        "momentum": 0.99,
        "epsilon": 0.001,
        "center": True,
        "scale": True,
        "beta_initializer": ZEROS,
        "gamma_initializer": ONES,
        "moving_mean_initializer": ZEROS,
        "moving_variance_initializer": ONES,
        "beta_regularizer": None,
        "gamma_regularizer": None,
        "beta_constraint": None,
        "gamma_constraint": None,
    }
    dropout = {"name": "dropout", "trainable": True, "dtype": "float32", "rate": 0.5}
    dropout.update({"noise_shape": None, "seed": None})
    first = k2_dense("dense", 8, "relu")
    layers = [
        first,
        {"class_name": "Dropout", "config": dropout},
        {"class_name": "BatchNormalization", "config": bn},
        k2_dense("dense_1", 3, "softmax"),
    ]
    opt = {"name": "Adam", "learning_rate": 0.001, "decay": 0.0, "beta_1": 0.9}
    opt.update({"beta_2": 0.999, "epsilon": 1e-07, "amsgrad": False})
    config = {"name": "sequential", "layers": layers}
    if style == "tf2":
        inp = {"batch_input_shape": [None, 4], "dtype": "float32", "sparse": False}
        inp.update({"ragged": False, "name": "dense_input"})
        layers.insert(0, {"class_name": "InputLayer", "config": inp})
        metrics = ["accuracy"]
    else:
        first["config"]["batch_input_shape"] = [None, 4]
        for la in layers:
            la["config"]["dtype"] = {"class_name": "Policy", "config": {"name": "float32"}}
        opt["lr"] = opt.pop("learning_rate")
        config["build_input_shape"] = {"class_name": "TensorShape", "items": [None, 4]}
        metrics = [
            [{"class_name": "MeanMetricWrapper", "config": {"name": "acc", "fn": "accuracy"}}]
        ]
    training = {
        "loss": "sparse_categorical_crossentropy",
        "metrics": metrics,
        "weighted_metrics": None,
        "loss_weights": None,
        "optimizer_config": {"class_name": "Adam", "config": opt},
    }
    write_keras2(
        path,
        {"class_name": "Sequential", "config": config},
        [
            ("dense", [("dense/kernel:0", w["k1"]), ("dense/bias:0", w["b1"])]),
            ("dropout", []),
            (
                "batch_normalization",
                [
                    ("batch_normalization/gamma:0", w["gamma"]),
                    ("batch_normalization/beta:0", w["beta"]),
                    ("batch_normalization/moving_mean:0", w["mean"]),
                    ("batch_normalization/moving_variance:0", w["var"]),
                ],
            ),
            ("dense_1", [("dense_1/kernel:0", w["k2"]), ("dense_1/bias:0", w["b2"])]),
        ],
        training,
        version=b"2.4.0" if style == "tf2" else b"2.2.4",
    )

    def forward(x):
        h = np.maximum(x @ w["k1"] + w["b1"], 0)
        h = w["gamma"] * (h - w["mean"]) / np.sqrt(w["var"] + 1e-3) + w["beta"]
        return _softmax(h @ w["k2"] + w["b2"])

    return forward


@pytest.mark.parametrize("style", ["tf2", "keras22"])
def test_load_keras2_sequential_mlp(device, tmp_path, style):
    path = tmp_path / "mlp.h5"
    forward = mlp_fixture(path, style)
    x = np.random.default_rng(11).standard_normal((5, 4)).astype("float32")
    with ember.device(device):
        model = keras.models.load_model(path)
    assert isinstance(model, keras.Sequential)
    assert [la.name for la in model.layers] == [
        "dense",
        "dropout",
        "batch_normalization",
        "dense_1",
    ]
    assert model.layers[0].kernel.device == ember.device(device)
    np.testing.assert_allclose(model.predict(x, verbose=0), forward(x), rtol=1e-4, atol=1e-6)
    # compiled from training_config: trains, with the loss and the metric named as saved
    assert model.compiled and type(model.optimizer).__name__ == "Adam"
    hist = model.fit(x, np.array([0, 1, 2, 0, 1]), epochs=1, verbose=0)
    assert np.isfinite(hist.history["loss"][0]) and len(hist.history) == 2
    # compile=False leaves it uncompiled
    assert not keras.models.load_model(path, compile=False).compiled


def conv_fixture(path):
    """tf.keras 2.x's Functional: Input(6, 6, 2) -> Conv2D(3, 3, same, relu) -> MaxPooling2D
    -> Flatten -> Dense(2), list-form inbound_nodes."""
    rng = np.random.default_rng(12)
    k, b = _rand(rng, 3, 3, 2, 3), _rand(rng, 3)
    kd, bd = _rand(rng, 27, 2), _rand(rng, 2)
    conv = {
        "name": "conv2d",
        "trainable": True,
        "dtype": "float32",
        "filters": 3,
        "kernel_size": [3, 3],
        "strides": [1, 1],
        "padding": "same",
        "data_format": "channels_last",
        "dilation_rate": [1, 1],
        "groups": 1,
        "activation": "relu",
        "use_bias": True,
        "kernel_initializer": GLOROT,
        "bias_initializer": ZEROS,
        **NO_REG,
        **NO_CON,
    }
    pool = {"name": "max_pooling2d", "trainable": True, "dtype": "float32", "pool_size": [2, 2]}
    pool.update({"padding": "valid", "strides": [2, 2], "data_format": "channels_last"})
    flat = {"name": "flatten", "trainable": True, "dtype": "float32"}
    flat["data_format"] = "channels_last"

    def node(src):
        return [[[src, 0, 0, {}]]]

    inp = {"batch_input_shape": [None, 6, 6, 2], "dtype": "float32", "sparse": False}
    inp.update({"ragged": False, "name": "input_1"})
    layers = [
        {"class_name": "InputLayer", "config": inp, "name": "input_1", "inbound_nodes": []},
        {
            "class_name": "Conv2D",
            "config": conv,
            "name": "conv2d",
            "inbound_nodes": node("input_1"),
        },
        {
            "class_name": "MaxPooling2D",
            "config": pool,
            "name": "max_pooling2d",
            "inbound_nodes": node("conv2d"),
        },
        {
            "class_name": "Flatten",
            "config": flat,
            "name": "flatten",
            "inbound_nodes": node("max_pooling2d"),
        },
        {**k2_dense("dense", 2, "linear"), "name": "dense", "inbound_nodes": node("flatten")},
    ]
    config = {
        "name": "model",
        "layers": layers,
        "input_layers": [["input_1", 0, 0]],
        "output_layers": [["dense", 0, 0]],
    }
    write_keras2(
        path,
        {"class_name": "Functional", "config": config},
        [
            ("input_1", []),
            ("conv2d", [("conv2d/kernel:0", k), ("conv2d/bias:0", b)]),
            ("max_pooling2d", []),
            ("flatten", []),
            ("dense", [("dense/kernel:0", kd), ("dense/bias:0", bd)]),
        ],
    )

    def forward(x):
        xp = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
        out = np.zeros(x.shape[:3] + (3,))
        for i in range(6):
            for j in range(6):
                out[:, i, j] = np.einsum("nhwc,hwcf->nf", xp[:, i : i + 3, j : j + 3], k)
        out = np.maximum(out + b, 0)
        pooled = out.reshape(-1, 3, 2, 3, 2, 3).max(axis=(2, 4))
        return pooled.reshape(len(x), -1) @ kd + bd

    return forward


def test_load_keras2_functional_conv(device, tmp_path):
    path = tmp_path / "conv.hdf5"
    forward = conv_fixture(path)
    x = np.random.default_rng(13).standard_normal((3, 6, 6, 2)).astype("float32")
    with ember.device(device):
        model = keras.models.load_model(path)
    assert isinstance(model, keras.Model) and not model.compiled  # no training_config
    np.testing.assert_allclose(model.predict(x, verbose=0), forward(x), rtol=1e-4, atol=1e-5)


def recurrent_fixture(path):
    """tf.keras 2.x's Functional: int Input(5) -> Embedding(10, 4) -> [Bidirectional(LSTM(3)),
    GRU(2)] -> Concatenate -> Dense(1); TF 2's weight names (`lstm_cell/kernel:0`)."""
    rng = np.random.default_rng(14)
    emb = _rand(rng, 10, 4)
    lf = [_rand(rng, 4, 12), _rand(rng, 3, 12), _rand(rng, 12)]
    lb = [_rand(rng, 4, 12), _rand(rng, 3, 12), _rand(rng, 12)]
    gw = [_rand(rng, 4, 6), _rand(rng, 2, 6), _rand(rng, 2, 6)]
    kd, bd = _rand(rng, 8, 1), _rand(rng, 1)
    embedding = {
        "name": "embedding",
        "trainable": True,
        "batch_input_shape": [None, 5],
        "dtype": "float32",
        "input_dim": 10,
        "output_dim": 4,
        "embeddings_initializer": _init("RandomUniform", minval=-0.05, maxval=0.05, seed=None),
        "embeddings_regularizer": None,
        "activity_regularizer": None,
        "embeddings_constraint": None,
        "mask_zero": False,
        "input_length": 5,
    }
    bi = {
        "name": "bidirectional",
        "trainable": True,
        "dtype": "float32",
        "layer": k2_rnn("LSTM", "lstm", 3),
        "merge_mode": "concat",
    }
    cat = {"name": "concatenate", "trainable": True, "dtype": "float32", "axis": -1}

    def node(*srcs):
        return [[[s, 0, 0, {}] for s in srcs]]

    inp = {"batch_input_shape": [None, 5], "dtype": "int32", "sparse": False, "ragged": False}
    inp["name"] = "tokens"
    layers = [
        {"class_name": "InputLayer", "config": inp, "name": "tokens", "inbound_nodes": []},
        {
            "class_name": "Embedding",
            "config": embedding,
            "name": "embedding",
            "inbound_nodes": node("tokens"),
        },
        {
            "class_name": "Bidirectional",
            "config": bi,
            "name": "bidirectional",
            "inbound_nodes": node("embedding"),
        },
        {**k2_rnn("GRU", "gru", 2), "name": "gru", "inbound_nodes": node("embedding")},
        {
            "class_name": "Concatenate",
            "config": cat,
            "name": "concatenate",
            "inbound_nodes": node("bidirectional", "gru"),
        },
        {**k2_dense("dense", 1, "sigmoid"), "name": "dense", "inbound_nodes": node("concatenate")},
    ]
    config = {
        "name": "model",
        "layers": layers,
        "input_layers": [["tokens", 0, 0]],
        "output_layers": [["dense", 0, 0]],
    }
    names = ("kernel", "recurrent_kernel", "bias")
    write_keras2(
        path,
        {"class_name": "Functional", "config": config},
        [
            ("tokens", []),
            ("embedding", [("embedding/embeddings:0", emb)]),
            (
                "bidirectional",
                [
                    (f"bidirectional/forward_lstm/lstm_cell_1/{n}:0", a)
                    for n, a in zip(names, lf, strict=True)
                ]
                + [
                    (f"bidirectional/backward_lstm/lstm_cell_2/{n}:0", a)
                    for n, a in zip(names, lb, strict=True)
                ],
            ),
            ("gru", [(f"gru/gru_cell/{n}:0", a) for n, a in zip(names, gw, strict=True)]),
            ("concatenate", []),
            ("dense", [("dense/kernel:0", kd), ("dense/bias:0", bd)]),
        ],
    )

    def forward(ids):
        e = emb[ids]
        f = np_rnn("LSTM", e, lf, 3)
        bwd = np_rnn("LSTM", e[:, ::-1], lb, 3)
        g = np_rnn("GRU", e, gw, 2)
        return _sig(np.concatenate([f, bwd, g], axis=-1) @ kd + bd)

    return forward


def test_load_keras2_functional_recurrent(device, tmp_path):
    path = tmp_path / "rnn.h5"
    forward = recurrent_fixture(path)
    ids = np.random.default_rng(15).integers(0, 10, (4, 5)).astype("int32")
    with ember.device(device):
        model = keras.models.load_model(path)
    got = model.predict(ids, verbose=0)
    np.testing.assert_allclose(got, forward(ids), rtol=1e-4, atol=1e-5)
    assert model.get_layer("bidirectional").forward_layer.units == 3


def test_load_keras22_sequential_rnns_reset_after_false(tmp_path):
    """Keras 2.2's Sequential: SimpleRNN with batch_input_shape, GRU(reset_after=False) with
    its (3u,) bias, Dense; `lstm_1/kernel:0`-style names and the config as a bare list."""
    rng = np.random.default_rng(16)
    sw = [_rand(rng, 3, 4), _rand(rng, 4, 4), _rand(rng, 4)]
    gw = [_rand(rng, 4, 6), _rand(rng, 2, 6), _rand(rng, 6)]
    kd, bd = _rand(rng, 2, 2), _rand(rng, 2)
    layers = [
        k2_rnn(
            "SimpleRNN", "simple_rnn_1", 4, return_sequences=True, batch_input_shape=[None, 6, 3]
        ),
        k2_rnn("GRU", "gru_1", 2, reset_after=False),
        k2_dense("dense_1", 2, "linear"),
    ]
    for la in layers[:2]:  # Keras 2.2 had no time_major
        del la["config"]["time_major"]
    path = tmp_path / "old.h5"
    names = ("kernel", "recurrent_kernel", "bias")
    write_keras2(
        path,
        {"class_name": "Sequential", "config": layers},
        [
            ("simple_rnn_1", [(f"simple_rnn_1/{n}:0", a) for n, a in zip(names, sw, strict=True)]),
            ("gru_1", [(f"gru_1/{n}:0", a) for n, a in zip(names, gw, strict=True)]),
            ("dense_1", [("dense_1/kernel:0", kd), ("dense_1/bias:0", bd)]),
        ],
        version=b"2.2.4",
    )
    x = np.random.default_rng(17).standard_normal((3, 6, 3)).astype("float32")
    model = keras.models.load_model(path)
    seq = np_rnn("SimpleRNN", x, sw, 4, return_sequences=True)
    ref = np_rnn("GRU", seq, gw, 2, reset_after=False) @ kd + bd
    np.testing.assert_allclose(model.predict(x, verbose=0), ref, rtol=1e-4, atol=1e-5)


# ---- ember's own .h5 files ----------------------------------------------------------------------


def test_save_h5_round_trip_sequential_and_layout(device, tmp_path):
    x = np.random.default_rng(18).standard_normal((6, 5, 3)).astype("float32")
    y = np.random.default_rng(19).integers(0, 3, 6)
    with ember.device(device):
        model = keras.Sequential(
            [
                keras.Input(shape=(5, 3)),
                L.LSTM(4, return_sequences=True),
                L.GRU(3),
                L.Dense(8, activation="relu"),
                L.BatchNormalization(),
                L.Dropout(0.2),
                L.Dense(3, activation="softmax"),
            ]
        )
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    model.fit(x, y, epochs=1, batch_size=3, verbose=0)
    path = tmp_path / "model.h5"
    model.save(path)
    with h5py.File(path, "r") as f:  # Keras 2's layout
        config = json.loads(f.attrs["model_config"])
        assert config["class_name"] == "Sequential"
        first = config["config"]["layers"][0]
        assert first["class_name"] == "InputLayer" and first["config"]["batch_input_shape"] == [
            None,
            5,
            3,
        ]
        training = json.loads(f.attrs["training_config"])
        assert training["loss"] == "sparse_categorical_crossentropy"
        assert training["optimizer_config"]["class_name"] == "Adam"
        g = f["model_weights"]
        names = [n.decode() for n in g.attrs["layer_names"]]
        assert names == [la.name for la in model.layers]
        wn = [n.decode() for n in g[model.layers[3].name].attrs["weight_names"]]
        assert wn[-2:] == [
            f"{model.layers[3].name}/moving_mean:0",
            f"{model.layers[3].name}/moving_variance:0",
        ]
        assert "optimizer_weights" in f
    with ember.device(device):
        back = keras.models.load_model(path)
    np.testing.assert_allclose(back.predict(x, verbose=0), model.predict(x, verbose=0), rtol=1e-6)
    assert back.compiled and back.optimizer.iterations == model.optimizer.iterations
    # training resumes identically (the optimizer's slots came back)
    keras.utils.set_random_seed(1)  # the same dropout masks for both
    model.fit(x, y, epochs=1, batch_size=3, verbose=0, shuffle=False)
    keras.utils.set_random_seed(1)
    back.fit(x, y, epochs=1, batch_size=3, verbose=0, shuffle=False)
    for a, b in zip(model.get_weights(), back.get_weights(), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_save_h5_round_trip_functional_and_weights_only(tmp_path):
    inp = keras.Input(shape=(6, 6, 2), name="img")
    aux = keras.Input(shape=(3,), name="aux")
    h = L.Conv2D(4, 3, padding="same", activation="relu")(inp)
    h = L.MaxPooling2D()(h)
    h = L.Flatten()(h)
    h = L.Concatenate()([h, L.Dense(5)(aux)])
    out1, out2 = L.Dense(2, name="a")(h), L.Dense(1, name="b")(h)
    model = keras.Model([inp, aux], [out1, out2])
    rng = np.random.default_rng(20)
    xs = [rng.standard_normal((2, 6, 6, 2)).astype("float32"), rng.standard_normal((2, 3))]
    path = tmp_path / "f.h5"
    model.save(path)
    back = keras.models.load_model(path)
    for a, b in zip(back.predict(xs, verbose=0), model.predict(xs, verbose=0), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    with h5py.File(path, "r") as f:
        config = json.loads(f.attrs["model_config"])["config"]
        assert config["input_layers"] == [["img", 0, 0], ["aux", 0, 0]]
        cat = next(la for la in config["layers"] if la["class_name"] == "Concatenate")
        assert [e[0] for e in cat["inbound_nodes"][0]] == ["flatten", "dense"]
    # save_weights("w.h5"): the weights group at the root; load_weights by position / name
    model.save_weights(tmp_path / "w.h5")
    with h5py.File(tmp_path / "w.h5", "r") as f:
        assert "layer_names" in f.attrs and "model_weights" not in f
    fresh = keras.models.model_from_json(model.to_json())
    fresh.load_weights(tmp_path / "w.h5")
    for a, b in zip(fresh.get_weights(), model.get_weights(), strict=True):
        np.testing.assert_array_equal(a, b)
    fresh2 = keras.models.model_from_json(model.to_json())
    fresh2.load_weights(tmp_path / "f.h5", by_name=True)  # a full-model file works too
    np.testing.assert_array_equal(
        fresh2.get_layer("a").kernel.numpy(), model.get_layer("a").kernel.numpy()
    )


def test_legacy_h5_bad_inputs(tmp_path):
    model = keras.Sequential([keras.Input(shape=(3,)), L.Dense(2)])
    with pytest.raises(FileNotFoundError):
        keras.models.load_model(tmp_path / "missing.h5")
    (tmp_path / "junk.h5").write_bytes(b"not hdf5")
    with pytest.raises(ValueError, match="HDF5"):
        keras.models.load_model(tmp_path / "junk.h5")
    with h5py.File(tmp_path / "noconfig.h5", "w") as f:
        f.create_group("model_weights")
    with pytest.raises(ValueError, match="model config"):
        keras.models.load_model(tmp_path / "noconfig.h5")
    # a weights file for another architecture
    other = keras.Sequential([keras.Input(shape=(3,)), L.Dense(2), L.Dense(2)])
    other.save_weights(tmp_path / "other.h5")
    with pytest.raises(ValueError, match="layer count"):
        model.load_weights(tmp_path / "other.h5")
    wide = keras.Sequential([keras.Input(shape=(4,)), L.Dense(2)])
    wide.save_weights(tmp_path / "wide.h5")
    with pytest.raises(ValueError, match="shape"):
        model.load_weights(tmp_path / "wide.h5")
    kept = model.get_weights()
    with pytest.warns(UserWarning, match="skipping"):
        model.load_weights(tmp_path / "wide.h5", skip_mismatch=True)
    np.testing.assert_array_equal(model.get_weights()[0], kept[0])
    with pytest.raises(FileExistsError):
        model.save(tmp_path / "wide.h5", overwrite=False)
    with pytest.raises(ValueError, match="by_name"):
        model.load_weights(tmp_path / "x.weights.safetensors", by_name=True)
    with pytest.raises(ValueError, match="filepath"):
        model.save_weights(tmp_path / "w.bin")
    # a Keras 2 config ember cannot honour raises instead of computing something else
    bad = k2_rnn("LSTM", "lstm", 2, time_major=True, batch_input_shape=[None, 4, 3])
    write_keras2(tmp_path / "tm.h5", {"class_name": "Sequential", "config": [bad]}, [("lstm", [])])
    with pytest.raises(ValueError, match="time_major"):
        keras.models.load_model(tmp_path / "tm.h5")
