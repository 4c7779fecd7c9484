"""ember.debug and ember.profiler on a real GPU, in child processes (a fault destroys the CUDA
context; some GPUs admit one process with a context at a time, so `make gpu-check` runs this
file in its own pytest process, as test_cuda_processes.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest
from conftest import cuda_unavailable_reason

REASON = cuda_unavailable_reason()
pytestmark = pytest.mark.skipif(REASON is not None, reason=f"no CUDA device: {REASON}")


def run(tmp_path, code, **env):
    script = tmp_path / "child.py"
    script.write_text(textwrap.dedent(code))
    full = dict(os.environ, EMBER_CACHE_DIR=str(tmp_path / "cache"), EMBER_SHIPPED_KERNELS="0")
    full.update({k: str(v) for k, v in env.items()})
    r = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, env=full, timeout=300,
        cwd=tmp_path,
    )  # fmt: skip
    if r.returncode != 0 and "cuDevicePrimaryCtxRetain failed" in r.stderr:
        pytest.skip("the GPU admits one process at a time: run this file in its own process")
    return r


def line_of(code, marker):
    for i, text in enumerate(textwrap.dedent(code).splitlines(), 1):
        if marker in text:
            return i
    raise AssertionError(marker)


LEDGER = """
import json, numpy as np, ember
with ember.debug.ledger() as led:
    x = ember.ones(1 << 20, dtype=ember.float32, device="cuda")
    y = ember.sin(x) * 3                            # L_COMPILE
    v = y.sum().item()                              # L_ITEM
    m = y[y > 2]                                    # L_MASK
    p = ember.cuda.pinned_empty((1 << 20,), dtype=ember.float32)
    q = y.to("cpu", non_blocking=True)              # L_PINNED
    ember.cuda.synchronize()
print(json.dumps([dict(kind=e.kind, op=e.op, line=e.line, ms=e.ms, bytes=e.bytes,
                       explicit=e.explicit, pinned=e.pinned) for e in led.events]))
"""


def test_ledger_on_the_gpu(tmp_path):
    r = run(tmp_path, LEDGER)
    assert r.returncode == 0, r.stderr
    ev = json.loads(r.stdout.splitlines()[-1])

    def at(marker, kind):
        return [e for e in ev if e["line"] == line_of(LEDGER, marker) and e["kind"] == kind]

    comp = at("L_COMPILE", "compile")
    assert len(comp) >= 2 and all(e["ms"] > 1 for e in comp), ev  # NVRTC takes milliseconds
    assert at("L_ITEM", "sync") and at("L_ITEM", "transfer")[0]["bytes"] == 4
    assert at("L_MASK", "sync")
    assert any(e["kind"] == "alloc" for e in ev)


FAULT = """
import ember
bad = ember.RawKernel(r'''
extern "C" __global__ void write_far(float* p) { p[threadIdx.x + (1ull << 40)] = 1.0f; }
''', "write_far")
x = ember.zeros(64, dtype=ember.float32, device="cuda")
bad((1,), (32,), (x,))                              # L_BAD
try:  # the fault shows at the next call that synchronizes or loads a module (x + 1's)
    y = x + 1                                       # L_AFTER
    y.sum().item()
except ember.cuda.CudaError as e:
    print("FIRST:", e)
try:
    ember.ones(3, device="cuda").sum().item()
except ember.cuda.CudaError as e:
    print("SECOND:", e)
"""


def test_a_faulting_kernel_is_named_with_its_line(tmp_path):
    r = run(tmp_path, FAULT)
    assert r.returncode == 0, r.stderr
    first = [x for x in r.stdout.splitlines() if x.startswith("FIRST:")][0]
    second = [x for x in r.stdout.splitlines() if x.startswith("SECOND:")][0]
    assert "CUDA_ERROR_ILLEGAL_ADDRESS" in first, first
    assert "write_far" in first and f"child.py:{line_of(FAULT, 'L_BAD')}" in first, first
    assert "context is lost" in first and "restart the Python process" in first
    assert "lost to an earlier fault" in second


ASSERT = """
import ember
k = ember.RawKernel(r'''
extern "C" __device__ void __assertfail(const char*, const char*, unsigned, const char*,
                                        unsigned long);
extern "C" __global__ void check_positive(const float* p) {
    if (!(p[threadIdx.x] > 0)) __assertfail("p > 0", "child.cu", 3, "check_positive", 1);
}
''', "check_positive")
x = ember.zeros(32, dtype=ember.float32, device="cuda")
try:
    k((1,), (32,), (x,))                            # L_ASSERT
    ember.cuda.synchronize()
except ember.cuda.CudaError as e:
    print("ERR:", e)
"""


def test_a_device_side_assert_is_named(tmp_path):
    r = run(tmp_path, ASSERT)
    assert r.returncode == 0, r.stderr
    err = [x for x in r.stdout.splitlines() if x.startswith("ERR:")][0]
    assert "CUDA_ERROR_ASSERT" in err and "check_positive" in err, err
    assert f"child.py:{line_of(ASSERT, 'L_ASSERT')}" in err


PROFILE = """
import json, time, ember
x = ember.ones(1 << 26, dtype=ember.float32, device="cuda")
y = x * 2 + 1
ember.cuda.synchronize()
t0 = time.perf_counter()
with ember.profiler.profile() as prof:
    for _ in range(5):
        y = x * 2 + 1
    s = float(y.sum())
wall = (time.perf_counter() - t0) * 1e6
ka = {a.key: a for a in prof.key_averages()}
prof.export_chrome_trace("trace.json")
cuda_total = sum(e.self_cuda_time_total for e in prof.events() if e.kind == "op")
print(json.dumps({"gbps": ka["ember.multiply"].gbps, "mul_cuda": ka["ember.multiply"].cuda_time,
                  "cuda_total": cuda_total, "wall": wall, "prof_wall": prof.wall_time_us,
                  "table": prof.key_averages().table(sort_by="cuda_time_total", row_limit=6)}))
"""


def test_profiler_times_kernels_on_the_gpu(tmp_path):
    r = run(tmp_path, PROFILE)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.splitlines()[-1])
    print(out["table"])
    # x * 2 over 2^26 float32 moves 512 MiB: tens of microseconds at HBM speed.
    assert 20 < out["mul_cuda"] < 5000
    assert out["gbps"] > 300, out  # an H100/H200 streams > 2 TB/s; a loose floor
    assert out["cuda_total"] <= out["prof_wall"] <= out["wall"] * 1.01
    trace = json.loads((tmp_path / "trace.json").read_text())
    assert any(e.get("cat") == "kernel" for e in trace["traceEvents"])
