"""A small convolutional network on the 8x8 digits shipped with ember, written as PyTorch code
with `torch` replaced by `ember`: Conv2d, BatchNorm2d, MaxPool2d, Dropout, batch augmentation
on the device (ember.data.transforms), optional mixed precision (--amp) and channels_last.

    python examples/cnn_digits.py [--epochs 30] [--amp] [--channels-last]

It trains on the GPU when one is usable, else on the CPU, and prints the test accuracy.
"""

from __future__ import annotations

import argparse
import time

import ember
from ember import nn
from ember.data import transforms as T


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 32, 3, padding=1),
            nn.BatchNorm2d(32),
            nn.ReLU(),
            nn.Conv2d(32, 64, 3, padding=1),
            nn.BatchNorm2d(64),
            nn.ReLU(),
            nn.MaxPool2d(2),  # 8x8 -> 4x4
            nn.Conv2d(64, 64, 3, padding=1),
            nn.BatchNorm2d(64),
            nn.ReLU(),
            nn.AdaptiveAvgPool2d(1),
        )
        self.classifier = nn.Sequential(nn.Flatten(), nn.Dropout(0.2), nn.Linear(64, 10))

    def forward(self, x):
        return self.classifier(self.features(x))


def main(argv=None) -> float:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--amp", action="store_true", help="autocast to bfloat16 (CPU) / float16")
    ap.add_argument("--channels-last", action="store_true")
    args = ap.parse_args(argv)
    ember.random.seed(0)
    device = "cuda" if ember.cuda.is_available() else "cpu"

    x, y = ember.datasets.load_digits()
    data = ember.data.TensorDataset((x / 16.0).astype(ember.float32).reshape(-1, 1, 8, 8), y)
    train, test = ember.data.random_split(data, [0.8, 0.2], generator=0)
    train_loader = ember.data.DataLoader(train, batch_size=64, shuffle=True, generator=0)
    test_loader = ember.data.DataLoader(test, batch_size=512)
    augment = T.RandomCrop(8, padding=1, generator=ember.random.default_rng(0))

    model = Net().to(device)
    fmt = ember.channels_last if args.channels_last else ember.contiguous_format
    model.to(memory_format=fmt)
    opt = ember.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=1e-4)
    sched = ember.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=args.epochs)
    low = ember.float16 if device == "cuda" else ember.bfloat16
    scaler = ember.amp.GradScaler(enabled=args.amp and low == ember.float16)
    loss_fn = nn.CrossEntropyLoss()
    t0 = time.perf_counter()
    for epoch in range(1, args.epochs + 1):
        model.train()
        total = 0.0
        for xb, yb in train_loader:
            xb, yb = xb.to(device), yb.to(device)
            xb = augment(xb).contiguous(memory_format=fmt)
            opt.zero_grad()
            with ember.autocast(device, dtype=low, enabled=args.amp):
                loss = loss_fn(model(xb), yb)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            total += float(loss)
        sched.step()
        if epoch % 5 == 0 or epoch == args.epochs:
            print(f"epoch {epoch}: loss {total / len(train_loader):.4f}")

    model.eval()
    correct = count = 0
    with ember.no_grad():
        for xb, yb in test_loader:
            xb, yb = xb.to(device), yb.to(device)
            pred = model(xb.contiguous(memory_format=fmt)).argmax(dim=1)
            correct += int((pred == yb).sum())
            count += yb.shape[0]
    accuracy = correct / count
    print(f"{100 * accuracy:.2f}% test accuracy in {time.perf_counter() - t0:.1f} s on {device}")
    return accuracy


if __name__ == "__main__":
    main()
