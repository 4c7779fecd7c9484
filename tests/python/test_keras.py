"""ember.keras: the seed example, Sequential/compile/fit/evaluate/predict, Keras's loss values and
optimizer updates against NumPy formulas of Keras's definitions, summary and progress output."""

from __future__ import annotations

import io
import re

import ember
import numpy as np
import pytest
from ember import keras

L = keras.layers


@pytest.fixture(autouse=True)
def _fresh_names():
    keras.utils.clear_session()
    keras.utils.set_random_seed(0)


def digits(device=None):
    (xtr, ytr), (xte, yte) = keras.datasets.digits.load_data()
    xtr = xtr.reshape(len(xtr), 64).astype(np.float32) / 16.0
    xte = xte.reshape(len(xte), 64).astype(np.float32) / 16.0
    return (xtr, ytr), (xte, yte)


def on(device, *arrays):
    return [ember.asarray(a, device=device) for a in arrays]


# ---- the seed example ---------------------------------------------------------------------------


def test_seed_example_mnist_shaped(device, capsys):
    rng = np.random.default_rng(0)
    x_train = rng.random((96, 784), dtype=np.float32)
    y_train = rng.integers(0, 10, 96)
    with ember.device(device):
        print("Num GPUs Available: ", len(ember.config.list_physical_devices("GPU")))
        model = ember.keras.models.Sequential(
            [
                ember.keras.layers.Dense(128, activation="relu"),
                ember.keras.layers.Dense(10, activation="softmax"),
            ]
        )
        model.compile(
            optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"]
        )
        history = model.fit(x_train, y_train, epochs=2)
    out = capsys.readouterr().out
    assert "Num GPUs Available:" in out
    assert out.count("Epoch ") == 2 and "Epoch 2/2" in out
    # one line per epoch when stdout is not a terminal, Keras's format
    assert re.search(r"3/3 ━{20} \d+s \d+(ms|us|s)/step - accuracy: \d\.\d{4} - loss: \d", out)
    assert set(history.history) == {"accuracy", "loss"}
    assert len(history.history["loss"]) == 2
    assert model.layers[0].kernel.shape == (784, 128)
    assert str(model.layers[0].kernel.device).startswith(device)


@pytest.mark.parametrize("kind", ["numpy", "ember", "loader"])
def test_digits_converge(device, kind):
    (xtr, ytr), (xte, yte) = digits()
    model = keras.Sequential([L.Dense(64, activation="relu"), L.Dense(10, activation="softmax")])
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    if kind == "numpy":
        h = model.fit(xtr, ytr, epochs=8, verbose=0)
    elif kind == "ember":
        x, y = on(device, xtr, ytr)
        h = model.fit(x, y, epochs=8, verbose=0)
    else:
        ds = ember.data.TensorDataset(*on(device, xtr, ytr.astype(np.int64)))
        loader = ember.data.DataLoader(ds, batch_size=32, shuffle=True)
        h = model.fit(loader, epochs=8, verbose=0)
    assert h.history["loss"][-1] < h.history["loss"][0] / 3
    loss, acc = model.evaluate(*on(device, xte, yte), verbose=0)
    assert acc > 0.9, acc
    assert loss < 0.4
    pred = model.predict(on(device, xte)[0], verbose=0)
    assert isinstance(pred, np.ndarray) and pred.shape == (len(xte), 10)
    np.testing.assert_allclose(pred.sum(axis=1), 1.0, rtol=1e-5)
    assert np.mean(pred.argmax(1) == yte) == pytest.approx(acc, abs=1e-6)


def test_dense_forward_matches_numpy(device):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((5, 7)).astype(np.float32)
    with ember.device(device):
        layer = L.Dense(3, activation="tanh")
        y = layer(x)
    assert y.device == ember.Device(device)
    w, b = layer.get_weights()
    assert w.shape == (7, 3) and b.shape == (3,)
    np.testing.assert_array_equal(b, 0)  # zeros bias
    limit = np.sqrt(6 / (7 + 3))  # glorot_uniform
    assert np.abs(w).max() <= limit
    np.testing.assert_allclose(ember.asnumpy(y), np.tanh(x @ w + b), rtol=1e-5, atol=1e-6)
    # rank-3 inputs: the kernel applies to the last axis
    x3 = rng.standard_normal((2, 4, 7)).astype(np.float32)
    np.testing.assert_allclose(
        ember.asnumpy(layer(ember.asarray(x3, device=device))), np.tanh(x3 @ w), atol=1e-5
    )
    with pytest.raises(ValueError, match=r"expected axis -1 of input shape to have value 7"):
        layer(np.ones((2, 5), np.float32))


def test_glorot_uniform_statistics():
    w = keras.initializers.GlorotUniform(seed=3)((200, 300))
    a = ember.asnumpy(w)
    assert a.dtype == np.float32
    limit = np.sqrt(6 / 500)
    assert a.min() >= -limit and a.max() <= limit
    assert np.std(a) == pytest.approx(limit / np.sqrt(3), rel=0.03)
    he = ember.asnumpy(keras.initializers.HeNormal(seed=1)((400, 100)))
    assert np.abs(he).max() <= 2 * np.sqrt(2 / 400) / 0.87962566103423978 + 1e-6
    assert np.std(he) == pytest.approx(np.sqrt(2 / 400), rel=0.05)
    conv = keras.initializers.get("glorot_uniform")((3, 3, 4, 8))
    assert np.abs(ember.asnumpy(conv)).max() <= np.sqrt(6 / (9 * 4 + 9 * 8))
    with pytest.raises(ValueError, match="known initializers"):
        keras.initializers.get("glorot")


# ---- losses against NumPy formulas of Keras's definitions ---------------------------------------

EPS = 1e-7


def np_losses(y, p, yi):
    clip = np.clip(p, EPS, 1 - EPS)
    pn = p / p.sum(-1, keepdims=True)
    e = np.abs(p - y)
    return {
        "mse": np.mean((p - y) ** 2, -1),
        "mae": np.mean(e, -1),
        "binary_crossentropy": np.mean(-(y * np.log(clip) + (1 - y) * np.log(1 - clip)), -1),
        "categorical_crossentropy": -np.sum(y * np.log(np.clip(pn, EPS, 1 - EPS)), -1),
        "sparse_categorical_crossentropy": -np.log(
            np.clip(pn, EPS, 1 - EPS)[np.arange(len(yi)), yi]
        ),
        "huber": np.mean(np.where(e <= 1.0, 0.5 * e**2, e - 0.5), -1),
        "kl_divergence": np.sum(
            np.clip(y, EPS, 1) * np.log(np.clip(y, EPS, 1) / np.clip(p, EPS, 1)), -1
        ),
    }


@pytest.mark.parametrize(
    "name",
    [
        "mse",
        "mae",
        "binary_crossentropy",
        "categorical_crossentropy",
        "sparse_categorical_crossentropy",
        "huber",
        "kl_divergence",
    ],
)
def test_loss_values_match_numpy(device, name):
    rng = np.random.default_rng(2)
    logits = rng.standard_normal((6, 4)).astype(np.float32)
    p = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
    yi = rng.integers(0, 4, 6)
    y = np.eye(4, dtype=np.float32)[yi]
    if name in ("mse", "mae", "huber", "binary_crossentropy"):
        y = rng.random((6, 4)).astype(np.float32) if name != "binary_crossentropy" else y
    want = np_losses(y, p, yi)[name]
    labels = yi if name.startswith("sparse") else y
    loss = keras.losses.get(name)
    got = loss(*on(device, labels, p))
    assert got.shape == ()
    np.testing.assert_allclose(float(got), want.mean(), rtol=1e-5)
    sw = rng.random(6).astype(np.float32)
    got_w = loss(*on(device, labels, p), sample_weight=ember.asarray(sw, device=device))
    # Keras's sum_over_batch_size: weighted sum / number of values
    np.testing.assert_allclose(float(got_w), (want * sw).sum() / 6, rtol=1e-5)
    none = type(loss)(reduction="none")(*on(device, labels, p))
    np.testing.assert_allclose(ember.asnumpy(none), want, rtol=1e-5, atol=1e-7)


def test_from_logits_and_shape_errors(device):
    rng = np.random.default_rng(3)
    z = rng.standard_normal((5, 3)).astype(np.float32)
    yi = rng.integers(0, 3, 5)
    logp = z - np.log(np.exp(z).sum(-1, keepdims=True))
    f = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    np.testing.assert_allclose(
        float(f(*on(device, yi, z))), -logp[np.arange(5), yi].mean(), rtol=1e-5
    )
    yb = rng.integers(0, 2, (5, 3)).astype(np.float32)
    bce = keras.losses.BinaryCrossentropy(from_logits=True)
    s = 1 / (1 + np.exp(-z))
    ref = np.mean(-(yb * np.log(s) + (1 - yb) * np.log(1 - s)))
    np.testing.assert_allclose(float(bce(*on(device, yb, z))), ref, rtol=1e-5)
    # (n, 1) sparse labels are accepted, as Keras does
    np.testing.assert_allclose(float(f(*on(device, yi[:, None], z))), float(f(*on(device, yi, z))))
    with pytest.raises(ValueError, match=r"target.shape=\(5, 2\), output.shape=\(5, 3\)"):
        keras.losses.get("mse")(*on(device, np.zeros((5, 2), np.float32), z))
    with pytest.raises(ValueError, match="known losses"):
        keras.losses.get("cross_entropy")


def test_fit_label_shape_mismatch_names_both_shapes(device):
    x = np.zeros((8, 4), np.float32)
    model = keras.Sequential([L.Dense(3)])
    model.compile("sgd", "mse")
    with pytest.raises(ValueError, match=r"target.shape=\(8, 2\).*output.shape=\(8, 3\)"):
        model.fit(x, np.zeros((8, 2), np.float32), verbose=0)


def test_unknown_strings_list_known():
    model = keras.Sequential([L.Dense(1)])
    with pytest.raises(ValueError, match="known optimizers: adagrad, adam, adamw, rmsprop, sgd"):
        model.compile(optimizer="adamax2", loss="mse")
    model.compile(optimizer="adam", loss="mse", metrics=["acuracy"])
    with pytest.raises(ValueError, match="known metrics"):
        model.fit(np.zeros((4, 2), np.float32), np.zeros((4, 1), np.float32), verbose=0)


# ---- optimizers: Keras's update rules -----------------------------------------------------------


def _run_opt(opt, device, steps=3):
    rng = np.random.default_rng(4)
    w0 = rng.standard_normal(5).astype(np.float32)
    grads = [rng.standard_normal(5).astype(np.float32) for _ in range(steps)]
    v = keras.Variable(ember.asarray(w0.copy(), device=device), name="w")
    for g in grads:
        opt.apply([ember.asarray(g, device=device)], [v])
    return w0, grads, v.numpy()


def test_adam_matches_keras_formula(device):
    opt = keras.optimizers.Adam()
    assert (opt.learning_rate, opt.beta_1, opt.beta_2, opt.epsilon) == (1e-3, 0.9, 0.999, 1e-7)
    w, grads, got = _run_opt(opt, device)
    m = np.zeros_like(w)
    v = np.zeros_like(w)
    for t, g in enumerate(grads, 1):
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        alpha = 1e-3 * np.sqrt(1 - 0.999**t) / (1 - 0.9**t)
        w = w - alpha * m / (np.sqrt(v) + 1e-7)
    np.testing.assert_allclose(got, w, rtol=1e-5, atol=1e-7)
    assert opt.iterations == 3


def test_rmsprop_and_adagrad_match_keras_formulas(device):
    opt = keras.optimizers.get("rmsprop")
    assert (opt.rho, opt.epsilon, opt.learning_rate) == (0.9, 1e-7, 1e-3)
    w, grads, got = _run_opt(opt, device)
    v = np.zeros_like(w)
    for g in grads:
        v = 0.9 * v + 0.1 * g * g
        w = w - 1e-3 * g / np.sqrt(v + 1e-7)
    np.testing.assert_allclose(got, w, rtol=1e-5, atol=1e-7)
    w, grads, got = _run_opt(keras.optimizers.Adagrad(learning_rate=0.1), device)
    acc = np.full_like(w, 0.1)
    for g in grads:
        acc = acc + g * g
        w = w - 0.1 * g / np.sqrt(acc + 1e-7)
    np.testing.assert_allclose(got, w, rtol=1e-5, atol=1e-7)


def test_sgd_momentum_and_adamw(device):
    w, grads, got = _run_opt(keras.optimizers.SGD(0.1, momentum=0.9), device)
    vel = np.zeros_like(w)
    for g in grads:
        vel = 0.9 * vel - 0.1 * g
        w = w + vel
    np.testing.assert_allclose(got, w, rtol=1e-5, atol=1e-6)
    opt = keras.optimizers.AdamW()
    assert opt.weight_decay == 0.004
    w, grads, got = _run_opt(opt, device, steps=1)
    w = w * (1 - 1e-3 * 0.004)
    m, v = 0.1 * grads[0], 0.001 * grads[0] ** 2
    w = w - 1e-3 * np.sqrt(0.001) / 0.1 * m / (np.sqrt(v) + 1e-7)
    np.testing.assert_allclose(got, w, rtol=1e-5, atol=1e-7)


# ---- model API ----------------------------------------------------------------------------------


def test_sequential_building_and_weights(device):
    with ember.device(device):
        m = keras.Sequential()
        m.add(keras.Input(shape=(16,)))
        m.add(L.Dense(8, activation="relu"))
        m.add(L.Dense(4))
        assert m.built  # built as soon as the input shape is known
        m2 = keras.Sequential([L.Dense(8, "relu", input_shape=(16,)), L.Dense(4)])
        m3 = keras.Sequential([L.Dense(8, input_dim=16), L.Dense(4)])
    assert m2.built and m3.built
    assert [w.shape for w in m.weights] == [(16, 8), (8,), (8, 4), (4,)]
    assert len(m.trainable_weights) == 4 and m.non_trainable_weights == []
    assert m.count_params() == 16 * 8 + 8 + 8 * 4 + 4
    ws = m.get_weights()
    m2.set_weights(ws)
    x = np.random.default_rng(0).random((3, 16), dtype=np.float32)
    np.testing.assert_allclose(m2.predict(x, verbose=0), m.predict(x, verbose=0), rtol=1e-6)
    with pytest.raises(ValueError, match="expected 4 variables"):
        m2.set_weights(ws[:2])
    assert m.layers[0].name == "dense" and m.layers[1].name == "dense_1"
    assert m.get_layer("dense_1") is m.layers[1]
    unbuilt = keras.Sequential([L.Dense(2)])
    assert not unbuilt.built
    unbuilt(np.ones((1, 3), np.float32))
    assert unbuilt.built and unbuilt.layers[0].kernel.shape == (3, 2)
    with pytest.raises(ValueError, match="unique names"):
        keras.Sequential([L.Dense(2, name="a"), L.Dense(2, name="a")])
    with pytest.raises(ValueError, match="expected shape=\\(None, 16\\), found shape=\\(3, 5\\)"):
        m.predict(np.ones((3, 5), np.float32), verbose=0)


def test_summary_table(capsys):
    m = keras.Sequential(
        [keras.Input(shape=(784,)), L.Dense(128, activation="relu"), L.Dense(10)], name="mlp"
    )
    m.summary()
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0] == 'Model: "mlp"'
    assert lines[1].startswith("┏") and "┳" in lines[1]
    assert re.match(r"┃ Layer \(type\) +┃ Output Shape +┃ +Param # ┃", lines[2])
    assert re.match(r"│ dense \(Dense\) +│ \(None, 128\) +│ +100,480 │", lines[4])
    assert re.match(r"│ dense_1 \(Dense\) +│ \(None, 10\) +│ +1,290 │", lines[6])
    assert " Total params: 101,770 (397.54 KB)" in lines
    assert " Trainable params: 101,770 (397.54 KB)" in lines
    assert " Non-trainable params: 0 (0.00 B)" in lines
    keras.Sequential([L.Dense(3)], name="lazy").summary()
    out = capsys.readouterr().out
    assert "0 (unbuilt)" in out and "?" in out


def test_evaluate_predict_batches_and_returns(device):
    (xtr, ytr), _ = digits()
    x, y = on(device, xtr[:100], ytr[:100])
    m = keras.Sequential([L.Dense(10, activation="softmax")])
    m.compile("sgd", "sparse_categorical_crossentropy")
    loss = m.evaluate(x, y, verbose=0)
    assert isinstance(loss, float)
    m.compile(
        "sgd",
        "sparse_categorical_crossentropy",
        metrics=["accuracy", "sparse_top_k_categorical_accuracy"],
    )
    res = m.evaluate(x, y, batch_size=7, verbose=0)
    assert isinstance(res, list) and len(res) == 3
    d = m.evaluate(x, y, verbose=0, return_dict=True)
    assert list(d) == ["loss", "accuracy", "sparse_top_k_categorical_accuracy"]
    p = m.predict(x, batch_size=7, verbose=0)
    ref = keras.losses.sparse_categorical_crossentropy(ytr[:100], p)
    np.testing.assert_allclose(res[0], ember.asnumpy(ref).mean(), rtol=1e-5)
    np.testing.assert_allclose(res[1], np.mean(p.argmax(1) == ytr[:100]), rtol=1e-6)
    assert m.predict_on_batch(x[:4]).shape == (4, 10)
    r1 = m.train_on_batch(x[:32], y[:32])
    r2 = m.test_on_batch(x[:32], y[:32], return_dict=True)
    assert len(r1) == 3 and set(r2) == set(d)


def test_validation_split_sample_and_class_weight(device):
    (xtr, ytr), _ = digits()
    x, y = xtr[:200], ytr[:200]
    m = keras.Sequential([L.Dense(10, activation="softmax")])
    m.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])
    h = m.fit(x, y, epochs=2, validation_split=0.25, verbose=0, shuffle=False)
    assert set(h.history) == {"loss", "accuracy", "val_loss", "val_accuracy"}
    # validation_split takes the LAST 25 %: the same numbers as validation_data of that part
    vl = m.evaluate(x[150:], y[150:], verbose=0)
    assert h.history["val_loss"][-1] == pytest.approx(vl[0], rel=1e-5)
    h2 = m.fit(
        x,
        y,
        epochs=1,
        validation_data=(x[:20], y[:20]),
        verbose=0,
        sample_weight=np.ones(200, np.float32),
        class_weight={0: 2.0},
    )
    assert "val_loss" in h2.history
    # zero weights for every sample: the loss is exactly zero
    m0 = keras.Sequential([L.Dense(10, activation="softmax")])
    m0.compile("sgd", "sparse_categorical_crossentropy")
    h0 = m0.fit(x, y, sample_weight=np.zeros(200, np.float32), verbose=0)
    assert h0.history["loss"] == [0.0]


def test_steps_per_epoch_and_initial_epoch(capsys):
    (xtr, ytr), _ = digits()
    m = keras.Sequential([L.Dense(10, activation="softmax")])
    m.compile("adam", "sparse_categorical_crossentropy")
    h = m.fit(xtr[:64], ytr[:64], batch_size=16, epochs=3, initial_epoch=1, steps_per_epoch=2)
    out = capsys.readouterr().out
    assert h.epoch == [1, 2]
    assert "Epoch 2/3" in out and "Epoch 1/3" not in out and "2/2 " in out


def test_verbose_2_and_progress_on_terminal():
    (xtr, ytr), _ = digits()
    m = keras.Sequential([L.Dense(10, activation="softmax")])
    m.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])
    buf = io.StringIO()
    m.fit(
        xtr[:64],
        ytr[:64],
        epochs=2,
        verbose=2,
        callbacks=[keras.callbacks.ProgbarLogger(stream=buf)],
    )
    lines = buf.getvalue().splitlines()
    assert lines[0] == "Epoch 1/2"
    assert re.fullmatch(
        r"2/2 - \d+s - \d+(ms|us|s)/step - accuracy: \d\.\d{4} - loss: \S+", lines[1]
    )

    class Tty(io.StringIO):
        def isatty(self):
            return True

    tty = Tty()
    logger = keras.callbacks.ProgbarLogger(stream=tty)
    m.fit(xtr, ytr, epochs=1, verbose=1, callbacks=[logger])
    text = tty.getvalue()
    assert "\r" in text and "\x1b[32m" in text  # redrawn in place, coloured bar
    # at most one redraw per 100 ms: far fewer draws than steps, each reading the values once
    assert (
        logger.progbar.draws <= 1 + int(logger.progbar._last_draw - logger.progbar._start) * 10 + 1
    )


def test_compile_variants_and_metrics(device):
    rng = np.random.default_rng(5)
    x = rng.random((64, 6), dtype=np.float32)
    yb = (x.sum(1, keepdims=True) > 3).astype(np.float32)
    m = keras.Sequential([L.Dense(1, activation="sigmoid")])
    m.compile(
        optimizer=keras.optimizers.SGD(learning_rate=0.5),
        loss=keras.losses.BinaryCrossentropy(),
        metrics=[
            "accuracy",
            keras.metrics.AUC(),
            keras.metrics.Precision(),
            keras.metrics.Recall(),
            "mae",
            lambda yt, yp: ember.abs(yt - yp),
        ],
    )
    h = m.fit(*on(device, x, yb), epochs=3, verbose=0)
    assert set(h.history) == {"accuracy", "auc", "precision", "recall", "mae", "<lambda>", "loss"}
    # accuracy resolved to binary accuracy: it matches a NumPy count
    res = m.evaluate(*on(device, x, yb), verbose=0, return_dict=True)
    p = m.predict(x, verbose=0)
    np.testing.assert_allclose(res["accuracy"], np.mean((p > 0.5) == yb), rtol=1e-6)
    tp = np.sum((p > 0.5) & (yb == 1))
    np.testing.assert_allclose(res["precision"], tp / max(1, np.sum(p > 0.5)), rtol=1e-5)
    np.testing.assert_allclose(res["recall"], tp / max(1, np.sum(yb == 1)), rtol=1e-5)


def test_auc_matches_rank_statistic(device):
    rng = np.random.default_rng(6)
    y = rng.integers(0, 2, 300).astype(np.float32)
    p = np.clip(0.3 * y + 0.7 * rng.random(300), 0, 1).astype(np.float32)
    auc = keras.metrics.AUC(num_thresholds=1000)
    auc.update_state(*on(device, y[:150], p[:150]))
    auc.update_state(*on(device, y[150:], p[150:]))
    pos, neg = p[y == 1], p[y == 0]
    ref = np.mean(pos[:, None] > neg[None, :]) + 0.5 * np.mean(pos[:, None] == neg[None, :])
    assert float(auc.result()) == pytest.approx(ref, abs=2e-3)


def test_multi_output_losses_and_weights(device):
    inp = keras.Input(shape=(4,), name="x")
    h = L.Dense(8, activation="relu")(inp)
    a = L.Dense(1, name="reg")(h)
    b = L.Dense(3, activation="softmax", name="cls")(h)
    m = keras.Model(inp, [a, b])
    m.compile(
        "adam",
        loss={"reg": "mse", "cls": "sparse_categorical_crossentropy"},
        loss_weights={"reg": 0.5, "cls": 2.0},
        metrics={"cls": ["accuracy"]},
    )
    rng = np.random.default_rng(7)
    x = rng.random((40, 4), dtype=np.float32)
    ya, yb = x.sum(1, keepdims=True), rng.integers(0, 3, 40)
    h = m.fit(x, [ya, yb], epochs=2, verbose=0)
    assert set(h.history) == {"loss", "reg_loss", "cls_loss", "cls_accuracy"}
    d = m.evaluate(x, [ya, yb], verbose=0, return_dict=True)
    assert d["loss"] == pytest.approx(0.5 * d["reg_loss"] + 2.0 * d["cls_loss"], rel=1e-5)
    pa, pb = m.predict(x, verbose=0)
    assert pa.shape == (40, 1) and pb.shape == (40, 3)


def test_confusion_metrics_with_sample_weight(device):
    rng = np.random.default_rng(9)
    y = rng.integers(0, 2, (20, 3)).astype(np.float32)
    p = rng.random((20, 3)).astype(np.float32)
    sw = rng.random(20).astype(np.float32)
    prec = keras.metrics.Precision(thresholds=[0.3, 0.7])
    rec = keras.metrics.Recall()
    for m in (prec, rec):
        m.update_state(*on(device, y, p), sample_weight=ember.asarray(sw, device=device))
    w = np.broadcast_to(sw[:, None], y.shape)
    for t, got in zip([0.3, 0.7], ember.asnumpy(prec.result()), strict=True):
        tp, fp = np.sum(w * ((p > t) & (y == 1))), np.sum(w * ((p > t) & (y == 0)))
        assert got == pytest.approx(tp / (tp + fp), rel=1e-5)
    tp, fn = np.sum(w * ((p > 0.5) & (y == 1))), np.sum(w * ((p <= 0.5) & (y == 1)))
    assert float(rec.result()) == pytest.approx(tp / (tp + fn), rel=1e-5)
    m = keras.metrics.Mean()
    m.update_state(ember.asarray([1.0, 3.0], device=device), sample_weight=[3.0, 1.0])
    assert float(m.result()) == pytest.approx(1.5)
    m.reset_state()
    assert float(m.result()) == 0.0


def test_example_script(capsys):
    import importlib.util
    import pathlib

    path = pathlib.Path(__file__).resolve().parents[2] / "examples" / "keras_digits.py"
    spec = importlib.util.spec_from_file_location("keras_digits", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    accuracy = mod.main(["--epochs", "5", "--device", "/CPU:0"])
    out = capsys.readouterr().out
    assert "Num GPUs Available:" in out and "Epoch 5/5" in out and 'Model: "sequential"' in out
    assert accuracy > 0.9


def test_reads_back_once_per_redraw(device, monkeypatch):
    from ember.keras import _trainer

    reads = []
    real = _trainer.asnumpy
    monkeypatch.setattr(_trainer, "asnumpy", lambda a: reads.append(a.shape) or real(a))
    (xtr, ytr), _ = digits()
    x, y = on(device, xtr, ytr)
    m = keras.Sequential([L.Dense(16, activation="relu"), L.Dense(10, activation="softmax")])
    m.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])

    class Tty(io.StringIO):
        def isatty(self):
            return True

    draws = []

    class Logger(keras.callbacks.ProgbarLogger):
        def on_epoch_end(self, epoch, logs=None):
            super().on_epoch_end(epoch, logs)
            draws.append(self.progbar.draws)

    with ember.debug.ledger() as led:
        m.fit(x, y, epochs=2, callbacks=[Logger(stream=Tty())])
    # each redraw inside an epoch reads all values in one copy; the epoch end reads once more
    # (its final line uses those numbers); nothing else comes back
    mid_epoch_draws = sum(d - 1 for d in draws)
    assert len(reads) == mid_epoch_draws + 2
    assert all(r == (2,) for r in reads)  # loss and accuracy together
    # no synchronization per step (57 steps an epoch): the only implicit ones are the bounds
    # checks of the shuffle's gathers of x and y, once per epoch
    assert led.summary()["implicit_syncs"] <= 2 * 4


def test_weighted_metrics_and_to_categorical(device):
    x = np.eye(4, dtype=np.float32)
    y = np.array([0, 1, 1, 0])
    m = keras.Sequential([L.Dense(2, activation="softmax", kernel_initializer="zeros")])
    m.compile(
        "sgd",
        "sparse_categorical_crossentropy",
        metrics=["accuracy"],
        weighted_metrics=["accuracy"],
    )
    sw = np.array([1.0, 0.0, 0.0, 1.0], np.float32)  # the two samples of class 0 count
    res = m.evaluate(
        *on(device, x, y),
        sample_weight=ember.asarray(sw, device=device),
        verbose=0,
        return_dict=True,
    )
    # equal scores: argmax picks class 0, right for samples 0 and 3
    assert res["accuracy"] == pytest.approx(0.5) and res["weighted_accuracy"] == pytest.approx(1.0)
    assert res["loss"] == pytest.approx(2 * np.log(2) / 4, rel=1e-5)
    np.testing.assert_array_equal(keras.utils.to_categorical([2, 0, 1]), np.eye(3)[[2, 0, 1]])
    oh = keras.utils.to_categorical(ember.asarray([[1], [3]], device=device), num_classes=5)
    assert oh.device == ember.Device(device)
    np.testing.assert_array_equal(ember.asnumpy(oh), np.eye(5, dtype=np.float32)[[1, 3]])
    with pytest.raises(ValueError, match="labels must be in"):
        keras.utils.to_categorical([0, 5], num_classes=3)


def test_bad_input_errors():
    m = keras.Sequential([L.Dense(2)])
    x = np.zeros((6, 3), np.float32)
    with pytest.raises(ValueError, match=r"must call `compile\(\)`"):
        m.fit(x, np.zeros(6), verbose=0)
    m.compile("sgd", "mse")
    with pytest.raises(ValueError, match=r"same number of samples; got sizes \[5, 6\]"):
        m.fit(x, np.zeros((5, 2), np.float32), verbose=0)
    with pytest.raises(ValueError, match="batch_size must be a positive int, got 0"):
        m.fit(x, np.zeros((6, 2), np.float32), batch_size=0, verbose=0)
    with pytest.raises(TypeError, match="batch_size must be a positive int"):
        m.fit(x, np.zeros((6, 2), np.float32), batch_size=2.5, verbose=0)
    with pytest.raises(ValueError, match="verbose must be"):
        m.fit(x, np.zeros((6, 2), np.float32), verbose=3)
    with pytest.raises(ValueError, match="validation_split must be between 0 and 1"):
        m.fit(x, np.zeros((6, 2), np.float32), validation_split=1.5, verbose=0)
    with pytest.raises(ValueError, match="y must not be given"):
        m.fit([(x, x)], np.zeros(6), verbose=0)
    with pytest.raises(TypeError, match="Unrecognized keyword arguments passed to Dense"):
        L.Dense(2, units2=3)
    with pytest.raises(ValueError, match="expected a positive integer. Received: units=0"):
        L.Dense(0)
    with pytest.raises(ValueError, match="known activations"):
        L.Dense(2, activation="relu7")
    with pytest.raises(ValueError, match="Only instances of `keras.Layer`"):
        keras.Sequential([lambda t: t])
