"""PyTorch's ``torch.testing``: ``assert_close`` (the dtype-based default tolerances, the
same checks and message) and ``make_tensor``. The comparison runs on the host (a test helper:
both values are read back)."""

from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence

import numpy as np

from . import _core

__all__ = ["assert_close", "make_tensor"]

# (rtol, atol) by dtype name, PyTorch's defaults
_TOL = {
    "float16": (1e-3, 1e-5),
    "bfloat16": (1.6e-2, 1e-5),
    "float32": (1.3e-6, 1e-5),
    "float64": (1e-7, 1e-7),
    "complex64": (1.3e-6, 1e-5),
    "complex128": (1e-7, 1e-7),
}


def _tolerances(dtype, rtol, atol):
    if (rtol is None) != (atol is None):
        raise ValueError(
            f"Both 'rtol' and 'atol' must be either specified or omitted, but got no "
            f"{'rtol' if rtol is None else 'atol'}."
        )
    if rtol is not None:
        return float(rtol), float(atol)
    return _TOL.get(str(dtype), (0.0, 0.0))


def _describe(x):
    return "Tensor-likes" if isinstance(x, _core.ndarray) else "Scalars"


def _compare(actual, expected, rtol, atol, equal_nan, check_device, check_dtype, msg, path):
    where = "" if not path else f"\n\nThe failure occurred for item {path}"
    is_arr = isinstance(actual, _core.ndarray) or isinstance(expected, _core.ndarray)
    if is_arr:
        if not (isinstance(actual, _core.ndarray) and isinstance(expected, _core.ndarray)):
            raise TypeError(
                f"No comparison pair was able to handle inputs of type {type(actual)} and "
                f"{type(expected)}.{where}"
            )
        if actual.shape != expected.shape:
            raise AssertionError(
                msg
                or f"The values for attribute 'shape' do not match: "
                f"{tuple(actual.shape)} != {tuple(expected.shape)}.{where}"
            )
        if check_device and actual.device != expected.device:
            raise AssertionError(
                msg
                or f"The values for attribute 'device' do not match: {actual.device} != "
                f"{expected.device}.{where}"
            )
        if check_dtype and actual.dtype != expected.dtype:
            raise AssertionError(
                msg
                or f"The values for attribute 'dtype' do not match: {actual.dtype} != "
                f"{expected.dtype}.{where}"
            )
        rt, at = _tolerances(actual.dtype, rtol, atol)
        from ._array import asnumpy

        a = np.asarray(asnumpy(actual))
        e = np.asarray(asnumpy(expected))
    else:
        if not isinstance(actual, numbers.Number) or not isinstance(expected, numbers.Number):
            raise TypeError(
                f"No comparison pair was able to handle inputs of type {type(actual)} and "
                f"{type(expected)}.{where}"
            )
        if check_dtype and type(actual) is not type(expected):
            raise AssertionError(
                msg
                or f"The values for attribute 'dtype' do not match: {type(actual)} != "
                f"{type(expected)}.{where}"
            )
        a, e = np.asarray(actual), np.asarray(expected)
        rt, at = _tolerances(
            "float64" if isinstance(actual, float) or isinstance(expected, float) else "int64",
            rtol,
            atol,
        )
    if a.dtype.kind in "biu" and e.dtype.kind in "biu" and a.dtype.kind != "b":
        a64, e64 = a.astype(np.float64), e.astype(np.float64)
    else:
        a64 = a.astype(np.complex128 if np.iscomplexobj(a) or np.iscomplexobj(e) else np.float64)
        e64 = e.astype(a64.dtype)
    close = np.isclose(a64, e64, rtol=rt, atol=at, equal_nan=equal_nan)
    if close.all():
        return
    if msg is not None:
        raise AssertionError(msg)
    n = close.size
    bad = int((~close).sum())
    kind = _describe(actual)
    if a64.ndim == 0:
        diff = abs(a64 - e64)
        rel = diff / abs(e64) if e64 != 0 else np.inf
        raise AssertionError(
            f"{kind} are not close!\n\nExpected {e.item()} but got {a.item()}.\n"
            f"Absolute difference: {float(diff)} (up to {at} allowed)\n"
            f"Relative difference: {float(rel)} (up to {rt} allowed){where}"
        )
    with np.errstate(divide="ignore", invalid="ignore"):
        diff = np.abs(a64 - e64)
        rel = diff / np.abs(e64)
    diff = np.where(close, 0, np.nan_to_num(diff, nan=np.inf))
    rel = np.where(close, 0, np.nan_to_num(rel, nan=np.inf))
    ia = np.unravel_index(int(np.argmax(diff)), diff.shape)
    ir = np.unravel_index(int(np.argmax(rel)), rel.shape)
    raise AssertionError(
        f"{kind} are not close!\n\nMismatched elements: {bad} / {n} ({100 * bad / n:.1f}%)\n"
        f"Greatest absolute difference: {float(diff[ia])} at index {tuple(int(i) for i in ia)} "
        f"(up to {at} allowed)\n"
        f"Greatest relative difference: {float(rel[ir])} at index {tuple(int(i) for i in ir)} "
        f"(up to {rt} allowed){where}"
    )


def _walk(actual, expected, path, kw):
    if isinstance(actual, Mapping) and isinstance(expected, Mapping):
        if set(actual) != set(expected):
            raise AssertionError(
                f"The keys of the mappings do not match:\n{sorted(map(str, actual))} != "
                f"{sorted(map(str, expected))}"
            )
        for k in actual:
            _walk(actual[k], expected[k], f"{path}[{k!r}]", kw)
        return
    seqs = (Sequence,)
    if (
        isinstance(actual, seqs)
        and isinstance(expected, seqs)
        and not isinstance(actual, str)
        and not isinstance(expected, str)
    ):
        if len(actual) != len(expected):
            raise AssertionError(
                f"The length of the sequences mismatch: {len(actual)} != {len(expected)}"
            )
        for i, (x, y) in enumerate(zip(actual, expected, strict=True)):
            _walk(x, y, f"{path}[{i}]", kw)
        return
    _compare(actual, expected, path=path, **kw)


def assert_close(
    actual,
    expected,
    *,
    allow_subclasses=True,
    rtol=None,
    atol=None,
    equal_nan=False,
    check_device=True,
    check_dtype=True,
    check_layout=True,
    check_stride=False,
    msg=None,
):
    """Asserts ``|actual - expected| <= atol + rtol * |expected|`` elementwise, after checking
    shape, device and dtype; arrays, Python numbers, and sequences/mappings of them. Default
    tolerances by dtype as PyTorch's (float32: rtol 1.3e-6, atol 1e-5; integers: exact)."""
    kw = dict(rtol=rtol, atol=atol, equal_nan=equal_nan, check_device=check_device,
              check_dtype=check_dtype, msg=msg)  # fmt: skip
    if check_stride and isinstance(actual, _core.ndarray) and isinstance(expected, _core.ndarray):
        if actual.strides != expected.strides:
            raise AssertionError(
                f"The values for attribute 'stride()' do not match: {actual.strides} != "
                f"{expected.strides}."
            )
    _walk(actual, expected, "", kw)


def make_tensor(
    *shape,
    dtype,
    device=None,
    low=None,
    high=None,
    requires_grad=False,
    noncontiguous=False,
    exclude_zero=False,
):
    """A random array of ``shape`` with values in [low, high) (PyTorch's defaults by dtype:
    floats [-9, 9), integers [-9, 10), bool {False, True})."""
    from . import _torch, random

    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    dt = _core.dtype(dtype)
    g = random._global
    if dt.kind == "b":
        r = g.integers(0, 2, shape, device=device).astype("bool")
    elif dt.kind in "iu":
        lo = -9 if low is None else int(np.ceil(low))
        hi = 10 if high is None else int(np.ceil(high))
        if dt.kind == "u":
            lo = max(lo, 0)
        r = g.integers(lo, hi, shape, device=device).astype(dt)
    else:
        lo = -9.0 if low is None else float(low)
        hi = 9.0 if high is None else float(high)
        real = "float32" if dt.name in ("float16", "bfloat16", "complex64") else "float64"
        r = g.uniform(lo, hi, shape, dtype=real, device=device)
        if dt.kind == "c":
            r = r + 1j * g.uniform(lo, hi, shape, dtype=real, device=device)
        r = r.astype(dt)
    if exclude_zero:
        one = 1 if dt.kind != "b" else True
        r = _core.where(r == 0, _core.full((), one, dtype=dt, device=r.device), r)
    if noncontiguous and r.size > 1:
        from ._joining import stack

        r = stack([r, r], axis=-1)[..., 0]
    return _torch._finish(r, requires_grad) if requires_grad else r
