"""``python -m ember.bench --gpu``: imports, and on a machine without a GPU says it is skipped."""

from __future__ import annotations

import subprocess
import sys

import ember
import pytest
from conftest import cuda_unavailable_reason

REASON = cuda_unavailable_reason()


def test_module_imports_and_the_flag_exists():
    from ember.bench import _cli, _gpu, _gpu_arrays, _gpu_numeric, _gpu_train

    assert callable(_gpu.main) and callable(_gpu.child_main)
    assert callable(_gpu_arrays.array_cases) and callable(_gpu_numeric.random_cases)
    assert callable(_gpu_train.train_cases)
    assert _cli.parser().parse_args(["--gpu", "--quick"]).gpu


@pytest.mark.skipif(REASON is None, reason="a GPU is available: --gpu runs the whole benchmark")
def test_without_a_gpu_it_prints_one_skip_line_and_exits_0(tmp_path):
    out = tmp_path / "gpu.json"
    r = subprocess.run(
        [sys.executable, "-m", "ember.bench", "--gpu", "--quick", "--json", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    lines = r.stdout.strip().splitlines()
    assert len(lines) == 1, r.stdout
    assert "skipped" in lines[0]
    assert ember.cuda.unavailable_reason() in lines[0]
    assert not out.exists()


def test_first_call_child_reports_json(tmp_path):
    from ember.bench import _gpu

    res = _gpu._run_child(["ember"], {"EMBER_CACHE_DIR": str(tmp_path)})
    if REASON is None:
        if "cuDevicePrimaryCtxRetain" in res.get("error", ""):
            pytest.skip("the GPU admits one process at a time and this one holds it")
        assert "error" not in res, res
        assert res["first_s"] > 0 and res["first"]["compiles"] >= 1
    else:  # the child says why it could not run instead of crashing
        assert "error" in res and "Traceback" not in res["error"]


def test_train_step_case_runs_on_the_cpu():
    # the benchmark's ember step (the seed MLP with Adam) runs on the CPU too, and is timed
    import numpy as np
    from ember.bench import _gpu_train

    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 784), dtype=np.float32)
    y = rng.integers(0, 10, 64)
    step = _gpu_train._ember_step(ember, x, y, device="cpu")
    t, host = _gpu_train._time_steps(step, lambda: None, rounds=1, n=3)
    assert t > 0 and host >= 0
