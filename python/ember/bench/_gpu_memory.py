"""GPU benchmark cases of ember's memory pool (target 7 of ``python -m ember.bench --gpu``): an op
allocates only its output; a mixed-size workload keeps reserved / peak allocated at most 1.25;
``empty_cache()`` returns the cached memory."""

from __future__ import annotations

import gc
import math
import random

from ._gpu_common import SEED, GiB, MiB, Row, _verdict
from ._report import fmt_bytes
from ._runner import _error

RESERVED_RATIO = 1.25  # mixed workload: reserved / peak allocated
EMPTIED_FRACTION, EMPTIED_BYTES = 0.01, 64 * MiB  # reserved after empty_cache(): either bound

MIXED_STEPS = 2000
MIXED_CAP = 2 * GiB
MIXED_MIN, MIXED_MAX = 1 << 10, 256 * MiB


def memory_cases(ember, log) -> list[Row]:
    cuda = ember.cuda
    rows = []
    gc.collect()
    cuda.synchronize()
    cuda.empty_cache()

    # (a) An op allocates only its output (no temporaries from the pool).
    log("memory: a + b allocates only its output")
    case = "memory: a + b 2^24 f32, extra"
    row = Row(case, "ember", target="== output")
    try:
        a = ember.ones(1 << 24, dtype=ember.float32, device="cuda")
        b = ember.ones(1 << 24, dtype=ember.float32, device="cuda")
        warm = a + b  # warm-up: the kernel is compiled or loaded outside the measurement
        del warm
        cuda.synchronize()
        cuda.reset_peak_memory_stats()
        before = cuda.memory_allocated()
        c = a + b
        cuda.synchronize()
        extra = cuda.max_memory_allocated() - before
        held = cuda.memory_allocated() - before
        row.measured = fmt_bytes(extra)
        row.detail = f"output {fmt_bytes(c.nbytes)}, held after {fmt_bytes(held)}"
        row.data.update(extra_bytes=extra, output_bytes=c.nbytes, held_after_bytes=held)
        row.status = _verdict(extra == c.nbytes and held == c.nbytes)
        del a, b, c
    except Exception as e:  # the row says what failed
        row.detail, row.status, row.data["error"] = _error(e)[:60], "ERROR", _error(e)
    rows.append(row)

    # (b) Mixed sizes: the pool's reserve stays close to the peak of live bytes.
    log("memory: mixed-size workload")
    ratio_row = Row("memory: mixed sizes, reserved / peak", "ember", target=f"<= {RESERVED_RATIO}")
    empty_row = Row(
        "memory: mixed sizes, after empty_cache()",
        "ember",
        target=f"<= {EMPTIED_FRACTION:.0%} of peak or {EMPTIED_BYTES // MiB} MiB",
    )
    try:
        gc.collect()
        cuda.synchronize()
        cuda.empty_cache()
        cuda.reset_peak_memory_stats()
        rng = random.Random(SEED)
        lo, hi = math.log(MIXED_MIN), math.log(MIXED_MAX)
        live: list = []
        live_bytes = peak_live = 0
        for _ in range(MIXED_STEPS):
            nbytes = int(math.exp(rng.uniform(lo, hi)))
            # Drop random older arrays until the new one fits under the cap.
            while live and live_bytes + nbytes > MIXED_CAP:
                live_bytes -= live.pop(rng.randrange(len(live))).nbytes
            live.append(ember.empty(max(1, nbytes // 4), dtype=ember.float32, device="cuda"))
            live_bytes += live[-1].nbytes
            peak_live = max(peak_live, live_bytes)
        cuda.synchronize()
        stats = cuda.memory_stats()
        peak, reserved = stats["peak_allocated_bytes"], stats["reserved_bytes"]
        ratio = reserved / peak
        ratio_row.measured = fmt_bytes(reserved)
        ratio_row.detail = f"{ratio:.3f} (peak allocated {fmt_bytes(peak)})"
        ratio_row.status = _verdict(round(ratio, 3) <= RESERVED_RATIO)
        ratio_row.data.update(
            steps=MIXED_STEPS,
            cap_bytes=MIXED_CAP,
            reserved_bytes=reserved,
            peak_allocated_bytes=peak,
            peak_reserved_bytes=stats["peak_reserved_bytes"],
            peak_live_bytes_counted=peak_live,
            ratio=ratio,
        )
        del live
        gc.collect()
        cuda.empty_cache()
        after = cuda.memory_reserved()
        empty_row.measured = fmt_bytes(after)
        empty_row.detail = f"{after / peak:.2%} of peak"
        empty_row.data.update(reserved_bytes=after, peak_allocated_bytes=peak)
        empty_row.status = _verdict(after <= max(EMPTIED_FRACTION * peak, EMPTIED_BYTES))
    except Exception as e:  # the rows say what failed
        for row in (ratio_row, empty_row):
            if not row.status:
                row.detail, row.status, row.data["error"] = _error(e)[:60], "ERROR", _error(e)
    rows += [ratio_row, empty_row]
    return rows
