"""ember.debug and ember.profiler on the "cuda" device of a fake driver (tools/fake_cuda: kernels
load and launch but never run, copies really copy, NVRTC answers with a stand-in cubin), in child
processes: every event kind recorded at the right line, the strict modes, a fault named by the
ring of recent launches, the profiler's kernels and trace, memory snapshots. What needs a real
GPU (kernel times, a real faulting kernel) is in tests/gpu/test_debug_gpu.py."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")


@pytest.fixture(scope="module")
def fake_lib(tmp_path_factory):
    d = tmp_path_factory.mktemp("fake_cuda")
    src = os.path.join(ROOT, "tools", "fake_cuda")
    r = subprocess.run(
        ["g++", "-std=c++20", "-O1", "-shared", "-fPIC", f"-I{ROOT}/src", f"-I{ROOT}/include",
         f"{src}/driver.cpp", f"{src}/defaults.cpp", "-o", str(d / "libcuda.so.1")],
        capture_output=True, text=True,
    )  # fmt: skip
    if r.returncode != 0:
        pytest.skip(f"the fake driver does not build here: {r.stderr[-400:]}")
    os.symlink("libcuda.so.1", d / "libnvrtc.so.13")
    return d


def run(fake_lib, tmp_path, code, **env):
    script = tmp_path / "child.py"
    script.write_text(textwrap.dedent(code))
    full = dict(os.environ)
    full.update(
        LD_LIBRARY_PATH=str(fake_lib),
        EMBER_CUDA_PATHFINDER="0",
        EMBER_SHIPPED_KERNELS="0",
        EMBER_CACHE_DIR=str(tmp_path / "cache"),
        EMBER_DEVICE="cuda",
    )
    full.update({k: str(v) for k, v in env.items()})
    r = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, env=full, timeout=300,
        cwd=tmp_path,
    )  # fmt: skip
    return r, str(script)


def line_of(code, marker):
    for i, text in enumerate(textwrap.dedent(code).splitlines(), 1):
        if marker in text:
            return i
    raise AssertionError(marker)


LEDGER = """
import json, numpy as np, ember
x = ember.ones(1000, dtype=ember.float32, device="cuda")
with ember.debug.ledger() as led:
    y = x * 3 + 1                                   # L_COMPILE
    v = y.sum().item()                              # L_ITEM
    a = ember.asnumpy(y)                            # L_ASNUMPY
    t = repr(y[:3])                                 # L_REPR
    m = y[y > 2]                                    # L_MASK
    h = ember.asarray(np.ones(1000, np.float32), device="cuda")  # L_ASARRAY
    z = y[np.array([1, 2])]                         # L_IMPLICIT_H2D
    b = bool(y[0] > 0)                              # L_BOOL
    n = ember.nonzero(y)                            # L_NONZERO
    p = ember.cuda.pinned_empty((1000,), dtype=ember.float32)
    p2 = y.to("cpu", non_blocking=False)            # L_TO
ev = [dict(kind=e.kind, op=e.op, line=e.line, explicit=e.explicit, bytes=e.bytes,
           direction=e.direction, what=e.what, file=e.file) for e in led.events]
print(json.dumps({"events": ev, "summary": led.summary(), "table": str(led)}))
"""


def test_ledger_records_each_event_at_its_line(fake_lib, tmp_path):
    r, script = run(fake_lib, tmp_path, LEDGER)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.splitlines()[-1])
    ev = out["events"]
    assert all(e["file"] == script for e in ev), ev

    def at(marker, kind):
        line = line_of(LEDGER, marker)
        return [e for e in ev if e["line"] == line and e["kind"] == kind]

    compiles = at("L_COMPILE", "compile")
    assert len(compiles) == 2, ev  # multiply and add, each a kernel never seen before
    assert all("first use" in e["what"] or "new" in e["what"] for e in compiles)
    assert at("L_COMPILE", "alloc"), "the pool grew for the results"
    item_sync = at("L_ITEM", "sync")
    item_copy = at("L_ITEM", "transfer")
    assert item_sync and not item_sync[0]["explicit"]
    assert item_copy[0]["direction"] == "device->host" and item_copy[0]["bytes"] == 4
    assert "item" in item_sync[0]["op"]
    assert at("L_ASNUMPY", "transfer")[0]["explicit"]
    assert at("L_ASNUMPY", "transfer")[0]["bytes"] == 4000
    assert at("L_REPR", "transfer")[0]["op"] == "repr(x)"
    assert not at("L_REPR", "transfer")[0]["explicit"]
    assert at("L_MASK", "sync"), "boolean-mask indexing reads the count"
    assert at("L_ASARRAY", "transfer")[0]["explicit"]
    assert at("L_ASARRAY", "transfer")[0]["direction"] == "host->device"
    imp = at("L_IMPLICIT_H2D", "transfer")
    assert imp and not imp[0]["explicit"] and imp[0]["direction"] == "host->device"
    assert at("L_BOOL", "sync")[0]["op"] == "bool(x)"
    assert "nonzero" in at("L_NONZERO", "sync")[0]["op"]
    assert at("L_TO", "transfer")[0]["explicit"]
    s = out["summary"]
    assert s["compile"]["count"] >= 2 and s["sync"]["count"] >= 4
    assert s["implicit_syncs"] >= 4 and s["implicit_transfers"] >= 2
    table = out["table"]
    assert "ember.debug.ledger:" in table and f"child.py:{line_of(LEDGER, 'L_ITEM')}" in table


def test_disk_cache_loads_are_recorded(fake_lib, tmp_path):
    code = """
    import ember
    x = ember.ones(10, dtype=ember.float32, device="cuda")
    with ember.debug.ledger(kinds=["compile", "disk_load"]) as led:
        y = ember.sin(x)
    print(sorted({e.kind for e in led.events}))
    """
    r1, _ = run(fake_lib, tmp_path, code)
    r2, _ = run(fake_lib, tmp_path, code)
    assert r1.returncode == 0 and r2.returncode == 0, r1.stderr + r2.stderr
    assert r1.stdout.strip().splitlines()[-1] == "['compile']"
    assert r2.stdout.strip().splitlines()[-1] == "['disk_load']"


STRICT = """
import warnings, numpy as np, ember
x = ember.ones(100, dtype=ember.float32, device="cuda")
s = x.sum()
ember.debug.set_sync_mode("error")
try:
    s.item()                                        # L_RAISES
except ember.debug.SyncError as e:
    print("RAISED", e)
a = ember.asnumpy(s)                                # explicit: no error
c = s.cpu()
ember.cuda.synchronize()
ember.debug.set_sync_mode("off")
with ember.debug.sync_mode("error"):
    try:
        float(s)
    except ember.debug.SyncError:
        print("CTX RAISED")
float(s)
print("AFTER OK", ember.debug.get_sync_mode())
ember.debug.set_transfer_mode("warn")
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    z = x[np.array([1, 2])]                         # L_WARNS
    y = ember.asarray(np.ones(100, np.float32), device="cuda")  # L_EXPLICIT
print("WARNINGS", [(type(i.message).__name__, i.lineno) for i in w])
"""


def test_strict_modes_raise_and_warn_on_implicit_only(fake_lib, tmp_path):
    r, _ = run(fake_lib, tmp_path, STRICT)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    line = line_of(STRICT, "L_RAISES")
    assert "RAISED" in out and "item" in out and f"child.py:{line}" in out
    assert "CTX RAISED" in out and "AFTER OK off" in out
    warns = [x for x in out.splitlines() if x.startswith("WARNINGS")][0]
    assert f"('TransferWarning', {line_of(STRICT, 'L_WARNS')})" in warns
    assert f"{line_of(STRICT, 'L_EXPLICIT')})" not in warns, warns


def test_strict_mode_from_the_environment(fake_lib, tmp_path):
    code = """
    import ember
    x = ember.ones(3, device="cuda")
    print(ember.debug.get_sync_mode(), ember.debug.get_transfer_mode())
    try:
        x.sum().item()
    except ember.debug.SyncError:
        print("RAISED")
    """
    r, _ = run(fake_lib, tmp_path, code, EMBER_SYNC_MODE="error", EMBER_TRANSFER_MODE="warn")
    assert r.returncode == 0, r.stderr
    assert "error warn" in r.stdout and "RAISED" in r.stdout


FAULT = """
import ember
x = ember.ones(100, dtype=ember.float32, device="cuda")
y = x + 1                                           # L_FIRST
z = y * 2                                           # L_FAULTS
try:
    w = z - 1                                       # L_AFTER
except ember.cuda.CudaError as e:
    print("FIRST:", e)
try:
    (x + 5).sum().item()
except ember.cuda.CudaError as e:
    print("SECOND:", e)
"""


def test_fault_names_the_launches_and_the_lost_context(fake_lib, tmp_path):
    # The second launch (y * 2) faults; the driver refuses the next one (z - 1) with the
    # fault's error: the candidates are the two launches since the last synchronization.
    r, _ = run(fake_lib, tmp_path, FAULT, EMBER_FAKE_FAULT_AT_LAUNCH=2)
    assert r.returncode == 0, r.stderr
    first = [x for x in r.stdout.splitlines() if x.startswith("FIRST:")][0]
    second = [x for x in r.stdout.splitlines() if x.startswith("SECOND:")][0]
    assert "CUDA_ERROR_ILLEGAL_ADDRESS" in first
    assert "The fault is in one of the 2 launches" in first, first
    assert f"child.py:{line_of(FAULT, 'L_FIRST')} in <module>" in first
    assert f"child.py:{line_of(FAULT, 'L_FAULTS')} in <module>" in first
    assert f"child.py:{line_of(FAULT, 'L_AFTER')} in <module>)" not in first
    assert "context is lost" in first and "restart the Python process" in first
    assert "lost to an earlier fault" in second and "restart" in second


def test_fault_with_launch_blocking_names_one_op(fake_lib, tmp_path):
    code = """
    import ember
    x = ember.ones(100, dtype=ember.float32, device="cuda")
    try:
        y = ember.exp(x)                                # L_EXP
    except ember.cuda.CudaError as e:
        print("ERR:", e)
    """
    r, _ = run(fake_lib, tmp_path, code, EMBER_FAKE_FAULT_AT_LAUNCH=1, EMBER_LAUNCH_BLOCKING=1)
    assert r.returncode == 0, r.stderr + r.stdout
    err = [x for x in r.stdout.splitlines() if x.startswith("ERR:")][0]
    assert "The fault is in `exp`" in err, err
    assert f"child.py:{line_of(code, 'L_EXP')}" in err


PROFILE = """
import json, ember
x = ember.ones(1 << 16, dtype=ember.float32, device="cuda")
with ember.profiler.profile(profile_memory=True) as prof:
    y = x * 2 + 1                                   # L_ALLOC
    s = ember.sum(y)
    with ember.profiler.record_function("my_region"):
        z = y - 3
    v = s.item()
with ember.profiler.record_function("outside"):  # no profile: nothing recorded, no error
    pass
ka = {a.key: a for a in prof.key_averages()}
prof.export_chrome_trace("trace.json")
snap = ember.cuda.memory_snapshot()
print(json.dumps({
    "keys": sorted(ka),
    "mul_cuda": ka["ember.multiply"].cuda_time_total,
    "mul_bytes": ka["ember.multiply"].bytes,
    "mul_gbps": ka["ember.multiply"].gbps,
    "sum_count": ka["ember.sum"].count,
    "kernels": sorted(k for k, a in ka.items() if a.kind == "kernel"),
    "wall": prof.wall_time_us,
    "cpu": sum(e.self_cpu_time_total for e in prof.events()),
    "table": prof.key_averages().table(sort_by="cuda_time_total", row_limit=5),
    "where": [a["where"] for a in snap],
}))
"""


def test_profiler_records_ops_kernels_and_a_trace(fake_lib, tmp_path):
    r, _ = run(fake_lib, tmp_path, PROFILE)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.splitlines()[-1])
    assert {"ember.multiply", "ember.add", "ember.sum", "ember.ndarray.item"} <= set(out["keys"])
    assert any(k.startswith("ember_map_multiply") for k in out["kernels"]), out["kernels"]
    assert any(k.startswith("ember_reduce_sum") for k in out["kernels"]), out["kernels"]
    # a record_function region is a timed row of its own (how cuDNN's calls are timed)
    assert "my_region" in out["kernels"] and "outside" not in out["keys"], out["kernels"]
    # The fake driver times every kernel at 1 us.
    assert out["mul_cuda"] == pytest.approx(1.0)
    assert out["mul_bytes"] == 2 * 4 * (1 << 16)
    assert out["mul_gbps"] == pytest.approx(2 * 4 * (1 << 16) / 1e3)
    assert out["sum_count"] == 1
    assert 0 < out["cpu"] <= out["wall"]
    assert "Self CUDA" in out["table"] and "ember.multiply" in out["table"]
    line = line_of(PROFILE, "L_ALLOC")
    assert any(f"child.py:{line} in <module>" in w for w in out["where"]), out["where"]
    trace = json.loads((tmp_path / "trace.json").read_text())
    names = {(e.get("cat"), e["name"]) for e in trace["traceEvents"]}
    assert ("op", "ember.multiply") in names
    assert any(c == "kernel" and n.startswith("ember_map_multiply") for c, n in names)
    kernels = [e for e in trace["traceEvents"] if e.get("cat") == "kernel"]
    assert all(e["pid"] == "cuda:0" and e["dur"] > 0 for e in kernels)


def test_ledger_off_installs_nothing(fake_lib, tmp_path):
    code = """
    import ember
    x = ember.ones(10, device="cuda")
    with ember.debug.ledger():
        pass
    print(ember._core._debug.enabled())
    """
    r, _ = run(fake_lib, tmp_path, code)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().splitlines()[-1] == "False"


JIT = """
import warnings, numpy as np, ember
from ember import cuda
from ember.cuda import _jit

@cuda.jit
def add3(a, b, c):
    i = cuda.grid(1)
    if i < c.size:
        c[i] = a[i] + b[i]

x = ember.ones(8, dtype=ember.float32, device="cuda")
add3[1, 32](x, x, x)
assert add3._fast is not None and add3._fast[1] == b"A\\x0b\\x01" * 3, add3._fast
slow = _jit._classify
_jit._classify = None  # a second launch of the same kinds must not classify in Python
add3[1, 32](x, x, x)
add3[(2,), (16,)](x, x, x)
_jit._classify = slow
y = ember.ones(8, dtype=ember.float64, device="cuda")
add3[1, 32](y, y, y)  # another signature: the Python path, a new plan
assert add3._fast[1] == b"A\\x0c\\x01" * 3, add3._fast
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    add3[1, 32](np.ones(4), np.ones(4), np.ones(4))
print("WARN", [type(i.message).__name__ for i in w])
try:
    add3[1, 32](x, x, x)                            # L_FAULT
    ember.cuda.synchronize()
except ember.cuda.CudaError as e:
    print("ERR:", e)
"""


def test_jit_gpu_launch_path_on_the_fake_driver(fake_lib, tmp_path):
    r, _ = run(fake_lib, tmp_path, JIT, EMBER_FAKE_FAULT_AT_LAUNCH=7)
    assert r.returncode == 0, r.stderr
    assert "WARN ['NumbaPerformanceWarning', 'NumbaPerformanceWarning', 'Numba" in r.stdout
    err = [x for x in r.stdout.splitlines() if x.startswith("ERR:")][0]
    assert "ej_add3" in err and f"child.py:{line_of(JIT, 'L_FAULT')} in <module>" in err, err


GRAPHS = """
import json, numpy as np, ember
nn = ember.nn
def x_(seed, shape=(1000,)):
    a = np.random.default_rng(seed).standard_normal(shape, dtype=np.float32)
    return ember.asarray(a, device="cuda")
def reasons(c):
    return [why for kind, why, _ in c.events if kind == "cudagraph"]
out = {}
def small(x):
    return ember.maximum(x * 2 + 1, 0).sum()
c = ember.compile(small, mode="reduce-overhead")
for s in range(6):
    float(c(x_(s)))
c(x_(9, (10, 100))); c(x_(9, (10, 100)))
out["small"] = [c.stats["cudagraph_captures"], c.stats["cudagraph_replays"], reasons(c)]
def bump(x, y):
    x += 1
    return x * y
c = ember.compile(bump, mode="reduce-overhead")
x, y = ember.zeros(8, device="cuda"), ember.full(8, 2.0, device="cuda")
for k in range(4):
    c(x, y)
out["bump"] = [c.stats["cudagraph_captures"], c.stats["cudagraph_replays"], reasons(c)]
c = ember.compile(lambda x: x * float(x.sum()), mode="reduce-overhead")
for s in range(3):
    c(x_(s))
out["reads"] = [c.stats["cudagraph_replays"], reasons(c)]
d = ember.compile(lambda x: nn.functional.dropout(x, 0.5, True), mode="reduce-overhead")
for s in range(3):
    d(x_(0))
out["dropout"] = [d.stats["cudagraph_replays"], reasons(d)]
w = x_(3, (10,)).requires_grad_()
c = ember.compile(lambda x: (x * w).sum(), mode="reduce-overhead")
for _ in range(3):
    c(x_(4, (10,))).backward()
out["grad"] = reasons(c)
g = ember.cuda.CUDAGraph()
a = ember.zeros(4, device="cuda")
b = ember.asarray(np.full(4, 7.0), device="cuda")
with ember.cuda.graph(g):
    a[...] = b  # a device copy: recorded, done at each replay
assert ember.asnumpy(a).tolist() == [0.0] * 4
g.replay()
out["replayed_fill"] = ember.asnumpy(a).tolist()
print(json.dumps(out))
"""


def test_cuda_graph_paths_on_the_fake_driver(fake_lib, tmp_path):
    """ember.compile(mode="reduce-overhead") and CUDAGraph, whose Python only a GPU reaches,
    run their paths on the fake driver's stream capture (copies and fills are recorded and done
    at each replay; a host read inside a capture fails as the real driver's does): captures,
    replays and every refusal with its reason. (A missing _core.empty_like here once failed
    every capture with arguments, first seen on an H100.)"""
    r, _ = run(fake_lib, tmp_path, GRAPHS)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.splitlines()[-1])
    assert out["small"][:2] == [2, 6], out["small"]  # 2 keys: 1 + 5 replays, then 1
    assert out["bump"][:2] == [1, 3], out["bump"]
    assert out["reads"][0] == 0 and "the capture failed" in out["reads"][1][0]
    assert out["dropout"][0] == 0 and "random numbers" in out["dropout"][1][0]
    assert any("require grad" in why for why in out["grad"]), out["grad"]
    assert out["replayed_fill"] == [7.0] * 4


SPILL = """
import json, numpy as np, ember
from ember.dask import DeviceHostFile
d = DeviceHostFile(2500)
a = [ember.asarray(np.full(100, float(i)), device="cuda") for i in range(5)]
for i, x in enumerate(a):
    d[i] = x
out = {"spilled": sorted(d.spilled_keys), "host": str(d.host.d[0][2].device)}
back = d[0]
out["back"] = [str(back.device), float(ember.asnumpy(back)[0])]
d["cpu"] = ember.ones(10_000, device="cpu")
out["held"] = d.device_bytes
print(json.dumps(out))
"""


def test_dask_spilling_of_gpu_arrays_on_the_fake_driver(fake_lib, tmp_path):
    pytest.importorskip("distributed")
    r, _ = run(fake_lib, tmp_path, SPILL)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.splitlines()[-1])
    assert out["spilled"] == [0, 1] and out["host"] == "cpu"
    assert out["back"] == ["cuda:0", 0.0] and out["held"] <= 2500
