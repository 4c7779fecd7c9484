"""GPU benchmark cases of the numerical libraries, each with its target: matmul 8192^3 in float32
at "highest" and "high" (TF32) precision and in bfloat16 (>= 0.98x PyTorch's TFLOP/s), the host
overhead of a 64x64 float32 matmul (<= PyTorch's), ``standard_normal(2**28, float32)``
(>= 85% of the write bandwidth of a fill measured in the same run), and two FFTs, a 2^24-point
complex64 fft and a batched rfft over the last axis of a 4096x4096 float32 array (>= 0.95x
CuPy's speed: ember's time <= CuPy's / 0.95)."""

from __future__ import annotations

import dataclasses

import numpy as np

from ._gpu_common import Row, _verdict, release_all, time_calls, time_kernels
from ._report import fmt_time
from ._runner import _error

MM = 8192
MATMUL_RATIO = 0.98
RNG_N = 1 << 28
RNG_FRACTION = 0.85
FFT_N = 1 << 24
RFFT_SHAPE = (4096, 4096)
FFT_RATIO = 0.95


def _mark_error(row, err):
    """A row whose library failed: the error text, and ERROR when it is ember's."""
    row.detail = str(err)[:60]
    row.status = "ERROR" if row.lib == "ember" else ""


def _set_tf32(lib, on: bool) -> bool:
    """Sets the library's float32 matmul precision; False when it has no run-time switch."""
    if lib.name == "ember":
        lib.xp.set_matmul_precision("high" if on else "highest")
        return True
    if lib.name == "torch":
        lib.xp.backends.cuda.matmul.allow_tf32 = on
        return True
    return not on  # CuPy reads CUPY_TF32 at import only


def _to_bf16(lib, x):
    if lib.name == "ember":
        return x.astype(lib.xp.bfloat16)
    if lib.name == "torch":
        return x.to(lib.xp.bfloat16)
    raise TypeError(f"{lib.name} has no bfloat16 matmul")


def _f32(lib, r):
    if lib.name == "ember":
        return r.astype(lib.xp.float32)
    if lib.name == "torch":
        return r.float()
    return r.astype(np.float32)


def matmul_cases(libs, plan, log) -> list[Row]:
    rows: list[Row] = []
    rng = np.random.default_rng(7)
    a = rng.standard_normal((MM, MM), dtype=np.float32)
    b = rng.standard_normal((MM, MM), dtype=np.float32)
    want = a[:64] @ b  # the first rows, for the check
    flop = 2.0 * MM**3
    slow = dataclasses.replace(plan, rounds=min(plan.rounds, 3), reps=min(plan.reps, 5))
    for case, tf32, bf16, tol in (
        ("matmul 8192^3 f32 highest", False, False, 1e-3),
        ("matmul 8192^3 f32 high (tf32)", True, False, 2e-2),
        ("matmul 8192^3 bf16", False, True, 5e-2),
    ):
        log(case)
        work, errors = [], {}
        for lib in libs:
            try:
                if not _set_tf32(lib, tf32):
                    raise TypeError(f"{lib.name} has no run-time TF32 switch")
                x, y = lib.put(a), lib.put(b)
                if bf16:
                    x, y = _to_bf16(lib, x), _to_bf16(lib, y)
                got = np.asarray(lib.get(_f32(lib, x[:64] @ y)))
                scale = np.abs(want).max()
                if not np.allclose(got, want, rtol=tol, atol=tol * scale):
                    raise ValueError("wrong result")
                work.append((lib, lambda x=x, y=y: x @ y))
            except Exception as e:  # reported on the row
                errors[lib.name] = _error(e)
        times = time_kernels(work, slow)
        times.update(errors)
        for lib in libs:
            _set_tf32(lib, False)
        ref = times.get("torch")
        for lib in libs:
            t = times.get(lib.name)
            row = Row(case, lib.name)
            if lib.name == "ember":
                row.target = f">= {MATMUL_RATIO}x torch TFLOP/s"
            if not isinstance(t, float):
                _mark_error(row, t)
                rows.append(row)
                continue
            row.measured = fmt_time(t)
            row.detail = f"{flop / t / 1e12:.0f} TFLOP/s"
            row.data.update(time_s=t, tflops=flop / t / 1e12)
            if isinstance(ref, float) and lib.name != "torch":
                row.detail += f", {ref / t:.2f}x torch"
                if lib.name == "ember":
                    row.status = _verdict(ref / t >= MATMUL_RATIO)
            rows.append(row)
        work.clear()
        release_all(libs)

    log("host overhead matmul 64x64")
    small = rng.standard_normal((64, 64), dtype=np.float32)
    work, errors = [], {}
    for lib in libs:
        try:
            x = lib.put(small)
            for _ in range(100):
                x @ x
            lib.sync()
            work.append((lib, lambda x=x: x @ x))
        except Exception as e:  # reported on the row
            errors[lib.name] = _error(e)
    times = time_calls(work, plan)
    times.update(errors)
    ref = times.get("torch")
    for lib in libs:
        t = times.get(lib.name)
        row = Row("host overhead matmul 64x64 f32", lib.name)
        if lib.name == "ember":
            row.target = "<= torch"
        if isinstance(t, float):
            row.measured = f"{fmt_time(t)}/call"
            row.data["time_s"] = t
            if lib.name == "ember" and isinstance(ref, float):
                row.detail = f"{t / ref:.2f}x torch"
                row.status = _verdict(t <= ref)
        else:
            _mark_error(row, t)
        rows.append(row)
    return rows


def _normal(lib, n):
    if lib.name == "ember":
        g = lib.xp.random.default_rng(1)
        return lambda: g.standard_normal(n, dtype="float32", device="cuda")
    if lib.name == "torch":
        return lambda: lib.xp.randn(n, device="cuda")
    return lambda: lib.xp.random.standard_normal(n, dtype=np.float32)


def _fill(lib, n):
    x = lib.put(np.zeros(n, dtype=np.float32))
    if lib.name == "torch":
        return lambda: x.fill_(1.0)
    if lib.name == "ember":
        return lambda: x.__setitem__(Ellipsis, 1.0)
    return lambda: x.fill(1.0)


def random_cases(libs, plan, log) -> list[Row]:
    log("standard_normal 2^28 f32")
    nbytes = 4 * RNG_N
    fills, normals, errors = [], [], {}
    for lib in libs:
        try:
            fills.append((lib, _fill(lib, RNG_N)))
            normals.append((lib, _normal(lib, RNG_N)))
        except Exception as e:  # reported on the row
            errors[lib.name] = _error(e)
    fill_t = time_kernels(fills, plan)
    best_fill = min((t for t in fill_t.values() if isinstance(t, float)), default=None)
    times = time_kernels(normals, plan)
    times.update(errors)
    rows = []
    for lib in libs:
        t = times.get(lib.name)
        row = Row("standard_normal 2^28 f32", lib.name)
        if lib.name == "ember":
            row.target = f">= {RNG_FRACTION:.0%} of fill"
        if isinstance(t, float):
            row.measured = fmt_time(t)
            row.gb_per_s = nbytes / t / 1e9
            row.data["time_s"] = t
            if best_fill:
                frac = best_fill / t
                row.detail = f"{frac:.1%} of fill ({nbytes / best_fill / 1e9:,.0f} GB/s)"
                row.data["fill_s"] = best_fill
                if lib.name == "ember":
                    row.status = _verdict(frac >= RNG_FRACTION)
        else:
            _mark_error(row, t)
        rows.append(row)
    release_all(libs)
    return rows


def _fft_fn(lib, kind):
    """The library's transform: a 1-D fft, or an rfft over the last axis."""
    if lib.name == "torch":
        f = lib.xp.fft.fft if kind == "fft" else lib.xp.fft.rfft
        return lambda x: f(x, dim=-1)
    f = lib.xp.fft.fft if kind == "fft" else lib.xp.fft.rfft  # ember and CuPy
    return lambda x: f(x, axis=-1)


def fft_cases(libs, plan, log) -> list[Row]:
    """fft of 2^24 complex64 points and rfft of 4096 rows of 4096 float32 values, each against a
    NumPy result (a sample of rows for the batched case); GB/s counts the input read and the
    output written once (cuFFT makes more passes than that over memory)."""
    rng = np.random.default_rng(11)
    c = (rng.standard_normal(FFT_N) + 1j * rng.standard_normal(FFT_N)).astype(np.complex64)
    r = rng.standard_normal(RFFT_SHAPE, dtype=np.float32)
    rows: list[Row] = []
    for case, kind, host, nbytes in (
        ("fft 2^24 c64", "fft", c, 2 * 8 * FFT_N),
        ("rfft 4096x4096 f32 last axis", "rfft", r, r.nbytes + 8 * 4096 * 2049),
    ):
        log(case)
        if kind == "fft":
            want, pick = np.fft.fft(c), slice(None)
        else:
            pick = slice(0, 8)  # rows checked
            want = np.fft.rfft(r[pick], axis=-1)
        scale = np.abs(want).max()
        work, errors = [], {}
        for lib in libs:
            try:
                x = lib.put(host)
                f = _fft_fn(lib, kind)
                got = np.asarray(lib.get(f(x)))[pick]
                if got.shape != want.shape or not np.abs(got - want).max() <= 1e-4 * scale:
                    raise ValueError("wrong result")
                work.append((lib, lambda f=f, x=x: f(x)))
            except Exception as e:  # reported on the row
                errors[lib.name] = _error(e)
        times = time_kernels(work, plan)
        times.update(errors)
        ref = times.get("cupy")
        for lib in libs:
            t = times.get(lib.name)
            row = Row(case, lib.name)
            if lib.name == "ember":
                row.target = f">= {FFT_RATIO}x cupy"
            if not isinstance(t, float):
                _mark_error(row, t)
                rows.append(row)
                continue
            row.measured = fmt_time(t)
            row.gb_per_s = nbytes / t / 1e9
            row.data["time_s"] = t
            if isinstance(ref, float) and lib.name != "cupy":
                row.detail = f"{ref / t:.2f}x cupy"
                if lib.name == "ember":
                    row.status = _verdict(ref / t >= FFT_RATIO)
            elif lib.name == "ember" and not isinstance(ref, float):
                row.detail = "no CuPy time to compare with"
                row.status = "n/a"
            rows.append(row)
        work.clear()
        release_all(libs)
    return rows
