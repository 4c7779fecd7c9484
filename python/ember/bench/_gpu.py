"""GPU benchmark of ember's CUDA backend: ``python -m ember.bench --gpu [--json PATH] [--quick]``.

Compares ember with CuPy and PyTorch (each optional) in the same process, on the same data:

1. device-to-device copy of 2^28 float32 (1 GiB): the reference copy bandwidth is the best of
   the libraries measured;
2. ``a + b`` on 2^28 float32: at least 97% of the reference copy bandwidth;
3. ``x.sum()``, ``x.sum(axis=0)``, ``x.sum(axis=1)`` of a 65536x4096 float32 array: input bytes
   per second at least 97% of the copy bandwidth; the same on a strided view (informational);
4. host overhead per call of ``x + x`` on a 1-element array: at most 4.2 µs;
5. first call of a not yet compiled kernel (fresh processes and kernel cache directories, the
   shipped kernels off): cold compile at most 150 ms, from the disk cache at most 2 ms, second
   call without a compile; startup (``_gpu_startup``): ``import`` at most 150 ms and the first
   ``(x*3+1).sum()`` at most 50 ms, compiling nothing;
6. host<->device copies of 1 GiB: at least 80% of PyTorch's bandwidth in each direction;
7. memory: an op allocates only its output; a mixed-size workload keeps reserved/peak at most
   1.25, and ``empty_cache()`` returns the cached memory.

GB/s = 1e9 bytes (read + written) per second. Without a usable GPU it prints one line saying it is
skipped and why, and returns 0.

This module runs cases 1-6 and the whole benchmark (``main``); the memory cases are in
``_gpu_memory``, the other sections in ``_gpu_numeric`` (matmul, random, FFT), ``_gpu_train``,
``_gpu_arrays`` (sort, mask, unique) and ``_gpu_interop`` (custom kernels, DLPack, CUDA graphs);
``_gpu_common`` holds what they share (plans, libraries, the result row, the timing helpers).
"""

from __future__ import annotations

import gc
import importlib.util
import json
import math
import os
import platform
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass

import numpy as np

import ember

from . import (
    _gpu_arrays,
    _gpu_debug,
    _gpu_fusion,
    _gpu_images,
    _gpu_interop,
    _gpu_jit,
    _gpu_numeric,
    _gpu_seq,
    _gpu_startup,
    _gpu_train,
)
from ._gpu_common import (
    BARE_LAUNCH,
    CPP_ADD,
    FULL,
    QUICK,
    SEED,
    GiB,
    GpuLib,
    Plan,
    Row,
    _spin_host,
    _verdict,
    discover,
    launch_floors,
    release_all,
    statement_timer,
    table,
    time_calls,
    time_kernels,
)
from ._gpu_memory import memory_cases
from ._report import fmt_time, write_json
from ._runner import _error, stderr_log

N = 1 << 28  # elements of the 1 GiB float32 operands
ROWS, COLS = 65536, 4096  # the reduced 2-D array (also 2^28 elements)

COPY_FRACTION = 0.97  # a + b and the sums: of the reference copy bandwidth
HOST_OVERHEAD_S = 4.2e-6  # per call of x + x on a 1-element array
OVER_LAUNCH_S = 0.6e-6  # ... and over a bare cuLaunchKernel measured in the same run
COLD_S = 150e-3  # first call, kernel compiled
DISK_S = 2e-3  # first call, kernel loaded from the disk cache
TRANSFER_FRACTION = 0.80  # host<->device: of PyTorch's bandwidth


# ---- cases 1-3: bandwidth of copy, a + b and sums -------------------------------------------


@dataclass
class Op:
    case: str
    fn: Callable  # fn(lib, *inputs) -> result
    nbytes: int  # bytes the op must move, for GB/s
    check: Callable  # check(result as NumPy) -> bool
    target: bool = True  # False: informational


def _equal(expected):
    return lambda got: got.shape == expected.shape and bool(np.array_equal(got, expected))


def _close(expected, rtol=1e-3):
    # Tolerant enough for float32 accumulation in any order, strict enough to catch a wrong or
    # partial reduction.
    exp = np.asarray(expected)
    return lambda got: got.shape == exp.shape and bool(np.allclose(got, exp, rtol=rtol, atol=rtol))


def bandwidth_group(
    libs: list[GpuLib],
    plan: Plan,
    make_inputs: Callable,
    ops: list[Op],
    ref_gbps: float | None,
    log,
) -> list[Row]:
    """Times ``ops`` on inputs made once per library (on the device before any timing)."""
    rows: list[Row] = []
    inputs: dict[str, tuple] = {}
    errors: dict[str, str] = {}
    for lib in libs:
        try:
            inputs[lib.name] = make_inputs(lib)
            lib.sync()
        except Exception as e:  # e.g. out of memory: this library is left out of the group
            errors[lib.name] = "making the inputs: " + _error(e)
    try:
        for op in ops:
            log(op.case)
            rows += _time_op(op, libs, inputs, errors, plan, ref_gbps)
    finally:
        inputs.clear()
        gc.collect()
        release_all(libs)
    return rows


def _time_op(op: Op, libs, inputs, errors, plan, ref_gbps) -> list[Row]:
    """Checks the result of each library's first call against NumPy, then times the calls."""
    work, checks = [], {}
    for lib in libs:
        if lib.name in errors:
            continue
        args = inputs[lib.name]
        try:
            got = op.fn(lib, *args)
            lib.sync()
            checks[lib.name] = op.check(lib.get(got))
            del got
        except Exception as e:  # reported on this library's row
            checks[lib.name] = _error(e)
            continue

        def fn(lib=lib, args=args, f=op.fn):
            return f(lib, *args)

        work.append((lib, fn))
    times = time_kernels(work, plan)
    return [_bandwidth_row(op, lib, errors, checks, times, ref_gbps) for lib in libs]


def _bandwidth_row(op: Op, lib: GpuLib, errors, checks, times, ref_gbps) -> Row:
    ember_row = lib.name == "ember" and op.target
    row = Row(op.case, lib.name, target=f">= {COPY_FRACTION:.0%} copy" if ember_row else "")
    err = errors.get(lib.name)
    for found in (checks.get(lib.name), times.get(lib.name)):
        if err is None and isinstance(found, str):
            err = found
    if err:
        row.detail, row.status, row.data["error"] = err[:60], "ERROR" if ember_row else "", err
        return row
    t = times[lib.name]
    row.measured = fmt_time(t)
    row.gb_per_s = op.nbytes / t / 1e9
    row.data.update(time_s=t, bytes=op.nbytes, gb_per_s=row.gb_per_s, correct=checks[lib.name])
    if ref_gbps:
        frac = row.gb_per_s / ref_gbps
        row.detail = f"{frac:.1%} of copy"
        row.data["fraction_of_copy"] = frac
    if not checks[lib.name]:
        row.detail = "WRONG result " + row.detail
        row.status = "WRONG" if lib.name == "ember" else ""
    elif ember_row and not ref_gbps:
        row.status = "n/a"  # no copy bandwidth was measured to compare with
    elif ember_row:
        # Compared at the precision the table shows (0.1%).
        row.status = _verdict(round(row.data["fraction_of_copy"], 3) >= COPY_FRACTION)
    return row


def bandwidth_cases(libs, plan, host, log) -> tuple[list[Row], float | None]:
    a, b = host["a"], host["b"]
    nb = a.nbytes
    # 1. The reference: a plain device-to-device copy, read + write.
    copy = Op("copy 2^28 f32 (1 GiB)", lambda lib, x: lib.copy(x), 2 * nb, _equal(a), False)
    rows = bandwidth_group(libs, plan, lambda lib: (lib.put(a),), [copy], None, log)
    measured = [r.gb_per_s for r in rows if r.gb_per_s and r.data.get("correct")]
    ref = max(measured) if measured else None
    for r in rows:
        if ref and r.gb_per_s:
            r.data["fraction_of_copy"] = r.gb_per_s / ref
            r.detail = ("WRONG result " if not r.data["correct"] else "") + (
                f"{r.gb_per_s / ref:.1%} of best"
            )

    # 2. a + b: 2 reads + 1 write of 1 GiB.
    add = Op("a + b 2^28 f32", lambda lib, x, y: x + y, 3 * nb, _equal(a + b))
    rows += bandwidth_group(libs, plan, lambda lib: (lib.put(a), lib.put(b)), [add], ref, log)

    # 3. Reductions of 65536x4096 float32: input bytes / time.
    a2 = a.reshape(ROWS, COLS)
    sums = [
        (None, "x.sum()", a2.sum(dtype=np.float64)),
        (0, "x.sum(axis=0)", a2.sum(axis=0, dtype=np.float64)),
        (1, "x.sum(axis=1)", a2.sum(axis=1, dtype=np.float64)),
    ]

    def sum_ops(tag, target):
        return [
            Op(
                f"{name} {tag}",
                lambda lib, x, axis=axis: lib.sum(x, axis),
                nb,
                _close(exp),
                target,
            )
            for axis, name, exp in sums
        ]

    rows += bandwidth_group(
        libs, plan, lambda lib: (lib.put(a2),), sum_ops("65536x4096 f32", True), ref, log
    )
    # The same numbers as every other column of a 65536x8192 array (the columns between hold
    # 7.0, so a kernel that ignores the stride gives a wrong sum). Informational: GB/s counts
    # the elements summed, the hardware reads about twice as many bytes.
    wide = np.full((ROWS, 2 * COLS), 7.0, dtype=np.float32)
    wide[:, ::2] = a2
    rows += bandwidth_group(
        libs,
        plan,
        lambda lib: (lib.put(wide)[:, ::2],),
        sum_ops("view [:, ::2] of 65536x8192", False),
        ref,
        log,
    )
    return rows, ref


# ---- case 4: host overhead per call ---------------------------------------------------------


def host_overhead_cases(libs, plan, log) -> list[Row]:
    # (case, the op for the warm-up, the statement timed, whether it has a target)
    ops = [
        ("host overhead x + x, 1 elem", lambda lib, x: x + x, "x + x", True),
        ("host overhead sin(x), 1 elem", lambda lib, x: lib.sin(x), "f(x)", False),
        ("host overhead x.sum(), 1 elem", lambda lib, x: lib.sum(x), "x.sum()", False),
    ]
    rows = []
    one = np.ones(1, dtype=np.float32)
    # The cases before these wait on long kernels, and the host's clocks drop meanwhile: a second
    # of host work first, so that the first case is not timed at a lower clock than the others.
    _spin_host(1.0)
    for case, op, stmt, has_target in ops:
        log(case)
        work, errors = [], {}
        for lib in libs:
            try:
                x = lib.put(one)
                for _ in range(100):  # warm-up: compiles, pool blocks, caches
                    op(lib, x)
                lib.sync()
            except Exception as e:  # reported on this library's row
                errors[lib.name] = _error(e)
                continue
            work.append((lib, statement_timer(stmt, x=x, f=lib.xp.sin)))
        if has_target and any(lib.name == "ember" for lib, _ in work):
            work += launch_floors(with_add=True)
        times = time_calls(work, plan)
        floor, cpp_add = times.pop(BARE_LAUNCH, None), times.pop(CPP_ADD, None)
        times.update(errors)
        e = times.get("ember")
        for lib in libs:
            ember_row = lib.name == "ember" and has_target
            row = Row(case, lib.name)
            if ember_row:
                row.target = f"<= {HOST_OVERHEAD_S * 1e6:g} µs"
            t = times.get(lib.name)
            if isinstance(t, str):
                row.detail, row.data["error"] = t[:60], t
                row.status = "ERROR" if ember_row else ""
            else:
                row.measured = f"{fmt_time(t)}/call"
                row.data["time_s"] = t
                if lib.name != "ember" and isinstance(e, float):
                    row.detail = f"ember {e / t:.2f}x"
                    row.data["ember_ratio"] = e / t
                if ember_row:
                    # Compared at the precision the table shows (0.01 µs).
                    row.status = _verdict(round(t * 1e6, 2) <= HOST_OVERHEAD_S * 1e6)
            rows.append(row)
        if floor is not None:
            rows.append(_floor_row(case, e, floor, cpp_add))
        del work
    return rows


def _floor_row(case: str, e, floor: float | str, cpp_add: float | str | None = None) -> Row:
    """The op's host time over the bare launch's, both timed in the same interleaved rounds
    (floor and cpp_add are seconds per call, or the error that stopped their loops)."""
    row = Row(case.replace("host overhead", "over bare cuLaunchKernel"), "ember")
    row.target = f"<= +{OVER_LAUNCH_S * 1e6:g} µs"
    if not isinstance(floor, float):
        row.detail, row.status, row.data["error"] = f"bare launch: {floor}"[:60], "ERROR", floor
        return row
    row.data["bare_launch_s"] = floor
    if not isinstance(e, float):
        row.detail, row.status = f"bare launch {fmt_time(floor)}/call", "ERROR"
        return row
    row.measured = f"+{fmt_time(e - floor)}/call"
    row.detail = f"bare launch {fmt_time(floor)}/call (C++ loop)"
    if isinstance(cpp_add, float):
        row.data["cpp_add_s"] = cpp_add
        row.detail += f", C++ ember::add {fmt_time(cpp_add)}/call"
    row.data["over_s"] = e - floor
    row.status = _verdict(round((e - floor) * 1e6, 2) <= OVER_LAUNCH_S * 1e6)
    return row


# ---- case 5: first call of a kernel not compiled before -------------------------------------

_CHILD = "import sys; from ember.bench._gpu import child_main; sys.exit(child_main(sys.argv[1:]))"
_COLD_OP = "hypot f64 1000"


def _stats_delta(s0: dict, s1: dict) -> dict:
    return {k: s1[k] - s0[k] for k in s0 if isinstance(s0[k], (int, float))}


def _child_ember() -> dict:
    cuda = ember.cuda
    # Warm-up: the context, the pool, the compiler library and a first kernel are not what the
    # case measures.
    warm = ember.ones(4, dtype=ember.float32, device="cuda") + 1
    cuda.synchronize()
    ok = bool(np.all(ember.asnumpy(warm) == 2))
    # Inputs by host copies (no kernel), float64: a type the warm-up did not use.
    ha, hb = np.linspace(0.0, 1.0, 1000), np.linspace(1.0, 2.0, 1000)
    a, b = ember.asarray(ha, device="cuda"), ember.asarray(hb, device="cuda")
    cuda.synchronize()
    s0 = cuda.kernel_cache_stats()
    t0 = time.perf_counter()
    c1 = ember.hypot(a, b)
    cuda.synchronize()
    t1 = time.perf_counter()
    cuda._c._wait_background_compiles()  # its other layouts, compiled ahead: not the first call's
    s1 = cuda.kernel_cache_stats()
    t2 = time.perf_counter()
    c2 = ember.hypot(a, b)
    cuda.synchronize()
    t3 = time.perf_counter()
    s2 = cuda.kernel_cache_stats()
    expected = np.hypot(ha, hb)
    ok = ok and all(np.allclose(ember.asnumpy(c), expected) for c in (c1, c2))
    return {
        "first_s": t1 - t0,
        "second_s": t3 - t2,
        "first": _stats_delta(s0, s1),
        "second": _stats_delta(s1, s2),
        "correct": ok,
        "cache_dir": cuda.kernel_cache_dir(),
    }


def _child_cupy(tag: str) -> dict:
    import cupy

    dev = cupy.cuda.Device()
    warm = cupy.ones(4, dtype=cupy.float32) + 1
    dev.synchronize()
    ok = bool(np.all(cupy.asnumpy(warm) == 2))
    ha, hb = np.linspace(0.0, 1.0, 1000), np.linspace(1.0, 2.0, 1000)
    a, b = cupy.asarray(ha), cupy.asarray(hb)
    dev.synchronize()
    t0 = time.perf_counter()
    # The tag makes the source unique, so that no cache of an earlier run has it.
    kernel = cupy.ElementwiseKernel(
        "float64 x, float64 y",
        "float64 z",
        f"/* {tag} */ z = hypot(x, y)",
        f"ember_bench_hypot_{tag}",
    )
    c1 = kernel(a, b)
    dev.synchronize()
    t1 = time.perf_counter()
    c2 = kernel(a, b)
    dev.synchronize()
    t2 = time.perf_counter()
    expected = np.hypot(ha, hb)
    ok = ok and all(np.allclose(cupy.asnumpy(c), expected) for c in (c1, c2))
    return {"first_s": t1 - t0, "second_s": t2 - t1, "correct": ok}


def child_main(argv: list[str]) -> int:
    """Entry point of the child processes of case 5: prints one JSON object."""
    try:
        out = _child_ember() if argv[0] == "ember" else _child_cupy(argv[1])
    except Exception as e:  # reported to the parent as the case's error
        out = {"error": _error(e)}
    print(json.dumps(out))
    return 0


def _run_child(args: list[str], env_updates: dict, timeout: float = 180) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)  # this process's ember
    env.pop("EMBER_DISK_CACHE", None)  # the disk cache is what the case measures
    env.update(env_updates)
    for key in ("EMBER_CACHE_DIR", "CUPY_CACHE_DIR"):
        if key in env_updates:
            os.makedirs(env_updates[key], exist_ok=True)
    try:
        p = subprocess.run(
            [sys.executable, "-c", _CHILD, *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return {"error": f"child process timed out after {timeout:g} s"}
    lines = p.stdout.strip().splitlines()
    try:
        out = json.loads(lines[-1])
    except (IndexError, json.JSONDecodeError):
        tail = " | ".join((p.stderr or p.stdout).strip().splitlines()[-3:])
        return {"error": f"child process exited with {p.returncode}: {tail}"[:300]}
    if out.get("correct") is False:
        out["error"] = "wrong result"
    return out


def compile_cases(names: list[str], log) -> list[Row]:
    res: dict[str, tuple[dict, dict]] = {}
    with tempfile.TemporaryDirectory(prefix="ember-bench-") as tmp:
        log("first call: ember, cold kernel cache")
        # The shipped kernels off: this case is about a kernel ember has to compile.
        env = {"EMBER_CACHE_DIR": os.path.join(tmp, "ember"), "EMBER_SHIPPED_KERNELS": "0"}
        cold = _run_child(["ember"], env)
        log("first call: ember, disk kernel cache")
        res["ember"] = cold, _run_child(["ember"], env)
        if "cupy" in names:
            log("first call: cupy")
            tag = uuid.uuid4().hex
            env = {"CUPY_CACHE_DIR": os.path.join(tmp, "cupy")}
            res["cupy"] = _run_child(["cupy", tag], env), _run_child(["cupy", tag], env)

    cold, disk = res["ember"]
    rows = []
    case = f"first call {_COLD_OP}, cold compile"
    rows.append(_first_call_row(case, "ember", cold, f"<= {COLD_S * 1e3:g} ms"))
    r = rows[-1]
    if not r.status:
        n = cold["first"].get("compiles", 0)
        if n:
            ms = cold["first"].get("compile_ms", 0)
            r.detail = f"{n} compile(s), {ms:.0f} ms in the compiler"
            r.status = _verdict(cold["first_s"] <= COLD_S)
        else:  # then this is no measurement of a cold first call
            r.detail, r.status = "nothing compiled: the kernel cache was not cold", "ERROR"
    _cupy_row(rows, case, res, 0, "first_s")

    case = f"first call {_COLD_OP}, disk cache"
    rows.append(_first_call_row(case, "ember", disk, f"<= {DISK_S * 1e3:g} ms"))
    r = rows[-1]
    if not r.status:
        n, hits = disk["first"].get("compiles", 0), disk["first"].get("disk_hits", 0)
        r.detail = f"{hits} disk hit(s), {n} compile(s)"
        r.status = _verdict(disk["first_s"] <= DISK_S and n == 0)
    _cupy_row(rows, case, res, 1, "first_s")

    case = f"second call {_COLD_OP}, in process"
    rows.append(_first_call_row(case, "ember", cold, "no compile", key="second_s"))
    r = rows[-1]
    if not r.status:
        d = cold["second"]
        n = d.get("compiles", 0) + d.get("disk_hits", 0)
        r.detail = f"{d.get('compiles', 0)} compile(s), {d.get('disk_hits', 0)} disk hit(s)"
        r.status = _verdict(n == 0)
    _cupy_row(rows, case, res, 0, "second_s")
    return rows


def _first_call_row(case, lib, out, target, key="first_s") -> Row:
    row = Row(case, lib, target=target, data=dict(out))
    if "error" in out:
        row.detail, row.status = out["error"][:60], "ERROR" if target else ""
    else:
        row.measured = fmt_time(out[key])
    return row


def _cupy_row(rows, case, res, which, key):
    if "cupy" not in res:
        return
    out = res["cupy"][which]
    row = _first_call_row(case, "cupy", out, "", key)
    e = rows[-1].data.get(key)
    if "error" not in out and e:
        row.detail = f"ember {e / out[key]:.2f}x"
    rows.append(row)


# ---- case 6: host <-> device copies ---------------------------------------------------------


def transfer_cases(libs, plan, host, log) -> list[Row]:
    a = host["a"]
    log("host <-> device 1 GiB")
    best: dict[str, dict] = {}
    for lib in libs:
        try:  # warm-up (pinned staging buffers, pool growth) and a check of both directions
            ok = bool(np.array_equal(lib.get(lib.put(a)), a))
            lib.sync()
            best[lib.name] = {"h2d": math.inf, "d2h": math.inf, "correct": ok}
        except Exception as e:  # reported on this library's rows
            best[lib.name] = {"error": _error(e)}
    # Wall clock around each copy, synchronized: the host array is pageable NumPy memory, as a
    # user's would be; the best of the rounds counts.
    for r in range(plan.transfer_rounds):
        for lib in libs if r % 2 == 0 else reversed(libs):
            b = best[lib.name]
            if "error" in b:
                continue
            try:
                lib.sync()
                t0 = time.perf_counter()
                x = lib.put(a)
                lib.sync()
                t1 = time.perf_counter()
                h = lib.get(x)
                lib.sync()
                t2 = time.perf_counter()
                del x, h
                b["h2d"] = min(b["h2d"], t1 - t0)
                b["d2h"] = min(b["d2h"], t2 - t1)
            except Exception as e:  # reported on this library's rows
                b["error"] = "while timing: " + _error(e)
    release_all(libs)
    rows = []
    tb = best.get("torch", {})  # PyTorch's times: the targets compare against them
    for key, title in (("h2d", "host -> device"), ("d2h", "device -> host")):
        case = f"{title} 1 GiB f32"
        for lib in libs:
            b = best[lib.name]
            ember_row = lib.name == "ember"
            has_target = ember_row and "error" not in tb and key in tb
            row = Row(case, lib.name)
            if has_target:
                row.target = f">= {TRANSFER_FRACTION:.0%} torch"
            if "error" in b:
                row.detail, row.data["error"] = b["error"][:60], b["error"]
                row.status = "ERROR" if ember_row else ""
                rows.append(row)
                continue
            t = b[key]
            row.measured = fmt_time(t)
            row.gb_per_s = a.nbytes / t / 1e9
            row.data.update(time_s=t, bytes=a.nbytes, gb_per_s=row.gb_per_s, correct=b["correct"])
            if lib.name != "torch" and "error" not in tb and key in tb:
                frac = tb[key] / t
                row.detail = f"{frac:.2f}x torch"
                row.data["fraction_of_torch"] = frac
                if has_target:
                    row.status = _verdict(round(frac, 2) >= TRANSFER_FRACTION)
            if not b["correct"]:
                row.detail = "WRONG result " + row.detail
                row.status = "WRONG" if ember_row else ""
            rows.append(row)
    return rows


# ---- the run --------------------------------------------------------------------------------


def _host_data(log) -> dict:
    log("making the host data (2 x 1 GiB)")
    rng = np.random.default_rng(SEED)
    return {
        "a": rng.random(N, dtype=np.float32),
        "b": rng.random(N, dtype=np.float32),
    }


def _log(msg: str) -> None:
    stderr_log(f"gpu bench: {msg}")


_ONLY: str | None = None  # --filter: run only the sections whose name contains it


def _section(rows: list[Row], name: str, fn: Callable[[], list[Row]]) -> None:
    """Runs one group of cases; an unexpected failure becomes an ERROR row, not a crash."""
    if _ONLY and _ONLY.lower() not in name:
        return
    try:
        rows += fn()
    except Exception as e:  # the next group still runs
        rows.append(
            Row(name, "ember", detail=_error(e)[:60], status="ERROR", data={"error": _error(e)})
        )


def _unavailable(ember) -> str | None:
    """None when ember can use a CUDA device, otherwise why not, in one line."""
    cuda = getattr(ember, "cuda", None)
    if cuda is None:
        return "this ember has no cuda module"
    try:
        if cuda.is_available():
            return None
        return cuda.unavailable_reason() or "ember.cuda.is_available() is False"
    except Exception as e:  # a broken probe is a reason too, not a crash
        return f"ember.cuda raised {_error(e)}"


def main(*, quick: bool = False, json_path: str | None = None, only: str | None = None) -> int:
    global _ONLY
    _ONLY = only

    why = _unavailable(ember)
    if why is not None:
        print(f"ember GPU benchmark skipped: no usable CUDA device: {why}")
        return 0
    cuda = ember.cuda
    # The first-call cases run child processes, so they go first, while this process holds no
    # CUDA context: some machines admit one process with a context per GPU at a time.
    t0 = time.perf_counter()
    names = ["ember"] + (["cupy"] if importlib.util.find_spec("cupy") else [])
    first_rows: list[Row] = []
    _section(first_rows, "first call", lambda: compile_cases(names, _log))
    peers = [n for n in ("torch", "cupy") if importlib.util.find_spec(n)]
    _section(first_rows, "startup", lambda: _gpu_startup.startup_cases(["ember", *peers], _log))

    plan = QUICK if quick else FULL
    libs, lib_notes = discover(ember)
    props = cuda.get_device_properties()
    versions = {lib.name: lib.version() for lib in libs}
    print(f"ember {getattr(ember, '__version__', '?')} GPU benchmark")
    print(
        f"device: {cuda.get_device_name()}, {props.get('total_memory', 0) / GiB:.0f} GiB; "
        f"python {platform.python_version()}; {'quick' if quick else 'full'} plan: "
        f"{plan.rounds} rounds x {plan.reps} calls per kernel, {plan.call_rounds} rounds x "
        f"{plan.calls} calls per host-overhead case"
    )
    print("libraries: " + ", ".join(f"{n} {v}" for n, v in versions.items()))
    for n in lib_notes:
        print(f"  {n}")
    print(
        "kernels: best of rounds of back-to-back calls between CUDA events; "
        "GB/s = 1e9 bytes read + written per second"
    )
    print()

    rows: list[Row] = []
    ref = None
    # 2 GiB of host data, for the sections that use it
    wanted = [n for n in ("bandwidth", "host <-> device") if not only or only.lower() in n]
    host = _host_data(_log) if wanted else {}

    def bandwidth():
        nonlocal ref
        r, ref = bandwidth_cases(libs, plan, host, _log)
        return r

    _section(rows, "bandwidth", bandwidth)
    _section(rows, "host overhead", lambda: host_overhead_cases(libs, plan, _log))
    _section(rows, "debug cost", lambda: _gpu_debug.debug_cost_cases(ember, plan, _log))
    _section(rows, "matmul", lambda: _gpu_numeric.matmul_cases(libs, plan, _log))
    _section(rows, "random", lambda: _gpu_numeric.random_cases(libs, plan, _log))
    _section(rows, "fft", lambda: _gpu_numeric.fft_cases(libs, plan, _log))
    _section(rows, "train step", lambda: _gpu_train.train_cases(libs, plan, _log))
    _section(rows, "sort, mask, unique", lambda: _gpu_arrays.array_cases(libs, plan, _log))
    _section(rows, "interop, kernels, graphs", lambda: _gpu_interop.interop_cases(libs, plan, _log))
    _section(rows, "jit (python kernels)", lambda: _gpu_jit.jit_cases(ember, libs, plan, _log))
    _section(rows, "models, data loading", lambda: _gpu_seq.model_cases(ember, libs, plan, _log))
    _section(rows, "images", lambda: _gpu_images.image_cases(ember, libs, plan, _log))
    _section(rows, "fusion", lambda: _gpu_fusion.fusion_cases(ember, libs, plan, _log))
    rows += first_rows
    _section(rows, "host <-> device", lambda: transfer_cases(libs, plan, host, _log))
    host.clear()  # 2 GiB of host memory the memory cases do not need
    _section(rows, "memory", lambda: memory_cases(ember, _log))
    if sys.stderr.isatty():
        sys.stderr.write("\r\x1b[K")
    elapsed = time.perf_counter() - t0

    print(table(rows))
    print()
    print("ratio / detail: 'of best' on the copy rows: of the best copy bandwidth, which is the")
    print("reference; 'of copy': of that reference; 'ember Nx': ember's time / this library's")
    print("time (< 1: ember is faster); 'Nx torch': bandwidth / PyTorch's.")
    for r in rows:
        if "error" in r.data and len(r.data["error"]) > 60:
            print(f"note: {r.case} [{r.lib}]: {r.data['error']}")
    statuses = [r.status for r in rows if r.status]
    counts = {s: statuses.count(s) for s in ("PASS", "FAIL", "WRONG", "ERROR", "n/a")}
    summary = ", ".join(f"{v} {k}" for k, v in counts.items() if v)
    print(f"targets: {summary or 'none run'}  ({elapsed:.1f} s)")

    if json_path:
        payload = {
            "ember_version": getattr(ember, "__version__", None),
            "device": cuda.get_device_name(),
            "device_properties": props,
            "quick": quick,
            "plan": asdict(plan),
            "python": platform.python_version(),
            "platform": platform.platform(),
            "libraries": versions,
            "library_notes": lib_notes,
            "reference_copy_gb_per_s": ref,
            "rows": [asdict(r) for r in rows],
            "summary": counts,
            "elapsed_s": elapsed,
        }
        write_json(json_path, payload)
        print(f"wrote {json_path}")
    return 0
