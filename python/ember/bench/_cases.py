"""The benchmark cases: the work, the bytes it must move, the target and how to check it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

N = 10**7  # elements in the large 1-D operands
SIDE = 3162  # SIDE * SIDE = 9_998_244, the 2-D view of a 1-D operand
T_SIDE = 4096  # the transposed copy
MM = 2048  # the matmul side

F32 = np.float32


@dataclass(frozen=True)
class Input:
    """Host data for one operand; equal specs share one array (and one device copy per lib)."""

    shape: tuple[int, ...]
    dtype: Any = F32
    seed: int = 0

    def make(self) -> np.ndarray:
        rng = np.random.default_rng(1234 + self.seed)
        dt = np.dtype(self.dtype)
        if dt.kind == "f":
            return rng.standard_normal(self.shape, dtype=np.float32).astype(dt, copy=False)
        if dt.kind in "iu":
            info = np.iinfo(dt)
            return rng.integers(info.min, info.max, self.shape, dtype=dt, endpoint=True)
        raise ValueError(f"no generator for dtype {dt}")


Check = Callable[[np.ndarray, np.ndarray, tuple[np.ndarray, ...]], tuple[bool, float]]


def _compare(expected, got, atol, rtol=0.0) -> tuple[bool, float]:
    expected = np.asarray(expected)
    got = np.asarray(got)
    if got.shape != expected.shape:
        raise AssertionError(f"shape {got.shape}, expected {expected.shape}")
    if got.dtype != expected.dtype:
        raise AssertionError(f"dtype {got.dtype}, expected {expected.dtype}")
    if expected.dtype.kind in "biu":
        err = float(np.max(np.abs(got.astype(np.int64) - expected.astype(np.int64)), initial=0))
        return err == 0, err
    e = expected.astype(np.float64)
    g = got.astype(np.float64)
    err = float(np.max(np.abs(g - e), initial=0.0))
    ok = bool(np.all(np.abs(g - e) <= atol + rtol * np.abs(e)))
    return ok, err


def exact() -> Check:
    return lambda expected, got, inputs: _compare(expected, got, 0.0)


def close(rtol: float, atol: float = 0.0) -> Check:
    return lambda expected, got, inputs: _compare(expected, got, atol, rtol)


def spectrum(rtol: float) -> Check:
    """FFT results (complex): the largest error relative to the largest magnitude, since FFT
    rounding errors scale with the norm of the data, not with each element."""

    def check(expected, got, inputs):
        e, g = np.asarray(expected), np.asarray(got)
        if g.shape != e.shape or g.dtype != e.dtype:
            raise AssertionError(f"{g.dtype}{g.shape}, expected {e.dtype}{e.shape}")
        err = float(np.max(np.abs(g.astype(np.complex128) - e), initial=0.0))
        return err <= rtol * float(np.max(np.abs(e), initial=0.0)), err

    return check


def _rfft_last(lib, x):
    if lib.name.startswith("torch"):
        return lib.xp.fft.rfft(x, dim=-1)
    return lib.xp.fft.rfft(x, axis=-1)


def reduction(op: str, axis, shape) -> Check:
    """Sums may be accumulated in another order than NumPy's pairwise sum: allow a rounding
    error proportional to the sum of magnitudes (1e-5 of it), far below what a wrong result
    gives but above what any sound float32 summation order gives."""

    def check(expected, got, inputs):
        x = np.abs(inputs[0].ravel()[: int(np.prod(shape))].reshape(shape).astype(np.float64))
        scale = x.sum(axis=axis)
        if op == "mean":
            scale = scale / (x.size if axis is None else x.shape[axis])
        return _compare(expected, got, 1e-5 * scale, 0.0)

    return check


@dataclass
class Case:
    name: str
    size: str
    inputs: tuple[Input, ...]
    run: Callable[..., Any]  # run(lib, *device_arrays) -> result; the timed work
    bytes: int | None  # bytes a single pass must read + write; None when not meaningful
    target: float | None = None  # ember time / reference time must be <= this
    check: Check = field(default_factory=exact)
    prepare: Callable[..., tuple] | None = None  # untimed: prepare(lib, *arrays) -> args
    note: str = ""


def permutes_to_sorted() -> Check:
    """argsort: libraries break ties differently (NumPy's default sort is not stable), so the
    indices are checked by what they do: a permutation that sorts the input."""

    def check(expected, got, inputs):
        x, g = inputs[0], np.asarray(got)
        if g.shape != x.shape or g.dtype.kind not in "iu":
            raise AssertionError(f"{g.dtype}{g.shape}, expected integer indices of {x.shape}")
        perm = np.zeros(x.shape[0], dtype=bool)
        perm[g] = True
        ok = bool(perm.all()) and np.array_equal(x[g], np.sort(x))
        return ok, 0.0 if ok else 1.0

    return check


def _view2d(lib, a):
    return (lib.reshape(a[: SIDE * SIDE], (SIDE, SIDE)),)


def cases() -> list[Case]:
    one = Input((1,))
    a, b, c = Input((N,), seed=0), Input((N,), seed=1), Input((N,), seed=2)
    a16, b16 = Input((N,), np.float16, 0), Input((N,), np.float16, 1)
    a8, b8 = Input((N,), np.int8, 0), Input((N,), np.int8, 1)
    sq = Input((SIDE, SIDE), seed=3)
    row = Input((SIDE,), seed=4)
    big = Input((T_SIDE, T_SIDE), seed=5)
    srt = Input((4 * 10**6,), seed=10)
    f4 = 4
    m = SIDE * SIDE
    view = f"{SIDE}x{SIDE} view"

    out = [
        Case("x + x (per-call overhead)", "1", (one,), lambda lib, x: x + x, None, 1.5),
        Case(
            "x.sum() (per-call overhead)",
            "1",
            (one,),
            lambda lib, x: x.sum(),
            None,
            1.5,
        ),
        Case(
            "a + b",
            "1e7",
            (a, b),
            lambda lib, x, y: x + y,
            3 * f4 * N,
            1.0,
            close(0, 0),
        ),
        Case(
            "a * b + c",
            "1e7",
            (a, b, c),
            lambda lib, x, y, z: x * y + z,
            # An unfused evaluation moves more (a temporary): this counts the minimum.
            4 * f4 * N,
            1.0,
            # A fused multiply-add rounds once instead of twice.
            close(1e-6, 1e-6),
        ),
    ]
    for op in ("sum", "max", "mean"):
        chk = exact() if op == "max" else reduction(op, None, (N,))
        out.append(
            Case(
                f"{op}(a)",
                "1e7",
                (a,),
                lambda lib, x, op=op: getattr(lib, op)(x),
                f4 * N,
                1.0,
                chk,
            )
        )
    for op in ("sum", "max", "mean"):
        for axis in (0, 1):
            chk = exact() if op == "max" else reduction(op, axis, (SIDE, SIDE))
            out.append(
                Case(
                    f"{op}(a, axis={axis})",
                    view,
                    (a,),
                    lambda lib, x, op=op, axis=axis: getattr(lib, op)(x, axis),
                    f4 * m + f4 * SIDE,
                    1.0,
                    chk,
                    prepare=_view2d,
                )
            )
    out.append(
        Case(
            "x.T.copy()",
            f"{T_SIDE}x{T_SIDE}",
            (big,),
            lambda lib, x: lib.transpose_copy(x),
            2 * f4 * T_SIDE * T_SIDE,
            1.0,
        )
    )
    # matmul 2048^3 float32 through the BLAS NumPy brings: >= 0.9x NumPy's GFLOP/s.
    ma, mb = Input((MM, MM), seed=6), Input((MM, MM), seed=7)
    out.append(
        Case(
            "a @ b",
            f"{MM}^3 float32",
            (ma, mb),
            lambda lib, x, y: x @ y,
            None,
            1.11,  # time ratio: >= 0.9x NumPy GFLOP/s
            close(1e-3, 1e-3),
            note=f"{2 * MM**3 / 1e9:.1f} GFLOP per call",
        )
    )
    sv = Input((512, 512), np.float64, 8)
    out.append(
        Case(
            "linalg.svd(a)",
            "512x512 float64",
            (sv,),
            lambda lib, x: lib.svdvals_full(x),
            None,
            1.5,  # time ratio: within 1.5x NumPy's time
            close(1e-9, 1e-9),
        )
    )
    # A batched real FFT over the last axis: pocketfft on the CPU (ember calls NumPy's on its
    # zero-copy host view), cuFFT on a GPU.
    ff = Input((T_SIDE, T_SIDE), seed=9)
    out.append(
        Case(
            "fft.rfft(a, axis=-1)",
            f"{T_SIDE}x{T_SIDE} float32",
            (ff,),
            _rfft_last,
            f4 * T_SIDE * T_SIDE + 8 * T_SIDE * (T_SIDE // 2 + 1),
            1.1,  # time ratio: within 1.1x the reference's time
            spectrum(1e-5),
        )
    )
    # Extras: no targets, for the record.
    out += [
        Case(
            "exp(a)",
            "1e7",
            (a,),
            lambda lib, x: lib.exp(x),
            2 * f4 * N,
            None,
            close(2e-6),
        ),
        Case("a + b float16", "1e7", (a16, b16), lambda lib, x, y: x + y, 3 * 2 * N),
        Case("a + b int8", "1e7", (a8, b8), lambda lib, x, y: x + y, 3 * N),
        Case("a < b", "1e7", (a, b), lambda lib, x, y: x < y, 2 * f4 * N + N),
        Case("a == b", "1e7", (a, b), lambda lib, x, y: x == y, 2 * f4 * N + N),
        Case(
            "x[x > 0] (mask select)",
            "1e7",
            (a,),
            lambda lib, x, mk: x[mk],
            f4 * N + N + f4 * N // 2,
            1.1,
            prepare=lambda lib, x: (x, x > 0),
            note="fused compaction: ~half of the elements selected",
        ),
        Case(
            "cumsum int32 -> int64",
            "1e7",
            (Input((N,), np.int32, 0),),
            lambda lib, x: lib.cumsum(x),
            (4 + 8) * N,
        ),
        # Sorting 4 M float32 (NumPy: its vectorized quicksort; ember: a radix sort).
        Case("sort(a) float32", "4e6", (srt,), lambda lib, x: lib.sort(x), None),
        Case(
            "argsort(a) float32",
            "4e6",
            (srt,),
            lambda lib, x: lib.argsort(x),
            None,
            check=permutes_to_sorted(),
        ),
        Case("unique(a) float32", "4e6", (srt,), lambda lib, x: lib.unique(x), None),
        Case(
            "M + row (broadcast)",
            f"{SIDE}x{SIDE} + {SIDE}",
            (sq, row),
            lambda lib, x, r: x + r,
            2 * f4 * m + f4 * SIDE,
        ),
        Case(
            "a.astype(float16)",
            "1e7",
            (a,),
            lambda lib, x: lib.astype(x, np.float16),
            (4 + 2) * N,
        ),
    ]
    return out
