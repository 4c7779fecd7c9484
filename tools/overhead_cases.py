"""On the GPU machine: host time per call of 1-element ops from Python, timed as the benchmark
times them (timeit statements), in a fresh process: alone, then with PyTorch and CuPy loaded.
Usage: python3 tools/overhead_cases.py [--others]"""

import sys
import time
import timeit

import ember


def per_call(stmt, n=20000, rounds=7, **names):
    setup = "; ".join(f"{k} = _n[{k!r}]" for k in names) or "pass"
    t = timeit.Timer(stmt, setup=setup, globals={"_n": names})
    best = 1e9
    for _ in range(rounds):
        ember.cuda.synchronize()
        t0 = time.perf_counter()
        t.timeit(n)
        ember.cuda.synchronize()
        best = min(best, (time.perf_counter() - t0) / n)
    return best * 1e6


def report(tag):
    g = ember.ones(1, dtype=ember.float32, device="cuda")
    c = ember.ones(1, dtype=ember.float32, device="cpu")
    for stmt in ("x + x", "x * x", "x + 1.0", "f(x)", "x.sum()", "-x"):
        g2 = eval(stmt, {"x": g, "f": ember.sin})  # compiles
        del g2
    cases = [
        ("x + x (cuda)", "x + x", g),
        ("x * x (cuda)", "x * x", g),
        ("x + 1.0 (cuda)", "x + 1.0", g),
        ("-x (cuda)", "-x", g),
        ("sin(x) (cuda)", "f(x)", g),
        ("x.sum() (cuda)", "x.sum()", g),
        ("x + x (cpu)", "x + x", c),
        ("x + x (cuda) again", "x + x", g),
    ]
    for name, stmt, x in cases:
        print(f"{tag:16} {name:20} {per_call(stmt, x=x, f=ember.sin):6.2f} us", flush=True)
    bare = ember.cuda._c._bare_launch_seconds(20000) * 1e6
    print(f"{tag:16} {'bare cuLaunchKernel':20} {bare:6.2f} us")


g0 = ember.ones(1, dtype=ember.float32, device="cuda")
t_end = time.perf_counter() + 1.0
while time.perf_counter() < t_end:  # warm-up: clocks up
    g0 + g0
report("ember alone")
if "--others" in sys.argv:
    import cupy
    import torch

    t = torch.ones(1, device="cuda")
    cp = cupy.ones(1, dtype=cupy.float32)
    (t + t, cp + cp)
    torch.cuda.synchronize()
    report("after torch+cp")
    print(f"{'torch':16} {'x + x':20} {per_call('x + x', x=t):6.2f} us")
    print(f"{'torch':16} {'sin(x)':20} {per_call('f(x)', x=t, f=torch.sin):6.2f} us")
    print(f"{'cupy':16} {'x + x':20} {per_call('x + x', x=cp):6.2f} us")
