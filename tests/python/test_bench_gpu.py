"""``python -m ember.bench --gpu``: imports, and on a machine without a GPU says it is skipped."""

from __future__ import annotations

import subprocess
import sys

import ember
import pytest
from conftest import cuda_unavailable_reason

REASON = cuda_unavailable_reason()


def test_module_imports_and_the_flag_exists():
    from ember.bench import _cli, _gpu, _gpu_arrays, _gpu_memory, _gpu_numeric, _gpu_train

    assert callable(_gpu.main) and callable(_gpu.child_main)
    assert callable(_gpu_arrays.array_cases) and callable(_gpu_numeric.random_cases)
    assert callable(_gpu_train.train_cases) and callable(_gpu_memory.memory_cases)
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

    env = {"EMBER_CACHE_DIR": str(tmp_path), "EMBER_SHIPPED_KERNELS": "0"}
    res = _gpu._run_child(["ember"], env)
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


# ---- the "interop, kernels, graphs" section: RawKernel launch, DLPack, CUDA graph targets ---


def _nvrtc_reason():
    try:
        ember._core._kernels.compile('extern "C" __global__ void f() {}', "probe", [], [], 90)
    except Exception as exc:  # NVRTC missing: the compile check is skipped
        return f"{type(exc).__name__}: {exc}"
    return None


def test_interop_section_is_registered_under_a_filterable_name():
    import inspect

    from ember.bench import _gpu, _gpu_interop

    assert callable(_gpu_interop.interop_cases)
    src = inspect.getsource(_gpu.main)
    assert '"interop, kernels, graphs"' in src and "_gpu_interop.interop_cases" in src
    # --filter interop / graphs / kernels selects it (the filter is a lowercase substring test)
    rows = []
    old = _gpu._ONLY
    try:
        for only, runs in (("interop", True), ("graphs", True), ("sort", False)):
            _gpu._ONLY = only
            rows.clear()
            _gpu._section(rows, "interop, kernels, graphs", lambda: [_gpu.Row("x", "ember")])
            assert bool(rows) == runs, only
    finally:
        _gpu._ONLY = old


def test_interop_kernel_source_compiles_with_nvrtc():
    why = _nvrtc_reason()
    if why is not None:
        pytest.skip(f"NVRTC unavailable: {why}")
    from ember.bench import _gpu_interop

    assert len(ember.RawKernel(_gpu_interop.KERNEL_CODE, "k")._compile(90)) > 0


def test_graph_body_is_a_chain_of_100_ops_each_on_the_previous_result(device):
    import numpy as np
    from ember.bench import _gpu_interop

    class Traced:
        def __init__(self, ops=()):
            self.ops = list(ops)

        def __mul__(self, k):
            return Traced([*self.ops, ("*", k)])

        def __add__(self, k):
            return Traced([*self.ops, ("+", k)])

    ops = _gpu_interop.body(Traced()).ops
    assert len(ops) == _gpu_interop.GRAPH_OPS == 100
    assert ops[0::2] == [("*", 1.0001)] * 50 and ops[1::2] == [("+", 0.5)] * 50
    # the same chain on ember arrays stays float32 and matches NumPy's
    h = np.random.default_rng(0).random(_gpu_interop.GRAPH_N, dtype=np.float32)
    want = _gpu_interop.body(h)
    got = _gpu_interop.body(ember.asarray(h, device=device))
    assert want.dtype == np.float32 and got.dtype == ember.float32
    np.testing.assert_allclose(ember.asnumpy(got), want, rtol=1e-5)


def test_interop_call_rows_verdicts():
    from ember.bench import _gpu_interop as gi

    assert gi._call_row("c", "ember", 3.99e-6, target_s=4e-6).status == "PASS"
    assert gi._call_row("c", "ember", 4.02e-6, target_s=4e-6).status == "FAIL"
    r = gi._call_row("c", "ember", "RuntimeError: boom", target_s=4e-6)
    assert r.status == "ERROR" and "boom" in r.detail and r.measured == "-"
    assert gi._call_row("c", "ember", None, target_s=4e-6).detail == "not run"
    r = gi._call_row("c", "ember", 1e-6, target_s=2e-6, wrong="a copy, not a view")
    assert r.status == "WRONG" and "a copy" in r.detail
    # rows without a target carry no verdict, even when wrong or failed
    assert gi._call_row("c", "cupy", 9e-6).status == ""
    assert gi._call_row("c", "cupy", 1e-6, wrong="other values").status == ""
    assert gi._call_row("c", "cupy", "boom").status == ""


def test_interop_graph_rows_verdicts():
    from ember.bench import _gpu_interop as gi

    res = {"eager_s": 500e-6, "graph_s": 80e-6, "nodes": 100, "eager_launches": 100}
    r = gi._graph_row("g", "ember", dict(res))
    assert r.status == "PASS" and r.data["ratio"] == pytest.approx(6.25)
    assert "100 nodes" in r.detail and "kernels" not in r.detail
    assert gi._graph_row("g", "ember", dict(res, graph_s=125e-6)).status == "FAIL"
    r = gi._graph_row("g", "ember", dict(res, wrong="replay != eager"))
    assert r.status == "WRONG" and "replay != eager" in r.detail
    r = gi._graph_row("g", "ember", dict(res, eager_launches=1))
    assert "eager ran 1 kernels" in r.detail
    assert gi._graph_row("g", "ember", "n/a: no graph API").status == "n/a"
    assert gi._graph_row("g", "ember", "RuntimeError: boom").status == "ERROR"
    assert gi._graph_row("g", "ember", dict(res, graph_s="while timing: x")).status == "ERROR"
    r = gi._graph_row("g", "torch", dict(res, nodes=None))
    assert r.status == "" and r.target == "" and "6.2x" in r.detail


class _CpuEmber:
    """The benchmark's view of ember (put/get/sync), on the CPU."""

    name = "ember"

    def __init__(self, xp):
        self.xp = xp

    def put(self, a):
        return ember.asarray(a.copy())  # a copy, as on a device (ember views NumPy memory)

    def get(self, x):
        return ember.asnumpy(x)

    def sync(self):
        pass


def test_graph_replay_check_catches_a_replay_that_does_not_rerun_the_ops():
    import numpy as np
    from ember.bench import _gpu_interop as gi

    rng = np.random.default_rng(1)
    h0, h1 = rng.random(16, dtype=np.float32), rng.random(16, dtype=np.float32)
    lib = _CpuEmber(ember)
    x = lib.put(h0)
    y = gi.body(x)  # stands for the captured output

    def set_x(h):
        x[...] = lib.put(h)

    def replay():  # reruns the chain on x's current values into y, as a graph replay does
        y[...] = gi.body(x)

    assert gi._replay_check(lib, x, y, replay, set_x, h1) is None
    stale = gi._replay_check(lib, x, y, lambda: None, set_x, h0)  # y still from h1
    assert stale is not None and "replay != eager" in stale


def test_graph_case_without_the_graph_api_is_n_a_not_an_error():
    import types

    from ember.bench import _gpu_common
    from ember.bench import _gpu_interop as gi

    lib = _CpuEmber(types.SimpleNamespace(cuda=types.SimpleNamespace()))
    rows = gi.graph_cases({"ember": lib}, _gpu_common.QUICK, lambda msg: None)
    assert len(rows) == 1 and rows[0].status == "n/a" and "ember.cuda.graph" in rows[0].detail


def test_dlpack_rows_split_the_time_between_producer_and_consumer():
    import numpy as np
    from ember.bench import _gpu_interop as gi

    assert gi._split_detail("torch", "ember", 30e-6, 27e-6) == (
        "torch's __dlpack__ 27 µs, ember's part 3 µs"
    )
    assert gi._split_detail("ember", "torch", 9e-6, 1.5e-6) == (
        "ember's __dlpack__ 1.5 µs, torch's import the rest"
    )
    assert gi._split_detail("torch", "ember", "an error", 1e-6) == ""

    class Producer:  # what _export_parts needs of a library and its arrays
        def __init__(self, name):
            self.name, self.calls = name, []

        def put(self, host):
            lib = self

            class A:
                def __dlpack_device__(self):  # timed with __dlpack__: the producer's part
                    lib.calls.append("device")
                    return (2, 0)

                def __dlpack__(self, stream=None, max_version=None):
                    lib.calls.append((stream, max_version))

            return A()

        def sync(self):
            pass

    class Xp:
        class _core:
            class _cuda:
                @staticmethod
                def current_stream_handle(device):
                    return 77

    torch_like, em = Producer("torch"), Producer("ember")
    em.xp = Xp
    plan = type("Plan", (), {"calls": 3, "call_rounds": 2})()
    parts = gi._export_parts({"torch": torch_like, "ember": em}, np.ones(4), plan)
    # torch's export as ember calls it (ember's stream, a versioned capsule); ember's export needs
    # torch's current stream, which the stand-in lacks: that pair is left out, not an error
    assert set(parts) == {("torch", "ember")} and parts[("torch", "ember")] > 0
    assert torch_like.calls and set(torch_like.calls) == {"device", (77, (1, 0))}


def test_floor_row_shows_the_cpp_add_loop_beside_the_bare_launch():
    from ember.bench import _gpu

    r = _gpu._floor_row("host overhead x + x, 1 elem", 4.0e-6, 3.5e-6, 3.9e-6)
    assert r.case == "over bare cuLaunchKernel x + x, 1 elem" and r.status == "PASS"
    assert r.measured == "+0.5 µs/call"
    assert "C++ ember::add 3.9 µs/call" in r.detail and r.data["cpp_add_s"] == 3.9e-6
    r = _gpu._floor_row("host overhead x + x, 1 elem", 4.3e-6, 3.5e-6)
    assert r.status == "FAIL" and "ember::add" not in r.detail
    r = _gpu._floor_row("host overhead x + x, 1 elem", 4.3e-6, "while timing: CudaError")
    assert r.status == "ERROR" and "CudaError" in r.detail and "bare_launch_s" not in r.data


def test_cpp_loops_are_timed_in_the_libraries_interleaved_rounds():
    from ember.bench import _gpu_common as common

    order = []

    class Lib:
        name = "ember"

        def sync(self):
            pass

    def op():
        order.append("ember")

    def floor(calls):
        order.append(f"floor {calls}")
        return 3.0e-6 if len(order) < 5 else 2.5e-6  # the best round counts

    def broken(calls):
        raise RuntimeError("no driver")

    plan = type("Plan", (), {"calls": 2, "call_rounds": 3})()
    work = [(Lib(), op), (common.CppLoop(common.BARE_LAUNCH, floor), None)]
    work.append((common.CppLoop(common.CPP_ADD, broken), None))
    times = common.time_calls(work, plan)
    assert times[common.BARE_LAUNCH] == 2.5e-6 and isinstance(times["ember"], float)
    assert "no driver" in times[common.CPP_ADD]
    # the floor's rounds alternate with ember's, in alternating order (a failed loop drops out)
    e, f = ["ember"] * 2, ["floor 2"]
    assert order == e + f + f + e + e + f
