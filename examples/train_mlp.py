"""The seed's PyTorch training loop with `torch` replaced by `ember`, on the 8x8 digits shipped with
ember (input 64; pass --mnist DIR to use MNIST IDX files you have, input 784).

    python examples/train_mlp.py [--epochs 5] [--mnist DIR]

It trains on the GPU when one is usable, else on the CPU, and prints the test accuracy.
"""

from __future__ import annotations

import argparse
import time

import ember


def loaders(args):
    if args.mnist:
        x_train, y_train = ember.datasets.mnist(args.mnist, kind="train")
        x_test, y_test = ember.datasets.mnist(args.mnist, kind="test")
        x_train = x_train.reshape(x_train.shape[0], -1).astype(ember.float32) / 255.0
        x_test = x_test.reshape(x_test.shape[0], -1).astype(ember.float32) / 255.0
        train = ember.data.TensorDataset(x_train, y_train)
        test = ember.data.TensorDataset(x_test, y_test)
    else:
        x, y = ember.datasets.load_digits()
        data = ember.data.TensorDataset(x / 16.0, y)
        train, test = ember.data.random_split(data, [0.8, 0.2], generator=0)
    train_loader = ember.data.DataLoader(train, batch_size=64, shuffle=True, generator=0)
    test_loader = ember.data.DataLoader(test, batch_size=512)
    return train_loader, test_loader, 784 if args.mnist else 64


def main(argv=None) -> float:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--mnist", metavar="DIR", help="a directory with MNIST's IDX files")
    args = ap.parse_args(argv)
    train_loader, test_loader, inputs = loaders(args)
    ember.random.seed(0)
    t0 = time.perf_counter()

    # ---- the seed's loop, verbatim but for the input size ----
    device = ember.device("cuda" if ember.cuda.is_available() else "cpu")
    model = ember.nn.Sequential(
        ember.nn.Linear(inputs, 128),
        ember.nn.ReLU(),
        ember.nn.Linear(128, 10),
        ember.nn.Softmax(dim=1),
    )
    model.to(device)
    criterion = ember.nn.CrossEntropyLoss()
    optimizer = ember.optim.Adam(model.parameters())
    for epoch in range(args.epochs):
        for data, target in train_loader:
            data, target = data.to(device), target.to(device)
            optimizer.zero_grad()
            loss = criterion(model(data), target)
            loss.backward()
            optimizer.step()
        print(f"epoch {epoch + 1}: loss {float(loss):.4f}")
    # ---- end of the seed's loop ----

    correct = total = 0
    with ember.no_grad():
        for data, target in test_loader:
            pred = ember.argmax(model(data.to(device)), axis=1)
            correct += int(ember.sum(pred == target.to(device)))
            total += target.shape[0]
    accuracy = correct / total
    print(f"test accuracy {100 * accuracy:.1f}% on {device} ({time.perf_counter() - t0:.1f} s)")
    return accuracy


if __name__ == "__main__":
    main()
