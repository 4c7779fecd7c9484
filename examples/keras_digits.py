"""The TensorFlow/Keras quick-start, with ``tf`` -> ``ember``: an MLP on the digits ember ships.

python examples/keras_digits.py [--epochs 5] [--device /GPU:0]
"""

from __future__ import annotations

import argparse

import ember
import numpy as np


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--device", default=None, help="e.g. /GPU:0 or /CPU:0 (default: ember's)")
    args = ap.parse_args(argv)
    print("Num GPUs Available: ", len(ember.config.list_physical_devices("GPU")))
    (x_train, y_train), (x_test, y_test) = ember.keras.datasets.digits.load_data()
    x_train = x_train.reshape(len(x_train), 64).astype(np.float32) / 16.0
    x_test = x_test.reshape(len(x_test), 64).astype(np.float32) / 16.0
    device = ember.device(args.device) if args.device else ember.get_default_device()
    with device:
        model = ember.keras.models.Sequential(
            [
                ember.keras.layers.Dense(128, activation="relu"),
                ember.keras.layers.Dense(10, activation="softmax"),
            ]
        )
        model.compile(
            optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"]
        )
        model.fit(x_train, y_train, epochs=args.epochs)
        loss, accuracy = model.evaluate(x_test, y_test, verbose=2)
    model.summary()
    print(f"test accuracy {accuracy:.4f}")
    return accuracy


if __name__ == "__main__":
    main()
