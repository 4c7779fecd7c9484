"""Issue 32's benchmark: ``python -m ember.dask.bench [--device cuda] [--gib 16]``.

A float32 array of ``--gib`` GiB (1024 columns) in ``--chunk-mib`` MiB row chunks, made on the
device by ember's Dask backend and persisted (made once, outside the timings). Two operations,
``(x * 2 + 1).sum()`` and ``x.std(axis=0)``, each timed warm (best of ``--reps``) as:

- ``ember``: one ember array of the same size, no Dask (the reference: Dask's overhead is the
  rest);
- ``dask threads``: Dask's threaded scheduler over ember chunks; the figure that matters is its
  speed as a fraction of ``ember``'s (the issue's target: at least 80 %);
- ``dask sync``: the same graph on Dask's single-threaded scheduler (what the thread pool
  adds or saves);
- ``dask cluster``: a one-worker ``ember.dask.LocalCluster`` (a worker process owning the GPU)
  with the chunks persisted on the worker; the time includes sending the graph and returning
  the result to the client;
- ``cupy threads``: the same pipeline on CuPy chunks (Dask's "cupy" backend), when CuPy is
  importable and the device is a GPU;
- ``dask floor``: the same graph (as many chunks, the same operations) over NumPy chunks of one
  row each, on the threaded scheduler: Dask's own cost per compute (graph building,
  optimization, ordering, scheduling), which no chunk type can go below. GPU chunks' kernels
  run asynchronously, so at best Dask's host work overlaps them: the ratio to ``ember`` is
  bounded by ember's time over this floor.

Every result is checked against the ember figure (a fast wrong answer shows).
"""

from __future__ import annotations

import argparse
import gc
import json
import time

import numpy as np

import ember

_COLS = 1024


def _sync(device):
    if str(device).startswith("cuda"):
        ember.cuda.synchronize()


def _best(fn, device, reps):
    out, best = None, float("inf")
    for _ in range(reps + 1):  # the first run warms (kernel compiles, pools)
        _sync(device)
        t = time.perf_counter()
        out = fn()
        _sync(device)
        best = min(best, time.perf_counter() - t)
    return best, out


def _ops(xp_sum, xp_std):
    return {"(x*2+1).sum()": xp_sum, "x.std(axis=0)": xp_std}


def _host(v):
    if hasattr(v, "get"):  # CuPy
        return np.asarray(v.get())
    return np.asarray(ember.asnumpy(v) if isinstance(v, ember.ndarray) else v)


def _free(device):
    gc.collect()
    if str(device).startswith("cuda"):
        ember.cuda.synchronize()
        ember.cuda.empty_cache()


def _reference(shape, device, reps, results, log):
    x = ember.random.default_rng(0).random(shape, dtype=ember.float32, device=device)
    ref = {}
    for name, fn in _ops(lambda: (x * 2 + 1).sum(), lambda: x.std(axis=0)).items():
        log(f"  .. ember {name}")
        t, out = _best(fn, device, reps)
        ref[name] = _host(out)
        results[(name, "ember")] = t
        log(f"     {t * 1e3:.2f} ms")
    return ref


def run(device="cpu", gib=16.0, chunk_mib=256, reps=3, cluster=True, log=None):
    log = log or (lambda m: print(m, flush=True))
    import dask
    import dask.array as da

    import ember.dask  # noqa: F401  (registers the backend and the dispatch)

    rows = max(int(gib * 2**30) // (4 * _COLS), 1)
    chunk_rows = max(int(chunk_mib * 2**20) // (4 * _COLS), 1)
    shape = (rows, _COLS)
    nbytes = rows * _COLS * 4
    log(
        f"dask bench: {shape} float32 ({nbytes / 2**30:.2f} GiB) on {device}, "
        f"{-(-rows // chunk_rows)} chunks of {chunk_rows * _COLS * 4 / 2**20:.0f} MiB"
    )
    results = {}

    # the reference: one ember array
    ref = _reference(shape, device, reps, results, log)
    _free(device)

    def dask_ops(arr, compute):
        return _ops(
            lambda: compute((arr * 2 + 1).sum()),
            lambda: compute(arr.std(axis=0)),
        )

    def record(label, arr, compute):
        for name, fn in dask_ops(arr, compute).items():
            log(f"  .. {label} {name}")
            t, out = _best(fn, device, reps)
            got = _host(out)
            # a different draw of the same distribution: sums and column deviations agree to
            # a few standard errors (relative, ~1/sqrt(rows) for a column's deviation)
            ok = np.allclose(got, ref[name], rtol=max(1e-3, 8 / rows**0.5))
            results[(name, label)] = t if ok else float("nan")
            log(f"     {t * 1e3:.2f} ms")
            if not ok:
                log(f"  {label} {name}: result {got!r:.60} differs from ember's")

    # Dask's own cost: the same chunk grid and graph over one-row NumPy chunks
    nchunks = -(-rows // chunk_rows)
    xf = da.random.default_rng(4).random((nchunks, _COLS), chunks=(1, _COLS), dtype=np.float32)
    xf = xf.persist(scheduler="threads")
    for name, fn in dask_ops(xf, lambda a: a.compute(scheduler="threads")).items():
        log(f"  .. dask floor {name}")
        t, _ = _best(fn, "cpu", reps)
        results[(name, "dask floor")] = t
        log(f"     {t * 1e3:.2f} ms")
    del xf

    with dask.config.set({"array.backend": "ember"}):
        xd = da.random.default_rng(1).random(
            shape, chunks=(chunk_rows, _COLS), dtype=np.float32, device=device
        )
    log("  .. making the chunks (threads)")
    xd = xd.persist(scheduler="threads")
    assert isinstance(xd._meta, ember.ndarray)
    record("dask threads", xd, lambda a: a.compute(scheduler="threads"))
    # the same graph run by one thread: how much of the gap is the thread pool's
    record("dask sync", xd, lambda a: a.compute(scheduler="sync"))
    del xd
    _free(device)

    if str(device).startswith("cuda"):
        try:
            import cupy
        except ImportError:
            cupy = None
        if cupy is not None:
            with dask.config.set({"array.backend": "cupy"}):
                xq = da.random.default_rng(3).random(
                    shape, chunks=(chunk_rows, _COLS), dtype=np.float32
                )
            xq = xq.persist(scheduler="threads")
            record(
                "cupy threads",
                xq,
                lambda a: (lambda r: (cupy.cuda.Device().synchronize(), r)[1])(
                    a.compute(scheduler="threads")
                ),
            )
            del xq
            gc.collect()
            cupy.get_default_memory_pool().free_all_blocks()

    if cluster:
        import distributed

        log("  .. starting a one-worker LocalCluster")
        devices = None if str(device).startswith("cuda") else []
        with (
            ember.dask.LocalCluster(
                n_workers=1,
                devices=devices,
                processes=True,
                dashboard_address=None,
                device_memory_limit=None,
            ) as cl,
            distributed.Client(cl) as client,
        ):
            with dask.config.set({"array.backend": "ember"}):
                xc = da.random.default_rng(2).random(
                    shape, chunks=(chunk_rows, _COLS), dtype=np.float32, device=device
                )
            log("  .. making the chunks on the worker")
            xc = client.persist(xc)
            distributed.wait(xc)
            where = dask.delayed(lambda b: f"{type(b).__module__} on {b.device}")(xc.blocks[0])
            log(
                f"     worker's chunks: {where.compute()}; its default device: "
                f"{list(client.run(lambda: str(ember.get_default_device())).values())}"
            )
            record("dask cluster", xc, lambda a: client.compute(a).result())
            del xc

    return results


def _table(results, log):
    names = sorted({k[0] for k in results}, key=lambda n: n != "(x*2+1).sum()")
    labels = ["ember", "dask threads", "dask sync", "dask cluster", "cupy threads", "dask floor"]
    log(f"{'operation':<16}" + "".join(f"{lb:>16}" for lb in labels) + "   dask threads / ember")
    for n in names:
        row = f"{n:<16}"
        for lb in labels:
            t = results.get((n, lb))
            row += f"{'-' if t is None else f'{t * 1e3:.2f} ms':>16}"
        e, d = results.get((n, "ember")), results.get((n, "dask threads"))
        if e and d:
            row += f"   {e / d:.2f} of ember's speed"
            f = results.get((n, "dask floor"))
            if f:  # the best Dask can reach: its host work fully overlapping the device's
                row += f" (Dask's own {f * 1e3:.1f} ms: at most {min(1.0, e / f):.2f})"
        log(row)


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m ember.dask.bench", description=__doc__)
    p.add_argument("--device", default="cpu")
    p.add_argument("--gib", type=float, default=16.0)
    p.add_argument("--chunk-mib", type=float, default=256)
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--no-cluster", action="store_true")
    p.add_argument("--json")
    a = p.parse_args(argv)
    results = run(a.device, a.gib, a.chunk_mib, a.reps, cluster=not a.no_cluster)
    _table(results, lambda m: print(m, flush=True))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({f"{k[0]} | {k[1]}": v for k, v in results.items()}, f, indent=1)


if __name__ == "__main__":
    main()
