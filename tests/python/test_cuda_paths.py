"""Where ember finds CUDA's libraries and headers (ember/_cuda_paths.py,
src/backend/cuda/loader.cpp): NVIDIA's cuda-pathfinder is asked first, once per library, and its
answer is what ember loads. NVRTC loads and compiles without a GPU, so these run wherever the CUDA
toolkit (or NVIDIA's NVRTC wheel) is; on the GPU machine the real cuda-pathfinder finds NVIDIA's
wheels."""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys
import textwrap

import ember
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def system_nvrtc():
    for d in ("/usr/local/cuda/lib64", "/usr/local/cuda/targets/x86_64-linux/lib"):
        p = pathlib.Path(d) / "libnvrtc.so.13"
        if p.exists():
            return str(p)
    return None


def run_child(code, env_extra, tmp_path):
    env = {**os.environ, **env_extra, "EMBER_CACHE_DIR": str(tmp_path / "cache")}
    r = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout.strip().splitlines()[-1])


CHILD = """
    import json, ember
    ember.cuda.precompile(arch=90, name_filter="add")  # loads NVRTC and compiles: no GPU needed
    import cuda.pathfinder as pf
    print(json.dumps({"paths": ember.cuda.library_paths(), "asked": getattr(pf, "ASKED", None)}))
"""


@pytest.mark.skipif(system_nvrtc() is None, reason="no CUDA toolkit NVRTC here")
def test_the_finder_is_asked_first_and_its_answer_loaded(tmp_path):
    # A stand-in cuda-pathfinder that records what ember asks and answers with the toolkit's own
    # files under other names: ember must load exactly what it is told.
    real = system_nvrtc()
    lib = tmp_path / "libs" / "libnvrtc-from-the-finder.so"
    lib.parent.mkdir()
    lib.symlink_to(real)
    inc = tmp_path / "include" / "cccl"
    inc.parent.mkdir()
    inc.symlink_to("/usr/local/cuda/include/cccl")
    pkg = tmp_path / "site" / "cuda" / "pathfinder"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(
        textwrap.dedent(f"""
        ASKED = []
        class _Loaded:
            abs_path = {str(lib)!r}
        def load_nvidia_dynamic_lib(name):
            ASKED.append(("lib", name))
            if name != "nvrtc":
                raise RuntimeError("not found")
            return _Loaded()
        def find_nvidia_header_directory(name):
            ASKED.append(("include", name))
            return {str(inc)!r}
    """)
    )
    out = run_child(CHILD, {"PYTHONPATH": str(tmp_path / "site")}, tmp_path)
    assert out["paths"]["nvrtc"] == str(lib)
    assert out["paths"]["cccl"] == str(inc)
    assert out["asked"].count(["lib", "nvrtc"]) == 1  # asked once, remembered
    assert ["include", "cccl"] in out["asked"]


@pytest.mark.skipif(system_nvrtc() is None, reason="no CUDA toolkit NVRTC here")
def test_without_an_answer_the_system_is_used(tmp_path):
    pkg = tmp_path / "site" / "cuda" / "pathfinder"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(
        textwrap.dedent("""
        ASKED = []
        def load_nvidia_dynamic_lib(name):
            ASKED.append(("lib", name))
            raise RuntimeError("not found")
        def find_nvidia_header_directory(name):
            ASKED.append(("include", name))
            return None
    """)
    )
    out = run_child(CHILD, {"PYTHONPATH": str(tmp_path / "site")}, tmp_path)
    assert out["paths"]["nvrtc"]  # a soname or /usr/local/cuda path
    assert ["lib", "nvrtc"] in out["asked"]
    # EMBER_CUDA_PATHFINDER=0: never asked
    out = run_child(
        CHILD, {"PYTHONPATH": str(tmp_path / "site"), "EMBER_CUDA_PATHFINDER": "0"}, tmp_path
    )
    assert out["asked"] == [] and out["paths"]["nvrtc"]


def test_real_pathfinder_answer_is_what_ember_loads(tmp_path):
    pf = pytest.importorskip("cuda.pathfinder")
    try:
        want = pf.load_nvidia_dynamic_lib("nvrtc").abs_path
    except Exception as e:
        pytest.skip(f"cuda-pathfinder finds no NVRTC here: {e}")
    code = """
        import json, ember
        ember.cuda.precompile(arch=90, name_filter="add")
        print(json.dumps({"paths": ember.cuda.library_paths(), "asked": None}))
    """
    out = run_child(code, {}, tmp_path)
    if want:
        assert os.path.realpath(out["paths"]["nvrtc"]) == os.path.realpath(want)


def test_library_paths_shape():
    d = ember.cuda.library_paths()
    assert isinstance(d, dict) and "cccl" in d
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in d.items())


_WHEELS_CHILD = """
    import json, ember
    import numpy as np
    x = ember.asarray(np.arange(64.0).reshape(8, 8) + np.eye(8) * 100, device="cuda")
    y = x + ember.hypot(x, x)           # kernels compiled by NVRTC (no cache, nothing shipped)
    y = x @ x                           # cuBLAS
    y = ember.fft.fft(x)                # cuFFT
    y = ember.linalg.inv(x)             # cuSOLVER
    ember.cuda.synchronize()
    maps = open("/proc/self/maps").read().split()
    mapped = sorted({p for p in maps if "/libnvrtc" in p or "/libcublas" in p
                     or "/libcufft" in p or "/libcusolver" in p})
    print(json.dumps({"paths": ember.cuda.library_paths(), "mapped": mapped}))
"""


@pytest.mark.skipif(not ember.cuda.is_available(), reason="no CUDA device")
def test_gpu_runs_on_nvidia_wheels_alone(tmp_path):
    # What `pip install ember[cuda]` gives: NVRTC, cuBLAS, cuFFT and cuSOLVER from NVIDIA's wheels
    # in site-packages, none of them from the system's toolkit (/usr/local/cuda, the sonames).
    pf = pytest.importorskip("cuda.pathfinder")
    wanted = {}
    for name in ("nvrtc", "cublas", "cufft", "cusolver"):
        try:
            wanted[name] = pf.load_nvidia_dynamic_lib(name)
        except Exception as e:
            pytest.skip(f"cuda-pathfinder finds no {name} here: {e}")
    if any("site-packages" not in (w.abs_path or "") for w in wanted.values()):
        pytest.skip("NVIDIA's CUDA wheels are not all installed in site-packages here")
    env = {"EMBER_DISK_CACHE": "0", "EMBER_SHIPPED_KERNELS": "0", "LD_LIBRARY_PATH": ""}
    out = run_child(_WHEELS_CHILD, env, tmp_path)
    for name, w in wanted.items():
        assert os.path.realpath(out["paths"][name]) == os.path.realpath(w.abs_path), name
    assert out["mapped"] and not [p for p in out["mapped"] if "site-packages" not in p], out
