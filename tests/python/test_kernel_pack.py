"""Shipped kernels (src/backend/cuda/kernel_pack.hpp): packs are written without a GPU, and with a
GPU the first call of a packed kernel loads it from the pack instead of compiling."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap

import ember
import pytest


def nvrtc_here():
    try:
        ember.cuda.precompile(arch=90, name_filter="no kernel has this name")
        return True
    except Exception:
        return False


pytestmark = pytest.mark.skipif(not nvrtc_here(), reason="no NVRTC here")
needs_cuda = pytest.mark.skipif(
    not ember.cuda.is_available(), reason=f"no CUDA device: {ember.cuda.unavailable_reason()}"
)


def test_pack_written_without_a_gpu(tmp_path):
    path = tmp_path / "sm_90.pack"
    r = ember.cuda._write_kernel_pack(path, 90, name_filter="ember_map_add_")
    assert r["kernels"] > 0
    n, arch = ember._core._cuda.kernel_pack_info(str(path))
    assert (n, arch) == (r["kernels"], 90)
    assert ember._core._cuda.kernel_pack_info(str(tmp_path / "absent.pack")) == (0, 0)
    with pytest.raises(ValueError, match="arch must be a positive int"):
        ember.cuda._write_kernel_pack(path, 0)


def test_pack_command_line(tmp_path):
    out = tmp_path / "sm_80.pack"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "ember",
            "cuda",
            "pack",
            "--arch",
            "80",
            "--out",
            str(out),
            "--filter",
            "ember_map_negative_",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    assert "kernels packed" in r.stdout
    assert ember._core._cuda.kernel_pack_info(str(out))[1] == 80


@needs_cuda
def test_first_call_loads_from_the_pack(tmp_path):
    # A pack of the multiply kernels for this GPU, in a fresh process with no disk cache: the
    # first x * x loads its kernel from the pack.
    code = textwrap.dedent(f"""
        import json, ember
        arch = ember.cuda.get_device_properties(0)
        arch = arch["major"] * 10 + arch["minor"]
        ember.cuda._write_kernel_pack({str(tmp_path)!r} + f"/sm_{{arch}}.pack", arch,
                                      name_filter="ember_map_multiply_")
        ember._core._cuda.set_kernel_pack_dir({str(tmp_path)!r})
        before = ember.cuda.kernel_cache_stats()
        x = ember.arange(1000, dtype="float32", device="cuda")
        y = x * x
        ember.cuda.synchronize()
        after = ember.cuda.kernel_cache_stats()
        ok = float(y[10]) == 100.0
        print(json.dumps({{"ok": ok, "before": before, "after": after}}))
    """)
    env = {**os.environ, "EMBER_DISK_CACHE": "0"}
    r = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300
    )
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["ok"]
    assert out["after"]["shipped_hits"] > out["before"]["shipped_hits"]


# The built-in ops of a first session: each step's kernels must come from the shipped pack.
_WORKLOAD = textwrap.dedent("""
    import json, ember
    import ember.nn as nn
    import ember.nn.functional as F
    steps = {}
    def step(name, fn):
        s0 = ember.cuda.kernel_cache_stats()
        fn()
        ember.cuda.synchronize()
        s1 = ember.cuda.kernel_cache_stats()
        steps[name] = {k: s1[k] - s0[k] for k in ("compiles", "shipped_hits", "disk_hits")}
    x = None
    def make():
        global x
        x = ember.arange(1000, dtype="float32", device="cuda")
    step("arange", make)
    step("(x*3+1).sum()", lambda: float((x * 3 + 1).sum()))
    m = x.reshape(10, 100)
    step("sum axis 0", lambda: m.sum(axis=0))
    step("max axis 1", lambda: m.max(axis=1))
    step("argmax", lambda: int(ember.argmax(x)))
    step("mean f32", lambda: float(x.mean()))
    step("mean int64", lambda: float(ember.arange(50, device="cuda").mean()))
    step("any", lambda: bool((x > 5).any()))
    step("f16 sum", lambda: float(x.astype("float16").sum()))
    step("f64 sum", lambda: float(x.astype("float64").sum()))
    step("sort", lambda: ember.sort(-x))
    step("cumsum", lambda: ember.cumsum(x))
    step("mask", lambda: x[x > 3])
    step("nonzero", lambda: ember.nonzero(x > 500))
    step("random", lambda: (ember.random.standard_normal((64, 64)).astype("float32"),
                            ember.random.random((64,))))
    def train():
        ember.random.seed(0)
        model = nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.LayerNorm(32), nn.Linear(32, 5))
        model.to("cuda")
        opt = ember.optim.Adam(model.parameters(), lr=1e-3)
        xb = ember.random.standard_normal((16, 20)).astype("float32").to("cuda")
        yb = ember.arange(16, device="cuda") % 5
        for _ in range(2):
            loss = F.cross_entropy(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
        float(loss)
    step("train step", train)
    print(json.dumps(steps))
""")


@needs_cuda
def test_built_in_ops_compile_nothing_with_the_shipped_pack(tmp_path):
    props = ember.cuda.get_device_properties(0)
    arch = props["major"] * 10 + props["minor"]
    shipped = os.path.join(os.path.dirname(ember.__file__), "_shipped", f"sm_{arch}.pack")
    if not os.path.exists(shipped):
        pytest.skip(f"this build ships no kernels for sm_{arch} (CMake EMBER_SHIP_ARCHS)")
    # An empty cache directory: nothing cached. The dumped sources name what was compiled.
    env = {**os.environ, "EMBER_CACHE_DIR": str(tmp_path), "EMBER_DUMP_SOURCE": "1"}
    env.pop("EMBER_SHIPPED_KERNELS", None)
    r = subprocess.run(
        [sys.executable, "-c", _WORKLOAD], capture_output=True, text=True, env=env, timeout=300
    )
    assert r.returncode == 0, r.stderr
    steps = json.loads(r.stdout.strip().splitlines()[-1])
    compiled = {k: v["compiles"] for k, v in steps.items() if v["compiles"]}
    names = re.findall(r"--- ember: generated source of (\S+) \(compiled", r.stderr)
    assert not compiled, f"compiled (not shipped): {compiled} steps, kernels {names}"
    assert steps["(x*3+1).sum()"]["shipped_hits"] > 0
