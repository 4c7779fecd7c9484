"""Command line of ``python -m ember.bench``."""

from __future__ import annotations

import argparse
import faulthandler
import os
import platform
import sys
import time

import ember

from . import _memory, _report
from ._cases import cases as all_cases
from ._libs import discover
from ._runner import NOISE, reference_name, run_cases, stderr_log

MEMORY_CASE = "memory: a + b peak RSS"


def _default_device(ember) -> str:
    get = getattr(ember, "get_default_device", None)
    if get is None:
        return "cpu"
    d = get()
    kind = getattr(d, "type", None) or str(d)
    return "cuda" if str(kind).startswith("cuda") else "cpu"


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m ember.bench",
        description="Times ember against NumPy, CuPy and PyTorch on the same work.",
    )
    p.add_argument("--device", help="cpu or cuda[:N] (default: ember's default device)")
    p.add_argument("--json", metavar="PATH", help="write all results as JSON")
    p.add_argument("--png", metavar="PATH", help="write a bar chart of ratios (matplotlib)")
    p.add_argument("--quick", action="store_true", help="shorter timing budget per case")
    p.add_argument("--filter", metavar="SUBSTR", help="run only cases whose name contains it")
    p.add_argument("--list", action="store_true", help="list the cases and exit")
    p.add_argument(
        "--gpu",
        action="store_true",
        help="run only the GPU suite of the CUDA backend (with --json, --quick, and --filter "
        "naming its sections: bandwidth, host overhead, debug cost, matmul, random, fft, "
        "train step, sort, jit, models, images, fusion, first call, host <-> device, "
        "memory)",
    )
    return p


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    # A crash inside a native library still says which case it was in.
    faulthandler.enable()
    if args.gpu:
        from . import _gpu

        return _gpu.main(quick=args.quick, json_path=args.json, only=args.filter)
    cases = all_cases()
    names = [c.name for c in cases] + [MEMORY_CASE]
    if args.list:
        for c in cases:
            tgt = f"target <= {c.target:g}x" if c.target is not None else ""
            print(f"{c.name:32} {c.size:22} {tgt}")
        print(f"{MEMORY_CASE:32} {'1e7':22} extra <= output + 10% of (inputs + output)")
        return 0
    if args.filter:
        f = args.filter.lower()
        cases = [c for c in cases if f in c.name.lower()]
        names = [n for n in names if f in n.lower()]
        if not names:
            print(f"no case matches --filter {args.filter!r}", file=sys.stderr)
            return 2

    device = args.device or _default_device(ember)
    if device.startswith("cuda"):
        cuda = getattr(ember, "cuda", None)
        if cuda is None or not cuda.is_available():
            why = getattr(cuda, "unavailable_reason", None) if cuda is not None else None
            reason = f": {why()}" if callable(why) else ""
            print(
                f"--device {device}: ember.cuda is not available{reason}",
                file=sys.stderr,
            )
            return 2
    elif device != "cpu":
        print(f"--device {device!r}: expected cpu or cuda[:N]", file=sys.stderr)
        return 2

    libs, lib_notes = discover(device)
    lib_names = [lib.name for lib in libs]
    ref = reference_name(libs)
    versions = {lib.name: lib.version() for lib in libs}
    print(f"ember {getattr(ember, '__version__', '?')} benchmark, device {device}")
    print(
        f"python {platform.python_version()}, {platform.machine()}, "
        f"{os.cpu_count()} CPUs, {'quick' if args.quick else 'full'} timing"
    )
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    if load is not None and load > 0.25 * (os.cpu_count() or 1):
        print(f"warning: load average {load:.2f} before starting: other work may disturb timings")
    print("libraries: " + ", ".join(f"{n} {v}" for n, v in versions.items()))
    for n in lib_notes:
        print(f"  {n}")
    print(f"targets compare ember against: {ref or 'nothing (no other library on this device)'}")
    print("times are medians of repeated calls after warm-up; GB/s = bytes read + written / time")
    print()

    t0 = time.perf_counter()
    records = run_cases(libs, cases, quick=args.quick, log=stderr_log) if cases else []
    mem = []
    if MEMORY_CASE in names:
        stderr_log("memory case (fresh subprocesses)")
        mem.append(_memory.run_subprocess("ember", device))
        if not device.startswith("cuda"):
            mem.append(_memory.run_subprocess("numpy", "cpu"))
    if sys.stderr.isatty():
        sys.stderr.write("\r\x1b[K")
    elapsed = time.perf_counter() - t0

    if records:
        print(_report.table(records, lib_names))
        print()
    if mem:
        print(_report.memory_table(mem))
        print("  extra = peak - baseline after the inputs exist; allowed = output + 10% of")
        print("  (inputs + output)")
        print()
    for line in _report.notes(records):
        print("note: " + line)

    statuses = [r["status"] for r in records if r["status"]]
    statuses += [
        ("PASS" if m.get("ok") else "FAIL") if "error" not in m else "ERROR"
        for m in mem
        if m["lib"] == "ember"
    ]
    counts = {s: statuses.count(s) for s in ("PASS", "NEAR", "FAIL", "WRONG", "ERROR", "n/a")}
    summary = ", ".join(f"{v} {k}" for k, v in counts.items() if v)
    print(f"targets: {summary or 'none run'}  ({elapsed:.1f} s)")
    if counts["NEAR"]:
        print(f"  NEAR: above the target by less than {NOISE:.0%}, within run-to-run noise")

    if args.json:
        payload = {
            "ember_version": getattr(ember, "__version__", None),
            "device": device,
            "reference": ref,
            "quick": args.quick,
            "python": platform.python_version(),
            "platform": platform.platform(),
            "cpu_count": os.cpu_count(),
            "load_average_at_start": load,
            "libraries": versions,
            "library_notes": lib_notes,
            "cases": records,
            "memory": mem,
            "summary": counts,
            "elapsed_s": elapsed,
        }
        _report.write_json(args.json, payload)
        print(f"wrote {args.json}")
    if args.png:
        title = f"ember {getattr(ember, '__version__', '')} on {device}"
        print(_report.write_png(args.png, records, lib_names, title))
    return 0
