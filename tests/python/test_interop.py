"""Zero-copy interop: DLPack (2024 protocol, versioned and legacy capsules, stream handshake),
__cuda_array_interface__ v3, pinned host memory with non-blocking copies, record_stream."""

import contextlib
import gc
import os
import weakref

import ember
import ml_dtypes
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


def _queued_ones(n, dtype=None):
    """ones(n) plus 20 rounds of x * 1 + 1 queued on the current stream (21.0 everywhere): enough
    queued work that a missing stream wait would show."""
    x = ember.ones(n, device="cuda", dtype=dtype)
    for _ in range(20):
        x = x * 1.0 + 1.0
    return x


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
        x = _queued_ones(n)
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


# ---- shared by the tests below ----------------------------------------------------------------


def _ptr(x):
    """The address of an ember array's first element. bfloat16 is read through a uint16 view: it
    has no __cuda_array_interface__ typestr and NumPy cannot import it."""
    if x.dtype == ember.bfloat16:
        x = x.view(ember.uint16)
    if x.device.type == "cuda":
        return x.__cuda_array_interface__["data"][0]
    return np.from_dlpack(x).__array_interface__["data"][0]


def _check_values(got, want):
    """`got` (anything np.asarray takes) has the dtype, shape and values of the NumPy `want`."""
    got = np.asarray(got)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    if want.dtype == ml_dtypes.bfloat16:
        got, want = got.astype(np.float32), want.astype(np.float32)
    np.testing.assert_array_equal(got, want)


# ---- JAX (on the CPU, and on CUDA when JAX has a GPU backend) ----------------------------------

JAX_DTYPES = ["float16", "bfloat16", "float32", "float64", "int32", "int64", "uint8", "bool"]
JAX_DTYPES += ["complex64"]
_X64 = {"float64", "int64", "uint64", "complex128"}  # JAX needs jax_enable_x64 for these


def _jax(device="cuda"):
    """The jax module; skips when JAX is absent or, for "cuda", has no GPU backend."""
    # Before JAX's first import: it would otherwise take 75% of the GPU memory at start-up.
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    jax = pytest.importorskip("jax")
    pytest.importorskip("jax.dlpack")
    if device == "cuda":
        try:
            gpus = jax.devices("gpu")
        except Exception as e:  # RuntimeError: no GPU platform (CPU-only jaxlib, no plugin)
            pytest.skip(f"JAX has no GPU backend: {e}")
        if not gpus:
            pytest.skip("JAX sees no GPU")
    return jax


def _jax_device(jax, device):
    return jax.devices("gpu" if device == "cuda" else "cpu")[0]


@contextlib.contextmanager
def _x64(jax, on):
    """jax_enable_x64 set to `on` inside the block, restored after it (without it JAX turns
    64-bit arrays into 32-bit copies)."""
    read = getattr(jax.config, "read", None)
    prev = bool(read("jax_enable_x64") if read else jax.config.jax_enable_x64)
    jax.config.update("jax_enable_x64", bool(on))
    try:
        yield
    finally:
        jax.config.update("jax_enable_x64", prev)


def _jax_values(dtype, shape=(3, 4)):
    a = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape) % 7
    if dtype == "bool":
        return a % 2 == 1
    if dtype == "bfloat16":
        return (a - 3.5).astype(ml_dtypes.bfloat16)
    if dtype.startswith("complex"):
        return ((a - 3) + 1j * (a + 1)).astype(dtype)
    if dtype.startswith("float"):
        return (a - 3.5).astype(dtype)
    return a.astype(dtype)


@pytest.mark.parametrize("api", ["jax.dlpack", "jax.numpy"])
@pytest.mark.parametrize("shape", [(3, 4), ()], ids=["2d", "0d"])
@pytest.mark.parametrize("dtype", JAX_DTYPES)
def test_jax_from_ember(device, dtype, shape, api):
    jax = _jax(device)
    from_dlpack = jax.dlpack.from_dlpack if api == "jax.dlpack" else jax.numpy.from_dlpack
    a = _jax_values(dtype, shape)
    x = ember.asarray(a, device=device)
    with _x64(jax, dtype in _X64):
        j = from_dlpack(x)
        assert j.devices() == {_jax_device(jax, device)}
        _check_values(j, a)
        if j.unsafe_buffer_pointer() != _ptr(x):  # not zero-copy: allowed only where
            # XLA:CPU cannot wrap the memory: it views host memory only when 64-byte aligned
            # (small ember and NumPy CPU blocks come from malloc), and copy=False then refuses.
            assert device == "cpu" and _ptr(x) % 64 != 0, "JAX copied an ember array"
            with pytest.raises(ValueError, match="aligned"):
                from_dlpack(x, copy=False)
    _check_values(ember.asnumpy(x), a)  # ember's array is unharmed


@pytest.mark.parametrize("shape", [(3, 4), ()], ids=["2d", "0d"])
@pytest.mark.parametrize("dtype", JAX_DTYPES)
def test_ember_from_jax(device, dtype, shape):
    jax = _jax(device)
    a = _jax_values(dtype, shape)
    with _x64(jax, dtype in _X64):
        j = jax.device_put(a, _jax_device(jax, device))
        assert str(j.dtype) == dtype
        p = j.unsafe_buffer_pointer()
        e = ember.from_dlpack(j)
        assert e.device.type == device and e.dtype == getattr(ember, dtype) and e.shape == shape
        assert _ptr(e) == p  # zero-copy
        _check_values(ember.asnumpy(e), a)
        e2 = ember.asarray(j)  # asarray takes the DLPack path too
        assert _ptr(e2) == p and e2.dtype == e.dtype
        del j, e2
        gc.collect()
        _check_values(ember.asnumpy(e), a)  # ember keeps JAX's buffer alive
        _check_values(ember.asnumpy(e.copy()), a)


_JAX_VIEWS = {  # name: (view, whether XLA can import its strides without a copy)
    "transpose": (lambda a: a.T, True),
    "permute3d": (lambda a: a.reshape(2, 3, 4).transpose((2, 0, 1)), True),
    "row": (lambda a: a[1], True),
    "rows": (lambda a: a[2:5], True),
    "step": (lambda a: a[:, ::2], False),
    "column": (lambda a: a[:, 1], False),
    "reversed": (lambda a: a[::-1], False),
    "broadcast": (
        lambda a: (np if isinstance(a, np.ndarray) else ember).broadcast_to(a[:1], (6, 4)),
        False,
    ),
}


@pytest.mark.parametrize("view", list(_JAX_VIEWS))
def test_jax_from_ember_views(device, view):
    """JAX documents (XLA's DLPack import, "only DLPack tensors with trivial (compact) striding
    are supported") that it takes a row-major buffer, maybe with its axes permuted, and refuses
    other strides; ember exports its strides as they are, and a contiguous copy is the way in."""
    jax = _jax(device)
    f, compact = _JAX_VIEWS[view]
    ref = _jax_values("float32", (6, 4))
    x = ember.asarray(ref, device=device)
    v, want = f(x), f(ref)
    try:
        j = jax.dlpack.from_dlpack(v)
    except Exception as e:
        msg = str(e).lower()
        # The other documented refusal: XLA views only suitably aligned memory (64 bytes on the
        # CPU) and raises "not aligned" when it cannot copy; a row view starts 16 bytes in.
        if "aligned" not in msg:
            assert not compact, f"JAX refused a permuted row-major layout: {e}"
            # A broadcast view is read-only (as NumPy's), which a DLPack 0.x capsule cannot say.
            assert "strid" in msg or "read-only" in msg, e
        j = jax.dlpack.from_dlpack(v.copy())
    _check_values(j, want)
    _check_values(ember.asnumpy(v), want)


def test_jax_zero_copy_large_and_transposed(device):
    jax = _jax(device)
    # 8 MiB: on the CPU ember allocates it 2 MiB aligned, which XLA:CPU can wrap without a copy.
    x = ember.arange(1 << 21, device=device).astype(ember.float32).reshape(1024, 2048)
    j = jax.dlpack.from_dlpack(x, copy=False)
    assert j.unsafe_buffer_pointer() == _ptr(x)
    jt = jax.dlpack.from_dlpack(x.T, copy=False)  # the same memory, axes permuted
    assert jt.shape == (2048, 1024) and jt.unsafe_buffer_pointer() == _ptr(x)
    np.testing.assert_array_equal(np.asarray(jt[5]), ember.asnumpy(x.T[5]))
    np.testing.assert_array_equal(np.asarray(jt + 1)[7, 9], float(x[9, 7]) + 1)
    back = ember.from_dlpack(jt)  # JAX's permuted layout comes back as ember strides
    assert back.strides == x.T.strides and _ptr(back) == _ptr(x)
    np.testing.assert_array_equal(ember.asnumpy(back), ember.asnumpy(x.T))
    del x, back
    gc.collect()
    assert float(j[-1, -1]) == (1 << 21) - 1  # JAX keeps ember's block alive
    assert float(jt[-1, 0]) == 2047.0


def test_jax_refusal_frees_the_export():
    """A capsule JAX refuses is still freed: the NumPy memory under the ember array goes away."""
    jax = _jax("cpu")
    a = np.arange(24.0).reshape(4, 6)
    finalized = []
    weakref.finalize(a, lambda: finalized.append(1))
    x = ember.from_dlpack(a)
    try:
        j = jax.dlpack.from_dlpack(x[:, ::2])
    except Exception as e:  # what JAX 0.4-0.11 do
        assert "strid" in str(e).lower(), e
    else:
        np.testing.assert_array_equal(np.asarray(j), a[:, ::2])
        del j
    del a
    gc.collect()
    assert finalized == []
    del x
    gc.collect()
    assert finalized == [1]


@needs_cuda
def test_stream_handshake_with_jax():
    jax = _jax("cuda")
    jnp = jax.numpy
    s = ember.cuda.Stream()
    n = 1 << 24
    s.wait_stream(ember.cuda.current_stream())
    with ember.cuda.stream(s):
        x = _queued_ones(n, ember.float32)
        j = jax.dlpack.from_dlpack(x)  # JAX's stream waits for s; no host sync
    assert float(jnp.min(j)) == 21.0 and float(jnp.max(j)) == 21.0
    jj = jax.device_put(jnp.full((n,), 2.0, dtype=jnp.float32), _jax_device(jax, "cuda"))
    for _ in range(20):  # JAX dispatches asynchronously
        jj = jj * 1.0 + 1.0
    e = ember.from_dlpack(jj)  # ember's stream waits for JAX's
    assert float(ember.min(e)) == 22.0 and float(ember.max(e)) == 22.0


# ---- 0-d, empty and strided round trips with PyTorch and CuPy, bfloat16/float16 --------------


@needs_cuda
def test_torch_0d_empty_and_views_share_memory():
    torch = _torch()
    t0 = torch.tensor(1.5, device="cuda")
    e0 = ember.from_dlpack(t0)
    assert e0.shape == () and float(e0) == 1.5 and _ptr(e0) == t0.data_ptr()
    x0 = ember.asarray(-2.0, device="cuda", dtype=ember.float32)
    tt0 = torch.from_dlpack(x0)
    assert tt0.shape == () and tt0.item() == -2.0 and tt0.data_ptr() == _ptr(x0)
    assert ember.from_dlpack(torch.empty((0, 3), device="cuda")).shape == (0, 3)
    assert torch.from_dlpack(ember.zeros((2, 0), device="cuda")).shape == (2, 0)
    # torch view -> ember: same memory, same strides, writes go through
    t = torch.arange(30.0, device="cuda").reshape(5, 6)
    tv = t.T[1:, ::2]
    ev = ember.from_dlpack(tv)
    assert _ptr(ev) == tv.data_ptr() and ev.strides == tuple(4 * s for s in tv.stride())
    ev[0, 1] = -1.0
    ember.cuda.synchronize()
    assert t[2, 1].item() == -1.0
    # ember view -> torch
    x = ember.arange(30, device="cuda").astype(ember.float32).reshape(5, 6)
    xv = x.T[::2, 1:]
    tx = torch.from_dlpack(xv)
    assert tx.data_ptr() == _ptr(xv) and tx.stride() == tuple(s // 4 for s in xv.strides)
    np.testing.assert_array_equal(tx.cpu().numpy(), ember.asnumpy(xv))
    tx[1, 0] = 100.0
    torch.cuda.synchronize()
    assert float(x[1, 2]) == 100.0


@needs_cuda
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_torch_half_views_and_0d(dtype):
    torch = _torch()
    ref = np.arange(12, dtype=np.float32).reshape(3, 4) - 5.5
    x = ember.asarray(ref, device="cuda").astype(getattr(ember, dtype))
    v = x.T[::2]
    tv = torch.from_dlpack(v)
    assert tv.dtype == getattr(torch, dtype) and tv.data_ptr() == _ptr(v)
    np.testing.assert_array_equal(tv.float().cpu().numpy(), ref.T[::2])
    back = ember.from_dlpack(tv.T)
    assert back.dtype == x.dtype and _ptr(back) == _ptr(v) and back.strides == v.T.strides
    np.testing.assert_array_equal(ember.asnumpy(back.astype(ember.float32)), ref.T[::2].T)
    t0 = torch.from_dlpack(x[1, 2])
    assert t0.shape == () and t0.dtype == getattr(torch, dtype) and t0.item() == ref[1, 2]
    e0 = ember.from_dlpack(torch.tensor(0.75, dtype=getattr(torch, dtype), device="cuda"))
    assert e0.shape == () and e0.dtype == x.dtype and float(e0.astype(ember.float32)) == 0.75


@needs_cuda
@pytest.mark.parametrize(
    "dtype",
    ["bool", "int8", "int32", "int64", "uint16", "float16", "float32", "float64", "complex64"],
)
def test_cupy_round_trip_dtypes(dtype):
    cp = _cupy()
    a = _np_values(dtype)
    x = ember.asarray(a, device="cuda")
    for v, want in ((x, a), (x.T, a.T)):
        c = cp.from_dlpack(v)
        assert c.dtype == a.dtype and c.data.ptr == _ptr(v) and c.strides == v.strides
        np.testing.assert_array_equal(cp.asnumpy(c), want)
        e = ember.from_dlpack(c)
        assert e.dtype == x.dtype and _ptr(e) == c.data.ptr and e.strides == c.strides
        np.testing.assert_array_equal(ember.asnumpy(e), want)
        w = ember.asarray(_CAI(c))  # and through __cuda_array_interface__
        assert w.dtype == x.dtype and _ptr(w) == c.data.ptr
        np.testing.assert_array_equal(ember.asnumpy(w), want)
        cx = cp.asarray(_CAI(v))
        assert cx.dtype == a.dtype and cx.data.ptr == _ptr(v)
        np.testing.assert_array_equal(cp.asnumpy(cx), want)


_CUPY_VIEWS = [
    lambda a: a[2, 3],
    lambda a: a.T,
    lambda a: a[::2, 1::2],
    lambda a: a[:, 2],
    lambda a: a[1:1],
    lambda a: a[::-1, ::-2],
]


@needs_cuda
@pytest.mark.parametrize("view", range(len(_CUPY_VIEWS)))
def test_cupy_0d_empty_and_views(view):
    cp = _cupy()
    f = _CUPY_VIEWS[view]
    ref = np.arange(24, dtype=np.float32).reshape(4, 6)
    want = f(ref)
    v = f(ember.asarray(ref, device="cuda"))
    for got in (cp.from_dlpack(v), cp.asarray(_CAI(v))):  # ember -> CuPy, both protocols
        assert got.shape == want.shape
        np.testing.assert_array_equal(cp.asnumpy(got), want)
        if want.size:
            assert got.data.ptr == _ptr(v) and got.strides == v.strides
    cv = f(cp.asarray(ref))
    # CuPy -> ember. CuPy's __dlpack__ exported negative strides wrongly before cupy#10228
    # (2026), so those go through __cuda_array_interface__ only.
    for src in [_CAI(cv)] + ([cv] if all(s >= 0 for s in cv.strides) else []):
        e = ember.asarray(src)
        assert e.shape == want.shape
        np.testing.assert_array_equal(ember.asnumpy(e), want)
        if want.size:
            assert _ptr(e) == cv.data.ptr and e.strides == cv.strides


@needs_cuda
def test_cupy_bfloat16():
    cp = _cupy()
    if int(cp.__version__.split(".")[0]) < 14:  # 13.x may even crash on it (cupy#8801)
        pytest.skip(f"CuPy {cp.__version__} has no bfloat16")
    ref = np.array([1.5, -2.25, 3.0, 8.0], dtype=ml_dtypes.bfloat16)
    x = ember.asarray(ref, device="cuda")
    try:
        c = cp.from_dlpack(x)
    except (NotImplementedError, TypeError, ValueError) as e:
        pytest.skip(f"this CuPy has no bfloat16 (cupy#9670 adds it through ml_dtypes): {e}")
    assert c.dtype == ml_dtypes.bfloat16 and c.data.ptr == _ptr(x)
    _check_values(cp.asnumpy(c), ref)
    back = ember.from_dlpack(c[::2])
    assert back.dtype == ember.bfloat16 and _ptr(back) == _ptr(x)
    _check_values(ember.asnumpy(back), ref[::2])


# ---- __cuda_array_interface__ consumption, no Numba needed -----------------------------------


class _Exposes:
    """Exposes nothing but the given __cuda_array_interface__ dict, as a Numba device array or a
    PyCUDA GPUArray would; `owner` stands for whatever keeps the memory alive."""

    def __init__(self, cai, owner=None):
        self.__cuda_array_interface__ = cai
        self.owner = owner


def _cai_dict(x, **entries):
    """A v3 __cuda_array_interface__ for the ember CUDA array `x`, written out by hand."""
    d = {
        "shape": x.shape,
        "typestr": np.dtype(str(x.dtype)).str,
        "data": (_ptr(x) if x.size else 0, False),
        "strides": x.strides,
        "version": 3,
        "stream": None,
    }
    d.update(entries)
    return d


@needs_cuda
@pytest.mark.parametrize("dtype", ["bool", "int16", "int64", "float16", "float32", "complex64"])
def test_cai_consumer_zero_copy_strided(dtype):
    ref = _np_values(dtype, (4, 6))
    base = ember.asarray(ref, device="cuda")
    for f in (
        lambda a: a,
        lambda a: a[::2, 1::2],
        lambda a: a[::-1, ::-2],
        lambda a: a.T,
        lambda a: a[1, 2],
        lambda a: a[1:1],
    ):
        v, want = f(base), f(ref)
        w = ember.asarray(_Exposes(_cai_dict(v), v))
        assert w.shape == want.shape and w.dtype == base.dtype and w.device == base.device
        np.testing.assert_array_equal(ember.asnumpy(w), want)
        if want.size:
            assert _ptr(w) == _ptr(v) and w.strides == v.strides
    # C-contiguous producers may leave strides out (None)
    w = ember.asarray(_Exposes(_cai_dict(base, strides=None), base))
    assert _ptr(w) == _ptr(base)
    np.testing.assert_array_equal(ember.asnumpy(w), ref)


@needs_cuda
def test_cai_consumer_writes_through_and_keeps_the_producer():
    base = ember.arange(24, device="cuda").astype(ember.float32).reshape(4, 6)
    v = base[::2, 1::2]
    w = ember.asarray(_Exposes(_cai_dict(v), v))
    w[1, 2] = -7.0
    assert float(base[2, 5]) == -7.0
    ref = ember.asnumpy(v).copy()
    del base, v
    gc.collect()
    junk = [ember.full((4, 6), 99.0, device="cuda", dtype=ember.float32) for _ in range(8)]
    np.testing.assert_array_equal(ember.asnumpy(w), ref)  # the producer was kept alive
    assert len(junk) == 8


@needs_cuda
def test_cai_consumer_waits_for_the_stream_entry():
    s = ember.cuda.Stream()
    n = 1 << 24
    s.wait_stream(ember.cuda.current_stream())
    with ember.cuda.stream(s):
        y = _queued_ones(n, ember.float32)
        d = _cai_dict(y, stream=s.handle)  # y is still being computed on s
    w = ember.asarray(_Exposes(d, y))  # ember's current stream must wait for s
    assert float(ember.min(w)) == 21.0 and float(ember.max(w)) == 21.0
    exported = y.__cuda_array_interface__["stream"]
    assert isinstance(exported, int) and exported not in (0, None)  # v3 forbids 0


@needs_cuda
def test_cai_consumer_stream_values_and_version_2():
    x = ember.arange(6, device="cuda").astype(ember.float32)
    ember.cuda.synchronize()
    # None: no wait; 1 and 2: the legacy and per-thread default streams; 0 (which v3 forbids)
    # ember reads as the legacy default stream.
    for stream in (None, 1, 2, 0, ember.cuda.current_stream().handle):
        w = ember.asarray(_Exposes(_cai_dict(x, stream=stream), x))
        assert _ptr(w) == _ptr(x)
        np.testing.assert_array_equal(ember.asnumpy(w), np.arange(6.0))
    d2 = _cai_dict(x, version=2)
    del d2["stream"]
    w = ember.asarray(_Exposes(d2, x))  # a v2 producer has no stream entry
    assert _ptr(w) == _ptr(x)
    w = ember.asarray(_Exposes(_cai_dict(x, mask=None), x))  # mask None: no mask
    assert _ptr(w) == _ptr(x)


@needs_cuda
def test_cai_consumer_read_only_copy_and_device():
    x = ember.arange(4, device="cuda").astype(ember.float32)
    ro = _cai_dict(x, data=(_ptr(x), True))
    w = ember.asarray(_Exposes(ro, x))  # ember arrays are writable: read-only memory is copied
    assert _ptr(w) != _ptr(x)
    w[0] = 9.0
    assert float(x[0]) == 0.0 and float(w[0]) == 9.0
    with pytest.raises(BufferError, match="read-only"):
        ember.asarray(_Exposes(ro, x), copy=False)
    c = ember.asarray(_Exposes(_cai_dict(x), x), copy=True)
    assert _ptr(c) != _ptr(x)
    np.testing.assert_array_equal(ember.asnumpy(c), np.arange(4.0))
    h = ember.asarray(_Exposes(_cai_dict(x), x), device="cpu")
    assert h.device == ember.Device("cpu")
    np.testing.assert_array_equal(ember.asnumpy(h), np.arange(4.0))
    with pytest.raises(BufferError, match="copy=False"):
        ember.asarray(_Exposes(_cai_dict(x), x), device="cpu", copy=False)
    i = ember.asarray(_Exposes(_cai_dict(x), x), dtype=ember.int32)
    assert i.dtype == ember.int32 and i.device == x.device
    np.testing.assert_array_equal(ember.asnumpy(i), np.arange(4))


_CAI_BASE = {
    "shape": (2, 3),
    "typestr": "<f4",
    "data": (0, False),
    "version": 3,
    "strides": None,
    "stream": None,
}


@pytest.mark.parametrize(
    "entries, error, match",
    [
        ({"mask": object()}, ValueError, "masked"),
        ({"strides": (12, 6)}, ValueError, "multiple of the item size"),
        ({"strides": (12,)}, ValueError, "differ in length"),
        ({"shape": (2, -3)}, ValueError, "negative dimension"),
        ({"typestr": ">f4"}, TypeError, "typestr '>f4'"),
        ({"typestr": "<V7"}, TypeError, "typestr"),
    ],
)
def test_cai_consumer_rejects(entries, error, match):
    # All checked before the pointer is looked at, so these run without CUDA as well.
    with pytest.raises(error, match=f"ember.asarray: .*{match}"):
        ember.asarray(_Exposes({**_CAI_BASE, **entries}))


def test_cai_consumer_not_a_dict():
    with pytest.raises(TypeError, match="ember.asarray: __cuda_array_interface__ .* not a dict"):
        ember.asarray(_Exposes([1, 2]))


@pytest.mark.parametrize(
    "entries",
    [
        {"data": "0x0"},
        {"data": (0,)},
        {"typestr": 4},
        {"shape": 3},
        {"shape": ("a",)},
        {"version": "3"},
        {"strides": ("a", 4)},
        {"typestr": None},
        {"data": (0, "no")},
    ],
)
def test_cai_consumer_malformed_entries_are_named(entries):
    key = next(iter(entries))
    with pytest.raises(TypeError, match=f'ember.asarray: __cuda_array_interface__\\["{key}"\\]'):
        ember.asarray(_Exposes({**_CAI_BASE, **entries}))


@pytest.mark.parametrize("key", ["data", "shape", "typestr"])
def test_cai_consumer_missing_entry_is_named(key):
    entries = {k: v for k, v in _CAI_BASE.items() if k != key}
    with pytest.raises(ValueError, match=f'__cuda_array_interface__ lacks the entry "{key}"'):
        ember.asarray(_Exposes(entries))


# ---- Numba (on the GPU machine: numba and numba-cuda are in its image) ----------------------


_numba_broken = []  # why Numba cannot compile a kernel of its own here, once known


def _numba_cuda(jit=False):
    """numba.cuda, or a skip: not installed, no device, or (with jit) Numba cannot compile and run
    a kernel on its own arrays here (an installation problem, e.g. a Numba older than NumPy)."""
    numba_cuda = pytest.importorskip("numba.cuda")
    if not numba_cuda.is_available():
        pytest.skip("numba finds no CUDA device")
    if jit and not _numba_broken:
        try:

            @numba_cuda.jit
            def bump(x):
                x[0] += 1

            d = numba_cuda.to_device(np.zeros(1, dtype=np.float32))
            bump[1, 1](d)
            assert d.copy_to_host()[0] == 1
            _numba_broken.append("")
        except Exception as e:
            _numba_broken.append(f"{type(e).__name__}: {e}"[:200])
    if jit and _numba_broken[0]:
        pytest.skip(f"Numba cannot run a kernel of its own here: {_numba_broken[0]}")
    return numba_cuda


@needs_cuda
def test_numba_kernel_takes_ember_arrays():
    nc = _numba_cuda(jit=True)

    @nc.jit
    def axpy(a, x, y, out):
        i = nc.grid(1)
        if i < out.shape[0]:
            out[i] = a * x[i] + y[i]

    n = 1000
    x = ember.arange(2 * n, dtype=ember.float32, device="cuda")[::2]  # strided: 8-byte steps
    y = ember.ones(n, dtype=ember.float32, device="cuda")
    out = ember.zeros(n, dtype=ember.float32, device="cuda")
    axpy[(n + 255) // 256, 256](np.float32(3), x, y, out)
    nc.synchronize()  # Numba launches on the legacy stream, which ember's does not wait for
    np.testing.assert_array_equal(ember.asnumpy(out), 3 * np.arange(0, 2 * n, 2) + 1)


@needs_cuda
def test_numba_device_arrays_zero_copy_both_ways():
    nc = _numba_cuda()
    d = nc.to_device(np.arange(12, dtype=np.float64).reshape(3, 4))
    e = ember.asarray(d)  # through __cuda_array_interface__, no copy
    assert e.device == ember.Device("cuda:0") and e.shape == (3, 4)
    np.testing.assert_array_equal(ember.asnumpy(e), np.arange(12.0).reshape(3, 4))
    e[1, 2] = -5.0
    ember.cuda.synchronize()
    assert d.copy_to_host()[1, 2] == -5.0
    w = nc.as_cuda_array(ember.arange(6, dtype=ember.int32, device="cuda").reshape(2, 3).T)
    assert w.shape == (3, 2) and w.strides == (4, 12)
    np.testing.assert_array_equal(w.copy_to_host(), np.arange(6, dtype=np.int32).reshape(2, 3).T)
