"""Peak memory of ``a + b`` on 1e7 float32, measured in a fresh process.

Run by the benchmark as ``python -m ember.bench._memory --lib ember|numpy --device cpu|cuda``;
prints one JSON object on its last line of output.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import threading

import numpy as np

import ember

from ._libs import device_sync

N = 10**7
TOLERANCE = 0.10  # the op may use output + 10% of (inputs + output) on top of its inputs


def _rss() -> int:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        import psutil

        return psutil.Process().memory_info().rss


def _reset_peak() -> bool:
    # Linux: writing 5 to clear_refs resets VmHWM to the current RSS, so VmHWM afterwards is
    # the exact peak of what follows (no sampling, no import-time peaks mixed in).
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _hwm() -> int | None:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def _maxrss() -> int | None:
    try:
        import resource
    except ImportError:
        return None
    r = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return r if sys.platform == "darwin" else r * 1024


class _Sampler(threading.Thread):
    """Fallback where VmHWM cannot be reset: samples RSS while the op runs (it sees the peak
    only if the op releases the GIL, which ember's and NumPy's large loops do)."""

    def __init__(self):
        super().__init__(daemon=True)
        self.peak = _rss()
        self.done = threading.Event()

    def run(self):
        while not self.done.is_set():
            self.peak = max(self.peak, _rss())
            self.done.wait(0.0005)


def _measure(lib: str, device: str, n: int) -> dict:
    if lib == "ember":
        xp = ember
        cuda = getattr(xp, "cuda", None)
        on_cuda = device.startswith("cuda")
        if on_cuda:
            sync = device_sync(xp, device)
        else:

            def sync():
                pass

        def full(v, k=n):
            return xp.full((k,), v, dtype=xp.float32, device=device)

        def head(x):
            return xp.asnumpy(x[:4])
    else:
        xp = np
        on_cuda = False
        cuda = None

        def sync():
            pass

        def full(v, k=n):
            return xp.full((k,), v, dtype=xp.float32)

        def head(x):
            return x[:4].copy()

    # Created directly in the library (full writes every page), so no host staging copies
    # sit in the baseline.
    a = full(1.5)
    b = full(2.5)
    warm = full(1.0, 16)
    warm = warm + warm  # first-op lazy set-up (thread pool, kernel caches) is not the op
    del warm
    sync()
    gc.collect()

    dev_stats = None
    if on_cuda:
        reset = getattr(cuda, "reset_peak_memory_stats", None)
        peak_fn = getattr(cuda, "max_memory_allocated", None)
        cur_fn = getattr(cuda, "memory_allocated", None)
        if reset and peak_fn and cur_fn:
            reset()
            dev_stats = (cur_fn, peak_fn)
            dev_base = cur_fn()

    base = _rss()
    exact = _reset_peak()
    maxrss_before = _maxrss()
    sampler = _Sampler()
    sampler.start()
    out = a + b
    sync()
    sampler.done.set()
    sampler.join()
    peak = _hwm() if exact else None
    method = "VmHWM after clear_refs"
    if peak is None:
        peak = sampler.peak
        method = "RSS sampling"
        m = _maxrss()
        if m is not None and maxrss_before is not None and m > maxrss_before:
            peak = max(peak, m)
            method = "ru_maxrss / RSS sampling"
    values = [float(v) for v in head(out)]
    in_bytes = 2 * 4 * n
    out_bytes = 4 * n
    allowed = out_bytes + TOLERANCE * (in_bytes + out_bytes)
    res = {
        "lib": lib,
        "device": device,
        "n": n,
        "input_bytes": in_bytes,
        "output_bytes": out_bytes,
        "allowed_extra_bytes": int(allowed),
        "correct": values == [4.0] * 4,
    }
    if on_cuda:
        res["host_baseline_rss"] = base
        res["host_extra_bytes"] = peak - base
        if dev_stats is None:
            res["error"] = (
                "ember.cuda has no memory_allocated / max_memory_allocated / "
                "reset_peak_memory_stats to measure device memory"
            )
            return res
        res["method"] = "ember.cuda.max_memory_allocated"
        res["baseline_bytes"] = dev_base
        res["peak_bytes"] = dev_stats[1]()
    else:
        res["method"] = method
        res["baseline_bytes"] = base
        res["peak_bytes"] = peak
    res["extra_bytes"] = res["peak_bytes"] - res["baseline_bytes"]
    res["ok"] = res["extra_bytes"] <= allowed and res["correct"]
    return res


def run_subprocess(lib: str, device: str, n: int = N, timeout: float = 300) -> dict:
    """Runs the measurement in a fresh interpreter with this one's import path."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    cmd = [
        sys.executable,
        "-m",
        "ember.bench._memory",
        "--lib",
        lib,
        "--device",
        device,
    ]
    cmd += ["--n", str(n)]
    try:
        p = subprocess.run(
            cmd, check=False, capture_output=True, text=True, env=env, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        return {"lib": lib, "device": device, "error": f"timed out after {timeout} s"}
    lines = p.stdout.strip().splitlines()
    if p.returncode != 0 or not lines:
        tail = (p.stderr or p.stdout).strip().splitlines()[-3:]
        return {
            "lib": lib,
            "device": device,
            "error": " | ".join(tail) or f"rc={p.returncode}",
        }
    try:
        return json.loads(lines[-1])
    except json.JSONDecodeError:
        return {
            "lib": lib,
            "device": device,
            "error": f"unparseable output: {lines[-1]!r}",
        }


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m ember.bench._memory")
    p.add_argument("--lib", choices=("ember", "numpy"), default="ember")
    p.add_argument("--device", default="cpu")
    p.add_argument("--n", type=int, default=N)
    args = p.parse_args(argv)
    try:
        res = _measure(args.lib, args.device, args.n)
    except Exception as e:  # reported to the parent as this case's error
        res = {
            "lib": args.lib,
            "device": args.device,
            "error": f"{type(e).__name__}: {e}",
        }
    print(json.dumps(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
