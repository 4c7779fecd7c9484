"""Zero-copy interop: DLPack (2024 protocol, versioned and legacy capsules, stream handshake),
__cuda_array_interface__ v3, pinned host memory with non-blocking copies, record_stream."""

import gc
import weakref

import ember
import numpy as np
import pytest
from conftest import cuda_unavailable_reason

needs_cuda = pytest.mark.skipif(
    cuda_unavailable_reason() is not None, reason=f"no CUDA device: {cuda_unavailable_reason()}"
)

DTYPES = [
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float16",
    "float32",
    "float64",
    "complex64",
    "complex128",
]


def _np_values(dtype, shape=(3, 4)):
    a = np.arange(int(np.prod(shape))).reshape(shape) % 7
    return (a % 2 == 0) if dtype == "bool" else a.astype(dtype)


class _Legacy:
    """A producer of the pre-2023 protocol: __dlpack__ takes only `stream`."""

    def __init__(self, x):
        self.x = x

    def __dlpack__(self, stream=None):
        return self.x.__dlpack__(stream=stream)

    def __dlpack_device__(self):
        return self.x.__dlpack_device__()


class _CAI:
    """An object exposing only another array's __cuda_array_interface__ (as Numba's do)."""

    def __init__(self, x):
        self.x = x

    @property
    def __cuda_array_interface__(self):
        return self.x.__cuda_array_interface__


# ---- DLPack on the CPU ----------------------------------------------------------------------


def test_capsule_kinds():
    x = ember.arange(6, device="cpu")
    assert '"dltensor_versioned"' in repr(x.__dlpack__(max_version=(1, 0)))
    assert '"dltensor_versioned"' in repr(x.__dlpack__(max_version=(1, 3)))
    assert '"dltensor"' in repr(x.__dlpack__())
    assert '"dltensor"' in repr(x.__dlpack__(max_version=(0, 8)))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("legacy", [False, True])
def test_numpy_from_ember(dtype, legacy):
    a = _np_values(dtype)
    x = ember.asarray(a, device="cpu")
    got = np.from_dlpack(_Legacy(x) if legacy else x)
    assert got.dtype == a.dtype
    np.testing.assert_array_equal(got, a)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("legacy", [False, True])
def test_ember_from_numpy(dtype, legacy):
    a = _np_values(dtype)
    x = ember.from_dlpack(_Legacy(a) if legacy else a)
    assert x.device == ember.Device("cpu")
    np.testing.assert_array_equal(ember.asnumpy(x), a)
    assert ember.asnumpy(x).dtype == a.dtype


@pytest.mark.parametrize(
    "view",
    [
        lambda a: a,
        lambda a: a.T,
        lambda a: a[::2, ::-1],
        lambda a: a[1],
        lambda a: a[0, 0, ...],
        lambda a: a[:0],
        lambda a: np.broadcast_to(a[:1], (5, 4)),
    ],
)
def test_layouts_both_ways(view):
    a = np.arange(12.0).reshape(3, 4)
    v = view(a)
    x = ember.from_dlpack(v)
    assert x.shape == v.shape
    np.testing.assert_array_equal(ember.asnumpy(x), v)
    e = ember.asarray(a, device="cpu")
    back = np.from_dlpack(view(e))
    np.testing.assert_array_equal(back, v)


def test_zero_copy_both_ways():
    a = np.zeros(4)
    x = ember.from_dlpack(a)
    x[1] = 5
    assert a[1] == 5
    y = ember.zeros(3, device="cpu")
    b = np.from_dlpack(y)
    b[2] = 7
    assert float(y[2]) == 7


def test_half_and_bfloat16_round_trip():
    for dt in (ember.float16, ember.bfloat16):
        x = ember.asarray([1.5, -2.25, 3.0], dtype=dt, device="cpu")
        for kw in ({}, {"max_version": (1, 0)}):
            y = ember.from_dlpack(x.__dlpack__(**kw))
            assert y.dtype == dt
            np.testing.assert_array_equal(ember.asnumpy(y.astype(ember.float32)), [1.5, -2.25, 3.0])
    h = np.from_dlpack(ember.asarray([0.5, 1.0], dtype=ember.float16, device="cpu"))
    assert h.dtype == np.float16


def test_bare_capsules_and_reuse():
    a = np.arange(3.0)
    for cap in (a.__dlpack__(), a.__dlpack__(max_version=(1, 0))):
        x = ember.from_dlpack(cap)
        np.testing.assert_array_equal(ember.asnumpy(x), a)
        assert "used_dltensor" in repr(cap)
        with pytest.raises(TypeError, match="from_dlpack"):
            ember.from_dlpack(cap)


def test_read_only_source():
    a = np.arange(3)
    a.flags.writeable = False
    x = ember.from_dlpack(a)  # the versioned capsule says read-only: ember copies
    x[0] = 9
    assert a[0] == 0
    with pytest.raises(BufferError, match="read-only"):
        ember.from_dlpack(a, copy=False)


def test_copy_argument():
    a = np.arange(4.0)
    x = ember.from_dlpack(a, copy=True)
    x[0] = 100
    assert a[0] == 0
    y = ember.from_dlpack(a, copy=False)
    y[0] = 100
    assert a[0] == 100
    e = ember.arange(3, device="cpu")
    c = np.from_dlpack(e, copy=True)
    c[0] = 5
    assert int(e[0]) == 0
    z = ember.from_dlpack(e.__dlpack__(copy=True))
    z[1] = 8
    assert int(e[1]) == 1


def test_dl_device_errors():
    x = ember.arange(3, device="cpu")
    assert '"dltensor' in repr(x.__dlpack__(dl_device=(1, 0)))  # its own device: no copy
    with pytest.raises(BufferError, match="copy=False"):
        x.__dlpack__(dl_device=(2, 0), copy=False)
    with pytest.raises(BufferError, match="device type 7"):
        x.__dlpack__(dl_device=(7, 0))
    if cuda_unavailable_reason() is not None:
        with pytest.raises(BufferError, match="cuda:0"):
            x.__dlpack__(dl_device=(2, 0))
    with pytest.raises(ValueError, match="stream"):
        x.__dlpack__(stream=5)


def test_not_a_producer():
    with pytest.raises(TypeError, match="from_dlpack"):
        ember.from_dlpack([1, 2, 3])


def test_deleter_called_once():
    a = np.arange(5.0)
    finalized = []
    weakref.finalize(a, lambda: finalized.append(1))
    x = ember.from_dlpack(a)
    # ember -> ember -> NumPy, all views of `a`.
    y = ember.from_dlpack(x[1:])
    z = np.from_dlpack(y)
    del a
    gc.collect()
    assert finalized == []
    del x, y
    gc.collect()
    assert finalized == []
    assert z[0] == 1.0
    del z
    gc.collect()
    assert finalized == [1]


def test_unconsumed_capsule_frees():
    a = np.arange(5.0)
    finalized = []
    weakref.finalize(a, lambda: finalized.append(1))
    x = ember.from_dlpack(a)
    del a
    caps = [x.__dlpack__(), x.__dlpack__(max_version=(1, 0))]
    del x
    gc.collect()
    assert finalized == []
    del caps
    gc.collect()
    assert finalized == [1]


# ---- __cuda_array_interface__, pinned memory, record_stream without CUDA -------------------


def test_cai_not_on_cpu():
    x = ember.arange(3, device="cpu")
    with pytest.raises(AttributeError, match="only CUDA arrays"):
        x.__cuda_array_interface__  # noqa: B018
    assert not hasattr(x, "__cuda_array_interface__")


@pytest.mark.skipif(cuda_unavailable_reason() is None, reason="checks the no-CUDA error")
def test_cai_import_needs_cuda():
    class Fake:
        __cuda_array_interface__ = {  # noqa: RUF012
            "shape": (2,),
            "typestr": "<f4",
            "data": (1 << 20, False),
            "version": 3,
            "strides": None,
            "stream": None,
        }

    with pytest.raises(ValueError, match="CUDA is not available"):
        ember.asarray(Fake())


def test_cai_bad_typestr():
    class Fake:
        __cuda_array_interface__ = {"shape": (2,), "typestr": "<V7", "data": (0, False)}  # noqa: RUF012

    with pytest.raises(TypeError, match="typestr"):
        ember.asarray(Fake())


@pytest.mark.skipif(cuda_unavailable_reason() is None, reason="checks the no-CUDA error")
def test_pinned_without_cuda():
    with pytest.raises(ValueError, match="ember.cuda.pinned_empty: CUDA is not available"):
        ember.cuda.pinned_empty((3,), "float32")
    with pytest.raises(ValueError, match="pinned_empty"):
        ember.cuda.pinned_zeros(3)


def test_is_pinned_and_non_blocking_on_cpu():
    x = ember.arange(4, device="cpu")
    assert not ember.cuda.is_pinned(x)
    with pytest.raises(TypeError, match="is_pinned"):
        ember.cuda.is_pinned(np.zeros(3))
    assert x.to("cpu", non_blocking=True) is not None
    np.testing.assert_array_equal(ember.asnumpy(x.to("cpu", non_blocking=True)), np.arange(4))


def test_record_stream_checks_type():
    x = ember.arange(4, device="cpu")
    with pytest.raises(TypeError, match="record_stream"):
        x.record_stream(3)


# ---- on CUDA ------------------------------------------------------------------------------


def _torch():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA")
    return torch


def _cupy():
    return pytest.importorskip("cupy")


@needs_cuda
@pytest.mark.parametrize(
    "dtype",
    ["bool", "int8", "int32", "int64", "uint8", "float16", "bfloat16", "float32", "float64"],
)
def test_torch_round_trip_dtypes(dtype):
    torch = _torch()
    x = ember.asarray(np.arange(12).reshape(3, 4) % 3, device="cuda").astype(getattr(ember, dtype))
    t = torch.from_dlpack(x)
    assert t.device.type == "cuda"
    assert str(t.dtype) == f"torch.{dtype}"
    back = ember.from_dlpack(t)
    assert back.dtype == x.dtype and back.device == x.device
    np.testing.assert_array_equal(
        ember.asnumpy(back.astype(ember.float32)), ember.asnumpy(x.astype(ember.float32))
    )
    t2 = torch.arange(6, device="cuda").to(getattr(torch, dtype))
    e2 = ember.from_dlpack(t2)
    assert e2.dtype == getattr(ember, dtype)
    np.testing.assert_array_equal(ember.asnumpy(e2.astype(ember.float32)), t2.float().cpu().numpy())


@needs_cuda
def test_torch_zero_copy_and_views():
    torch = _torch()
    t = torch.zeros(4, 5, device="cuda")
    e = ember.from_dlpack(t)
    e[1, 2] = 3.0
    ember.cuda.synchronize()
    assert t[1, 2].item() == 3.0
    t[0, 0] = 7.0
    torch.cuda.synchronize()
    assert float(e[0, 0]) == 7.0
    v = ember.from_dlpack(t.T[1:, ::2])
    np.testing.assert_array_equal(ember.asnumpy(v), t.T[1:, ::2].cpu().numpy())
    x = ember.arange(20, device="cuda").reshape(4, 5).astype(ember.float32)
    tv = torch.from_dlpack(x.T[::2])
    np.testing.assert_array_equal(tv.cpu().numpy(), ember.asnumpy(x.T[::2]))
    tz = torch.from_dlpack(ember.asarray(2.5, device="cuda"))
    assert tz.shape == () and tz.item() == 2.5


@needs_cuda
def test_torch_legacy_capsules():
    torch = _torch()
    from torch.utils import dlpack as tdl

    x = ember.arange(5, device="cuda").astype(ember.float32)
    t = tdl.from_dlpack(x.__dlpack__(stream=1))
    np.testing.assert_array_equal(t.cpu().numpy(), np.arange(5))
    src = torch.arange(3.0, device="cuda")
    torch.cuda.synchronize()  # a bare capsule carries no stream to wait on
    e = ember.from_dlpack(tdl.to_dlpack(src))
    np.testing.assert_array_equal(ember.asnumpy(e), np.arange(3.0))
    e2 = ember.from_dlpack(_Legacy(torch.arange(4.0, device="cuda")))
    np.testing.assert_array_equal(ember.asnumpy(e2), np.arange(4.0))


@needs_cuda
def test_stream_handshake_with_torch():
    torch = _torch()
    s = ember.cuda.Stream()
    n = 1 << 24
    with ember.cuda.stream(s):
        x = ember.ones(n, device="cuda")
        for _ in range(20):  # enough queued work that a missing wait would show
            x = x * 1.0 + 1.0
        t = torch.from_dlpack(x)  # torch's stream waits for s; no host sync
        assert torch.all(t == 21.0).item()
    tt = torch.full((n,), 2.0, device="cuda")
    for _ in range(20):
        tt = tt * 1.0 + 1.0
    e = ember.from_dlpack(tt)  # ember's stream waits for torch's
    assert float(ember.min(e)) == 22.0


@needs_cuda
def test_cupy_dlpack_and_cai():
    cp = _cupy()
    c = cp.arange(12, dtype=cp.float32).reshape(3, 4)
    e = ember.from_dlpack(c)
    np.testing.assert_array_equal(ember.asnumpy(e), cp.asnumpy(c))
    x = ember.arange(12, device="cuda").astype(ember.float32).reshape(3, 4)
    c2 = cp.from_dlpack(x)
    np.testing.assert_array_equal(cp.asnumpy(c2), ember.asnumpy(x))
    # __cuda_array_interface__ both ways, zero-copy, with strides.
    w = ember.asarray(_CAI(c))
    w[0, 0] = 100.0
    ember.cuda.synchronize()
    assert float(c[0, 0]) == 100.0
    wt = ember.asarray(_CAI(c.T[:, ::2]))
    np.testing.assert_array_equal(ember.asnumpy(wt), cp.asnumpy(c.T[:, ::2]))
    cai = x.T.__cuda_array_interface__
    assert cai["version"] == 3 and cai["typestr"] == "<f4"
    assert cai["strides"] == (4, 16) and cai["data"][1] is False
    assert x.__cuda_array_interface__["strides"] is None
    assert cai["stream"] == ember.cuda.current_stream().handle
    cx = cp.asarray(_CAI(x.T))
    np.testing.assert_array_equal(cp.asnumpy(cx), ember.asnumpy(x.T))
    cx[0, 0] = -1
    cp.cuda.Device().synchronize()
    assert float(x[0, 0]) == -1
    with pytest.raises(AttributeError, match="bfloat16"):
        x.astype(ember.bfloat16).__cuda_array_interface__  # noqa: B018


@needs_cuda
def test_cuda_dl_device_and_copy():
    x = ember.arange(4, device="cuda")
    y = np.from_dlpack(x, device="cpu")  # exported to the CPU: a copy
    np.testing.assert_array_equal(y, np.arange(4))
    with pytest.raises(BufferError):
        x.__dlpack__(dl_device=(1, 0), copy=False)
    z = ember.from_dlpack(x, device="cpu")
    assert z.device == ember.Device("cpu")
    with pytest.raises(BufferError):
        ember.from_dlpack(x, device="cpu", copy=False)


@needs_cuda
def test_foreign_owner_kept_alive():
    torch = _torch()
    t = torch.arange(1 << 20, dtype=torch.float32, device="cuda")
    e = ember.from_dlpack(t)
    del t
    gc.collect()
    assert float(ember.sum(e)) == float(np.arange(1 << 20, dtype=np.float64).sum())


@needs_cuda
@pytest.mark.parametrize("dtype", ["float32", "int64", "bool", "bfloat16"])
def test_pinned_round_trip(dtype):
    x = ember.cuda.pinned_empty((1000, 3), dtype)
    assert ember.cuda.is_pinned(x) and x.device == ember.Device("cpu")
    z0 = ember.cuda.pinned_zeros((4,), dtype)
    assert ember.cuda.is_pinned(z0)
    ref = ember.asarray(np.arange(3000).reshape(1000, 3) % 5, device="cpu").astype(
        getattr(ember, dtype)
    )
    x[...] = ref
    y = x.to("cuda", non_blocking=True)
    del x  # the copy keeps the pinned buffer alive
    gc.collect()
    z = (y * 1).to("cpu", non_blocking=True)
    assert ember.cuda.is_pinned(z)
    ember.cuda.synchronize()
    np.testing.assert_array_equal(
        ember.asnumpy(z.astype(ember.float32)), ember.asnumpy(ref.astype(ember.float32))
    )
    assert not ember.cuda.is_pinned(y.to("cpu"))


@needs_cuda
def test_non_blocking_with_event():
    x = ember.cuda.pinned_empty((1 << 22,), "float32")
    x[...] = 1.0
    y = x.to("cuda", non_blocking=True)
    z = (y + 1.0).to("cpu", non_blocking=True)
    ev = ember.cuda.Event()
    ev.record()
    ev.synchronize()
    assert float(ember.asnumpy(z).min()) == 2.0
    # the .cuda() / .cpu() spellings
    w = x.cuda(non_blocking=True).cpu(non_blocking=True)
    assert ember.cuda.is_pinned(w)
    ember.cuda.synchronize()
    assert float(ember.asnumpy(w).max()) == 1.0


@needs_cuda
def test_record_stream():
    s = ember.cuda.Stream()
    n = 1 << 22
    x = ember.ones(n, device="cuda")
    s.wait_stream(ember.cuda.current_stream())
    with ember.cuda.stream(s):
        y = x
        for _ in range(10):
            y = y * 1.0 + 1.0
    x.record_stream(s)
    del x
    # New allocations on the default stream may reuse x's block only after s's work.
    zs = [ember.zeros(n, device="cuda") for _ in range(4)]
    s.synchronize()
    assert float(ember.min(y)) == 11.0 and float(ember.max(y)) == 11.0
    assert all(float(ember.max(z)) == 0.0 for z in zs)
