"""GPU benchmark, startup: ``import`` and the first ``(x * 3 + 1).sum()`` of a fresh process.

Each library runs in fresh child processes with an empty kernel cache directory (ember's, CuPy's,
PyTorch's kernels ship compiled): the time of ``import`` alone, then the time from the end of the
import to the first result on the host, which includes creating the CUDA context, making ``x``
(1000 float32 on the GPU), the two elementwise ops and the sum. Targets (ember): import at most
150 ms, first call at most 50 ms, and nothing compiled (every kernel loaded from the package's
shipped set). Each figure is the median of ``ROUNDS`` processes.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile

from ._gpu_common import Row, _verdict
from ._report import fmt_time
from ._runner import _error

IMPORT_S = 150e-3
FIRST_S = 50e-3
ROUNDS = 3
CASE = "(x*3+1).sum() f32 1000"

# The child: `python -c CHILD lib`; prints one JSON object. Everything before the import (Python's
# own start) is outside the figures.
_CHILD = r"""
import json, sys, time
lib = sys.argv[1]
t0 = time.perf_counter()
if lib == "ember":
    import ember as m
elif lib == "torch":
    import torch as m
else:
    import cupy as m
t1 = time.perf_counter()
# The CUDA context first (its own figure), then the op.
if lib == "cupy":
    m.cuda.Device(0).synchronize()
else:
    m.cuda.synchronize()
t2 = time.perf_counter()
if lib == "cupy":
    x = m.arange(1000, dtype=m.float32)
else:
    x = m.arange(1000, dtype=m.float32, device="cuda")
r = float((x * 3 + 1).sum())
t3 = time.perf_counter()
out = {"import_s": t1 - t0, "first_s": t3 - t1, "context_s": t2 - t1, "op_s": t3 - t2,
       "correct": r == 1499500.0}
if lib == "ember":
    out["stats"] = m.cuda.kernel_cache_stats()
print(json.dumps(out))
"""


def _child(lib: str, tmp: str, i: int) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)  # this process's ember
    for key, sub in (("EMBER_CACHE_DIR", "ember"), ("CUPY_CACHE_DIR", "cupy")):
        env[key] = os.path.join(tmp, f"{sub}{i}")  # empty: a new directory per process
        os.makedirs(env[key], exist_ok=True)
    env.pop("EMBER_DISK_CACHE", None)
    env.pop("EMBER_SHIPPED_KERNELS", None)
    try:
        p = subprocess.run(
            [sys.executable, "-c", _CHILD, lib],
            capture_output=True,
            text=True,
            env=env,
            timeout=300,
        )
    except subprocess.TimeoutExpired:
        return {"error": "child process timed out after 300 s"}
    try:
        out = json.loads(p.stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        tail = " | ".join((p.stderr or p.stdout).strip().splitlines()[-3:])
        return {"error": f"child process exited with {p.returncode}: {tail}"[:300]}
    if out.get("correct") is False:
        out["error"] = "wrong result"
    return out


def _measure(lib: str, tmp: str, log) -> dict:
    runs = []
    for i in range(ROUNDS):
        log(f"startup: {lib}, fresh process {i + 1}/{ROUNDS}")
        out = _child(lib, tmp, i)
        if "error" in out:
            return out
        runs.append(out)
    keys = ("import_s", "first_s", "context_s", "op_s")
    res = {k: statistics.median(r[k] for r in runs) for k in keys}
    res["runs"] = runs
    if lib == "ember":  # the kernel counters of the median process's first call
        res["stats"] = runs[-1].get("stats", {})
    return res


def startup_cases(names: list[str], log) -> list[Row]:
    """Rows for import and the first call of each library in `names` ("ember" first)."""
    res: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="ember-startup-") as tmp:
        for lib in names:
            try:
                res[lib] = _measure(lib, tmp, log)
            except Exception as e:  # this library's rows carry the error
                res[lib] = {"error": _error(e)}
    rows = []
    for key, case, limit in (
        ("import_s", "import, fresh process", IMPORT_S),
        ("first_s", f"first {CASE} after import", FIRST_S),
    ):
        e = res.get("ember", {})
        for lib in names:
            out = res[lib]
            row = Row(case, lib, data=dict(out))
            if lib == "ember":
                row.target = f"<= {limit * 1e3:g} ms"
            if "error" in out:
                row.detail = out["error"][:60]
                row.status = "ERROR" if lib == "ember" else ""
                rows.append(row)
                continue
            row.measured = fmt_time(out[key])
            if key == "first_s":  # where the time went: the CUDA context, then the op
                row.detail = f"ctx {fmt_time(out['context_s'])}, op {fmt_time(out['op_s'])}"
            if lib == "ember":
                ok = out[key] <= limit
                if key == "first_s":
                    st = out.get("stats", {})
                    n = st.get("compiles", 0)
                    row.detail += f", {n} compiled, {st.get('shipped_hits', 0)} shipped"
                    ok = ok and n == 0
                row.status = _verdict(ok)
            elif "error" not in e and key in e:
                row.detail += (", " if row.detail else "") + f"ember {e[key] / out[key]:.2f}x"
            rows.append(row)
    return rows
