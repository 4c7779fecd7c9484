"""ember.keras: callbacks (order of hooks, History, EarlyStopping, ModelCheckpoint, schedulers,
CSVLogger, TerminateOnNaN), the functional and subclassing APIs, save/load, and TensorFlow's
device spellings (ember.config, ember.device('/GPU:0'))."""

from __future__ import annotations

import csv
import json
import math
import zipfile

import ember
import numpy as np
import pytest
from ember import keras

L = keras.layers
CB = keras.callbacks


@pytest.fixture(autouse=True)
def _seed():
    keras.utils.clear_session()
    keras.utils.set_random_seed(0)


def data(n=96, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.random((n, 6), dtype=np.float32)
    y = (x[:, :3].sum(1) > x[:, 3:].sum(1)).astype(np.int64)
    return x, y


def mlp(device="cpu", lr=0.01):
    with ember.device(device):
        m = keras.Sequential(
            [keras.Input((6,)), L.Dense(8, activation="relu"), L.Dense(2, activation="softmax")]
        )
    m.compile(keras.optimizers.Adam(lr), "sparse_categorical_crossentropy", metrics=["accuracy"])
    return m


class Recorder(CB.Callback):
    def __init__(self):
        super().__init__()
        self.calls = []

    def __getattribute__(self, name):
        if name.startswith("on_"):
            calls = object.__getattribute__(self, "calls")

            def hook(*args, **kwargs):
                calls.append(name)

            return hook
        return object.__getattribute__(self, name)


def test_hook_order(device):
    x, y = data(64)
    m = mlp(device)
    rec = Recorder()
    m.fit(
        x, y, batch_size=32, epochs=2, validation_data=(x[:32], y[:32]), callbacks=[rec], verbose=0
    )
    epoch = (
        ["on_epoch_begin"]
        + ["on_train_batch_begin", "on_train_batch_end"] * 2
        + ["on_test_begin", "on_test_batch_begin", "on_test_batch_end", "on_test_end"]
        + ["on_epoch_end"]
    )
    assert rec.calls == ["on_train_begin"] + epoch * 2 + ["on_train_end"]
    rec.calls.clear()
    m.evaluate(x, y, callbacks=[rec], verbose=0)
    assert rec.calls == ["on_test_begin"] + ["on_test_batch_begin", "on_test_batch_end"] * 2 + [
        "on_test_end"
    ]
    rec.calls.clear()
    m.predict(x, callbacks=[rec], verbose=0)
    assert rec.calls[0] == "on_predict_begin" and rec.calls[-1] == "on_predict_end"
    assert rec.calls.count("on_predict_batch_end") == 2


def test_history_and_logs(device):
    x, y = data()
    m = mlp(device)
    seen = {}

    class Peek(CB.Callback):
        def on_train_batch_end(self, batch, logs=None):
            seen["batch"] = logs  # running values, still on the device

        def on_epoch_end(self, epoch, logs=None):
            seen["epoch"] = dict(logs)

    h = m.fit(x, y, epochs=3, validation_split=0.25, callbacks=[Peek()], verbose=0)
    assert m.history is h
    assert h.epoch == [0, 1, 2] and h.params["epochs"] == 3 and h.params["steps"] == 3
    assert set(h.history) == {"loss", "accuracy", "val_loss", "val_accuracy"}
    assert all(isinstance(v, float) for vs in h.history.values() for v in vs)
    assert seen["epoch"] == {k: v[-1] for k, v in h.history.items()}
    batch_logs = seen["batch"]
    assert f"{batch_logs['loss']:.6f}" == f"{h.history['loss'][-1]:.6f}"
    assert float(batch_logs["accuracy"]) == pytest.approx(h.history["accuracy"][-1])


def test_early_stopping_restores_best_weights(device):
    x, y = data()
    m = mlp(device)
    snapshots = []

    class Snap(CB.Callback):
        def on_epoch_end(self, epoch, logs=None):
            snapshots.append(self.model.get_weights())

    # a monitored value that gets worse after epoch 1 (index): best epoch is 1
    vals = iter([0.5, 0.2, 0.3, 0.4, 0.6, 0.7, 0.8])

    class Fake(CB.Callback):
        def on_epoch_end(self, epoch, logs=None):
            logs["val_fake"] = next(vals)

    es = CB.EarlyStopping(monitor="val_fake", patience=2, restore_best_weights=True)
    h = m.fit(x, y, epochs=7, callbacks=[Snap(), Fake(), es], verbose=0)
    assert len(h.epoch) == 4  # epochs 2 and 3 do not improve: stop after epoch index 3
    assert es.stopped_epoch == 3 and es.best_epoch == 1 and es.best == 0.2
    for a, b in zip(m.get_weights(), snapshots[1], strict=True):
        np.testing.assert_array_equal(a, b)
    assert es.mode == "min" and CB.EarlyStopping(monitor="val_accuracy").mode == "max"


def test_early_stopping_min_delta_and_baseline():
    x, y = data()
    m = mlp()
    vals = iter([1.0, 0.99, 0.985, 0.5])

    class Fake(CB.Callback):
        def on_epoch_end(self, epoch, logs=None):
            logs["val_loss"] = next(vals)

    es = CB.EarlyStopping(min_delta=0.1, patience=1)
    h = m.fit(x, y, epochs=4, callbacks=[Fake(), es], verbose=0)
    assert len(h.epoch) == 2


def test_model_checkpoint(tmp_path, device):
    x, y = data()
    m = mlp(device)
    path = str(tmp_path / "ckpt-{epoch:02d}-{val_loss:.3f}.keras")
    h = m.fit(
        x, y, epochs=2, validation_split=0.25, verbose=0, callbacks=[CB.ModelCheckpoint(path)]
    )
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == [f"ckpt-{e + 1:02d}-{v:.3f}.keras" for e, v in enumerate(h.history["val_loss"])]
    best = tmp_path / "best.weights.safetensors"
    vals = iter([0.5, 0.7, 0.4])
    saved = []

    class Fake(CB.Callback):
        def on_epoch_end(self, epoch, logs=None):
            logs["val_loss"] = next(vals)

    class Spy(CB.Callback):
        def on_epoch_end(self, epoch, logs=None):
            saved.append(best.stat().st_mtime_ns if best.exists() else None)

    ck = CB.ModelCheckpoint(str(best), save_best_only=True, save_weights_only=True)
    m.fit(x, y, epochs=3, verbose=0, callbacks=[Fake(), ck, Spy()])
    assert ck.best == 0.4 and saved[0] is not None and saved[1] == saved[0] and saved[2] > saved[1]
    m2 = mlp(device)
    m2.load_weights(str(best))
    for a, b in zip(m.get_weights(), m2.get_weights(), strict=True):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="must end in `.keras`"):
        CB.ModelCheckpoint(str(tmp_path / "m.bin"))
    CB.ModelCheckpoint(str(tmp_path / "m.h5"))  # Keras 2's legacy format is accepted


def test_learning_rate_callbacks():
    x, y = data()
    m = mlp(lr=0.1)
    sched = CB.LearningRateScheduler(lambda epoch, lr: lr * 0.5 if epoch else lr)
    h = m.fit(x, y, epochs=3, callbacks=[sched], verbose=0)
    assert h.history["learning_rate"] == pytest.approx([0.1, 0.05, 0.025])
    vals = iter([1.0, 1.0, 1.0, 1.0, 1.0])

    class Fake(CB.Callback):
        def on_epoch_end(self, epoch, logs=None):
            logs["val_loss"] = next(vals)

    m = mlp(lr=0.1)
    rl = CB.ReduceLROnPlateau(factor=0.5, patience=2, min_lr=0.03)
    h = m.fit(x, y, epochs=5, callbacks=[Fake(), rl], verbose=0)
    assert h.history["learning_rate"] == pytest.approx([0.1, 0.1, 0.1, 0.05, 0.05])
    assert m.optimizer.learning_rate == pytest.approx(0.03)  # reduced again after the last epoch
    with pytest.raises(ValueError, match="factor >= 1.0"):
        CB.ReduceLROnPlateau(factor=1.5)


def test_csv_logger_and_terminate_on_nan(tmp_path, capsys):
    x, y = data()
    m = mlp()
    path = tmp_path / "log.csv"
    h = m.fit(x, y, epochs=2, callbacks=[CB.CSVLogger(str(path))], verbose=0)
    rows = list(csv.DictReader(path.open()))
    assert list(rows[0]) == ["epoch", "accuracy", "loss"]
    assert [int(r["epoch"]) for r in rows] == [0, 1]
    assert float(rows[1]["loss"]) == pytest.approx(h.history["loss"][1])
    bad = x.copy()
    bad[5] = np.nan
    m2 = keras.Sequential([L.Dense(1)])
    m2.compile("sgd", "mse")
    h = m2.fit(
        bad,
        y.astype(np.float32),
        epochs=3,
        batch_size=8,
        callbacks=[CB.TerminateOnNaN()],
        verbose=0,
    )
    assert "Invalid loss, terminating training" in capsys.readouterr().out
    assert len(h.epoch) == 1 and math.isnan(h.history["loss"][0])


def test_lambda_callback_and_stop_training():
    x, y = data()
    m = mlp()
    ends = []

    def on_batch_end(batch, logs):
        ends.append(batch)
        if batch == 1:
            m.stop_training = True

    h = m.fit(x, y, epochs=5, callbacks=[CB.LambdaCallback(on_batch_end=on_batch_end)], verbose=0)
    assert ends == [0, 1] and h.epoch == [0]


# ---- functional and subclassed models -----------------------------------------------------------


def test_functional_multi_input_output(device, capsys):
    a = keras.Input(shape=(4,), name="a")
    b = keras.Input(shape=(3,), name="b")
    shared = L.Dense(5, activation="relu", name="shared")
    h = L.Concatenate()([shared(L.Dense(6)(a)), L.Dense(5)(b)])
    out1 = L.Dense(1, name="out1")(h)
    out2 = L.Dense(2, activation="softmax", name="out2")(h)
    with ember.device(device):
        m = keras.Model(inputs=[a, b], outputs=[out1, out2])
    assert isinstance(m, keras.Model) and m.output_names == ["out1", "out2"]
    names = [la.name for la in m.layers]
    assert len(names) == 8 and {"a", "b", "shared", "concatenate", "out1", "out2"} <= set(names)
    assert names.index("a") < names.index("shared") < names.index("concatenate")
    m.compile("adam", ["mse", "sparse_categorical_crossentropy"])
    rng = np.random.default_rng(1)
    xa, xb = rng.random((32, 4), dtype=np.float32), rng.random((32, 3), dtype=np.float32)
    y1, y2 = xa.sum(1, keepdims=True), rng.integers(0, 2, 32)
    h = m.fit([xa, xb], [y1, y2], epochs=2, verbose=0)
    assert set(h.history) == {"loss", "out1_loss", "out2_loss"}
    p1, p2 = m.predict({"a": xa, "b": xb}, verbose=0)
    assert p1.shape == (32, 1) and p2.shape == (32, 2)
    # the model runs what a NumPy evaluation of its layers gives
    ws = {la.name: la.get_weights() for la in m.layers if la.weights}
    d6 = [n for n in ws if n.startswith("dense") and ws[n][0].shape == (4, 6)][0]
    d5 = [n for n in ws if n.startswith("dense") and ws[n][0].shape == (3, 5)][0]
    hs = np.maximum((xa @ ws[d6][0] + ws[d6][1]) @ ws["shared"][0] + ws["shared"][1], 0)
    hh = np.concatenate([hs, xb @ ws[d5][0] + ws[d5][1]], 1)
    np.testing.assert_allclose(p1, hh @ ws["out1"][0] + ws["out1"][1], rtol=1e-4, atol=1e-5)
    m.summary()
    out = capsys.readouterr().out
    assert "Connected to" in out and "a (InputLayer)" in out and "concatenate (Concatenate)" in out
    with pytest.raises(ValueError, match="expects 2 input"):
        m.predict(xa, verbose=0)
    with pytest.raises(ValueError, match="Graph disconnected"):
        keras.Model(a, out1)


class TwoLayer(keras.Model):
    def __init__(self, units=8, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.d1 = L.Dense(units, activation="relu")
        self.drop = L.Dropout(0.1)
        self.d2 = L.Dense(2, activation="softmax")

    def call(self, x, training=False):
        return self.d2(self.drop(self.d1(x), training=training))

    def get_config(self):
        return {**super().get_config(), "units": self.units}


def test_subclassed_model(device, tmp_path):
    x, y = data()
    with ember.device(device):
        m = TwoLayer()
    m.compile(keras.optimizers.Adam(0.02), "sparse_categorical_crossentropy", metrics=["accuracy"])
    h = m.fit(x, y, epochs=5, verbose=0)
    assert m.built and len(m.trainable_weights) == 4 and len(m.layers) == 3
    assert h.history["loss"][-1] < h.history["loss"][0]
    p = m.predict(x, verbose=0)
    m.save(tmp_path / "sub.keras")
    m2 = keras.models.load_model(tmp_path / "sub.keras", custom_objects={"TwoLayer": TwoLayer})
    assert isinstance(m2, TwoLayer) and m2.units == 8
    np.testing.assert_allclose(m2.predict(x, verbose=0), p, rtol=1e-6)


# ---- saving -------------------------------------------------------------------------------------


def test_save_and_load_sequential(tmp_path, device):
    x, y = data()
    m = mlp(device)
    m.fit(x, y, epochs=2, verbose=0)
    p = m.predict(x, verbose=0)
    path = tmp_path / "m.keras"
    m.save(path)
    with zipfile.ZipFile(path) as z:
        assert sorted(z.namelist()) == ["config.json", "metadata.json", "model.weights.safetensors"]
        conf = json.loads(z.read("config.json"))
        assert conf["class_name"] == "Sequential"
        assert not any(n.endswith(".pkl") for n in z.namelist())
    with ember.device(device):
        m2 = keras.models.load_model(path)
    assert [la.name for la in m2.layers] == [la.name for la in m.layers]
    np.testing.assert_allclose(m2.predict(x, verbose=0), p, rtol=1e-6)
    # compiled again from the saved compile config
    assert m2.compiled and isinstance(m2.optimizer, keras.optimizers.Adam)
    assert m2.optimizer.learning_rate == pytest.approx(0.01)
    res = m2.evaluate(x, y, verbose=0, return_dict=True)
    assert set(res) == {"loss", "accuracy"}
    with pytest.raises(ValueError, match="must end in `.keras`"):
        m.save(tmp_path / "m.bin")
    with pytest.raises(ValueError, match="format not supported"):
        keras.models.load_model(tmp_path / "m.bin")


def test_save_functional_with_conv(tmp_path):
    inp = keras.Input((8, 8, 1))
    t = L.Conv2D(4, 3, padding="same", activation="relu")(inp)
    t = L.BatchNormalization()(t)
    t = L.GlobalAveragePooling2D()(t)
    skip = L.Flatten()(L.AveragePooling2D(4)(inp))
    out = L.Dense(3, activation="softmax")(L.Concatenate()([t, skip]))
    m = keras.Model(inp, out, name="convnet")
    m.compile("rmsprop", "sparse_categorical_crossentropy")
    x = np.random.default_rng(2).random((10, 8, 8, 1), dtype=np.float32)
    m.fit(x, np.arange(10) % 3, verbose=0)
    p = m.predict(x, verbose=0)
    m.save(tmp_path / "f.keras")
    m2 = keras.models.load_model(tmp_path / "f.keras")
    assert m2.name == "convnet" and type(m2).__name__ == "Functional"
    np.testing.assert_allclose(m2.predict(x, verbose=0), p, rtol=1e-5, atol=1e-6)
    assert len(m2.non_trainable_weights) == 2
    clone = keras.models.clone_model(m)
    assert clone.count_params() == m.count_params()


def test_weights_h5_round_trip_in_keras_layout(tmp_path, device):
    """Keras 3's `.weights.h5` (h5py): a dataset per variable under `layers/<name>/vars/<i>`,
    an empty `vars` group for layers without weights; load_weights restores exactly, also into
    a model on the other device; bfloat16 weights travel as float32."""
    h5py = pytest.importorskip("h5py")
    with ember.device(device):
        m = keras.Sequential([keras.Input((6,)), L.Dense(4), L.Dropout(0.1), L.Dense(3)])
        half = keras.Sequential([keras.Input((6,)), L.Dense(2, dtype="bfloat16")])
    path = tmp_path / "m.weights.h5"
    m.save_weights(path)
    with h5py.File(path, "r") as f:
        names = []
        f.visit(names.append)
        assert "layers/dense/vars/0" in names and "layers/dense_1/vars/1" in names
        assert "layers/dropout/vars" in names and len(f["layers/dropout/vars"]) == 0
        np.testing.assert_array_equal(f["layers/dense/vars/0"][()], ember.asnumpy(m.weights[0]))
    other = keras.Sequential([keras.Input((6,)), L.Dense(4), L.Dropout(0.1), L.Dense(3)])
    other.load_weights(path)
    for a, b in zip(other.weights, m.weights, strict=True):
        np.testing.assert_array_equal(ember.asnumpy(a), ember.asnumpy(b))
    half.save_weights(tmp_path / "h.weights.h5")
    back = keras.Sequential([keras.Input((6,)), L.Dense(2, dtype="bfloat16")])
    back.load_weights(tmp_path / "h.weights.h5")
    assert str(back.weights[0].dtype) == "bfloat16"
    np.testing.assert_array_equal(
        ember.asnumpy(back.weights[0].astype("float32")),
        ember.asnumpy(half.weights[0].astype("float32")),
    )
    x = np.random.default_rng(0).standard_normal((16, 6)).astype("float32")
    y = np.random.default_rng(1).standard_normal((16, 3)).astype("float32")
    m.compile(optimizer="sgd", loss="mse")
    ck = tmp_path / "best.weights.h5"
    cb = CB.ModelCheckpoint(ck, monitor="loss", save_weights_only=True)
    m.fit(x, y, epochs=1, verbose=0, callbacks=[cb])
    other.load_weights(ck)
    np.testing.assert_array_equal(ember.asnumpy(other.weights[0]), ember.asnumpy(m.weights[0]))


def test_save_weights_errors(tmp_path):
    m = mlp()
    with pytest.raises(ValueError, match=r"must end in `.weights.h5`"):
        m.save_weights(tmp_path / "w.bin")
    with pytest.raises(ValueError, match=r"must end in `.weights.h5`"):
        m.load_weights(tmp_path / "w.bin")
    m.save_weights(tmp_path / "w.weights.safetensors")
    other = keras.Sequential([keras.Input((6,)), L.Dense(3)])
    with pytest.raises(ValueError, match="do not match the model"):
        other.load_weights(tmp_path / "w.weights.safetensors")


# ---- devices: TensorFlow's spellings ------------------------------------------------------------


def test_list_physical_devices():
    cpus = ember.config.list_physical_devices("CPU")
    assert len(cpus) == 1 and cpus[0].name == "/physical_device:CPU:0"
    assert cpus[0].device_type == "CPU"
    gpus = ember.config.list_physical_devices("GPU")
    assert len(gpus) == ember.cuda.device_count()
    for i, g in enumerate(gpus):
        assert g.name == f"/physical_device:GPU:{i}" and g.device_type == "GPU"
    assert ember.config.list_physical_devices() == cpus + gpus
    assert ember.config.list_physical_devices("TPU") == []
    with pytest.raises(TypeError):
        ember.config.list_physical_devices(3)


@pytest.mark.parametrize(
    "spec,want",
    [
        ("/CPU:0", "cpu"),
        ("CPU:0", "cpu"),
        ("/device:CPU:0", "cpu"),
        ("/cpu:0", "cpu"),
        ("/job:localhost/replica:0/task:0/device:CPU:0", "cpu"),
        ("/GPU:0", "cuda:0"),
        ("GPU:1", "cuda:1"),
        ("/device:GPU:2", "cuda:2"),
        ("/physical_device:GPU:0", "cuda:0"),
        ("gpu", "cuda:0"),
        ("cuda:3", "cuda:3"),
        ("cpu", "cpu"),
    ],
)
def test_device_spellings(spec, want):
    assert ember.config.device_string(spec) == want


def test_device_context(device):
    tf_name = "/CPU:0" if device == "cpu" else "/GPU:0"
    d = ember.device(tf_name)
    assert isinstance(d, ember.Device) and isinstance(d, ember.device)
    assert d == ember.Device(device)
    with ember.device(tf_name):
        x = ember.zeros(3)
        layer = L.Dense(2)
        layer(np.ones((1, 3), np.float32))
    assert x.device == ember.Device(device)
    assert layer.kernel.device == ember.Device(device)
    with pytest.raises(ValueError, match="unknown device '/TPU:0'"):
        ember.device("/TPU:0")
    with pytest.raises(ValueError, match="one CPU device"):
        ember.device("/CPU:1")
    with pytest.raises(TypeError, match="device must be a string"):
        ember.device(3.5)


def test_sequential_guide_examples(device):
    # keras.io's "The Sequential model" guide, step by step
    with ember.device(device):
        model = keras.Sequential(
            [
                L.Dense(2, activation="relu", name="layer1"),
                L.Dense(3, activation="relu", name="layer2"),
                L.Dense(4, name="layer3"),
            ]
        )
        assert model.weights == [] and not model.built
        y = model(ember.ones((3, 3)))
    assert y.shape == (3, 4) and len(model.weights) == 6
    assert [la.name for la in model.layers] == ["layer1", "layer2", "layer3"]
    model.pop()
    assert len(model.layers) == 2
    layer = L.Dense(3)
    assert layer.weights == []
    layer(np.ones((1, 4), np.float32))
    assert [tuple(w.shape) for w in layer.weights] == [(4, 3), (3,)]
    model = keras.Sequential()
    model.add(keras.Input(shape=(4,)))
    model.add(L.Dense(2, activation="relu"))
    assert [la.name for la in model.layers] == ["dense_1"]  # the Input is no layer
    # feature extraction from a Sequential model
    initial = keras.Sequential(
        [
            keras.Input(shape=(20, 20, 3)),
            L.Conv2D(4, 5, strides=2, activation="relu"),
            L.Conv2D(4, 3, activation="relu", name="my_intermediate_layer"),
            L.Conv2D(4, 3, activation="relu"),
        ]
    )
    extractor = keras.Model(inputs=initial.inputs, outputs=[la.output for la in initial.layers])
    feats = extractor(ember.ones((1, 20, 20, 3), device=device))
    assert [tuple(f.shape) for f in feats] == [(1, 8, 8, 4), (1, 6, 6, 4), (1, 4, 4, 4)]
    mid = keras.Model(
        inputs=initial.inputs, outputs=initial.get_layer("my_intermediate_layer").output
    )
    np.testing.assert_allclose(
        ember.asnumpy(mid(ember.ones((1, 20, 20, 3), device=device))),
        ember.asnumpy(feats[1]),
        rtol=1e-6,
    )
    # transfer learning: freeze all but the last layer
    for la in initial.layers[:-1]:
        la.trainable = False
    assert len(initial.trainable_weights) == 2 and len(initial.non_trainable_weights) == 4


def test_gpu_data_is_not_moved_implicitly(device):
    if device == "cpu":
        pytest.skip("needs data on a GPU and a model on the CPU")
    with ember.device("/CPU:0"):
        m = keras.Sequential([keras.Input((6,)), L.Dense(2)])
    m.compile("sgd", "mse")
    x = ember.zeros((4, 6), device=device)
    with pytest.raises(ValueError, match="does not move GPU data implicitly"):
        m.fit(x, ember.zeros((4, 2), device=device), verbose=0)


@keras.saving.register_keras_serializable(package="Test")
class Linear(keras.layers.Layer):
    """keras.io's "Making new layers" example, with ember ops."""

    def __init__(self, units=32, **kwargs):
        super().__init__(**kwargs)
        self.units = units

    def build(self, input_shape):
        self.w = self.add_weight(
            shape=(input_shape[-1], self.units), initializer="random_normal", trainable=True
        )
        self.b = self.add_weight(shape=(self.units,), initializer="zeros", trainable=True)
        self.total = self.add_weight(shape=(), initializer="zeros", trainable=False)

    def call(self, inputs):
        self.add_loss(1e-3 * ember.sum(self.w * self.w))
        return ember.matmul(inputs, self.w) + self.b

    def compute_output_shape(self, input_shape):
        return tuple(input_shape[:-1]) + (self.units,)

    def get_config(self):
        return {**super().get_config(), "units": self.units}


def test_custom_layer_trains_and_saves(tmp_path, device):
    x, y = data()
    with ember.device(device):
        m = keras.Sequential([keras.Input((6,)), Linear(8), L.Activation("relu"), Linear(2)])
    assert len(m.trainable_weights) == 4 and len(m.non_trainable_weights) == 2
    m.compile(keras.optimizers.Adam(0.01), "mse")
    yy = np.eye(2, dtype=np.float32)[y]
    h = m.fit(x, yy, epochs=4, verbose=0)
    assert h.history["loss"][-1] < h.history["loss"][0]
    # the add_loss terms are in the reported loss
    pred = m.predict(x, verbose=0)
    reg = sum(1e-3 * np.sum(la.w.numpy() ** 2) for la in m.layers if isinstance(la, Linear))
    assert m.evaluate(x, yy, verbose=0) == pytest.approx(np.mean((pred - yy) ** 2) + reg, rel=1e-4)
    m.save(tmp_path / "c.keras")
    m2 = keras.models.load_model(tmp_path / "c.keras")
    np.testing.assert_allclose(m2.predict(x, verbose=0), pred, rtol=1e-6)


@pytest.mark.parametrize("opt", ["adam", "sgd_momentum", "rmsprop", "adagrad"])
def test_reloaded_model_resumes_training(tmp_path, opt):
    x, y = data()
    make = {
        "adam": lambda: keras.optimizers.Adam(0.01),
        "sgd_momentum": lambda: keras.optimizers.SGD(0.05, momentum=0.9),
        "rmsprop": lambda: keras.optimizers.RMSprop(0.01, momentum=0.5, centered=True),
        "adagrad": lambda: keras.optimizers.Adagrad(0.05),
    }[opt]
    m = mlp()
    m.compile(make(), "sparse_categorical_crossentropy")
    m.fit(x, y, epochs=2, verbose=0, shuffle=False)
    m.save(tmp_path / "r.keras")
    m2 = keras.models.load_model(tmp_path / "r.keras")
    assert m2.optimizer.iterations == m.optimizer.iterations == 6
    m.fit(x, y, epochs=1, verbose=0, shuffle=False)
    m2.fit(x, y, epochs=1, verbose=0, shuffle=False)
    for a, b in zip(m.get_weights(), m2.get_weights(), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
