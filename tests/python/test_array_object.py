"""The array object: attributes, repr, conversions, tolist/item, buffer protocol, DLPack."""

from __future__ import annotations

import math
import operator

import ember
import ml_dtypes
import numpy as np
import pytest
from _helpers import (
    ALL_DTYPES,
    NUMPY_DTYPES,
    assert_close,
    dtype_name,
    em_dtype,
    kind,
    np_dtype,
    to_ember,
)

SHAPES = [(), (0,), (3, 0), (1,), (5,), (2, 3), (2, 1, 4)]
SHAPE_IDS = [str(s).replace(" ", "") for s in SHAPES]


def sample(shape, dtype):
    n = int(np.prod(shape))
    vals = (np.arange(n) % 5 - 1).astype(np.float64)
    if kind(dtype) == "u":
        vals = np.abs(vals)
    if kind(dtype) == "c":
        vals = vals + 0.5j * vals[::-1]
    return vals.reshape(shape).astype(np_dtype(dtype))


# --------------------------------------------------------------------------------------------
# attributes
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=SHAPE_IDS)
def test_attributes(shape, dtype, device):
    a = sample(shape, dtype)
    x = to_ember(a, device)
    assert x.shape == a.shape and type(x.shape) is tuple
    assert all(type(s) is int for s in x.shape)
    assert x.ndim == a.ndim
    assert x.size == a.size and isinstance(x.size, int)  # an int that PyTorch users call
    assert x.itemsize == a.itemsize
    assert x.nbytes == a.nbytes
    if a.size:  # NumPy's strides of empty arrays depend on how they were made
        assert tuple(x.strides) == a.strides
    assert dtype_name(x.dtype) == dtype
    assert isinstance(x.dtype, ember.dtype)
    assert str(x.device).split(":")[0] == device
    assert isinstance(x.device, ember.Device)


def test_len_and_iteration(device):
    a = sample((3, 4), "int32")
    x = to_ember(a, device)
    assert len(x) == 3
    rows = list(x)
    assert len(rows) == 3
    for r, ref in zip(rows, a, strict=True):
        assert_close(r, ref)
    assert [int(v) for v in x[0]] == a[0].tolist()
    with pytest.raises(TypeError):
        len(to_ember(np.asarray(1.0), device))
    with pytest.raises(TypeError):
        iter(to_ember(np.asarray(1.0), device))
    assert list(to_ember(np.zeros((0, 3)), device)) == []


def test_array_namespace(device):
    x = ember.zeros(2, device=device)
    assert x.__array_namespace__() is ember
    assert x.__array_namespace__(api_version="2024.12") is ember


# --------------------------------------------------------------------------------------------
# Python scalar conversions
# --------------------------------------------------------------------------------------------

CONVERSIONS = [
    (bool, 0.0, "float32"),
    (bool, 2, "int8"),
    (bool, np.nan, "float64"),
    (bool, True, "bool"),
    (int, 2.7, "float64"),
    (int, -2.7, "float32"),
    (int, 7, "uint16"),
    (int, True, "bool"),
    (float, 3, "int64"),
    (float, 1.5, "float16"),
    (float, 1.5, "bfloat16"),
    (float, -np.inf, "float64"),
    (complex, 2, "int32"),
    (complex, 1.5 - 2j, "complex64"),
    (complex, 1.5, "float64"),
    (operator.index, 5, "int64"),
    (operator.index, 5, "uint8"),
]


@pytest.mark.parametrize(
    "conv,value,dtype",
    CONVERSIONS,
    ids=[f"{c.__name__}-{v!r}-{d}" for c, v, d in CONVERSIONS],
)
def test_scalar_conversion(conv, value, dtype, device):
    a = np.asarray(value).astype(np.complex128 if kind(dtype) == "c" else np.float64)
    a = (
        a.astype(np_dtype(dtype))
        if kind(dtype) == "c"
        else np.asarray(value).astype(np_dtype(dtype))
    )
    x = to_ember(a, device)
    got = conv(x)
    ref = conv(a.astype(np.float32)) if dtype == "bfloat16" else conv(a[()])
    assert type(got) is type(ref) or (conv is operator.index and type(got) is int)
    assert got == ref or (math.isnan(abs(got)) and math.isnan(abs(ref)))
    # the dunder itself must return the exact type (Python only tolerates subclasses, with a
    # DeprecationWarning, e.g. __int__ returning a bool)
    dunder = {bool: "__bool__", int: "__int__", float: "__float__", complex: "__complex__"}
    wanted = {operator.index: int}.get(conv, conv)
    raw = getattr(x, dunder.get(conv, "__index__"))()
    assert type(raw) is wanted, f"{dunder.get(conv, '__index__')} returned {type(raw).__name__}"


@pytest.mark.parametrize(
    "conv,value,dtype,exc",
    [
        (int, np.nan, "float64", ValueError),
        (int, np.inf, "float32", OverflowError),
        (float, 1 + 2j, "complex128", TypeError),
        (int, 1 + 2j, "complex64", TypeError),
        (operator.index, 2.0, "float64", TypeError),
    ],
    ids=["int-nan", "int-inf", "float-complex", "int-complex", "index-float"],
)
def test_scalar_conversion_errors(conv, value, dtype, exc, device):
    x = ember.asarray(np.asarray(value).astype(dtype), device=device)
    with pytest.raises(exc):
        conv(x)


@pytest.mark.parametrize("conv", [bool, int, float, complex])
def test_conversion_of_multi_element_raises(conv, device):
    x = ember.ones((2,), device=device)
    with pytest.raises((TypeError, ValueError)):
        conv(x)
    with pytest.raises((TypeError, ValueError)):
        conv(ember.ones((0,), device=device))


# --------------------------------------------------------------------------------------------
# tolist / item
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=SHAPE_IDS)
def test_tolist(shape, dtype, device):
    a = sample(shape, dtype)
    x = to_ember(a, device)
    ref = a.astype(np.float32).tolist() if dtype == "bfloat16" else a.tolist()
    got = x.tolist()
    assert got == ref

    def types(v):
        return [types(e) for e in v] if isinstance(v, list) else type(v)

    assert types(got) == types(ref)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_item(dtype, device):
    a = sample((1, 1), dtype)
    x = to_ember(a, device)
    ref = a.astype(np.float32).item() if dtype == "bfloat16" else a.item()
    assert x.item() == ref and type(x.item()) is type(ref)
    assert x[0, 0].item() == ref
    with pytest.raises(ValueError):
        to_ember(sample((2,), dtype), device).item()


# --------------------------------------------------------------------------------------------
# repr
# --------------------------------------------------------------------------------------------

REPR_VALUES = {
    "ints": np.array([[1, -2, 3], [40, 5, -600]]),
    "small": np.array([0.1, 1e-5, 2.0, -3.25]),
    "big": np.array([1e10, 1.0, -2e-3]),
    "special": np.array([np.nan, np.inf, -np.inf, -0.0, 1.5]),
    "bools": np.array([[True, False], [False, True]]),
    "complex": np.array([1 + 2j, -0.5j, 3.0]),
    "long": np.arange(1500.0),
}


@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
@pytest.mark.parametrize("shape", SHAPES, ids=SHAPE_IDS)
def test_repr_shapes(shape, dtype, device):
    if device != "cpu":
        pytest.skip("repr with a device suffix is checked in test_devices")
    a = sample(shape, dtype)
    assert repr(to_ember(a, device)) == np.array_repr(a)


@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
@pytest.mark.parametrize("values", list(REPR_VALUES))
def test_repr_values(values, dtype):
    v = REPR_VALUES[values]
    if kind(dtype) != "c" and np.iscomplexobj(v):
        v = v.real
    with np.errstate(all="ignore"):
        a = v.astype(dtype)
    assert repr(to_ember(a, "cpu")) == np.array_repr(a)


def test_repr_bfloat16():
    x = ember.asarray([1.0, -2.5, 3.0], dtype=ember.bfloat16, device="cpu")
    r = repr(x)
    assert r.startswith("array([") and r.endswith("dtype=bfloat16)"), r
    assert "-2.5" in r
    assert "device" not in r


def test_repr_zero_d_and_empty():
    c = "cpu"  # the default device is the GPU where there is one
    assert repr(ember.asarray(1.5, dtype=ember.float32, device=c)) == "array(1.5, dtype=float32)"
    assert (
        repr(ember.zeros((3, 0), dtype=ember.int8, device=c))
        == "array([], shape=(3, 0), dtype=int8)"
    )
    assert repr(ember.zeros((0,), device=c)) == "array([], dtype=float64)"
    x = ember.asarray([1.0, 2.0], dtype=ember.float32, device=c)
    assert repr(x) == "array([1., 2.], dtype=float32)"


# --------------------------------------------------------------------------------------------
# __array__ / buffer protocol
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("view", ["contig", "strided", "negstride", "transposed", "0d"])
def test_np_asarray(view, dtype):
    a = sample((4, 6), dtype)
    x = to_ember(a, "cpu")
    pick = {
        "contig": lambda t: t,
        "strided": lambda t: t[::2, 1::2],
        "negstride": lambda t: t[::-1, ::-3],
        "transposed": lambda t: t.T,
        "0d": lambda t: t[1, 2],
    }[view]
    ref = np.asarray(pick(a))
    got = np.asarray(pick(x))
    assert got.dtype == ref.dtype
    assert got.shape == ref.shape
    np.testing.assert_array_equal(got.astype(np.float64) if dtype == "bfloat16" else got, ref)
    d = np.asarray(pick(x), dtype=np.float64 if kind(dtype) != "c" else np.complex128)
    assert d.dtype in (np.float64, np.complex128)


def test_asnumpy_bfloat16_type():
    x = ember.ones(3, dtype=ember.bfloat16)
    assert ember.asnumpy(x).dtype == np.dtype(ml_dtypes.bfloat16)


def _format_dtype(fmt: str):
    """struct-style buffer format -> comparable key ('l' and 'q' are both int64 here)."""
    core = fmt.lstrip("@=<>!")
    if core.startswith("Z"):
        return np.dtype(core[1:]).name + "-complex"
    return np.dtype(core)


@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
def test_buffer_protocol(dtype):
    a = sample((3, 4), dtype)
    x = to_ember(a, "cpu")
    m = memoryview(x)
    ref = memoryview(a)
    assert m.shape == ref.shape
    assert m.strides == ref.strides
    assert m.itemsize == ref.itemsize
    assert _format_dtype(m.format) == _format_dtype(ref.format), (m.format, ref.format)
    np.testing.assert_array_equal(np.asarray(m), a)


def test_buffer_protocol_views_and_writes():
    a = np.arange(24, dtype=np.float64).reshape(4, 6)
    x = to_ember(a, "cpu")
    v = x[::2, ::-1]
    m = memoryview(v)
    assert m.strides == a[::2, ::-1].strides
    np.testing.assert_array_equal(np.asarray(m), a[::2, ::-1])
    w = np.asarray(memoryview(x))
    if not m.readonly:
        w[0, 0] = -5.0
        assert float(x[0, 0]) == -5.0, "a writable buffer must alias the array"
    zero = memoryview(to_ember(np.asarray(2.5), "cpu"))
    assert zero.shape == () and zero.ndim == 0


# --------------------------------------------------------------------------------------------
# DLPack
# --------------------------------------------------------------------------------------------


def test_dlpack_device():
    x = ember.zeros(3, device="cpu")
    dev = x.__dlpack_device__()
    assert tuple(int(v) for v in dev) == (1, 0)  # kDLCPU, device 0


@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
@pytest.mark.parametrize("view", ["contig", "strided", "negstride", "0d", "empty"])
def test_numpy_from_dlpack(view, dtype):
    a = sample((4, 6), dtype)
    x = to_ember(a, "cpu")
    pick = {
        "contig": lambda t: t,
        "strided": lambda t: t[::2, 1::2],
        "negstride": lambda t: t[::-1, ::-3],
        "0d": lambda t: t[1, 2],
        "empty": lambda t: t[2:2],
    }[view]
    got = np.from_dlpack(pick(x))
    ref = np.asarray(pick(a))
    assert got.dtype == ref.dtype and got.shape == ref.shape
    np.testing.assert_array_equal(got, ref)


def test_numpy_from_dlpack_is_zero_copy():
    x = ember.zeros(4, dtype=ember.float32, device="cpu")
    y = np.from_dlpack(x)
    x[1] = 3.0
    assert y[1] == 3.0


@pytest.mark.parametrize("dtype", NUMPY_DTYPES)
@pytest.mark.parametrize("view", ["contig", "strided", "negstride", "0d"])
def test_ember_from_dlpack_numpy(view, dtype):
    a = sample((4, 6), dtype)
    pick = {
        "contig": lambda t: t,
        "strided": lambda t: t[::2, 1::2],
        "negstride": lambda t: t[::-1, ::-3],
        "0d": lambda t: t[1, 2:3].reshape(()),
    }[view]
    src = pick(a)
    x = ember.from_dlpack(src)
    assert isinstance(x, ember.ndarray)
    assert_close(x, src, dtype, exact=True)


def test_ember_from_dlpack_is_zero_copy_and_keeps_owner_alive():
    a = np.arange(6, dtype=np.int64)
    x = ember.from_dlpack(a)
    a[2] = 99
    assert int(x[2]) == 99
    del a
    import gc

    gc.collect()
    assert x.tolist() == [0, 1, 99, 3, 4, 5]


def test_dlpack_roundtrip():
    x = ember.asarray(np.arange(12, dtype=np.float32).reshape(3, 4), device="cpu")
    y = ember.from_dlpack(x)
    assert_close(y, np.arange(12, dtype=np.float32).reshape(3, 4))
    z = ember.from_dlpack(np.from_dlpack(x.T))
    assert_close(z, np.arange(12, dtype=np.float32).reshape(3, 4).T)


def test_dlpack_kwargs():
    x = ember.ones(3, device="cpu")
    cap = x.__dlpack__(max_version=(1, 0))
    assert cap is not None
    with pytest.raises(BufferError, match="copy=False"):
        x.__dlpack__(dl_device=(2, 0), copy=False)  # another device needs a copy
    if ember.cuda.is_available():  # a copy on the device, as the protocol allows
        y = ember.from_dlpack(x.__dlpack__(dl_device=(2, 0)))
        assert y.device == ember.Device("cuda:0")
        assert_close(y, np.ones(3))
    else:
        with pytest.raises(BufferError, match="cannot export to cuda"):
            x.__dlpack__(dl_device=(2, 0))


def test_bool_of_zero_d(device):
    assert bool(ember.asarray(1.0, device=device)) is True
    assert bool(ember.asarray(0, device=device)) is False


def test_em_dtype_roundtrip():
    for d in ALL_DTYPES:
        assert dtype_name(em_dtype(d)) == d


# --------------------------------------------------------------------------------------------
# lifetime: no leaks under churn, threads
# --------------------------------------------------------------------------------------------


def test_no_memory_leak_under_churn(device):
    import gc

    import psutil

    proc = psutil.Process()
    a = np.random.default_rng(0).uniform(size=100_000)

    def churn(n):
        for _ in range(n):
            x = ember.asarray(a, device=device)
            y = (x * 2.0 + 1.0)[::2]
            s = ember.sum(y)
            float(s)
            np.asarray(ember.asnumpy(y.astype(ember.float32)))
            repr(x[:3])

    churn(20)  # warm up pools and caches
    gc.collect()
    before = proc.memory_info().rss
    churn(300)  # ~1 GB of short-lived arrays
    gc.collect()
    grown = proc.memory_info().rss - before
    assert grown < 64 * 2**20, f"RSS grew by {grown / 2**20:.1f} MiB over 300 iterations"


def test_concurrent_use_from_python_threads(device):
    import threading

    rng = np.random.default_rng(1)
    data = [rng.uniform(-1, 1, 200_000) for _ in range(4)]
    expected = [float(np.sum(d * 3.0)) for d in data]
    errors = []

    def work(i):
        try:
            x = ember.asarray(data[i], device=device)
            for _ in range(20):
                got = float(ember.sum(x * 3.0))
                if abs(got - expected[i]) > 1e-9 * max(1.0, abs(expected[i])) + 1e-9:
                    errors.append((i, got, expected[i]))
                    return
        except Exception as exc:  # reported below, not swallowed
            errors.append((i, repr(exc)))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads), "threads hung (deadlock?)"
    assert not errors, errors


def test_from_dlpack_read_only_source_is_copied():
    a = np.arange(4.0)
    a.flags.writeable = False
    e = ember.from_dlpack(a)
    e[0] = 100
    assert a[0] == 0 and float(e[0]) == 100


def test_from_dlpack_writable_cpu_source_is_shared():
    b = np.arange(4.0)
    f = ember.from_dlpack(b)
    f[0] = 7
    assert b[0] == 7


def test_large_ops_release_the_gil():
    # The helper every elementwise op and reduction runs through drops the GIL for 2**17
    # elements and more, and keeps it for small work (where releasing would cost more).
    probe = ember._core._gil_held_during_work
    assert probe(10) is True
    assert probe(1 << 20) is False


def test_a_freed_array_releases_what_it_holds_at_once():
    # ndarray objects are pooled (nb::pooled): a freed one is parked for reuse, but its array must
    # be destroyed at once, dropping what it holds (here the NumPy buffer it shares).
    import sys

    host = np.arange(6, dtype=np.float32)
    refs = sys.getrefcount(host)
    for _ in range(3):  # the second and later views come from the pool
        view = ember.asarray(host, device="cpu")
        assert sys.getrefcount(host) > refs
        assert float((view + view).sum()) == 30.0
        del view
        assert sys.getrefcount(host) == refs


def test_format_of_0d_arrays_is_the_values(device):
    # NumPy's rule: format(x, spec) of a 0-d array formats its value; other arrays take no spec
    x = ember.asarray(np.float32(2.5), device=device)
    assert f"{x:.3f}" == f"{np.float32(2.5):.3f}" == "2.500"
    assert f"{ember.asarray(7, device=device):4d}" == "   7"
    a = ember.arange(3, device=device)
    assert f"{a}" == str(a)
    with pytest.raises(TypeError, match="unsupported format string"):
        f"{a:.2f}"
