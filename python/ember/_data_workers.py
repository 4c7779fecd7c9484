"""``DataLoader(num_workers=N)``: worker processes (the standard library's multiprocessing, as
PyTorch's loader) that load and collate batches in parallel; batches come back in order (map-style
datasets) or round-robin over the workers (iterable datasets), `prefetch_factor` batches per worker
in flight. Workers compute on the CPU (a forked child must not touch the parent's CUDA context);
the main process pins and moves each batch to the device."""

from __future__ import annotations

import itertools
import os
import queue
import random as _pyrandom
import traceback

import numpy as _np

__all__ = ["WorkerInfo", "get_worker_info"]


class WorkerInfo:
    """What ``get_worker_info()`` returns inside a worker: ``id``, ``num_workers``, ``seed``,
    ``dataset`` (the worker's copy)."""

    def __init__(self, id, num_workers, seed, dataset):  # noqa: A002
        self.id, self.num_workers, self.seed, self.dataset = id, num_workers, seed, dataset

    def __repr__(self):
        return f"WorkerInfo(id={self.id}, num_workers={self.num_workers}, seed={self.seed})"


_info = None


def get_worker_info():
    """The :class:`WorkerInfo` of the calling DataLoader worker process; None in the main
    process."""
    return _info


class _Failure:
    """An exception raised in a worker, carried to the main process as text."""

    def __init__(self, worker_id, exc):
        self.text = (
            f"Caught {type(exc).__name__} in DataLoader worker process {worker_id}.\n"
            + "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        )
        self.type = type(exc)

    def reraise(self):
        try:
            err = self.type(self.text)
        except Exception:
            err = RuntimeError(self.text)
        raise err


_END = "__ember_end__"


def _worker(
    dataset, collate, index_q, result_q, wid, nworkers, seed, init_fn, iterable, bs, drop_last
):
    global _info
    from . import _core, random

    _core.set_default_device(_core.Device("cpu"))
    _pyrandom.seed(seed)
    _np.random.seed(seed % 2**32)
    random.seed(seed % 2**63)
    _info = WorkerInfo(wid, nworkers, seed, dataset)
    try:
        if init_fn is not None:
            init_fn(wid)
    except Exception as e:  # reported on the first batch the main process waits for
        result_q.put((None, None, _Failure(wid, e)))
        return
    it = iter(dataset) if iterable else None
    while True:
        try:
            task = index_q.get()
        except (EOFError, OSError):
            return
        if task is None:
            return
        epoch, bid, indices = task
        try:
            if iterable:
                if indices == "reset":
                    it = iter(dataset)
                    continue
                samples = list(itertools.islice(it, bs))
                if not samples or (drop_last and len(samples) < bs):
                    result_q.put((epoch, bid, _END))
                    continue
            else:
                samples = [dataset[i] for i in indices]
            result_q.put((epoch, bid, collate(samples)))
        except Exception as e:
            result_q.put((epoch, bid, _Failure(wid, e)))


class _Pool:
    """The worker processes of one loader (kept across epochs with persistent_workers)."""

    def __init__(self, loader):
        import multiprocessing as mp

        ctx = loader.multiprocessing_context
        if ctx is None or isinstance(ctx, str):
            ctx = mp.get_context(ctx)
        self.n = loader.num_workers
        self.result_q = ctx.Queue()
        self.index_qs = [ctx.Queue() for _ in range(self.n)]
        base = (
            int(_np.random.default_rng().integers(0, 2**62))
            if loader.generator is None
            else int(loader.generator.integers(0, 2**62, (), device="cpu"))
        )
        self.procs = []
        for w in range(self.n):
            p = ctx.Process(
                target=_worker,
                args=(
                    loader.dataset,
                    loader.collate_fn,
                    self.index_qs[w],
                    self.result_q,
                    w,
                    self.n,
                    base + w,
                    loader.worker_init_fn,
                    loader._iterable,
                    loader.batch_size,
                    loader.drop_last,
                ),  # fmt: skip
                daemon=True,
            )
            p.start()
            self.procs.append(p)
        self.epoch = 0

    def shutdown(self):
        for q in self.index_qs:
            try:
                q.put(None)
            except (OSError, ValueError):
                pass
        for p in self.procs:
            p.join(timeout=5)
            if p.is_alive():
                p.terminate()
        for q in self.index_qs + [self.result_q]:
            q.close()
        self.procs = []

    def get(self, timeout):
        while True:
            try:
                return self.result_q.get(timeout=timeout if timeout else 5.0)
            except queue.Empty:
                dead = [p for p in self.procs if not p.is_alive()]
                if dead:
                    codes = ", ".join(f"pid {p.pid} exit {p.exitcode}" for p in dead)
                    raise RuntimeError(
                        f"ember.data.DataLoader: worker(s) exited unexpectedly ({codes})"
                    ) from None
                if timeout:
                    raise RuntimeError(
                        f"ember.data.DataLoader: timed out after {timeout} s waiting for a batch"
                    ) from None


def iterate(loader):
    """The batches of one epoch, loaded by worker processes."""
    pool = loader._pool
    if pool is None or not pool.procs:
        pool = _Pool(loader)
        if loader.persistent_workers:
            loader._pool = pool
    pool.epoch += 1
    epoch = pool.epoch
    try:
        if loader._iterable:
            yield from _iterate_iterable(loader, pool, epoch)
        else:
            yield from _iterate_map(loader, pool, epoch)
    finally:
        if not loader.persistent_workers:
            pool.shutdown()


def _iterate_map(loader, pool, epoch):
    batches = iter(loader._batch_indices())
    ahead = loader.prefetch_factor * pool.n
    sent = 0
    got = {}
    want = 0
    for _ in range(ahead):
        idx = next(batches, None)
        if idx is None:
            break
        pool.index_qs[sent % pool.n].put((epoch, sent, idx))
        sent += 1
    while want < sent:
        while want not in got:
            e, bid, batch = pool.get(loader.timeout)
            if isinstance(batch, _Failure):
                batch.reraise()
            if e == epoch:
                got[bid] = batch
        batch = got.pop(want)
        want += 1
        idx = next(batches, None)
        if idx is not None:
            pool.index_qs[sent % pool.n].put((epoch, sent, idx))
            sent += 1
        yield loader._deliver(batch)


def _iterate_iterable(loader, pool, epoch):
    if epoch > 1:
        for q in pool.index_qs:
            q.put((epoch, -1, "reset"))
    active = list(range(pool.n))
    bid = 0
    pending = {}
    for w in active:
        for _ in range(loader.prefetch_factor):
            pool.index_qs[w].put((epoch, bid, None))
            pending[bid] = w
            bid += 1
    order = sorted(pending)
    results = {}
    done_workers = set()
    while order:
        nxt = order[0]
        while nxt not in results:
            e, b, batch = pool.get(loader.timeout)
            if isinstance(batch, _Failure):
                batch.reraise()
            if e == epoch:
                results[b] = batch
        order.pop(0)
        batch = results.pop(nxt)
        w = pending.pop(nxt)
        if batch is _END or (isinstance(batch, str) and batch == _END):
            done_workers.add(w)
            order = [b for b in order if pending.get(b) != w or b in results]
            continue
        if w not in done_workers:
            pool.index_qs[w].put((epoch, bid, None))
            pending[bid] = w
            order.append(bid)
            order.sort()
            bid += 1
        yield loader._deliver(batch)


def default_workers():
    return os.cpu_count() or 1
