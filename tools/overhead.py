"""On the GPU machine: host time per call of small ember ops from Python, alone and after
PyTorch and CuPy have initialized in the same process (the benchmark's situation)."""

import sys
import time

import ember


def per_call(f, n=20000, rounds=7):
    best = 1e9
    for _ in range(rounds):
        ember.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(n):
            f()
        ember.cuda.synchronize()
        best = min(best, (time.perf_counter() - t0) / n)
    return best * 1e6


def report(tag):
    g = ember.ones(1, dtype=ember.float32, device="cuda")
    c = ember.ones(1, dtype=ember.float32, device="cpu")
    g + g
    cases = {
        "x + x (cuda)": lambda: g + g,
        "x + x (cpu)": lambda: c + c,
        "empty(1) (cuda)": lambda: ember.empty(1, dtype=ember.float32, device="cuda"),
        "x.sum() (cuda)": lambda: g.sum(),
        "empty lambda": lambda: None,
    }
    for name, f in cases.items():
        print(f"{tag:14} {name:18} {per_call(f):6.2f} us", flush=True)


g0 = ember.ones(1, dtype=ember.float32, device="cuda")
t_end = time.perf_counter() + 1.0
while time.perf_counter() < t_end:  # warm-up: clocks up
    g0 + g0
report("ember alone")
report("ember again")
if "--others" in sys.argv:
    import cupy
    import torch

    t = torch.ones(1, device="cuda")
    cp = cupy.ones(1, dtype=cupy.float32)
    (t + t, cp + cp)
    torch.cuda.synchronize()
    report("after torch+cp")
    print(f"{'torch':14} {'x + x':18} {per_call(lambda: t + t):6.2f} us")
