"""The CPU convolution target of issue 27: a 3x3 conv2d (padding 1) on 32x64x56x56 float32,
forward and backward, ember beside PyTorch's CPU build in one process (best of 5, after a
warm-up; both limited to this machine's cores).

    PYTHONPATH=<ember> python tools/conv_cpu_vs_torch.py   # in an environment with torch
"""

from __future__ import annotations

import os
import time

import ember
import ember.nn.functional as F
import numpy as np
import torch


def main():
    torch.set_num_threads(os.cpu_count() or 1)
    rng = np.random.default_rng(0)
    xn = rng.random((32, 64, 56, 56), dtype=np.float32)
    wn = rng.random((64, 64, 3, 3), dtype=np.float32)
    ex, ew = ember.asarray(xn).requires_grad_(), ember.asarray(wn).requires_grad_()
    tx, tw = torch.from_numpy(xn).requires_grad_(), torch.from_numpy(wn).requires_grad_()

    def run_ember():
        t0 = time.perf_counter()
        y = F.conv2d(ex, ew, padding=1)
        float(y[0, 0, 0, 0])
        t1 = time.perf_counter()
        y.sum().backward()
        float(ew.grad[0, 0, 0, 0])
        t2 = time.perf_counter()
        ex.grad = ew.grad = None
        return t1 - t0, t2 - t1, y

    def run_torch():
        t0 = time.perf_counter()
        y = torch.nn.functional.conv2d(tx, tw, padding=1)
        t1 = time.perf_counter()
        y.sum().backward()
        t2 = time.perf_counter()
        tx.grad = tw.grad = None
        return t1 - t0, t2 - t1, y

    e, t = [], []
    for _ in range(6):  # interleaved, so host noise hits both
        e.append(run_ember())
        t.append(run_torch())
    err = np.abs(ember.asnumpy(e[-1][2]) - t[-1][2].detach().numpy()).max()
    ef, eb = min(r[0] for r in e[1:]), min(r[1] for r in e[1:])
    tf, tb = min(r[0] for r in t[1:]), min(r[1] for r in t[1:])
    print(
        f"conv2d 3x3 32x64x56x56 f32, {os.cpu_count()} cores: ember fwd {ef:.3f}s bwd {eb:.3f}s"
        f" | torch {torch.__version__} fwd {tf:.3f}s bwd {tb:.3f}s | ember/torch time: fwd "
        f"{ef / tf:.2f}x, bwd {eb / tb:.2f}x, fwd+bwd {(ef + eb) / (tf + tb):.2f}x "
        f"(target <= 2x) | max |diff| {err:.2e}"
    )


if __name__ == "__main__":
    main()
