"""Shipped kernels (src/backend/cuda/kernel_pack.hpp): packs are written without a GPU, and with a
GPU the first call of a packed kernel loads it from the pack instead of compiling."""

from __future__ import annotations

import json
import os
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
