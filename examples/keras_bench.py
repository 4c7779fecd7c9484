"""Benchmark: ember.keras's fit against hand-written training loops (ember, and PyTorch when
installed) on the digits MLP and a small CNN; time per step, and how often fit reads back
from the device (ember.debug's ledger).

    python examples/keras_bench.py [--device cuda|cpu] [--epochs 10]
"""

from __future__ import annotations

import argparse
import time

import ember
import numpy as np
from ember import keras, nn, optim
from ember.nn import functional as F

BATCH = 32


def sync(device):
    if device.startswith("cuda"):
        ember.cuda.synchronize()


def data(cnn):
    x, y = ember.datasets.load_digits()
    x = np.asarray(x, np.float32) / 16.0
    y = np.asarray(y, np.int64)
    return (x.reshape(-1, 8, 8, 1) if cnn else x), y


def keras_model(cnn):
    L = keras.layers
    if cnn:
        return keras.Sequential(
            [
                keras.Input((8, 8, 1)),
                L.Conv2D(16, 3, padding="same", activation="relu"),
                L.MaxPooling2D(),
                L.Flatten(),
                L.Dense(10, activation="softmax"),
            ]
        )
    return keras.Sequential(
        [keras.Input((64,)), L.Dense(128, activation="relu"), L.Dense(10, activation="softmax")]
    )


def time_keras(x, y, device, cnn, epochs):
    with ember.device(device):
        m = keras_model(cnn)
        xs, ys = ember.asarray(x), ember.asarray(y)
    m.compile("adam", "sparse_categorical_crossentropy", metrics=["accuracy"])
    m.fit(xs, ys, epochs=1, verbose=0)  # warm-up (kernel compiles)
    sync(device)
    t = time.perf_counter()
    h = m.fit(xs, ys, epochs=epochs, verbose=0)
    sync(device)
    per_step = (time.perf_counter() - t) / (epochs * -(-len(x) // BATCH))
    with ember.debug.ledger() as led:
        m.fit(xs, ys, epochs=2, verbose=0)
    return per_step, h.history["accuracy"][-1], led.summary()


class HandCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 16, 3, padding=1)
        self.fc = nn.Linear(16 * 4 * 4, 10)

    def forward(self, x):  # x: NHWC as the Keras model gets it
        h = F.relu(self.conv(x.permute(0, 3, 1, 2)))
        h = F.max_pool2d(h, 2)
        return self.fc(h.permute(0, 2, 3, 1).reshape(h.shape[0], -1))


def time_hand_ember(x, y, device, cnn, epochs, keras_math):
    """The loop a user writes: per-epoch shuffle on the device, forward, loss, backward, Adam,
    running loss and accuracy kept on the device, read once per epoch."""
    with ember.device(device):
        model = (
            HandCNN() if cnn else nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 10))
        )
        xs, ys = ember.asarray(x), ember.asarray(y)
        rng = ember.random.default_rng(0)
    opt = optim.Adam(model.parameters(), lr=1e-3, eps=1e-7)
    n = len(x)
    classes = ember.arange(10, device=device)

    def epoch():
        perm = rng.permutation(n)
        xe, ye = xs[perm], ys[perm]
        tot = ember.zeros((), device=device)
        hits = ember.zeros((), device=device)
        for i in range(0, n, BATCH):
            xb, yb = xe[i : i + BATCH], ye[i : i + BATCH]
            out = model(xb)
            if keras_math:  # softmax output + Keras's clipped cross-entropy, as the Keras model
                p = F.softmax(out, dim=-1)
                p = ember.clip(p / p.sum(axis=-1, keepdims=True), 1e-7, 1 - 1e-7)
                hot = yb[:, None] == classes
                loss = -ember.where(hot, ember.log(p), 0.0).sum(axis=-1).mean()
            else:
                loss = F.cross_entropy(out, yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            with ember.no_grad():
                tot = tot + loss.detach() * xb.shape[0]
                hits = hits + (out.argmax(axis=-1) == yb).sum()
        return float(hits) / n

    epoch()
    sync(device)
    t = time.perf_counter()
    for _ in range(epochs):
        acc = epoch()
    sync(device)
    return (time.perf_counter() - t) / (epochs * -(-n // BATCH)), acc


def time_torch(x, y, device, cnn, epochs):
    try:
        import torch
    except ImportError:
        return None
    dev = torch.device(device)
    if cnn:

        class TCNN(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = torch.nn.Conv2d(1, 16, 3, padding=1)
                self.fc = torch.nn.Linear(256, 10)

            def forward(self, x):
                h = torch.nn.functional.max_pool2d(torch.relu(self.conv(x.permute(0, 3, 1, 2))), 2)
                return self.fc(h.permute(0, 2, 3, 1).reshape(h.shape[0], -1))

        model = TCNN().to(dev)
    else:
        model = torch.nn.Sequential(
            torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10)
        ).to(dev)
    xs, ys = torch.as_tensor(x, device=dev), torch.as_tensor(y, device=dev)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, eps=1e-7)
    n = len(x)

    def epoch():
        perm = torch.randperm(n, device=dev)
        xe, ye = xs[perm], ys[perm]
        tot = torch.zeros((), device=dev)
        hits = torch.zeros((), device=dev, dtype=torch.long)
        for i in range(0, n, BATCH):
            xb, yb = xe[i : i + BATCH], ye[i : i + BATCH]
            out = model(xb)
            loss = torch.nn.functional.cross_entropy(out, yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            with torch.no_grad():
                tot += loss.detach() * xb.shape[0]
                hits += (out.argmax(-1) == yb).sum()
        return hits.item() / n

    epoch()
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(epochs):
        acc = epoch()
    if device.startswith("cuda"):
        torch.cuda.synchronize()
    return (time.perf_counter() - t) / (epochs * -(-n // BATCH)), acc


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default=str(ember.get_default_device()))
    ap.add_argument("--epochs", type=int, default=10)
    args = ap.parse_args()
    dev = args.device
    print(f"device {dev}; digits {BATCH}-sample steps, {args.epochs} epochs after a warm-up")
    for cnn in (False, True):
        name = "CNN" if cnn else "MLP"
        x, y = data(cnn)
        kt, kacc, led = time_keras(x, y, dev, cnn, args.epochs)
        h1, _ = time_hand_ember(x, y, dev, cnn, args.epochs, keras_math=True)
        h2, _ = time_hand_ember(x, y, dev, cnn, args.epochs, keras_math=False)
        tt = time_torch(x, y, dev, cnn, args.epochs)
        print(f"{name}: keras fit {kt * 1e6:8.1f} us/step (acc {kacc:.3f})")
        print(
            f"{name}: hand ember, same math      {h1 * 1e6:8.1f} us/step  keras/hand {kt / h1:.3f}"
        )
        print(
            f"{name}: hand ember, cross_entropy  {h2 * 1e6:8.1f} us/step  keras/hand {kt / h2:.3f}"
        )
        if tt is not None:
            print(
                f"{name}: hand PyTorch               {tt[0] * 1e6:8.1f} us/step  keras/torch "
                f"{kt / tt[0]:.3f}"
            )
        print(
            f"{name}: fit, 2 epochs verbose=0: {led['sync']['count']} syncs "
            f"({led['implicit_syncs']} implicit), {led['transfer']['count']} transfers"
        )


if __name__ == "__main__":
    main()
