"""What the GPU benchmark's modules share: the repetition plans, the libraries on the GPU (ember,
PyTorch, CuPy), the result row and its table, and the timing helpers (device time between CUDA
events, host time per call in interleaved rounds)."""

from __future__ import annotations

import abc
import gc
import math
import time
import timeit
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import ember

from ._libs import Lib
from ._report import _table
from ._runner import _error

GiB = 1 << 30
MiB = 1 << 20
SEED = 1234  # of the random inputs and workloads


@dataclass(frozen=True)
class Plan:
    """Repetition counts (the sizes are the same in both plans)."""

    rounds: int  # timed rounds of each kernel per library; the best round counts
    reps: int  # kernel calls between the two events of one round
    calls: int  # calls per round of the host-overhead loops
    call_rounds: int
    transfer_rounds: int


FULL = Plan(rounds=10, reps=20, calls=20_000, call_rounds=5, transfer_rounds=5)
QUICK = Plan(rounds=3, reps=10, calls=5_000, call_rounds=3, transfer_rounds=3)


# ---- libraries ------------------------------------------------------------------------------


class GpuLib(Lib):
    """One library on the current CUDA device: data in and out (``put``/``get`` of Lib), its own
    stream's synchronization and events."""

    device = "cuda"

    @abc.abstractmethod
    def sync(self) -> None:
        """Implemented by each library."""

    @abc.abstractmethod
    def event(self) -> Any:
        """A timing event; ``record()`` puts it on the library's current stream."""

    @abc.abstractmethod
    def elapsed_s(self, start, end) -> float:
        """Implemented by each library."""

    def copy(self, x):
        return x.copy()

    def sum(self, x, axis=None):
        return x.sum() if axis is None else x.sum(axis=axis)

    def sin(self, x):
        return self.xp.sin(x)

    @abc.abstractmethod
    def release(self) -> None:
        """Gives the library's cached device memory back to the driver."""


class EmberGpu(GpuLib):
    name = "ember"

    def __init__(self, ember):
        self.xp = ember
        self.cuda = ember.cuda

    def put(self, a):
        return self.xp.asarray(a, device="cuda")

    def get(self, x):
        return self.xp.asnumpy(x)

    def sync(self):
        # ember's ops run on its own non-blocking stream: torch's or CuPy's synchronize of
        # their stream would not wait for them.
        self.cuda.synchronize()

    def event(self):
        return self.cuda.Event(enable_timing=True)

    def elapsed_s(self, start, end):
        end.synchronize()
        return start.elapsed_time(end) / 1e3

    def release(self):
        self.cuda.empty_cache()


class TorchGpu(GpuLib):
    name = "torch"

    def __init__(self, torch):
        self.xp = torch

    def version(self):
        return f"{self.xp.__version__} (CUDA {self.xp.version.cuda})"

    def put(self, a):
        return self.xp.from_numpy(a).to("cuda")

    def get(self, x):
        return x.to("cpu").numpy()

    def sync(self):
        self.xp.cuda.synchronize()

    def event(self):
        return self.xp.cuda.Event(enable_timing=True)

    def elapsed_s(self, start, end):
        end.synchronize()
        return start.elapsed_time(end) / 1e3

    def copy(self, x):
        return x.clone()

    def sum(self, x, axis=None):
        return x.sum() if axis is None else x.sum(dim=axis)

    def release(self):
        self.xp.cuda.empty_cache()


class CupyGpu(GpuLib):
    name = "cupy"

    def __init__(self, cupy):
        self.xp = cupy

    def put(self, a):
        return self.xp.asarray(a)

    def get(self, x):
        return self.xp.asnumpy(x)

    def sync(self):
        self.xp.cuda.Device().synchronize()

    def event(self):
        return self.xp.cuda.Event()

    def elapsed_s(self, start, end):
        end.synchronize()
        return self.xp.cuda.get_elapsed_time(start, end) / 1e3

    def release(self):
        self.xp.get_default_memory_pool().free_all_blocks()


def discover(ember) -> tuple[list[GpuLib], list[str]]:
    """ember, then PyTorch and CuPy where they can use the GPU; notes on those left out."""
    libs: list[GpuLib] = [EmberGpu(ember)]
    notes: list[str] = []
    try:
        import torch
    except Exception as e:  # absent or broken: compared without it
        notes.append(f"torch: not importable ({_error(e)})")
    else:
        if torch.cuda.is_available():
            libs.append(TorchGpu(torch))
        else:
            notes.append("torch: installed, but torch.cuda.is_available() is False")
    try:
        import cupy

        if cupy.cuda.runtime.getDeviceCount() < 1:
            raise RuntimeError("no CUDA device")
        cupy.empty(1, dtype=cupy.float32)
    except Exception as e:  # absent or unusable: compared without it
        notes.append(f"cupy: not usable ({_error(e)})")
    else:
        libs.append(CupyGpu(cupy))
    return libs, notes


# ---- results --------------------------------------------------------------------------------


@dataclass
class Row:
    case: str
    lib: str
    measured: str = "-"  # time per call, or bytes for the memory cases
    gb_per_s: float | None = None
    detail: str = ""  # ratio against the reference, or what was checked
    target: str = ""
    status: str = ""  # PASS / FAIL / WRONG / ERROR on ember's rows with a target
    data: dict = field(default_factory=dict)  # the numbers behind the row, for --json


def release_all(libs) -> None:
    """Waits for each library's queued work and gives back its cached device memory; a broken
    library does not stop the cleanup of the others (its rows already carry the error)."""
    for lib in libs:
        try:
            lib.sync()
            lib.release()
        except Exception:
            pass


def _verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def _fmt_gbps(g: float | None) -> str:
    return "-" if g is None else f"{g:,.0f}" if g >= 100 else f"{g:.1f}"


def table(rows: list[Row]) -> str:
    header = ["case", "lib", "measured", "GB/s", "ratio / detail", "target", "status"]
    cells = [
        [r.case, r.lib, r.measured, _fmt_gbps(r.gb_per_s), r.detail, r.target or "-", r.status]
        for r in rows
    ]
    return _table(header, cells, {2, 3})


# ---- timing ---------------------------------------------------------------------------------


def _interleaved(work: list[tuple[GpuLib, Callable]], rounds: int, one_round) -> dict:
    """Best of ``rounds`` results of ``one_round(lib, fn)`` (seconds) per library, or the error
    that stopped it. Rounds alternate between the libraries, in alternating order, so that drift
    in clock speed or temperature during a case affects all of them alike."""
    best: dict[str, float | str] = {lib.name: math.inf for lib, _ in work}
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        for r in range(rounds):
            for lib, fn in work if r % 2 == 0 else reversed(work):
                if isinstance(best[lib.name], str):
                    continue
                try:
                    best[lib.name] = min(best[lib.name], one_round(lib, fn))
                except Exception as e:  # this library stops; the others go on
                    best[lib.name] = "while timing: " + _error(e)
    finally:
        if was_enabled:
            gc.enable()
    return best


def time_kernels(work: list[tuple[GpuLib, Callable]], plan: Plan) -> dict:
    """Device time per call of each fn: after two warm-up calls, each round times ``plan.reps``
    back-to-back calls between two CUDA events recorded on the library's own current stream
    (ember's events for ember, torch.cuda.Event, cupy.cuda.Event), which measures the kernels
    and not the Python launch; the best round counts."""

    best: dict[str, float | str] = {}
    ready = []
    for lib, fn in work:
        try:
            fn()
            fn()
            lib.sync()
            ready.append((lib, fn))
        except Exception as e:  # this library is left out of the timing
            best[lib.name] = "warm-up: " + _error(e)

    def one_round(lib, fn):
        start, end = lib.event(), lib.event()
        start.record()
        for _ in range(plan.reps):
            fn()
        end.record()
        return lib.elapsed_s(start, end) / plan.reps

    best.update(_interleaved(ready, plan.rounds, one_round))
    return best


class CppLoop:
    """A C++ loop that times itself (``seconds_per_call(calls)``, synchronized before and after),
    given to :func:`time_calls` as a library: its rounds interleave with the libraries' Python
    loops, so that the host's drift during a case moves the floor and the ops alike."""

    def __init__(self, name: str, seconds_per_call: Callable[[int], float]):
        self.name = name
        self.seconds_per_call = seconds_per_call

    def sync(self) -> None:
        pass


BARE_LAUNCH = "bare cuLaunchKernel"  # the CppLoop names in time_calls' results
CPP_ADD = "C++ ember::add"


def launch_floors(with_add: bool = False) -> list[tuple[CppLoop, None]]:
    """time_calls work items for the bare cuLaunchKernel loop (the floor of any op) and, where this
    build has it and ``with_add``, ember::add(x, x) in a C++ loop (the op without Python)."""
    core = ember.cuda._c
    work = [(CppLoop(BARE_LAUNCH, core._bare_launch_seconds), None)]
    add = getattr(core, "_add_loop_seconds", None)
    if with_add and add is not None:
        work.append((CppLoop(CPP_ADD, add), None))
    return work


def time_calls(work: list[tuple[GpuLib | CppLoop, Callable | None]], plan: Plan) -> dict:
    """Host time per call: ``plan.calls`` calls in a Python loop, then a synchronize, over the
    wall clock, divided by the number of calls; the best round counts. A work item is a callable
    or a statement string run by :mod:`timeit` with ``x`` bound as a local (``"x + x"``), so that
    the loop adds no Python function call of its own to the op's cost; or a CppLoop (no fn)."""

    def one_round(lib, fn):
        if isinstance(lib, CppLoop):
            return lib.seconds_per_call(plan.calls)
        lib.sync()
        t0 = time.perf_counter()
        if isinstance(fn, timeit.Timer):
            fn.timeit(plan.calls)
        else:
            for _ in range(plan.calls):
                fn()
        lib.sync()
        return (time.perf_counter() - t0) / plan.calls

    return _interleaved(work, plan.call_rounds, one_round)


def statement_timer(stmt: str, **names) -> timeit.Timer:
    """A timeit.Timer running ``stmt`` with ``names`` as locals of its loop."""
    setup = "; ".join(f"{k} = _names[{k!r}]" for k in names) or "pass"
    return timeit.Timer(stmt, setup=setup, globals={"_names": names})


def _spin_host(seconds: float) -> None:
    """Keeps this thread busy for `seconds` (raises the CPU's clock before host-time cases)."""
    end = time.perf_counter() + seconds
    x = 0
    while time.perf_counter() < end:
        x += 1
