"""Keras's progress bar (``32/32 ━━━━━━━━━━━━━━━━━━━━ 1s 3ms/step - accuracy: 0.91 - loss:
0.29``): redrawn in place at most every `interval` seconds on a terminal, printed once at the end
when the output is not a terminal (so log files get one line per epoch), or as Keras's
``verbose=2`` line. Metric values may be ember 0-d arrays: they are read back (one device->host
copy each) only when a line is drawn."""

from __future__ import annotations

import math
import sys
import time


def format_value(v):
    v = float(v)
    return f"{v:.4f}" if abs(v) > 1e-3 else f"{v:.4e}"


def format_step_time(t, unit="step"):
    if t >= 1 or t == 0:
        return f" {t:.0f}s/{unit}"
    if t >= 1e-3:
        return f" {t * 1e3:.0f}ms/{unit}"
    return f" {t * 1e6:.0f}us/{unit}"


def format_eta(eta):
    eta = int(eta)
    if eta > 3600:
        return f"{eta // 3600}:{(eta % 3600) // 60:02d}:{eta % 60:02d}"
    if eta > 60:
        return f"{eta // 60}:{eta % 60:02d}"
    return f"{eta}s"


def is_terminal(stream):
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def _host(values):
    """Floats of the values to draw, all read back in one device->host copy."""
    from ._trainer import read_scalars

    if not values:
        return {}
    if hasattr(values, "arrays"):
        values = values.arrays()
    return read_scalars({k: getattr(v, "array", v) for k, v in values.items()})


class Progbar:
    """``update(current, values, finalize=False)``; `values` is a dict name -> number/array."""

    def __init__(self, target, width=20, verbose=1, interval=0.1, unit_name="step", stream=None):
        self.target = target
        self.width = width
        self.verbose = verbose
        self.interval = interval
        self.unit_name = unit_name
        self.stream = stream if stream is not None else sys.stdout
        self.dynamic = is_terminal(self.stream)
        self._start = time.perf_counter()
        self._last_draw = 0.0
        self._prev_len = 0
        self.draws = 0  # lines drawn (each reads the metric values back once)

    def _values_text(self, values):
        return "".join(f" - {k}: {format_value(values[k])}" for k in sorted(values))

    def _count(self, current):
        if self.target is None:
            return f"{current}/Unknown"
        digits = int(math.log10(max(1, self.target))) + 1
        return f"{current:>{digits}d}/{self.target}"

    def update(self, current, values=None, finalize=None):
        if self.verbose == 0:
            return
        if finalize is None:
            finalize = self.target is not None and current >= self.target
        now = time.perf_counter()
        if not finalize:
            if not (self.verbose == 1 and self.dynamic):
                return
            if now - self._last_draw < self.interval:
                return
        self._last_draw = now
        values = _host(values)
        elapsed = now - self._start
        per_step = elapsed / current if current else 0.0
        self.draws += 1
        if self.verbose == 2:
            line = f"{self._count(current)} - {elapsed:.0f}s -"
            line += format_step_time(per_step, self.unit_name) + self._values_text(values)
            self.stream.write(line + "\n")
            self.stream.flush()
            return
        line = self._count(current) + " "
        if self.target is not None:
            filled = min(self.width, int(self.width * current / max(1, self.target)))
            if self.dynamic:
                line = f"\x1b[1m{line}\x1b[0m"
                if filled:
                    line += "\x1b[32m" + "━" * filled + "\x1b[0m"
                line += "\x1b[37m" + "━" * (self.width - filled) + "\x1b[0m"
            else:
                line += "━" * self.width
        if finalize:
            line += f" {elapsed:.0f}s"
        else:
            eta = per_step * ((self.target or current) - current)
            line += " " + format_eta(eta)
        line += format_step_time(per_step, self.unit_name) + self._values_text(values)
        if self.dynamic:
            pad = max(0, self._prev_len - len(line))
            self.stream.write("\r" + line + " " * pad + ("\n" if finalize else ""))
            self._prev_len = len(line)
        else:
            self.stream.write(line + "\n")
        self.stream.flush()
