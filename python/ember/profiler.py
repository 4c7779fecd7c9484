"""ember.profiler: which op takes the time (``torch.profiler``'s shape).

::

    with ember.profiler.profile() as prof:
        train_step()
    print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=10))
    prof.export_chrome_trace("trace.json")   # opens in Perfetto or chrome://tracing

Every public ember call (functions, methods, operators) is an op: its host time (inclusive, and
self: without the ops it called), the time of the kernels it launched on the GPU (CUDA events
around each launch), the bytes its memory-bound kernels read and wrote (elementwise ops,
reductions, copies) with the achieved GB/s, and the memory it allocated. Kernels are rows of
their own too, by kernel name. ``profile_memory=True`` also records the Python line of every
device allocation for ``ember.cuda.memory_snapshot()``.

``with ember.profiler.emit_nvtx():`` opens an NVTX range per op, so Nsight Systems shows ember's
ops on its timeline (NVTX is loaded with dlopen; without it the ranges are no-ops).

Cost: off, one relaxed atomic load per op; on, two clock reads and one record per op (about
0.2 us) and two CUDA event records per kernel launch (about 2 us): time small ops with care.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading

from . import _core

__all__ = [
    "FunctionEvent",
    "FunctionEventAvg",
    "ProfilerActivity",
    "emit_nvtx",
    "profile",
    "record_function",
]


class ProfilerActivity:
    """The activities a profile records (both, always: accepted for PyTorch's spelling)."""

    CPU = "cpu"
    CUDA = "cuda"


_active = threading.Lock()


class FunctionEvent:
    """One op call or one kernel: ``name``, ``kind`` ("op" or "kernel"), host interval
    (``start_us``, ``end_us``, from the profile's start), ``cpu_time_total`` and
    ``self_cpu_time_total`` (us), ``cuda_time_total`` and ``self_cuda_time_total`` (us of its
    kernels: own and of the ops it called), ``bytes``, ``memory`` (bytes allocated), ``device``,
    ``thread``, ``children``."""

    __slots__ = (
        "id",
        "name",
        "kind",
        "start_us",
        "end_us",
        "thread",
        "device",
        "bytes",
        "memory",
        "self_cuda_time_total",
        "cuda_time_total",
        "children",
        "parent",
        "kernels",
    )

    def __init__(self, id, name, kind, start_us, end_us, thread, device, nbytes, memory):  # noqa: A002
        self.id = id
        self.name = name
        self.kind = kind
        self.start_us = start_us
        self.end_us = end_us
        self.thread = thread
        self.device = device
        self.bytes = nbytes
        self.memory = memory
        self.self_cuda_time_total = 0.0
        self.cuda_time_total = 0.0
        self.children = []
        self.parent = None
        self.kernels = []

    @property
    def cpu_time_total(self):
        return self.end_us - self.start_us if self.kind == "op" else 0.0

    @property
    def self_cpu_time_total(self):
        if self.kind != "op":
            return 0.0
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.children)

    def __repr__(self):
        return (
            f"<FunctionEvent {self.name} ({self.kind}): cpu {self.cpu_time_total:.1f} us, "
            f"cuda {self.cuda_time_total:.1f} us>"
        )


class FunctionEventAvg:
    """The events of one name together (``key_averages``): ``key``, ``count``, totals and
    averages of host and device time (us), ``bytes`` and the achieved ``gbps`` of its kernels'
    memory traffic (ops that count bytes), ``memory`` allocated."""

    __slots__ = (
        "key",
        "kind",
        "count",
        "cpu_time_total",
        "self_cpu_time_total",
        "cuda_time_total",
        "self_cuda_time_total",
        "bytes",
        "memory",
    )

    def __init__(self, key, kind):
        self.key = key
        self.kind = kind
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.cuda_time_total = 0.0
        self.self_cuda_time_total = 0.0
        self.bytes = 0
        self.memory = 0

    def add(self, e):
        self.count += 1
        self.cpu_time_total += e.cpu_time_total
        self.self_cpu_time_total += e.self_cpu_time_total
        self.cuda_time_total += e.cuda_time_total
        self.self_cuda_time_total += e.self_cuda_time_total
        self.bytes += e.bytes
        self.memory += e.memory

    @property
    def cpu_time(self):
        return self.cpu_time_total / self.count if self.count else 0.0

    @property
    def cuda_time(self):
        return self.cuda_time_total / self.count if self.count else 0.0

    @property
    def gbps(self):
        """Bytes read and written per second of device time, in GB/s (None when unknown)."""
        if not self.bytes or not self.cuda_time_total:
            return None
        return self.bytes / (self.cuda_time_total * 1e3)

    def __repr__(self):
        return (
            f"<FunctionEventAvg {self.key}: count {self.count}, cpu {self.cpu_time_total:.1f} "
            f"us, cuda {self.cuda_time_total:.1f} us>"
        )


_SORT_KEYS = (
    "cpu_time_total",
    "self_cpu_time_total",
    "cuda_time_total",
    "self_cuda_time_total",
    "cpu_time",
    "cuda_time",
    "count",
    "bytes",
    "memory",
)


class EventList(list):
    """A list of :class:`FunctionEventAvg` with PyTorch's ``table``."""

    def table(self, sort_by=None, row_limit=100):
        """A text table, sorted by `sort_by` (``cuda_time_total``, ``cpu_time_total``,
        ``self_cpu_time_total``, ``count``, ...), descending, at most `row_limit` rows."""
        rows = list(self)
        if sort_by is not None:
            if sort_by not in _SORT_KEYS:
                raise ValueError(
                    f"ember.profiler.table: sort_by must be one of {_SORT_KEYS}, got {sort_by!r}"
                )
            rows.sort(key=lambda r: getattr(r, sort_by), reverse=True)
        if row_limit is not None and row_limit >= 0:
            rows = rows[:row_limit]
        cpu_all = sum(r.self_cpu_time_total for r in self) or 1.0
        cuda_all = sum(r.self_cuda_time_total for r in self) or 1.0
        head = (
            "Name",
            "Self CPU %",
            "Self CPU",
            "CPU total",
            "CPU avg",
            "Self CUDA",
            "Self CUDA %",
            "CUDA total",
            "CUDA avg",
            "GB/s",
            "Memory",
            "# Calls",
        )
        table = [head]
        for r in rows:
            table.append(
                (
                    r.key if len(r.key) <= 60 else r.key[:57] + "...",
                    f"{100 * r.self_cpu_time_total / cpu_all:.2f}%",
                    _us(r.self_cpu_time_total),
                    _us(r.cpu_time_total),
                    _us(r.cpu_time),
                    _us(r.self_cuda_time_total),
                    f"{100 * r.self_cuda_time_total / cuda_all:.2f}%",
                    _us(r.cuda_time_total),
                    _us(r.cuda_time),
                    f"{r.gbps:.1f}" if r.gbps is not None else "",
                    _bytes(r.memory) if r.memory else "",
                    str(r.count),
                )
            )
        widths = [max(len(t[i]) for t in table) for i in range(len(head))]
        sep = "-" * (sum(widths) + 2 * (len(widths) - 1))
        lines = [sep]
        for i, t in enumerate(table):
            lines.append(
                "  ".join(
                    c.ljust(w) if j == 0 else c.rjust(w)
                    for j, (c, w) in enumerate(zip(t, widths, strict=True))
                )
            )
            if i == 0:
                lines.append(sep)
        lines.append(sep)
        lines.append(f"Self CPU time total: {_us(sum(r.self_cpu_time_total for r in self))}")
        lines.append(f"Self CUDA time total: {_us(sum(r.self_cuda_time_total for r in self))}")
        return "\n".join(lines)


def _us(t):
    if t >= 1e6:
        return f"{t / 1e6:.3f}s"
    if t >= 1e3:
        return f"{t / 1e3:.3f}ms"
    return f"{t:.3f}us"


def _bytes(n):
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.2f} {unit}"
    return f"{n} B"


class record_function(contextlib.ContextDecorator):  # noqa: N801 (PyTorch's spelling)
    """PyTorch's ``record_function(name)``: while a profile runs, the GPU work the block
    enqueues on the current device's stream becomes one kernel row named `name` (how library
    calls made from Python, such as cuDNN's convolutions, are timed); ember's own ops inside
    keep their rows too. Outside a profile it costs one lock test."""

    def __init__(self, name, args=None, device=None):
        self.name = str(name)
        self._device = device
        self._handle = 0
        self._dev = None

    def __enter__(self):
        self._handle = 0
        if _active.locked():
            dev = self._device
            if dev is None:
                from . import cuda

                dev = cuda.current_device() if cuda.is_available() else None
            if dev is not None:
                self._dev = int(dev)
                self._handle = _core._debug.range_begin(self._dev)
        return self

    def __exit__(self, *exc):
        if self._handle:
            _core._debug.range_end(self._dev, self._handle, self.name)
            self._handle = 0
        return False


class profile:  # noqa: N801 (torch.profiler.profile spelling)
    """Records the ops and kernels of the block (see the module's documentation). One profile
    runs at a time in a process. `activities`, `record_shapes` and `with_stack` are accepted
    for PyTorch's spelling; `profile_memory` records where each device allocation was made
    (``ember.cuda.memory_snapshot()``)."""

    def __init__(
        self,
        activities=None,
        *,
        record_shapes=False,
        profile_memory=False,
        with_stack=False,
    ):
        self.profile_memory = bool(profile_memory)
        self._events = None
        self._wall_us = 0.0
        self._t0 = 0

    def __enter__(self):
        if not _active.acquire(blocking=False):
            raise RuntimeError("ember.profiler.profile: another profile is running")
        if self.profile_memory:
            _core._debug.set_watch("memory", True)
        self._t0 = _core._debug.now_ns()
        _core._debug.profile_start()
        return self

    def __exit__(self, *exc):
        try:
            ops, kernels = _core._debug.profile_stop()
            self._wall_us = (_core._debug.now_ns() - self._t0) / 1e3
            if self.profile_memory:
                _core._debug.set_watch("memory", False)
            self._build(ops, kernels)
        finally:
            _active.release()
        return False

    @property
    def wall_time_us(self):
        """Host time from the start of the block to its end (us), the kernels waited for."""
        return self._wall_us

    def _build(self, ops, kernels):
        t0 = self._t0
        by_id = {}
        events = []
        for id_, parent, name, a, b, thread, nbytes, alloc in ops:
            e = FunctionEvent(
                id_, name, "op", (a - t0) / 1e3, (b - t0) / 1e3, thread, None, nbytes, alloc
            )
            e.parent = parent
            by_id[id_] = e
            events.append(e)
        for e in events:
            p = by_id.get(e.parent)
            if p is not None:
                p.children.append(e)
        for op, thread, device, name, start_ms, ms in kernels:
            k = FunctionEvent(
                None, name, "kernel", start_ms * 1e3, (start_ms + ms) * 1e3, thread, device, 0, 0
            )
            k.self_cuda_time_total = k.cuda_time_total = ms * 1e3
            events.append(k)
            owner = by_id.get(op)
            if owner is None:
                continue
            owner.kernels.append(k)
            owner.self_cuda_time_total += ms * 1e3
            owner.device = device
            while owner is not None:
                owner.cuda_time_total += ms * 1e3
                owner = by_id.get(owner.parent)
        # Bytes per op are inclusive of the ops it called; an op's own are what remains.
        self._events = events

    def events(self):
        """Every op call and kernel, in order of their start (ops first)."""
        if self._events is None:
            raise RuntimeError("ember.profiler.profile: the profile has not finished")
        return list(self._events)

    def key_averages(self):
        """The events grouped by name (ops and kernels), as an :class:`EventList`."""
        groups = {}
        for e in self.events():
            g = groups.get((e.name, e.kind))
            if g is None:
                g = groups[(e.name, e.kind)] = FunctionEventAvg(e.name, e.kind)
            g.add(e)
        return EventList(groups.values())

    def export_chrome_trace(self, path):
        """Writes the profile as Chrome trace JSON (Perfetto, chrome://tracing): ops on their
        host threads, kernels on a track per device, each kernel linked to its op."""
        pid = os.getpid()
        trace = []
        flows = 0
        for e in self.events():
            if e.kind == "op":
                trace.append(
                    {
                        "name": e.name,
                        "cat": "op",
                        "ph": "X",
                        "ts": e.start_us,
                        "dur": max(e.cpu_time_total, 0.001),
                        "pid": pid,
                        "tid": e.thread,
                        "args": {
                            "bytes": e.bytes,
                            "memory": e.memory,
                            "cuda_time_us": e.cuda_time_total,
                        },
                    }
                )
                for k in e.kernels:
                    flows += 1
                    trace.append(
                        {
                            "name": "launch",
                            "cat": "flow",
                            "ph": "s",
                            "id": flows,
                            "ts": e.start_us,
                            "pid": pid,
                            "tid": e.thread,
                        }
                    )
                    trace.append(
                        {
                            "name": "launch",
                            "cat": "flow",
                            "ph": "f",
                            "bp": "e",
                            "id": flows,
                            "ts": k.start_us,
                            "pid": f"cuda:{k.device}",
                            "tid": "kernels",
                        }
                    )
            else:
                trace.append(
                    {
                        "name": e.name,
                        "cat": "kernel",
                        "ph": "X",
                        "ts": e.start_us,
                        "dur": max(e.cuda_time_total, 0.001),
                        "pid": f"cuda:{e.device}",
                        "tid": "kernels",
                    }
                )
        trace.append(
            {"name": "process_name", "ph": "M", "pid": pid, "args": {"name": "ember (host)"}}
        )
        with open(path, "w") as f:
            json.dump({"traceEvents": trace, "displayTimeUnit": "ms"}, f)
        return path


@contextlib.contextmanager
def emit_nvtx():
    """An NVTX range per ember op inside the block, for Nsight Systems (``nsys profile``)."""
    _core._debug.set_watch("nvtx", True)
    try:
        yield
    finally:
        _core._debug.set_watch("nvtx", False)
