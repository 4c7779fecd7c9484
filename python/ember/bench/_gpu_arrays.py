"""GPU benchmark cases of the data-dependent array functions, each with its target, ember against
CuPy and PyTorch on the same data: ``sort`` of 2^28 float32 (keys/s >= CuPy's), boolean-mask
selection of half of 2^28 float32 (>= 0.9x CuPy's speed), ``unique`` of 2^24 int32 (>= CuPy's
speed) and ``topk`` (k = 10) along 128 rows of 2^20 float32 (>= PyTorch's speed; CuPy has none).
Each result is checked: the sort's order and a sample against NumPy, the mask's count and a
sample, unique against NumPy's, topk's values against NumPy's sort."""

from __future__ import annotations

import dataclasses
import functools
import operator

import numpy as np

from ._gpu_common import Row, _verdict, release_all, time_kernels
from ._report import fmt_time
from ._runner import _error

SORT_N = 1 << 28
MASK_N = 1 << 28
UNIQUE_N = 1 << 24
TOPK_ROWS, TOPK_N = 128, 1 << 20
MASK_RATIO = 0.9


def _sort_fn(lib):
    if lib.name == "torch":
        return lambda x: lib.xp.sort(x)[0]
    return lambda x: lib.xp.sort(x)


def _unique_fn(lib):
    if lib.name == "torch":
        return lambda x: lib.xp.unique(x, sorted=True)
    return lambda x: lib.xp.unique(x)


def _rows(case, libs, times, nbytes, check, target, ratio, unit_count=None, peer="cupy"):
    """One row per library: time, GB/s (input read), ratio to the peer (CuPy unless named),
    and ember's verdict."""
    ref = times.get(peer)
    rows = []
    for lib in libs:
        t = times.get(lib.name)
        row = Row(case, lib.name)
        if lib.name == "ember":
            row.target = target
        if not isinstance(t, float):
            row.detail = str(t)[:60]
            row.status = "ERROR" if lib.name == "ember" else ""
            rows.append(row)
            continue
        row.measured = fmt_time(t)
        row.gb_per_s = nbytes / t / 1e9
        row.data["time_s"] = t
        bad = check.get(lib.name)
        parts = []
        if unit_count:
            parts.append(f"{unit_count / t / 1e9:.2f} G keys/s")
        if isinstance(ref, float) and lib.name != peer:
            parts.append(f"{ref / t:.2f}x {peer} speed")
        if bad:
            parts.append(f"WRONG: {bad}")
        row.detail = ", ".join(parts)
        if lib.name == "ember":
            if bad:
                row.status = "WRONG"
            elif isinstance(ref, float):
                row.status = _verdict(ref / t >= ratio)
            else:
                row.status = "n/a"
        rows.append(row)
    return rows


def _measure(libs, plan, inputs, make, verify):
    """(times, check) of one case: the host arrays `inputs` go to each lib's device and
    make(lib, *them) returns the call to time; each lib's call is run once and verified on the
    host first (check: its error text or None), then all are timed together. A lib that failed
    gets its error as its time."""
    work, check = [], {}
    for lib in libs:
        try:
            fn = make(lib, *(lib.put(a) for a in inputs))
            out = fn()
            lib.sync()
            check[lib.name] = verify(np.asarray(lib.get(out)))
            work.append((lib, fn))
        except Exception as e:  # reported on the row
            check[lib.name] = _error(e)
    times = time_kernels(work, plan)
    for lib in libs:
        times.setdefault(lib.name, check.get(lib.name) or "not run")
    return times, check


def array_cases(libs, plan, log) -> list[Row]:
    rng = np.random.default_rng(21)
    slow = dataclasses.replace(plan, rounds=min(plan.rounds, 3), reps=min(plan.reps, 3))
    rows: list[Row] = []

    # sort 2^28 float32
    log("sort 2^28 f32")
    host = rng.random(SORT_N, dtype=np.float32)
    total = float(np.sum(host, dtype=np.float64))

    def verify_sort(s):
        if s.shape != (SORT_N,) or not bool(np.all(s[1:] >= s[:-1])):
            return "not sorted"
        # the same keys: a sorted permutation of them has their sum
        same = np.isclose(float(np.sum(s, dtype=np.float64)), total, rtol=1e-9)
        return None if same else "not the input's keys"

    times, check = _measure(
        libs, slow, (host,), lambda lib, x: functools.partial(_sort_fn(lib), x), verify_sort
    )
    rows += _rows("sort 2^28 f32", libs, times, host.nbytes, check, ">= cupy keys/s", 1.0, SORT_N)
    release_all(libs)

    # boolean mask selection of half of 2^28 float32
    log("x[mask] 2^28 f32, half")
    keep = host < 0.5
    count = int(keep.sum())
    picked = host[keep][:: 1 << 12]

    def verify_mask(s):
        if s.shape != (count,):
            return f"{s.shape[0]} selected, expected {count}"
        return None if np.array_equal(s[:: 1 << 12], picked) else "wrong values"

    times, check = _measure(
        libs,
        slow,
        (host, keep),
        lambda lib, x, m: functools.partial(operator.getitem, x, m),
        verify_mask,
    )
    rows += _rows(
        "x[mask] 2^28 f32, half selected",
        libs,
        times,
        host.nbytes + keep.nbytes,
        check,
        f">= {MASK_RATIO}x cupy speed",
        MASK_RATIO,
    )
    del host, keep
    release_all(libs)

    # unique of 2^24 int32 (about 2^20 distinct values)
    log("unique 2^24 i32")
    ints = rng.integers(0, 1 << 20, UNIQUE_N).astype(np.int32)
    want = np.unique(ints)

    def verify_unique(u):
        return None if np.array_equal(u, want) else f"{u.size} values, expected {want.size}"

    times, check = _measure(
        libs, slow, (ints,), lambda lib, x: functools.partial(_unique_fn(lib), x), verify_unique
    )
    rows += _rows("unique 2^24 i32", libs, times, ints.nbytes, check, ">= cupy speed", 1.0)
    release_all(libs)

    # topk, k = 10, along rows of 2^20 float32 (a kNN block's shape)
    log("topk k=10 of 128 x 2^20 f32")
    tk = rng.standard_normal((TOPK_ROWS, TOPK_N), dtype=np.float32)
    want_tk = -np.sort(-tk, axis=1)[:, :10]
    tlibs = [lib for lib in libs if lib.name in ("ember", "torch")]

    def verify_topk(v):
        return None if np.array_equal(v, want_tk) else "wrong values"

    def topk_fn(lib, x):
        return lambda: lib.xp.topk(x, 10, dim=1)[0]

    times, check = _measure(tlibs, slow, (tk,), topk_fn, verify_topk)
    rows += _rows("topk k=10 128 x 2^20 f32", tlibs, times, tk.nbytes, check, ">= torch speed",
                  1.0, peer="torch")  # fmt: skip
    release_all(libs)
    return rows
