"""On the GPU machine: time per training step of the seed MLP (784-128-10, ReLU, cross-entropy,
Adam) in ember and PyTorch at batch 64 and 4096, and standard_normal's share of fill bandwidth.
A quick probe for a GPU session; the benchmark suite (bench/) is the reference.
Usage: python3 tools/train_step_probe.py"""

from __future__ import annotations

import time

import ember
import numpy as np


def per_step(step, sync, n=200):
    for _ in range(10):
        step()
    sync()
    best = 1e9
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(n):
            step()
        sync()
        best = min(best, (time.perf_counter() - t0) / n)
    return best


def ember_step(batch):
    nn = ember.nn
    model = nn.Sequential(nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10))
    model.to("cuda")
    opt = ember.optim.Adam(model.parameters())
    crit = nn.CrossEntropyLoss()
    rng = np.random.default_rng(0)
    x = ember.asarray(rng.standard_normal((batch, 784), dtype=np.float32), device="cuda")
    y = ember.asarray(rng.integers(0, 10, batch), device="cuda")

    def step():
        opt.zero_grad()
        loss = crit(model(x), y)
        loss.backward()
        opt.step()

    return step


def torch_step(batch):
    import torch

    nn = torch.nn
    model = nn.Sequential(nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10)).cuda()
    opt = torch.optim.Adam(model.parameters())
    crit = nn.CrossEntropyLoss()
    x = torch.randn(batch, 784, device="cuda")
    y = torch.randint(0, 10, (batch,), device="cuda")

    def step():
        opt.zero_grad()
        loss = crit(model(x), y)
        loss.backward()
        opt.step()

    return step


def main():
    for batch in (64, 4096):
        s0 = ember.cuda.kernel_cache_stats()["memory_hits"]
        step = ember_step(batch)
        step()
        ember.cuda.synchronize()
        s0 = ember.cuda.kernel_cache_stats()["memory_hits"]
        step()
        launches = ember.cuda.kernel_cache_stats()["memory_hits"] - s0
        te = per_step(step, ember.cuda.synchronize)
        line = f"train step batch {batch:5d}: ember {te * 1e6:8.1f} us ({launches} kernel lookups)"
        try:
            import torch

            tt = per_step(torch_step(batch), torch.cuda.synchronize)
            line += f"  torch {tt * 1e6:8.1f} us  ember/torch {te / tt:5.2f}x"
        except Exception as e:  # torch missing or failing: report ember alone
            line += f"  (torch: {type(e).__name__}: {e})"
        print(line, flush=True)
    n = 1 << 28
    rng = ember.random.default_rng(0)
    tf = per_step(
        lambda: ember.full(n, 1.0, dtype=ember.float32, device="cuda"), ember.cuda.synchronize, n=20
    )
    tn = per_step(
        lambda: rng.standard_normal(n, dtype=ember.float32, device="cuda"),
        ember.cuda.synchronize,
        n=20,
    )
    print(
        f"standard_normal 2^28 f32: {tn * 1e3:.3f} ms, full(): {tf * 1e3:.3f} ms, "
        f"{100 * tf / tn:.1f}% of fill",
        flush=True,
    )


if __name__ == "__main__":
    main()
