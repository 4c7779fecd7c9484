"""ember.keras on the "cuda" device of the fake driver (tools/fake_cuda: kernels launch but never
run, copies really copy), in a child process: where weights and data live, and how often fit
reads back from the device. The model avoids matmul (the fake has no cuBLAS); values are
meaningless there, only placement and synchronizations are checked."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")


@pytest.fixture(scope="module")
def fake_lib(tmp_path_factory):
    d = tmp_path_factory.mktemp("fake_cuda")
    src = os.path.join(ROOT, "tools", "fake_cuda")
    cmd = ["g++", "-std=c++20", "-O1", "-shared", "-fPIC", f"-I{ROOT}/src", f"-I{ROOT}/include",
           f"{src}/driver.cpp", f"{src}/defaults.cpp", "-o", str(d / "libcuda.so.1")]  # fmt: skip
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"the fake driver does not build here: {r.stderr[-400:]}")
    os.symlink("libcuda.so.1", d / "libnvrtc.so.13")
    return d


CHILD = """
import io, json, numpy as np, ember
from ember import keras
L = keras.layers
out = {}
rng = np.random.default_rng(0)
x = rng.random((96, 8, 8, 1), dtype=np.float32)
y = rng.integers(0, 64, 96)
out["gpus"] = [d.name for d in ember.config.list_physical_devices("GPU")]
with ember.device("/GPU:0"):
    m = keras.Sequential([keras.Input((8, 8, 1)), L.Rescaling(2.0), L.BatchNormalization(),
                          L.Flatten(), L.LayerNormalization(), L.Dropout(0.1),
                          L.Activation("softmax")])
m.compile("adam", "sparse_categorical_crossentropy",
          metrics=["accuracy", keras.metrics.SparseTopKCategoricalAccuracy(k=3)])
out["weights"] = sorted({str(w.device) for w in m.weights})
xs, ys = ember.asarray(x, device="cuda"), ember.asarray(y, device="cuda")
with ember.debug.ledger() as led:
    m.fit(xs, ys, epochs=3, batch_size=8, verbose=0, class_weight={1: 2.0},
          validation_data=(xs[:16], ys[:16]), shuffle=False)
s = led.summary()
out["fit"] = [s["implicit_syncs"], s["sync"]["count"], s["transfer"]["count"]]

class Tty(io.StringIO):
    def isatty(self):
        return True

reads = []
class Logger(keras.callbacks.ProgbarLogger):
    def on_epoch_end(self, epoch, logs=None):
        super().on_epoch_end(epoch, logs)
        reads.append(self.progbar.draws)
with ember.debug.ledger() as led:
    m.fit(xs, ys, epochs=2, batch_size=8, callbacks=[Logger(stream=Tty())], shuffle=False)
out["tty"] = [led.summary()["implicit_syncs"],
              sum(1 for e in led.events if e.kind == "transfer" and e.op == "ember.asnumpy"),
              sum(d - 1 for d in reads)]
p = m.predict(xs, verbose=0)
out["predict"] = [type(p).__name__, list(p.shape)]
m.save("m.keras")
m2 = keras.models.load_model("m.keras")
out["reloaded"] = sorted({str(w.device) for w in m2.weights})
# the default device on the CPU, the data and so the weights on the GPU
ember.set_default_device("cpu")
n = keras.Sequential([L.LayerNormalization(), L.Activation("softmax")])
n.compile("rmsprop", "sparse_categorical_crossentropy")
flat = xs.reshape(96, 64)
n.fit([(flat[i : i + 16], ys[i : i + 16]) for i in range(0, 96, 16)], epochs=1, verbose=0)
out["from_loader"] = sorted({str(w.device) for w in n.weights})
try:
    cpu_model = keras.Sequential([keras.Input((64,)), L.LayerNormalization()])
    cpu_model.compile("sgd", "mse")
    cpu_model.fit(xs.reshape(96, 64), xs.reshape(96, 64), verbose=0)
    out["moved"] = "silently"
except ValueError as e:
    out["moved"] = str(e)
print(json.dumps(out))
"""


def test_placement_and_syncs_on_fake_cuda(fake_lib, tmp_path):
    script = tmp_path / "child.py"
    script.write_text(textwrap.dedent(CHILD))
    env = dict(os.environ)
    env.update(
        LD_LIBRARY_PATH=str(fake_lib),
        EMBER_CUDA_PATHFINDER="0",
        EMBER_SHIPPED_KERNELS="0",
        EMBER_CACHE_DIR=str(tmp_path / "cache"),
        EMBER_DEVICE="cuda",
    )
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env,
                       timeout=600, cwd=tmp_path)  # fmt: skip
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-4000:]
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["gpus"] == ["/physical_device:GPU:0"]
    assert out["weights"] == ["cuda:0"] and out["reloaded"] == ["cuda:0"]
    assert out["from_loader"] == ["cuda:0"]
    # 3 epochs of 12 steps (without shuffling, whose gathers check their indices on the host):
    # no implicit synchronization at all, and one read per epoch plus one per validation
    implicit, syncs, transfers = out["fit"]
    assert implicit == 0 and syncs == 3 * 2
    # progress bar on a terminal: exactly one read per redraw, plus one at each epoch's end
    implicit, reads, mid_epoch_draws = out["tty"]
    assert implicit == 0 and reads == mid_epoch_draws + 2
    assert out["predict"] == ["ndarray", [96, 64]]
    assert "does not move GPU data implicitly" in out["moved"]
