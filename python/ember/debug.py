"""ember.debug: what the GPU does behind your back, made visible.

``with ember.debug.ledger() as led:`` records every hidden cost with the line of *your* code that
caused it:

- ``sync``: the host waited for the device (``item()``, ``bool(x)``, ``int``/``float``,
  ``repr``/``print``, ``tolist``, and ops whose result size depends on the data: ``nonzero``,
  ``unique``, ``x[mask]``, bounds checks of integer-array indexing);
- ``transfer``: bytes copied between host and device (direction, pinned or pageable);
- ``compile`` / ``disk_load`` / ``shipped_load``: a kernel compiled by NVRTC (with the time and
  why: the first use of an op, a new dtype combination, a new layout class), or loaded from the
  disk cache or from the kernels the package ships;
- ``alloc``: a device allocation the caching pool could not serve (the pool grew);
  ``oom_retry``: an allocation that failed, emptied the cache and tried again.

``print(led)`` shows a table grouped by line, ``led.events`` the raw :class:`Event` records,
``led.summary()`` counts and totals per kind. Ledgers nest (an outer ledger also sees what an
inner one records) and see every thread (``ledger(all_threads=False)``: only the thread that
opened it).

Strict modes, as ``torch.cuda.set_sync_debug_mode`` and JAX's transfer guard:
``set_sync_mode("warn" | "error" | "off")`` and ``set_transfer_mode(...)`` make implicit
synchronizations and implicit transfers warn (:class:`SyncWarning`, :class:`TransferWarning`)
or raise (:class:`SyncError`, :class:`TransferError`), naming the op and your line. Explicit ones
never count: ``ember.cuda.synchronize()``, ``Event.synchronize()``, ``x.to(...)``, ``x.cpu()``,
``x.cuda()``, ``ember.asnumpy(x)``, ``ember.asarray(host_data, device=...)``. Both also work as
context managers for the calling thread (``with ember.debug.sync_mode("error"):``) and from the
environment (``EMBER_SYNC_MODE``, ``EMBER_TRANSFER_MODE``).

Off, all of this costs one relaxed atomic load per op.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
import warnings

from . import _core

__all__ = [
    "Event",
    "Ledger",
    "SyncError",
    "SyncWarning",
    "TransferError",
    "TransferWarning",
    "get_sync_mode",
    "get_transfer_mode",
    "ledger",
    "set_sync_mode",
    "set_transfer_mode",
    "sync_mode",
    "transfer_mode",
]

_PKG = os.path.dirname(os.path.abspath(__file__)) + os.sep
_core._debug.set_package_dir(_PKG)

KINDS = ("sync", "transfer", "compile", "disk_load", "shipped_load", "alloc", "oom_retry")
_MODES = ("off", "warn", "error")


class SyncWarning(UserWarning):
    """An implicit device->host synchronization under ``set_sync_mode("warn")``."""


class TransferWarning(UserWarning):
    """An implicit host<->device transfer under ``set_transfer_mode("warn")``."""


class SyncError(RuntimeError):
    """An implicit device->host synchronization under ``set_sync_mode("error")``."""


class TransferError(RuntimeError):
    """An implicit host<->device transfer under ``set_transfer_mode("error")``."""


class Event:
    """One recorded event: what (``kind``: one of ``KINDS``), caused by which op (``op``, the
    public ember call in effect, and ``reason``, what in it needed this), where (``file``,
    ``line``, ``function`` of the first frame outside ember; ``thread``), how much (``bytes``,
    ``ms``), and for transfers ``direction`` ("host->device" or "device->host") and ``pinned``;
    ``explicit``: the user asked for it by name."""

    __slots__ = (
        "kind",
        "op",
        "reason",
        "what",
        "device",
        "bytes",
        "ms",
        "direction",
        "pinned",
        "explicit",
        "file",
        "line",
        "function",
        "thread",
        "time",
    )

    def __init__(self, kind, op, reason, what, device, nbytes, ms, direction, pinned, explicit):
        self.kind = kind
        self.op = op
        self.reason = reason
        self.what = what
        self.device = device
        self.bytes = nbytes
        self.ms = ms
        self.direction = direction
        self.pinned = pinned
        self.explicit = explicit
        self.file, self.line, self.function = _caller()
        self.thread = threading.current_thread().name
        self.time = time.perf_counter()

    @property
    def location(self):
        return f"{self.file}:{self.line}"

    def describe(self):
        """One line: the event, its op and its size."""
        what = {
            "sync": "synchronization",
            "transfer": f"transfer {self.direction} ({'pinned' if self.pinned else 'pageable'})",
            "compile": "kernel compile",
            "disk_load": "kernel load from the disk cache",
            "shipped_load": "kernel load from the shipped kernels",
            "alloc": "pool growth",
            "oom_retry": "out-of-memory retry",
        }[self.kind]
        text = f"{'explicit' if self.explicit else 'implicit'} {what}"
        if self.kind not in ("sync", "transfer"):
            text = what
        if self.op:
            text += f" in {self.op}"
        if self.reason:
            text += f" ({self.reason})"
        return text

    def __repr__(self):
        size = f", {_size(self.bytes)}" if self.bytes else ""
        ms = f", {self.ms:.3f} ms" if self.ms else ""
        return f"<ember.debug.Event {self.describe()}{size}{ms} at {self.location}>"


def _size(n):
    if n >= 1 << 30:
        return f"{n / (1 << 30):.2f} GiB"
    if n >= 1 << 20:
        return f"{n / (1 << 20):.2f} MiB"
    if n >= 1 << 10:
        return f"{n / (1 << 10):.1f} KiB"
    return f"{n} B"


def _caller():
    """(file, line, function) of the innermost frame outside ember's package."""
    f = sys._getframe(1)
    while f is not None and f.f_code.co_filename.startswith(_PKG):
        f = f.f_back
    if f is None:
        return ("<ember>", 0, "")
    return (f.f_code.co_filename, f.f_lineno, f.f_code.co_name)


class Ledger:
    """The record of a ``with ember.debug.ledger()`` block (see the module's documentation)."""

    def __init__(self, all_threads=True, kinds=None):
        if kinds is not None:
            bad = [k for k in kinds if k not in KINDS]
            if bad:
                raise ValueError(f"ember.debug.ledger: unknown kinds {bad}; expected {KINDS}")
        self._kinds = frozenset(KINDS if kinds is None else kinds)
        self._all_threads = bool(all_threads)
        self._thread = None
        self._events = []
        self._open = False

    @property
    def events(self):
        """The recorded events, in order."""
        return list(self._events)

    def __enter__(self):
        if self._open:
            raise RuntimeError("ember.debug.ledger: this ledger is already open")
        self._open = True
        self._thread = threading.get_ident()
        with _lock:
            _ledgers.append(self)
        _refresh()
        return self

    def __exit__(self, *exc):
        with _lock:
            if self in _ledgers:
                _ledgers.remove(self)
        self._open = False
        _refresh()
        return False

    def _accepts(self, ev_kind):
        if ev_kind not in self._kinds:
            return False
        return self._all_threads or threading.get_ident() == self._thread

    def summary(self):
        """``{kind: {"count": n, "bytes": total bytes, "ms": total ms}}`` for every kind, plus
        ``"implicit_syncs"`` and ``"implicit_transfers"`` (the counts strict modes act on)."""
        out = {k: {"count": 0, "bytes": 0, "ms": 0.0} for k in KINDS}
        for e in self._events:
            s = out[e.kind]
            s["count"] += 1
            s["bytes"] += e.bytes
            s["ms"] += e.ms
        out["implicit_syncs"] = sum(1 for e in self._events if e.kind == "sync" and not e.explicit)
        out["implicit_transfers"] = sum(
            1 for e in self._events if e.kind == "transfer" and not e.explicit
        )
        return out

    def by_line(self):
        """Rows ``(location, kind, op, count, bytes, ms)`` grouped by line, kind and op, in the
        order the lines first appeared."""
        rows = {}
        for e in self._events:
            key = (f"{e.location} in {e.function}" if e.function else e.location, e.kind, e.op)
            r = rows.setdefault(key, [0, 0, 0.0])
            r[0] += 1
            r[1] += e.bytes
            r[2] += e.ms
        return [(k[0], k[1], k[2], c, b, ms) for k, (c, b, ms) in rows.items()]

    def __str__(self):
        s = self.summary()
        parts = [
            f"{s[k]['count']} {k}" + (f" ({_size(s[k]['bytes'])})" if s[k]["bytes"] else "")
            for k in KINDS
            if s[k]["count"]
        ]
        head = f"ember.debug.ledger: {len(self._events)} events" + (
            f": {', '.join(parts)}" if parts else ""
        )
        rows = self.by_line()
        if not rows:
            return head
        table = [("line", "event", "op", "count", "bytes", "ms")]
        for loc, kind, op, count, nbytes, ms in rows:
            table.append(
                (
                    _short(loc),
                    kind,
                    op or "",
                    str(count),
                    _size(nbytes) if nbytes else "",
                    f"{ms:.2f}" if ms else "",
                )
            )
        widths = [max(len(r[i]) for r in table) for i in range(6)]
        lines = [head]
        for i, r in enumerate(table):
            lines.append(
                "  "
                + "  ".join(
                    c.rjust(w) if j >= 3 else c.ljust(w)
                    for j, (c, w) in enumerate(zip(r, widths, strict=True))
                ).rstrip()
            )
            if i == 0:
                lines.append("  " + "  ".join("-" * w for w in widths))
        return "\n".join(lines)

    def __repr__(self):
        return f"<ember.debug.Ledger: {len(self._events)} events>"


def _short(loc):
    cwd = os.getcwd() + os.sep
    return loc[len(cwd) :] if loc.startswith(cwd) else loc


def ledger(all_threads=True, kinds=None):
    """A :class:`Ledger` to use as ``with ember.debug.ledger() as led:``. `kinds`: only these
    event kinds (default: all of ``KINDS``); `all_threads`: events of every thread (default)
    or only of the thread that opens it."""
    return Ledger(all_threads=all_threads, kinds=kinds)


# ---- strict modes ----------------------------------------------------------------------------

_lock = threading.Lock()
_ledgers = []
_modes = {"sync": "off", "transfer": "off"}
_local = threading.local()  # per-thread overrides from the context managers
_overrides = [0]  # threads with an override in effect (the sink stays installed)
_registry = {}  # warnings shown, for the "default" filter's once per line


def _check_mode(fn, mode):
    if mode not in _MODES:
        raise ValueError(f"ember.debug.{fn}: mode must be 'off', 'warn' or 'error', got {mode!r}")
    return mode


def set_sync_mode(mode):
    """Implicit device->host synchronizations warn (``"warn"``), raise :class:`SyncError`
    (``"error"``) or pass (``"off"``, the default), in every thread."""
    _modes["sync"] = _check_mode("set_sync_mode", mode)
    _refresh()


def set_transfer_mode(mode):
    """Implicit host<->device transfers warn, raise :class:`TransferError` or pass."""
    _modes["transfer"] = _check_mode("set_transfer_mode", mode)
    _refresh()


def _mode(kind):
    o = getattr(_local, kind, None)
    return o if o is not None else _modes[kind]


def get_sync_mode():
    """The sync mode in effect on this thread."""
    return _mode("sync")


def get_transfer_mode():
    """The transfer mode in effect on this thread."""
    return _mode("transfer")


@contextlib.contextmanager
def _override(kind, fn, mode):
    _check_mode(fn, mode)
    prev = getattr(_local, kind, None)
    setattr(_local, kind, mode)
    with _lock:
        _overrides[0] += 1
    _refresh()
    try:
        yield
    finally:
        setattr(_local, kind, prev)
        with _lock:
            _overrides[0] -= 1
        _refresh()


def sync_mode(mode):
    """``with ember.debug.sync_mode("error"):``: the sync mode of this thread inside the block."""
    return _override("sync", "sync_mode", mode)


def transfer_mode(mode):
    """``with ember.debug.transfer_mode("error"):``: the transfer mode of this thread inside."""
    return _override("transfer", "transfer_mode", mode)


def _refresh():
    on = bool(_ledgers) or _overrides[0] > 0 or any(m != "off" for m in _modes.values())
    _core._debug.set_sink(_on_event if on else None)


def _on_event(kind, op, reason, what, device, nbytes, ms, direction, pinned, explicit):
    ev = None
    for led in tuple(_ledgers):
        if led._accepts(kind):
            if ev is None:
                ev = Event(kind, op, reason, what, device, nbytes, ms, direction, pinned, explicit)
            led._events.append(ev)
    if explicit or kind not in ("sync", "transfer"):
        return
    mode = _mode(kind)
    if mode == "off":
        return
    if ev is None:
        ev = Event(kind, op, reason, what, device, nbytes, ms, direction, pinned, explicit)
    size = f" of {_size(ev.bytes)}" if kind == "transfer" else ""
    msg = (
        f"ember.debug: {ev.describe()}{size} at {ev.location}"
        + (f" in {ev.function}" if ev.function else "")
        + (
            "; ask for it explicitly (x.cpu(), ember.asnumpy(x), x.to(device)) or keep the "
            "data on one device"
            if kind == "transfer"
            else "; the host waits for the GPU here: move the read out of the loop, or ask "
            "explicitly (ember.asnumpy(x), x.cpu())"
        )
    )
    if mode == "error":
        raise (SyncError if kind == "sync" else TransferError)(msg)
    warnings.warn_explicit(
        msg,
        SyncWarning if kind == "sync" else TransferWarning,
        ev.file,
        ev.line,
        registry=_registry,
    )


def _from_environment():
    for var, fn in (("EMBER_SYNC_MODE", set_sync_mode), ("EMBER_TRANSFER_MODE", set_transfer_mode)):
        v = os.environ.get(var, "").strip().lower()
        if not v:
            continue
        if v not in _MODES:
            warnings.warn(
                f"ember: {var}={v!r} ignored: expected 'off', 'warn' or 'error'", stacklevel=3
            )
            continue
        fn(v)


_from_environment()
