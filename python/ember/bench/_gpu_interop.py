"""GPU benchmark cases of custom kernels, zero-copy interop and CUDA graphs, ember against CuPy
and PyTorch in the same process, each with its target:

1. host time per launch of a ``RawKernel`` with one array argument (<= 4.0 µs), beside CuPy's
   ``cupy.RawKernel`` and a bare ``cuLaunchKernel`` loop in C++ (the floor);
2. host time per ``from_dlpack`` of a small CUDA tensor, PyTorch -> ember and ember -> PyTorch
   (<= 2 µs each; CuPy both ways and each library with itself for comparison), each checked to
   be zero-copy and to hold the right values;
3. a chain of 100 small elementwise ops on 1024 float32, issued eagerly and replayed from a
   captured CUDA graph (eager / replay >= 5x), for ember, PyTorch and CuPy; the replay's output
   is checked against the eager result after the input changed in place.

Host times follow the host-overhead cases: a Python loop of calls, then a synchronize, over the
wall clock, divided by the number of calls; the best of the rounds counts."""

from __future__ import annotations

import dataclasses
import gc

import numpy as np

from ._gpu_common import (
    BARE_LAUNCH,
    Row,
    _spin_host,
    _verdict,
    launch_floors,
    release_all,
    statement_timer,
    time_calls,
)
from ._report import fmt_time
from ._runner import _error

RAW_LAUNCH_S = 4.0e-6  # host time per RawKernel launch
DLPACK_S = 2.0e-6  # host time per from_dlpack, each direction with PyTorch
GRAPH_RATIO = 5.0  # eager time / replay time of the 100-op chain
GRAPH_OPS = 100  # kernels in the chain: half multiplies, half adds
GRAPH_N = 1024  # elements of the chain's float32 input
WARM_LAUNCHES = 100

# One thread adds 1 to x[0] per launch, so x[0] counts the launches that ran.
KERNEL_CODE = r"""
extern "C" __global__ void k(float* x) {
    if (blockIdx.x == 0 && threadIdx.x == 0) x[0] += 1.0f;
}
"""
_LAUNCH = "k((1,), (32,), (x,))"


class _Timed:
    """What time_calls needs of a library (a name and a sync), for a case that involves two
    libraries: its sync waits for both."""

    def __init__(self, name, *libs):
        self.name = name
        self._libs = libs

    def sync(self):
        for lib in self._libs:
            lib.sync()


def body(x, ops=GRAPH_OPS):
    """The chain of ``ops`` elementwise ops: alternately ``* 1.0001`` and ``+ 0.5``, each on the
    result of the one before (one kernel each in ember, CuPy and PyTorch; float32 stays
    float32, NumPy's included)."""
    y = x
    for _ in range(ops // 2):
        y = y * 1.0001
        y = y + 0.5
    return y


def _call_row(case, lib, t, *, target_s=None, detail="", wrong=None) -> Row:
    """A host-time row: time per call, or the error; with a target, PASS/FAIL at the precision
    the table shows (0.01 µs), or WRONG when ``wrong`` says what was wrong."""
    row = Row(case, lib)
    if target_s is not None:
        row.target = f"<= {target_s * 1e6:g} µs"
    if not isinstance(t, float):
        err = str(t) if t else "not run"
        row.detail, row.data["error"] = err[:60], err
        row.status = "ERROR" if target_s is not None else ""
        return row
    row.measured = f"{fmt_time(t)}/call"
    row.data["time_s"] = t
    row.detail = detail
    if wrong:
        row.detail = f"WRONG: {wrong}" + (f", {detail}" if detail else "")
        row.data["wrong"] = wrong
        row.status = "WRONG" if target_s is not None else ""
    elif target_s is not None:
        row.status = _verdict(round(t * 1e6, 2) <= target_s * 1e6)
    return row


def _over(t, floor) -> str:
    if not (isinstance(t, float) and isinstance(floor, float)):
        return ""
    d = t - floor
    return f"{'+' if d >= 0 else '-'}{fmt_time(abs(d))} over bare launch"


def _ratio(e, t) -> str:
    return f"ember {e / t:.2f}x" if isinstance(e, float) and isinstance(t, float) else ""


# ---- 1. RawKernel launch --------------------------------------------------------------------


def launch_cases(names: dict, plan, log) -> list[Row]:
    case = "RawKernel launch, 1 array arg"
    log(case)
    work, errors, counters = [], {}, {}
    for name in ("ember", "cupy"):
        lib = names.get(name)
        if lib is None:
            continue
        try:
            k = lib.xp.RawKernel(KERNEL_CODE, "k")
            x = lib.put(np.zeros(1, dtype=np.float32))
            for _ in range(WARM_LAUNCHES):  # compile, load, first-launch costs
                k((1,), (32,), (x,))
            lib.sync()
        except Exception as e:  # reported on this library's row
            errors[name] = _error(e)
            continue
        counters[name] = (lib, x)
        work.append((lib, statement_timer(_LAUNCH, k=k, x=x)))
    _spin_host(0.5)  # the host's clocks up before the timed loops
    try:
        work += launch_floors()
    except Exception as e:  # reported on the floor's row; the launch rows still count
        errors[BARE_LAUNCH] = _error(e)
    times = time_calls(work, plan)
    times.update(errors)
    floor = times.pop(BARE_LAUNCH)
    # Every launch ran: x[0] counts them (exact in float32 below 2^24).
    want = WARM_LAUNCHES + plan.calls * plan.call_rounds
    wrong = {}
    for name, (lib, x) in counters.items():
        if isinstance(times.get(name), float):
            got = float(lib.get(x)[0])
            if got != want:
                wrong[name] = f"x[0] = {got:g} after {want} launches"
    e = times.get("ember")
    rows = []
    for name in ("ember", "cupy"):
        if name not in names:
            continue
        t = times.get(name)
        if name == "ember":
            detail = _over(t, floor)
            rows.append(
                _call_row(
                    case, name, t, target_s=RAW_LAUNCH_S, detail=detail, wrong=wrong.get(name)
                )
            )
        else:
            rows.append(_call_row(case, name, t, detail=_ratio(e, t), wrong=wrong.get(name)))
    floor_row = _call_row(
        "RawKernel launch, bare cuLaunchKernel", "ember", floor, detail="C++ loop, the floor"
    )
    if isinstance(floor, float):
        floor_row.data["bare_launch_s"] = floor
    rows.append(floor_row)
    return rows


# ---- 2. from_dlpack -------------------------------------------------------------------------


def _ptr(a) -> int:
    """The device address of a CUDA array of ember, CuPy or PyTorch."""
    return int(a.__cuda_array_interface__["data"][0])


# (producer, consumer, target): the consumer's from_dlpack of an array of the producer
_DLPACK = [
    ("torch", "ember", DLPACK_S),
    ("ember", "torch", DLPACK_S),
    ("torch", "torch", None),
    ("cupy", "ember", None),
    ("ember", "cupy", None),
    ("cupy", "cupy", None),
]


def _dlpack_case(src, dst) -> str:
    return f"from_dlpack {src} -> {dst}, 4 f32"


def _consumer_stream(lib) -> int:
    """The stream handle `lib`'s from_dlpack passes to a CUDA producer's __dlpack__."""
    if lib.name == "ember":
        return int(lib.xp._core._cuda.current_stream_handle(0))
    if lib.name == "torch":
        return int(lib.xp.cuda.current_stream().cuda_stream) or 1  # 1: the legacy default
    return int(lib.xp.cuda.get_current_stream().ptr) or 1


_EXPORT = "export "  # the prefix of the export work items' names


def _export_work(names: dict, host) -> list:
    """Work items timing the producer's ``__dlpack_device__`` and ``__dlpack__`` alone, called as
    the consumer's from_dlpack calls them (the consumer's stream, a versioned capsule), for the
    pairs with ember on one side: the producer's part of that from_dlpack (the stream handshake
    included; the unconsumed capsule's deleter too, which the import's array runs in its stead).
    Timed in the same interleaved rounds as the whole from_dlpack calls, so that both see the same
    state of the host."""
    work = []
    for src, dst, _ in _DLPACK:
        if src == dst or "ember" not in (src, dst) or src not in names or dst not in names:
            continue
        try:
            a = names[src].put(host)
            s = _consumer_stream(names[dst])
            a.__dlpack_device__()
            a.__dlpack__(stream=s, max_version=(1, 0))
        except Exception:  # the pair's own row reports what is wrong
            continue
        stmt = statement_timer(
            "a.__dlpack_device__(); a.__dlpack__(stream=s, max_version=(1, 0))", a=a, s=s
        )
        work.append((_Timed(f"{_EXPORT}{src}->{dst}", names[src], names[dst]), stmt))
    return work


def _parts(timed: dict) -> dict:
    """The export times among `timed`, by (producer, consumer)."""
    return {
        tuple(k[len(_EXPORT) :].split("->")): v
        for k, v in timed.items()
        if k.startswith(_EXPORT) and isinstance(v, float)
    }


def _export_parts(names: dict, host, plan) -> dict:
    """The producer's part of each from_dlpack pair with ember on one side, timed alone."""
    return _parts(time_calls(_export_work(names, host), plan))


def _split_detail(src, dst, total, part) -> str:
    """Who spends what of a from_dlpack between ember and another library."""
    if not (isinstance(total, float) and isinstance(part, float)):
        return ""
    if src == "ember":
        return f"ember's __dlpack__ {fmt_time(part)}, {dst}'s import the rest"
    return f"{src}'s __dlpack__ {fmt_time(part)}, ember's part {fmt_time(max(total - part, 0.0))}"


def dlpack_cases(names: dict, plan, log) -> list[Row]:
    log("from_dlpack")
    host = np.arange(1, 5, dtype=np.float32)
    work, errors, wrong = [], {}, {}
    for src, dst, _ in _DLPACK:
        key = (src, dst)
        if src not in names or dst not in names:
            continue
        p, c = names[src], names[dst]
        try:
            a = p.put(host)
            f = c.xp.from_dlpack
            b = f(a)
            p.sync()
            c.sync()
            if not np.array_equal(np.asarray(c.get(b)), host):
                wrong[key] = "other values"
            elif _ptr(b) != _ptr(a):
                wrong[key] = "a copy, not a view"
            del b
            for _ in range(100):  # warm-up
                f(a)
            p.sync()
            c.sync()
        except Exception as e:  # reported on this pair's row
            errors[key] = _error(e)
            continue
        work.append((_Timed(f"{src}->{dst}", p, c), statement_timer("f(a)", f=f, a=a)))
    _spin_host(0.2)
    timed = time_calls(work + _export_work(names, host), plan)
    times = {(s, d): timed.get(f"{s}->{d}", errors.get((s, d))) for s, d, _ in _DLPACK}
    parts = _parts(timed)
    rows = []
    for src, dst, target in _DLPACK:
        key = (src, dst)
        case = _dlpack_case(src, dst)
        if src not in names or dst not in names:
            if target is not None:  # the target cannot be measured here
                missing = src if src not in names else dst
                row = Row(case, dst, detail=f"{missing} not usable", status="n/a")
                row.target = f"<= {target * 1e6:g} µs"
                rows.append(row)
            continue
        t = times[key]
        detail = ""
        if src == dst and isinstance(t, float):  # a library with itself: the reference
            others = [
                f"{s}->{d} takes {times[(s, d)] / t:.2f}x"
                for s, d, _ in _DLPACK
                if src in (s, d) and s != d and isinstance(times.get((s, d)), float)
            ]
            detail = ", ".join(others)
        elif key in parts:
            detail = _split_detail(src, dst, t, parts[key])
        rows.append(_call_row(case, dst, t, target_s=target, detail=detail, wrong=wrong.get(key)))
    return rows


# ---- 3. CUDA graph replay vs eager ----------------------------------------------------------


def _replay_check(lib, x, y, replay, set_x, host1):
    """Writes new values into x in place, replays, and compares y with the eager result on the
    new x: the reason it is wrong, or None."""
    set_x(host1)
    replay()
    lib.sync()
    got = np.asarray(lib.get(y))
    want = np.asarray(lib.get(body(x)))
    if got.shape != want.shape or not np.array_equal(got, want):
        if got.shape != want.shape:
            return f"replay != eager (shape {got.shape}, eager {want.shape})"
        diff = float(np.max(np.abs(got.astype(np.float64) - want)))
        return f"replay != eager (max diff {diff:.3g})"
    if not np.allclose(want, body(host1), rtol=1e-4):  # rounding; a missing + 0.5 is 2% off
        return "eager != NumPy"
    return None


def _time_pair(lib, eager, replay, plan):
    """Host time per iteration of eager and of replay, interleaved rounds (see time_calls)."""
    t = time_calls([(_Timed("eager", lib), eager), (_Timed("graph", lib), replay)], plan)
    return t["eager"], t["graph"]


def _graph_ember(lib, host0, host1, plan) -> dict | str:
    ember = lib.xp
    cuda = ember.cuda
    if not hasattr(cuda, "graph"):
        return "n/a: this ember has no ember.cuda.graph"
    x = lib.put(host0)
    body(x)  # warm: the kernels compile before the capture
    lib.sync()
    s0 = cuda.kernel_cache_stats()
    body(x)
    lib.sync()
    launches = cuda.kernel_cache_stats().get("launches", 0) - s0.get("launches", 0)
    with cuda.graph() as g:
        y = body(x)
    g.replay()
    lib.sync()
    out = {"nodes": int(g.num_nodes), "eager_launches": launches}

    def set_x(h):
        x[...] = lib.put(h)

    out["wrong"] = _replay_check(lib, x, y, g.replay, set_x, host1)
    out["eager_s"], out["graph_s"] = _time_pair(lib, lambda: body(x), g.replay, plan)
    return out


def _graph_torch(lib, host0, host1, plan) -> dict | str:
    torch = lib.xp
    x = lib.put(host0)
    # Warm-up on a side stream before the capture, as PyTorch's CUDA graph notes describe.
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            body(x)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        y = body(x)
    g.replay()
    lib.sync()
    out = {"nodes": None}

    def set_x(h):
        x.copy_(lib.put(h))

    out["wrong"] = _replay_check(lib, x, y, g.replay, set_x, host1)
    out["eager_s"], out["graph_s"] = _time_pair(lib, lambda: body(x), g.replay, plan)
    return out


def _graph_cupy(lib, host0, host1, plan) -> dict | str:
    cupy = lib.xp
    s = cupy.cuda.Stream(non_blocking=True)  # capture needs a stream other than the default
    with s:
        x = lib.put(host0)
        body(x)  # warm: the kernels compile before the capture
        s.synchronize()
        s.begin_capture()
        try:
            y = body(x)
        finally:
            g = s.end_capture()
        g.launch(s)
        lib.sync()
        out = {"nodes": None}

        def set_x(h):
            x.set(h)

        def replay():
            g.launch(s)

        out["wrong"] = _replay_check(lib, x, y, replay, set_x, host1)
        out["eager_s"], out["graph_s"] = _time_pair(lib, lambda: body(x), replay, plan)
    return out


def _graph_row(case, lib, res) -> Row:
    """eager / replay time against the target on ember's row; WRONG when the replay's output
    differs from the eager result, n/a when ember has no graph API."""
    ember_row = lib == "ember"
    row = Row(case, lib, target=f">= {GRAPH_RATIO:g}x eager / replay" if ember_row else "")
    if isinstance(res, str):
        row.detail, row.data["error"] = res[:60], res
        if ember_row:
            row.status = "n/a" if res.startswith("n/a") else "ERROR"
        return row
    e, g = res.get("eager_s"), res.get("graph_s")
    row.data.update(res)
    if not (isinstance(e, float) and isinstance(g, float)):
        err = next((t for t in (e, g) if isinstance(t, str)), "not timed")
        row.detail, row.data["error"] = err[:60], err
        row.status = "ERROR" if ember_row else ""
        return row
    ratio = e / g
    row.data["ratio"] = ratio
    row.measured = f"{fmt_time(g)}/replay"
    parts = [
        f"{ratio:.1f}x; per op eager {fmt_time(e / GRAPH_OPS)}, replay {fmt_time(g / GRAPH_OPS)}"
    ]
    if res.get("nodes") is not None:
        parts.append(f"{res['nodes']} nodes")
    launches = res.get("eager_launches")
    if launches is not None and launches != GRAPH_OPS:
        parts.append(f"eager ran {launches} kernels")
    if res.get("wrong"):
        parts.insert(0, f"WRONG: {res['wrong']}")
    row.detail = ", ".join(parts)
    if ember_row:
        row.status = "WRONG" if res.get("wrong") else _verdict(round(ratio, 1) >= GRAPH_RATIO)
    return row


def _quiet(names: dict) -> None:
    """Waits for ember's background compiles: a thread loading modules while another library
    captures a graph in CUDA's global capture mode (PyTorch's default) would break it."""
    wait = getattr(getattr(names["ember"].xp.cuda, "_c", None), "_wait_background_compiles", None)
    if wait is not None:
        wait()


def graph_cases(names: dict, plan, log) -> list[Row]:
    case = f"graph of {GRAPH_OPS} elementwise ops, {GRAPH_N} f32"
    log(case)
    rng = np.random.default_rng(7)
    host0 = rng.random(GRAPH_N, dtype=np.float32)
    host1 = rng.random(GRAPH_N, dtype=np.float32)
    # An iteration issues GRAPH_OPS kernels: fewer iterations than calls of one op.
    gplan = dataclasses.replace(plan, calls=max(20, plan.calls // GRAPH_OPS))
    rows = []
    for name, run in (("ember", _graph_ember), ("torch", _graph_torch), ("cupy", _graph_cupy)):
        lib = names.get(name)
        if lib is None:
            continue
        try:
            _quiet(names)
            res = run(lib, host0, host1, gplan)
        except Exception as e:  # reported on this library's row
            res = _error(e)
        rows.append(_graph_row(case, name, res))
        gc.collect()
        try:
            lib.sync()
        except Exception:  # a broken library must not stop the next one
            pass
    return rows


# ---- the section ----------------------------------------------------------------------------


def interop_cases(libs, plan, log) -> list[Row]:
    names = {lib.name: lib for lib in libs}
    rows: list[Row] = []
    for title, cases in (
        ("RawKernel launch", launch_cases),
        ("from_dlpack", dlpack_cases),
        ("graph replay", graph_cases),
    ):
        try:
            rows += cases(names, plan, log)
        except Exception as e:  # the next group still runs
            err = _error(e)
            rows.append(Row(title, "ember", detail=err[:60], status="ERROR", data={"error": err}))
        gc.collect()
    release_all(libs)
    return rows
