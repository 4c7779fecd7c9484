"""Work handles of asynchronous collectives, ``ReduceOp``, and the timeout diagnostics."""

from __future__ import annotations

import enum
import time

__all__ = ["DistBackendError", "DistError", "ReduceOp", "Work"]


class DistError(RuntimeError):
    """Base class of ember.distributed's errors (as ``torch.distributed.DistError``)."""


class DistBackendError(DistError):
    """A collective failed or timed out in the backend (``torch.distributed.DistBackendError``)."""


class ReduceOp(enum.Enum):
    """Reductions of ``all_reduce``, ``reduce`` and ``reduce_scatter`` (PyTorch's names)."""

    SUM = "sum"
    PRODUCT = "product"
    MIN = "min"
    MAX = "max"
    AVG = "avg"

    def __repr__(self):
        return f"<ReduceOp.{self.name}>"


def _reduce_op(op, who, tensor=None):
    """The ReduceOp `op` names; for a complex `tensor` only SUM and AVG, on every backend, as
    PyTorch's ``supports_complex`` rule (MIN/MAX are undefined, PRODUCT is not elementwise on
    NCCL's view of complex numbers as real pairs)."""
    if isinstance(op, ReduceOp):
        pass
    elif isinstance(op, str) and op.upper() in ReduceOp.__members__:
        op = ReduceOp[op.upper()]
    else:
        raise ValueError(f"ember.distributed.{who}: op must be a ReduceOp, got {op!r}")
    if tensor is not None and op not in (ReduceOp.SUM, ReduceOp.AVG):
        if str(tensor.dtype).startswith("complex"):
            raise ValueError(
                f"ember.distributed.{who}: does not support {op!r} on complex tensors "
                f"(dtype {tensor.dtype}; SUM and AVG are)"
            )
    return op


class Work:
    """The handle an ``async_op=True`` collective returns: ``wait()`` blocks until the
    collective is done (raising after the group's timeout, naming the missing ranks),
    ``is_completed()`` polls without blocking.

    `test` is a callable that returns True once the backend's transfer has finished; `finish`
    runs once after that (copies back into non-contiguous outputs, AVG's division, ...)."""

    def __init__(self, pg, name, seq, test, finish=None, result=None):
        self._pg = pg
        self._name = name
        self._seq = seq
        self._test = test
        self._finish = finish
        self._result = result
        self._done = False
        self._error = None
        self._source_rank = None
        self._peer = None

    def _complete(self):
        if not self._done:
            self._done = True
            if self._finish is not None:
                r = self._finish()
                if self._source_rank is None and isinstance(r, int):
                    self._source_rank = r

    def is_completed(self):
        """True once the collective has finished (polls the backend; never blocks)."""
        if self._done:
            return True
        if self._test():
            self._complete()
            return True
        return False

    def is_success(self):
        return self.is_completed() and self._error is None

    def exception(self):
        return self._error

    def wait(self, timeout=None):
        """Blocks until the collective finishes; raises :class:`DistBackendError` after
        `timeout` (a timedelta or seconds; the group's timeout when None) naming the ranks
        that did not arrive. Returns True."""
        if self._done:
            if self._error is not None:
                raise self._error
            return True
        if getattr(self, "_stream_ordered", False):
            if self._backend.error is not None:
                raise self._backend.error
            if self._finish is not None and not self._done:
                self._done = True
                r = self._finish()
                if isinstance(r, int):
                    self._source_rank = r
            return True
        limit = self._pg._timeout_s if timeout is None else _secs(timeout)
        deadline = time.monotonic() + limit
        spins = 0
        while not self._test():
            spins += 1
            if spins > 200:
                if time.monotonic() > deadline:
                    if self._seq < 0:  # point-to-point: one peer, no group counter
                        self._error = DistBackendError(
                            f"ember.distributed.{self._name}: timed out after {limit:g} s "
                            f"waiting for rank {self._peer}"
                        )
                    else:
                        self._error = self._pg._timeout_error(self._name, self._seq, limit)
                    self._done = True
                    raise self._error
                time.sleep(min(0.001 * (spins - 200) / 50, 0.005))
        self._complete()
        return True

    def result(self):
        return self._result

    def source_rank(self):
        """The rank a ``recv(src=None)`` received from."""
        self.wait()
        return self._source_rank

    def synchronize(self):
        self.wait()

    def __repr__(self):
        state = "completed" if self._done else "pending"
        return f"<ember.distributed.Work {self._name} #{self._seq} {state}>"


def _secs(t):
    import datetime

    return t.total_seconds() if isinstance(t, datetime.timedelta) else float(t)


class _Done(Work):
    """A work handle for a collective that finished synchronously."""

    def __init__(self, pg, name, result=None):
        super().__init__(pg, name, -1, lambda: True, result=result)
        self._done = True
