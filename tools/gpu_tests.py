"""Run the GPU test suite as parallel pytest shards (the suite is dominated by NVRTC compiles,
which use one core each): ``python3 tools/gpu_tests.py [-j N] [pytest args...]``.

Each shard is ``pytest --shard I/N -k "not cpu" tests/python`` (see tests/python/conftest.py); the
shards share the on-disk kernel cache. Prints each shard's summary line and the slowest tests, and
exits non-zero when any shard failed. Logs go to $EMBER_TEST_LOGS (default build/gpu-tests).
"""

from __future__ import annotations

import argparse
import os
import pathlib
import signal
import subprocess
import sys
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-j", "--jobs", type=int, default=max(1, min(8, (os.cpu_count() or 2) // 2)))
    ap.add_argument("-k", default="not cpu", help='pytest -k expression (default "not cpu")')
    ap.add_argument("paths", nargs="*", default=["tests/python"])
    args, extra = ap.parse_known_args()
    logs = pathlib.Path(os.environ.get("EMBER_TEST_LOGS", ROOT / "build" / "gpu-tests"))
    logs.mkdir(parents=True, exist_ok=True)
    n = args.jobs
    t0 = time.perf_counter()
    procs = []
    for i in range(n):
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rfE"]
        cmd += ["--durations=3", "--shard", f"{i}/{n}", "-k", args.k, *extra, *args.paths]
        log = open(logs / f"shard{i}.log", "w")
        procs.append((subprocess.Popen(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT), log))

    def stop(signum, frame):  # a timeout: end the shards, then report what they got through
        for p, _ in procs:
            p.terminate()

    signal.signal(signal.SIGTERM, stop)
    failed = 0
    for i, (p, log) in enumerate(procs):
        rc = p.wait()
        log.close()
        text = (logs / f"shard{i}.log").read_text(errors="replace").splitlines()
        tail = [ln for ln in text if ln.startswith(("FAILED", "ERROR"))]
        words = ("passed", "failed", "error", "no tests ran")
        summary = next(
            (ln for ln in reversed(text) if " in " in ln and any(w in ln for w in words)), ""
        )
        if not summary and text:  # stopped early: its last progress line
            summary = "stopped at: " + text[-1][-60:]
        cache = next((ln for ln in text if ln.startswith("ember kernel cache")), "")
        print(f"shard {i}/{n}: rc {rc}  {summary.strip('= ')}  | {cache}")
        for ln in tail[:40]:
            print("   ", ln)
        if rc not in (0, 5):  # 5: nothing collected in this shard
            failed += 1
    print(f"{n} shards in {time.perf_counter() - t0:.0f} s; {failed} failed (logs: {logs})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
