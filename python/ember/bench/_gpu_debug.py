"""GPU benchmark cases of ember.debug's cost (issue: "with nothing enabled, the 1-element x + x
host overhead is unchanged within noise; with the ledger on, <= +1 µs per op; with the profiler
on, say what it costs"): ``x + x`` on a 1-element cuda array, timed in interleaved rounds with
nothing on, inside a ledger, inside ``ember.profiler.profile()`` and under ``emit_nvtx``."""

from __future__ import annotations

import contextlib
import time

import numpy as np

from ._gpu_common import Row, _interleaved, _verdict, statement_timer
from ._report import fmt_time
from ._runner import _error

LEDGER_COST_S = 1e-6  # per op, over nothing enabled


class _Mode:
    def __init__(self, name, enter):
        self.name = name
        self.enter = enter


def debug_cost_cases(ember, plan, log) -> list[Row]:
    log("ember.debug cost: x + x, 1 elem")
    try:
        x = ember.asarray(np.ones(1, np.float32), device="cuda")
        for _ in range(100):
            x + x
        ember.cuda.synchronize()
    except Exception as e:
        row = Row("debug cost x + x, 1 elem", "ember")
        row.detail, row.status = _error(e)[:60], "ERROR"
        return [row]
    modes = [
        _Mode("off", contextlib.nullcontext),
        _Mode("ledger on", ember.debug.ledger),
        _Mode("profiler on", ember.profiler.profile),
        _Mode("nvtx ranges on", ember.profiler.emit_nvtx),
    ]
    timer = statement_timer("x + x", x=x)

    def one_round(mode, fn):
        ember.cuda.synchronize()
        with mode.enter():
            t0 = time.perf_counter()
            fn.timeit(plan.calls)
            ember.cuda.synchronize()
            t = time.perf_counter() - t0
        return t / plan.calls

    times = _interleaved([(m, timer) for m in modes], plan.call_rounds, one_round)
    base = times.get("off")
    rows = []
    for m in modes:
        t = times[m.name]
        row = Row(f"debug cost x + x, 1 elem, {m.name}", "ember")
        if isinstance(t, str):
            row.detail, row.status = t[:60], "ERROR"
            rows.append(row)
            continue
        row.measured = f"{fmt_time(t)}/call"
        row.data["time_s"] = t
        if m.name != "off" and isinstance(base, float):
            row.detail = f"+{fmt_time(t - base)}/call over off"
            row.data["over_s"] = t - base
            if m.name == "ledger on":
                row.target = f"<= +{LEDGER_COST_S * 1e6:g} µs"
                row.status = _verdict(t - base <= LEDGER_COST_S)
        rows.append(row)
    return rows
