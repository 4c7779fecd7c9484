"""Wall-clock timing with device synchronization and an adaptive repeat count."""

from __future__ import annotations

import gc
import math
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass
class Timing:
    median_s: float
    min_s: float
    max_s: float
    number: int  # calls per sample
    repeats: int  # samples

    def as_dict(self) -> dict:
        return {
            "median_s": self.median_s,
            "min_s": self.min_s,
            "max_s": self.max_s,
            "calls_per_sample": self.number,
            "samples": self.repeats,
        }


def _sample(fn: Callable[[], object], sync: Callable[[], None], number: int) -> float:
    # The clock stops only after the device has finished the queued work: GPU ops are
    # asynchronous, so timing the Python call alone would measure the launch, not the work.
    t0 = time.perf_counter()
    for _ in range(number):
        fn()
    sync()
    return (time.perf_counter() - t0) / number


def _calibrate(fn, sync, min_sample_s: float) -> tuple[int, float]:
    """Grows the batch until one sample lasts at least ``min_sample_s``."""
    number = 1
    while True:
        t = _sample(fn, sync, number) * number
        if t >= min_sample_s or number >= 1_000_000:
            return number, max(t, 1e-9)
        grow = min_sample_s / max(t, 1e-9)
        number = min(1_000_000, max(number * 2, math.ceil(number * grow * 1.2)))


def measure_many(
    work: list[tuple[Callable[[], object], Callable[[], None]]],
    *,
    budget_s: float = 0.4,
    min_sample_s: float = 2e-3,
    min_repeats: int = 5,
    max_repeats: int = 200,
    max_total_s: float = 3.0,
) -> list[Timing]:
    """Median per-call time of each ``fn`` in ``work`` (pairs of fn and its sync).

    Warm-up first (first-call costs such as kernel compilation or allocator growth are not
    what a case measures). Calls are batched so one sample lasts at least ``min_sample_s``
    (timer resolution and loop cost stay negligible for microsecond calls); each fn gets as
    many samples as fit in ``budget_s``, within [min_repeats, max_repeats], but fewer (at
    least one) where min_repeats slow samples would exceed ``max_total_s``. Samples of the
    different fns are interleaved, in alternating order, so that drift in machine load or
    clock speed during the case affects all libraries alike instead of biasing the ratio.
    """
    for fn, sync in work:
        fn()
        sync()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        plans = []
        for fn, sync in work:
            number, per_sample = _calibrate(fn, sync, min_sample_s)
            repeats = max(min_repeats, min(max_repeats, int(budget_s / per_sample)))
            if repeats * per_sample > max_total_s:
                repeats = max(1, int(max_total_s / per_sample))
            plans.append((number, repeats))
        samples: list[list[float]] = [[] for _ in work]
        order = list(range(len(work)))
        for r in range(max(rep for _, rep in plans)):
            for i in order if r % 2 == 0 else reversed(order):
                number, repeats = plans[i]
                if r < repeats:
                    fn, sync = work[i]
                    samples[i].append(_sample(fn, sync, number))
    finally:
        if was_enabled:
            gc.enable()
    return [
        Timing(
            median_s=statistics.median(s),
            min_s=min(s),
            max_s=max(s),
            number=number,
            repeats=repeats,
        )
        for s, (number, repeats) in zip(samples, plans, strict=True)
    ]
