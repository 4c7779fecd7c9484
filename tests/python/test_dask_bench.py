"""ember.dask.bench (issue 32's benchmark) runs end to end at a tiny size on the CPU, its
results checked against the one-array reference (a wrong answer is NaN in its table)."""

from __future__ import annotations

import math

import pytest

pytest.importorskip("dask")


def test_dask_bench_runs_small():
    from ember.dask import bench

    lines = []
    res = bench.run("cpu", gib=0.004, chunk_mib=0.5, reps=1, cluster=False, log=lines.append)
    for op in ("(x*2+1).sum()", "x.std(axis=0)"):
        for label in ("ember", "dask threads", "dask sync", "dask floor"):
            t = res[(op, label)]
            assert t > 0 and not math.isnan(t), (op, label, t)
    bench._table(res, lines.append)
    assert any("of ember's speed" in x and "Dask's own" in x for x in lines)
