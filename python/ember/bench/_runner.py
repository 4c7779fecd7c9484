"""Runs the cases on each library: same host data, result checked against NumPy, then timed."""

from __future__ import annotations

import sys
from collections.abc import Callable

import numpy as np

from ._cases import Case
from ._libs import Lib, NumpyLib
from ._timing import measure_many

NOISE = 0.05


def _error(e: BaseException) -> str:
    msg = str(e).strip().splitlines()
    return f"{type(e).__name__}: {msg[0] if msg else ''}"[:200]


def reference_name(libs: list[Lib]) -> str | None:
    """What the targets compare against: NumPy on the CPU; on CUDA, CuPy, else PyTorch."""
    names = [lib.name for lib in libs]
    for name in ("numpy", "cupy", "torch-cuda"):
        if name in names:
            return name
    return None


def status(rec: dict, ref: str | None) -> str:
    e = rec["results"].get("ember", {})
    if "error" in e:
        return "ERROR"
    if e.get("check") is False:
        return "WRONG"
    if rec["target"] is None:
        return ""
    ratio = rec["ratios"].get(ref) if ref else None
    if ratio is None:
        return "n/a"
    # Compared at the precision the table shows (1%): a measured 1.004x is 1.00x.
    ratio = round(ratio, 2)
    if ratio <= rec["target"]:
        return "PASS"
    # Run-to-run noise of a shared machine is a few percent: a ratio just above the target
    # is reported as such, neither as a pass nor as a clear failure.
    return "NEAR" if ratio <= rec["target"] * (1 + NOISE) else "FAIL"


def run_cases(
    libs: list[Lib],
    cases: list[Case],
    *,
    quick: bool = False,
    log: Callable[[str], None] | None = None,
) -> list[dict]:
    if quick:
        budget = {"budget_s": 0.1, "min_repeats": 3, "max_total_s": 1.0}
    else:
        budget = {"budget_s": 0.4, "min_repeats": 5, "max_total_s": 3.0}
    host_lib = NumpyLib()
    ref = reference_name(libs)
    host: dict = {}
    dev: dict = {}
    last_use = {inp: i for i, case in enumerate(cases) for inp in case.inputs}
    records = []
    for i, case in enumerate(cases):
        if log:
            log(f"[{i + 1}/{len(cases)}] {case.name} ({case.size})")
        for inp in case.inputs:
            if inp not in host:
                host[inp] = inp.make()
        h = tuple(host[inp] for inp in case.inputs)
        args = case.prepare(host_lib, *h) if case.prepare else h
        expected = np.array(case.run(host_lib, *args), copy=True)
        rec = {
            "case": case.name,
            "size": case.size,
            "bytes": case.bytes,
            "target": case.target,
            "results": {},
            "ratios": {},
        }
        timed = []  # (lib, result dict, fn) of the libraries whose first call succeeded
        for lib in libs:
            r: dict = {}
            rec["results"][lib.name] = r
            try:
                d = []
                for inp, arr in zip(case.inputs, h, strict=True):
                    key = (lib.name, inp)
                    if key not in dev:
                        dev[key] = lib.put(arr)
                    d.append(dev[key])
                largs = case.prepare(lib, *d) if case.prepare else tuple(d)

                def fn(lib=lib, largs=largs, run=case.run):
                    return run(lib, *largs)

                got = fn()
                lib.sync()
            except Exception as e:  # one library failing must not stop the run
                r["error"] = _error(e)
                continue
            if lib.name != "numpy":
                try:
                    ok, err = case.check(expected, lib.get(got), h)
                    r["check"] = ok
                    r["max_abs_err"] = err
                except Exception as e:  # a result that cannot be compared is wrong
                    r["check"] = False
                    r["check_error"] = _error(e)
            del got
            timed.append((lib, r, fn))
        try:
            timings = measure_many([(fn, lib.sync) for lib, _, fn in timed], **budget)
        except Exception as e:  # recorded against every library of the case
            for _, r, _ in timed:
                r["error"] = "while timing: " + _error(e)
            timed, timings = [], []
        for (_, r, _), t in zip(timed, timings, strict=True):
            r.update(t.as_dict())
            if case.bytes:
                r["gb_per_s"] = case.bytes / t.median_s / 1e9
        e = rec["results"].get("ember", {})
        for name, r in rec["results"].items():
            if name != "ember" and "median_s" in r and "median_s" in e:
                rec["ratios"][name] = e["median_s"] / r["median_s"]
        rec["reference"] = ref
        rec["status"] = status(rec, ref)
        records.append(rec)
        # Drop operands no later case uses, so peak memory stays at a few cases' worth.
        for inp in case.inputs:
            if last_use[inp] == i:
                host.pop(inp, None)
                for lib in libs:
                    dev.pop((lib.name, inp), None)
    return records


def stderr_log(msg: str) -> None:
    if sys.stderr.isatty():
        sys.stderr.write("\r\x1b[K" + msg)
        sys.stderr.flush()
