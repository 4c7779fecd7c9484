"""The issue's frame benchmark: ``python -m ember.frame.bench --device cuda --rows 100000000``.

Table: an int64 key with 10^4 distinct values and two float64 value columns; a 10^6-row dimension
table (capped at the row count). Cases: groupby(key).agg(sum, mean), inner merge with the
dimension table, sort_values on two keys, a ``query`` filter, read_parquet of the table. Each is
timed once warm (after one untimed run) beside pandas and polars when importable; on CUDA the
peak GPU memory of each case is reported against the table's size.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time

import numpy as np
import pandas as pd

import ember


def _sync(device):
    if device == "cuda":
        ember.cuda.synchronize()


def _timed(fn, device, reps=1, warm=True):
    """Best of ``reps`` runs, after one untimed run when ``warm`` (ember: kernel compiles and
    pools; pandas and polars have none to warm, and at 10^8 rows a second run costs minutes)."""
    if warm:
        fn()
        _sync(device)
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        _sync(device)
        best = min(best, time.perf_counter() - t0)
    return best


def _polars():
    try:
        import polars as pl
    except ImportError:
        return None
    return pl


def run(rows=10**6, device="cpu", reps=1, keys=10**4, dim_rows=10**6, path=None, log=None):
    import ember.frame as fd

    rng = np.random.default_rng(0)
    pdf = pd.DataFrame(
        {
            "key": rng.integers(0, keys, rows),
            "a": rng.normal(size=rows),
            "b": rng.normal(size=rows),
        }
    )
    nd = min(dim_rows, rows)
    dim = pd.DataFrame({"key": rng.permutation(nd), "w": rng.normal(size=nd)})  # unique keys
    tmp = path or tempfile.mkdtemp()
    pq_path = os.path.join(tmp, "frame_bench.parquet")
    pdf.to_parquet(pq_path)
    df = fd.from_pandas(pdf, device=device)
    ddim = fd.from_pandas(dim, device=device)
    cases = {
        "groupby_sum_mean": (
            lambda: df.groupby("key").agg({"a": "sum", "b": "mean"}),
            lambda: pdf.groupby("key").agg({"a": "sum", "b": "mean"}),
            lambda pl, t, d: t.group_by("key").agg(pl.col("a").sum(), pl.col("b").mean()),
        ),
        "merge_inner": (
            lambda: df.merge(ddim, on="key"),
            lambda: pdf.merge(dim, on="key"),
            lambda pl, t, d: t.join(d, on="key", how="inner"),
        ),
        "sort_two_keys": (
            lambda: df.sort_values(["key", "a"]),
            lambda: pdf.sort_values(["key", "a"]),
            lambda pl, t, d: t.sort(["key", "a"]),
        ),
        "query_filter": (
            lambda: df.query("a > 0.5 and key < 5000"),
            lambda: pdf.query("a > 0.5 and key < 5000"),
            lambda pl, t, d: t.filter((pl.col("a") > 0.5) & (pl.col("key") < 5000)),
        ),
        "read_parquet": (
            lambda: fd.read_parquet(pq_path, device=device),
            lambda: pd.read_parquet(pq_path),
            lambda pl, t, d: pl.read_parquet(pq_path),
        ),
    }
    pl = _polars()
    pt = pl.from_pandas(pdf) if pl else None
    pd_dim = pl.from_pandas(dim) if pl else None
    data_bytes = int(pdf.memory_usage(index=False).sum())
    out = {"rows": rows, "device": device, "data_bytes": data_bytes, "cases": {}}
    for name, (ours, theirs, polar) in cases.items():
        if device == "cuda":
            ember.cuda.reset_peak_memory_stats()
        r = {"ember_s": _timed(ours, device, reps)}
        if device == "cuda":
            r["gpu_peak_bytes"] = int(ember.cuda.max_memory_allocated())
            r["gpu_peak_over_data"] = r["gpu_peak_bytes"] / data_bytes
        r["pandas_s"] = _timed(theirs, "cpu", reps, warm=False)
        r["vs_pandas"] = r["pandas_s"] / r["ember_s"]
        if pl is not None:
            r["polars_s"] = _timed(lambda f=polar: f(pl, pt, pd_dim), "cpu", reps, warm=False)
            r["vs_polars"] = r["polars_s"] / r["ember_s"]
        out["cases"][name] = r
        if log:
            log(_line(name, r))
    return out


def _line(name, r):
    line = f"  {name:18s} ember {r['ember_s']:8.3f} s   pandas {r['pandas_s']:8.3f} s"
    line += f" ({r['vs_pandas']:5.1f}x)"
    if "polars_s" in r:
        line += f"   polars {r['polars_s']:8.3f} s ({r['vs_polars']:5.2f}x)"
    if "gpu_peak_bytes" in r:
        line += f"   GPU peak {r['gpu_peak_bytes'] / 2**20:8.0f} MiB"
        line += f" ({r['gpu_peak_over_data']:.1f}x data)"
    return line


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m ember.frame.bench", description=__doc__)
    ap.add_argument("--rows", type=float, default=1e6)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--json", default=None, help="also write the results to this file")
    a = ap.parse_args(argv)
    print(f"{int(a.rows):,} rows on {a.device}", flush=True)
    res = run(int(a.rows), a.device, a.reps, log=lambda m: print(m, flush=True))
    print(f"data: {res['data_bytes'] / 2**20:.0f} MiB")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)
    return res


if __name__ == "__main__":
    main()
