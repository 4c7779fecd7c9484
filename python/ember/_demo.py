"""``python -m ember demo``: devices found, one NumPy-style computation checked against NumPy."""

from __future__ import annotations

import statistics
import sys
import time

import ember

ROWS = COLS = 2000
TOLERANCE = 1e-4  # max abs error allowed on values of order 1, in float32


def _cuda_device_name(cuda, i: int) -> str:
    for get in (
        lambda: cuda.get_device_name(i),
        lambda: cuda.get_device_properties(i).name,
    ):
        try:
            name = get()
        except (AttributeError, TypeError, ValueError, RuntimeError, IndexError):
            name = None  # this spelling is not offered; try the next
        if name:
            return str(name)
    return "(name unknown)"


def _devices(ember) -> list[str]:
    lines = ["cpu"]
    cuda = getattr(ember, "cuda", None)
    if cuda is not None and cuda.is_available():
        for i in range(cuda.device_count()):
            lines.append(f"cuda:{i}  {_cuda_device_name(cuda, i)}")
    else:
        why = getattr(cuda, "unavailable_reason", None) if cuda is not None else None
        reason = why() if callable(why) else None
        lines.append(f"cuda: not available: {reason or 'no reason given'}")
    return lines


def _normalize(xp, x, sqrt):
    # Standardize each column: subtract its mean, divide by its standard deviation.
    n = x.shape[0]
    mu = xp.mean(x, axis=0, keepdims=True)
    xc = x - mu
    var = xp.sum(xc * xc, axis=0, keepdims=True) / n
    return xc / sqrt(var + 1e-6)


def _median_time(fn, sync, repeats: int = 9) -> float:
    fn()
    sync()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _ms(s: float) -> str:
    return f"{s * 1e3:8.2f} ms"


def main(argv=None) -> int:
    import numpy as np

    print(f"ember {getattr(ember, '__version__', '(no __version__)')}")
    print("devices:")
    for line in _devices(ember):
        print(f"  {line}")
    get_default = getattr(ember, "get_default_device", None)
    default = get_default() if get_default else "cpu"
    print(f"default device: {default}")

    cuda = getattr(ember, "cuda", None)
    on_cuda = str(getattr(default, "type", default)).startswith("cuda")
    sync = lambda: None  # noqa: E731
    if on_cuda:
        sync = getattr(cuda, "synchronize", None)
        if sync is None:  # a host read waits for the queued work too
            probe = ember.zeros((1,), dtype=ember.float32)
            sync = lambda: ember.asnumpy(probe)  # noqa: E731
    e_sqrt = getattr(ember, "sqrt", None)
    if e_sqrt is None:
        print("note: ember.sqrt is missing, using x ** 0.5")

        def e_sqrt(v):
            return v**0.5

    rng = np.random.default_rng(0)
    host = rng.standard_normal((ROWS, COLS), dtype=np.float32) * np.float32(3) + np.float32(1)

    print()
    print(f"normalize the columns of a {ROWS}x{COLS} float32 matrix (mean 0, std 1):")
    print("  z = (x - mean(x, axis=0)) / sqrt(sum((x - mean)**2, axis=0) / n + 1e-6)")
    t0 = time.perf_counter()
    x = ember.asarray(host)
    sync()
    t_in = time.perf_counter() - t0
    z = _normalize(ember, x, e_sqrt)
    z_host = ember.asnumpy(z)
    expected = _normalize(np, host, np.sqrt)

    print(f"  ember result: shape {tuple(z.shape)}, dtype {z.dtype}, device {z.device}")
    ok = z_host.shape == expected.shape and z_host.dtype == expected.dtype
    if not ok:
        print(f"  numpy result: shape {expected.shape}, dtype {expected.dtype}")
        err = float("inf")
    else:
        err = float(np.max(np.abs(z_host.astype(np.float64) - expected)))
        ok = err <= TOLERANCE
    col_mean = float(np.max(np.abs(z_host.mean(axis=0, dtype=np.float64))))
    col_std = float(np.max(np.abs(z_host.std(axis=0, dtype=np.float64) - 1)))
    print(f"  max |ember - numpy| = {err:.3g}  (tolerance {TOLERANCE:g}): ", end="")
    print("OK" if ok else "MISMATCH")
    print(f"  columns of z: max |mean| = {col_mean:.2g}, max |std - 1| = {col_std:.2g}")

    t_ember = _median_time(lambda: _normalize(ember, x, e_sqrt), sync)
    t_numpy = _median_time(lambda: _normalize(np, host, np.sqrt), lambda: None)
    print()
    print(f"timings (median of 9, device {default}):")
    print(f"  ember.asarray(numpy)     {_ms(t_in)}")
    print(f"  ember normalize          {_ms(t_ember)}")
    print(f"  numpy normalize          {_ms(t_numpy)}")
    print(f"  ember / numpy            {t_ember / t_numpy:8.2f}x")
    print("  (python -m ember.bench times single ops against NumPy, CuPy and PyTorch)")
    trained = _train(ember)
    return 0 if ok and trained else 1


TRAIN_EPOCHS = 25
TRAIN_TARGET = 0.95


def _bar(done: int, total: int, width: int = 24) -> str:
    full = width * done // total
    return "[" + "#" * full + "." * (width - full) + f"] {done}/{total}"


def _train(ember) -> bool:
    """The seed's MLP (Linear-ReLU-Linear-Softmax, cross-entropy, Adam) trained on the 8x8 digits
    shipped with ember: loss and test accuracy per epoch, True when it reaches TRAIN_TARGET."""
    print()
    x, y = ember.datasets.load_digits()
    data = ember.data.TensorDataset(x / 16.0, y)
    train, test = ember.data.random_split(data, [0.8, 0.2], generator=0)
    train_loader = ember.data.DataLoader(train, batch_size=64, shuffle=True, generator=0)
    test_loader = ember.data.DataLoader(test, batch_size=512)
    device = ember.device("cuda" if ember.cuda.is_available() else "cpu")
    print(f"train an MLP on the 8x8 digits ({len(train)} train / {len(test)} test, {device}):")
    print("  Linear(64, 128) - ReLU - Linear(128, 10) - Softmax, CrossEntropyLoss, Adam")
    ember.random.seed(0)
    model = ember.nn.Sequential(
        ember.nn.Linear(64, 128),
        ember.nn.ReLU(),
        ember.nn.Linear(128, 10),
        ember.nn.Softmax(dim=1),
    )
    model.to(device)
    criterion = ember.nn.CrossEntropyLoss()
    optimizer = ember.optim.Adam(model.parameters())
    t0 = time.perf_counter()
    accuracy = 0.0
    interactive = sys.stdout.isatty()
    for epoch in range(TRAIN_EPOCHS):
        total_loss, batches = 0.0, 0
        for data, target in train_loader:
            data, target = data.to(device), target.to(device)
            optimizer.zero_grad()
            loss = criterion(model(data), target)
            loss.backward()
            optimizer.step()
            total_loss += float(loss)
            batches += 1
            if interactive:
                print(f"\r  epoch {epoch + 1:2d} {_bar(batches, len(train_loader))}", end="")
        correct = 0
        with ember.no_grad():
            for data, target in test_loader:
                pred = ember.argmax(model(data.to(device)), axis=1)
                correct += int(ember.sum(pred == target.to(device)))
        accuracy = correct / len(test)
        line = f"  epoch {epoch + 1:2d} {_bar(epoch + 1, TRAIN_EPOCHS)}"
        print(f"\r{line}  loss {total_loss / batches:.4f}  test accuracy {100 * accuracy:5.1f}%")
    elapsed = time.perf_counter() - t0
    ok = accuracy >= TRAIN_TARGET
    print(
        f"  {100 * accuracy:.1f}% test accuracy in {elapsed:.1f} s "
        f"({'OK' if ok else 'BELOW'} the {100 * TRAIN_TARGET:.0f}% target)"
    )
    return ok


if __name__ == "__main__":
    sys.exit(main())
