"""Custom CUDA kernels (ember.RawKernel, RawModule, ElementwiseKernel, ReductionKernel) with
CuPy's API: argument checking and code generation everywhere (generated sources compiled by
NVRTC when it loads, no GPU needed), launches against NumPy on a CUDA device."""

from __future__ import annotations

import re

import ember
import numpy as np
import pytest
from conftest import cuda_unavailable_reason
from ember import _core

_NO_CUDA = cuda_unavailable_reason()
needs_cuda = pytest.mark.skipif(_NO_CUDA is not None, reason=f"no CUDA device: {_NO_CUDA}")
no_cuda_only = pytest.mark.skipif(_NO_CUDA is None, reason="checks the CPU-only error")


def _nvrtc_reason():
    try:
        _core._kernels.compile('extern "C" __global__ void f() {}', "probe", [], [], 90)
    except Exception as exc:  # NVRTC missing: the compile checks are skipped
        return f"{type(exc).__name__}: {exc}"
    return None


_NO_NVRTC = _nvrtc_reason()
needs_nvrtc = pytest.mark.skipif(_NO_NVRTC is not None, reason=f"NVRTC unavailable: {_NO_NVRTC}")


def nvrtc_compile(source, name="k", name_expressions=()):
    image, lowered = _core._kernels.compile(source, name, [], list(name_expressions), 90)
    assert len(image) > 0
    return lowered


def gpu(a):
    return ember.asarray(np.asarray(a), device="cuda")


def host(x):
    return ember.asnumpy(x)


VEC_ADD = r"""
extern "C" __global__ void vec_add(const float* a, const float* b, float* c, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}
"""

TEMPLATED = r"""
template <class T>
__global__ void axpy(T* y, const T* x, T alpha, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] += alpha * x[i];
}
"""

ALL = [
    "bool",
    "int8",
    "uint8",
    "int16",
    "uint16",
    "int32",
    "uint32",
    "int64",
    "uint64",
    "float16",
    "bfloat16",
    "float32",
    "float64",
    "complex64",
    "complex128",
]


# ---- construction and argument checking (everywhere) ---------------------------------------


def test_construction_checks():
    with pytest.raises(ValueError, match="jitify"):
        ember.RawKernel(VEC_ADD, "vec_add", jitify=True)
    with pytest.raises(ValueError, match="backend"):
        ember.RawKernel(VEC_ADD, "vec_add", backend="nvcc")
    with pytest.raises(TypeError, match="options"):
        ember.RawKernel(VEC_ADD, "vec_add", options=(1,))
    with pytest.raises(TypeError, match="name"):
        ember.RawKernel(VEC_ADD, "")
    with pytest.raises(TypeError, match="exactly one"):
        ember.RawModule()
    with pytest.raises(TypeError, match="exactly one"):
        ember.RawModule(code=VEC_ADD, path="x.cubin")
    with pytest.raises(TypeError, match="name_expressions"):
        ember.RawModule(code=TEMPLATED, name_expressions="axpy<float>")
    with pytest.raises(ValueError, match="cooperative"):
        ember.RawKernel(VEC_ADD, "vec_add", enable_cooperative_groups=True)
    with pytest.raises(ValueError, match="translate_cucomplex"):
        ember.RawModule(code=VEC_ADD, translate_cucomplex=True)
    k = ember.RawKernel(VEC_ADD, "vec_add", options=("-DX=1",))
    assert k.name == "vec_add" and k.code == VEC_ADD and k.options == ("-DX=1",)


@no_cuda_only
def test_launch_without_cuda_says_a_device_is_required():
    k = ember.RawKernel(VEC_ADD, "vec_add")
    a = ember.ones(4, dtype="float32")
    with pytest.raises(ValueError, match="need a CUDA device"):
        k((1,), (32,), (a, a, a, np.int64(4)))
    with pytest.raises(ValueError, match="need a CUDA device"):
        _ = k.attributes
    with pytest.raises(ValueError, match="get_global.*need a CUDA device"):
        ember.RawModule(code=VEC_ADD).get_global("x")
    sq = ember.ElementwiseKernel("T x, T y", "T z", "z = (x - y) * (x - y)", "squared_diff")
    with pytest.raises(ValueError, match="CUDA"):
        sq(a, a)
    with pytest.raises(ValueError, match="CUDA"):
        sq(1.0, 2.0, size=3)
    l2 = ember.ReductionKernel("T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "l2norm")
    with pytest.raises(ValueError, match="CUDA"):
        l2(a)


def test_launch_argument_types_are_checked_first():
    k = ember.RawKernel(VEC_ADD, "vec_add")
    with pytest.raises(TypeError, match="argument 1 has the unsupported type str"):
        k((1,), (32,), (np.float32(1), "x"))
    with pytest.raises(TypeError, match="unsupported type list"):
        k((1,), (32,), ([1, 2],))
    with pytest.raises(TypeError, match="unsupported type"):
        k((1,), (32,), (np.str_("a"),))
    with pytest.raises(TypeError, match="unsupported type"):
        k((1,), (32,), (None,))
    with pytest.raises(TypeError, match="args must be a tuple"):
        k((1,), (32,), np.float32(1))
    with pytest.raises(TypeError, match="grid"):
        k("a", (32,), ())
    with pytest.raises(ValueError, match="grid"):
        k((0,), (32,), ())
    with pytest.raises(ValueError, match="block"):
        k((1,), (1, 2, 3, 4), ())
    with pytest.raises(OverflowError):
        k(1, 1, (2**70,))


def _sq():
    return ember.ElementwiseKernel("T x, T y", "T z", "z = (x - y) * (x - y)", "squared_diff")


def test_elementwise_parameter_parsing():
    with pytest.raises(ValueError, match="unknown type"):
        ember.ElementwiseKernel("floaty x", "T z", "z = x")
    with pytest.raises(ValueError, match="unknown type"):
        ember.ElementwiseKernel("float x", "T z", "z = x")  # CuPy: dtype names only
    with pytest.raises(ValueError, match="unknown keyword"):
        ember.ElementwiseKernel("const T x", "T z", "z = x")
    with pytest.raises(ValueError, match="bad parameter"):
        ember.ElementwiseKernel("T", "T z", "z = x")
    with pytest.raises(ValueError, match="used twice"):
        ember.ElementwiseKernel("T x", "T x", "x = x")
    with pytest.raises(ValueError, match="C identifier"):
        ember.ElementwiseKernel("T x", "T z", "z = x", name="not an id")
    k = ember.ElementwiseKernel("raw T x, float32 a", "T z", "z = x[i] * a", "f")
    assert [p.raw for p in k.in_params] == [True, False]
    assert k.nin == 2 and k.nout == 1


def test_placeholder_resolution():
    sq = _sq()
    x = ember.ones((2, 3), dtype="float32")
    assert sq._resolve(x, x) == {"T": "float32"}
    assert sq._resolve(x, 2) == {"T": "float32"}  # arrays decide before Python scalars
    assert sq._resolve(2.0, x) == {"T": "float32"}
    assert sq._resolve(np.float64(2), 1) == {"T": "float64"}
    assert sq._resolve(1, 2) == {"T": "int64"}
    assert sq._resolve(True, False) == {"T": "bool"}
    with pytest.raises(TypeError, match="placeholder T is float32"):
        sq._resolve(x, ember.ones(3, dtype="float64"))
    k = ember.ElementwiseKernel("T x, U y", "V z", "z = x + y", "k")
    with pytest.raises(TypeError, match="cannot determine the type V"):
        k._source(x, ember.ones(3, dtype="int32"))
    out = ember.empty((2, 3), dtype="float64")
    assert k._resolve(x, ember.ones(3, dtype="int32"), out) == {
        "T": "float32",
        "U": "int32",
        "V": "float64",
    }


def test_elementwise_argument_checks():
    sq = _sq()
    x = ember.ones(3, dtype="float32")
    with pytest.raises(TypeError, match="takes 2 arguments \\(or 3 with the outputs\\), got 1"):
        sq(x)
    with pytest.raises(TypeError, match="got 4"):
        sq(x, x, x, x)
    with pytest.raises(TypeError, match="NumPy array"):
        sq(np.ones(3, np.float32), x)
    with pytest.raises(TypeError, match="unsupported type str"):
        sq("a", x)
    with pytest.raises(TypeError, match="must be an ember array"):
        sq(x, x, 3.0)  # an output must be an array
    raw = ember.ElementwiseKernel("raw T x", "T z", "z = x[i]", "r")
    with pytest.raises(TypeError, match="must be an ember array"):
        raw(1.0, ember.empty(3, dtype="float32"))
    with pytest.raises(ValueError, match="cannot be broadcast"):
        sq._source(ember.ones(3), ember.ones(4))


def test_reduction_argument_checks():
    l2 = ember.ReductionKernel("T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "l2norm")
    x = ember.ones((2, 3), dtype="float32")
    with pytest.raises(TypeError, match="takes 1 argument"):
        l2._source(x, x, x)
    with pytest.raises(ember.AxisError):
        l2._source(x, axis=2)
    with pytest.raises(ValueError, match="duplicate axis"):
        l2._source(x, axis=(0, -2))
    with pytest.raises(ValueError, match="output parameter"):
        ember.ReductionKernel("T x", "", "x", "a + b", "y = a", "0")
    with pytest.raises(ValueError, match="expected \\(2,\\)"):
        l2._source(x, ember.empty(3, dtype="float32"), axis=1)
    mx = ember.ReductionKernel("T x", "T y", "x", "max(a, b)", "y = a", None, "mx")
    with pytest.raises(ValueError, match="without an identity"):
        mx._source(ember.ones((0, 3)), axis=0)


# ---- code generation, compiled by NVRTC (no GPU needed) ------------------------------------


def _collapse_oracle(shape, strides):
    """Size-1 dims dropped, neighbours contiguous in every operand merged, C order: the rule the
    generated kernels index with, written out plainly."""
    out_shape, out_strides = [], [[] for _ in strides]
    for d in range(len(shape)):
        if shape[d] == 1:
            continue
        pairs = list(zip(out_strides, strides, strict=True))
        if out_shape and all(o[-1] == s[d] * shape[d] for o, s in pairs):
            out_shape[-1] *= shape[d]
            for o, s in pairs:
                o[-1] = s[d]
            continue
        out_shape.append(shape[d])
        for o, s in pairs:
            o.append(s[d])
    return out_shape, out_strides


def test_dimension_collapsing_is_the_core_rule():
    # the generated kernels take their collapsed geometry from the C++ core's collapse_dims
    from ember._kernels._launch import _collapse

    rng = np.random.default_rng(0)
    for _ in range(2000):
        nd = int(rng.integers(0, 6))
        shape = [int(v) for v in rng.choice([0, 1, 2, 3, 4], nd)]
        strides = []
        for _ in range(int(rng.integers(0, 4))):
            kind = rng.integers(0, 3)
            if kind == 0:  # C-contiguous
                st, acc = [], 1
                for n in reversed(shape):
                    st.insert(0, acc)
                    acc *= n
            elif kind == 1:  # broadcast along random dims
                st = [int(v) for v in rng.choice([0, 1, 3, 12], nd)]
            else:
                st = [int(v) for v in rng.integers(-20, 20, nd)]
            strides.append(st)
        want = _collapse_oracle(shape, strides)
        assert tuple(_collapse(shape, strides)) == tuple(want), (shape, strides)
        assert _collapse(shape, strides, reduce_dims=False) == (shape, strides)


@needs_nvrtc
def test_raw_kernel_compiles_and_reports_errors():
    assert len(ember.RawKernel(VEC_ADD, "vec_add")._compile(90)) > 0
    with pytest.raises(ember.CompileError) as e:
        ember.RawKernel("__global__ void f() { undefined_thing(); }", "f")._compile(90)
    msg = str(e.value)
    assert "--- source ---" in msg and "    1  __global__" in msg
    assert "--- NVRTC log ---" in msg and "undefined_thing" in msg
    src = (
        "#include <cuda_fp16.h>\n"
        'extern "C" __global__ void h(__half* x) { x[0] = __float2half(1.f); }'
    )
    assert len(ember.RawKernel(src, "h")._compile(90)) > 0


@needs_nvrtc
def test_name_expressions_lowered_names():
    m = ember.RawModule(code=TEMPLATED, name_expressions=["axpy<float>", "axpy<double>"])
    image, lowered = m._compile(90)
    assert len(image) > 0
    assert set(lowered) == {"axpy<float>", "axpy<double>"}
    assert lowered["axpy<float>"] != lowered["axpy<double>"]
    assert lowered["axpy<float>"].startswith("_Z")


@needs_nvrtc
def test_raw_module_from_file(tmp_path):
    image, _ = ember.RawModule(code=VEC_ADD)._compile(90)
    p = tmp_path / "vec_add.cubin"
    p.write_bytes(image)
    m = ember.RawModule(path=str(p))
    k = m.get_function("vec_add")
    assert k.name == "vec_add"
    if _NO_CUDA is not None:
        a = ember.ones(2, dtype="float32")
        with pytest.raises(ValueError, match="need a CUDA device"):
            k(1, 32, (a, a, a, 2))
    with pytest.raises(ValueError, match="name_expressions"):
        ember.RawModule(path=str(p), name_expressions=["f<int>"])


def _arr(dtype, shape):
    return ember.zeros(shape, dtype=dtype)


@needs_nvrtc
@pytest.mark.parametrize("dtype", ALL)
def test_elementwise_source_compiles_for_every_dtype(dtype):
    k = ember.ElementwiseKernel("T x, T y", "T z", "z = x + y", "add_" + dtype)
    if dtype == "bool":
        k = ember.ElementwiseKernel("T x, T y", "T z", "z = x || y", "or_" + dtype)
    x = _arr(dtype, (3, 4))
    nvrtc_compile(k._source(x, x))  # contiguous
    nvrtc_compile(k._source(x[:, ::2], _arr(dtype, (2,))))  # strided and broadcast
    nvrtc_compile(k._source(x, ember.zeros((), dtype=dtype)))
    conv = ember.ElementwiseKernel("T x", "float64 y", "y = x", "to_f64_" + dtype)
    if not dtype.startswith("complex"):
        nvrtc_compile(conv._source(x))


@needs_nvrtc
def test_elementwise_source_variants_compile():
    x = _arr("float32", (4, 5))
    # CuPy's documented examples.
    sq = _sq()
    nvrtc_compile(sq._source(x, x))
    nvrtc_compile(sq._source(x, _arr("float32", (5,))))
    nvrtc_compile(sq._source(x, 5.0))
    rev = ember.ElementwiseKernel("raw T x, T y", "T z", "z = x[_ind.size() - i - 1] * y", "rev")
    nvrtc_compile(rev._source(_arr("float32", (6,)), _arr("float32", (6,))))
    nvrtc_compile(rev._source(x.T, x.T))  # raw non-contiguous
    # explicit types, a scalar parameter, an explicit output, loop_prep / after_loop, preamble
    k = ember.ElementwiseKernel(
        "float32 x, int64 n, raw int32 table",
        "float64 y",
        "y = helper(x) * n + table[i % table.size()] + acc",
        "explicit_types",
        preamble="__device__ float helper(float v) { return v * 2.0f; }",
        loop_prep="double acc = 0;",
        after_loop="(void)acc;",
    )
    nvrtc_compile(k._source(x, 3, _arr("int32", (7,)), _arr("float64", (4, 5))))
    nvrtc_compile(k._source(_arr("int16", (4, 5)), np.int64(2), _arr("int32", (2, 3))))
    nd = ember.ElementwiseKernel("T x", "T y", "y = x", "nd", reduce_dims=False)
    nvrtc_compile(nd._source(_arr("float64", (2, 3, 4))))
    half = ember.ElementwiseKernel("T x, T y", "T z", "z = x * y + x; z += y", "half_ops")
    nvrtc_compile(half._source(_arr("float16", (3,)), 2.0))
    nvrtc_compile(half._source(_arr("bfloat16", (3,)), 2.0))
    size_only = ember.ElementwiseKernel("raw T x", "raw T y", "y[i] = x[i] + 1", "raw_only")
    nvrtc_compile(size_only._source(_arr("float32", (5,)), _arr("float32", (5,)), size=5))


@needs_nvrtc
def test_reduction_source_variants_compile():
    l2 = ember.ReductionKernel("T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "l2norm")
    x = _arr("float32", (4, 5, 6))
    for axis in (None, 0, 1, (0, 2), -1, ()):
        for keepdims in (False, True):
            nvrtc_compile(l2._source(x, axis=axis, keepdims=keepdims))
    nvrtc_compile(l2._source(x[:, ::2, 1:], axis=1))
    nvrtc_compile(l2._source(_arr("float64", (1000,))))
    dot = ember.ReductionKernel(
        "T x, T y", "T z", "x * y", "a + b", "z = a", "0", "dot", reduce_type="float64"
    )
    nvrtc_compile(dot._source(_arr("float32", (3, 4)), _arr("float32", (4,)), axis=1))
    mx = ember.ReductionKernel("T x", "T y", "x", "max(a, b)", "y = a", None, "mx")
    nvrtc_compile(mx._source(_arr("int32", (8, 3)), axis=0))
    cnt = ember.ReductionKernel("T x", "int64 n", "x != 0", "a + b", "n = a", "0", "count")
    nvrtc_compile(cnt._source(_arr("float16", (8, 3)), axis=1))
    csum = ember.ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0", "csum")
    nvrtc_compile(csum._source(_arr("complex64", (8, 3)), axis=1))


# ---- on a CUDA device, against NumPy -------------------------------------------------------


@needs_cuda
def test_raw_kernel_vector_add():
    n = 1000
    a = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    b = np.arange(n, dtype=np.float32)
    x, y, z = gpu(a), gpu(b), ember.empty(n, dtype="float32", device="cuda")
    k = ember.RawKernel(VEC_ADD, "vec_add")
    k(((n + 127) // 128,), (128,), (x, y, z, np.int64(n)))
    np.testing.assert_array_equal(host(z), a + b)
    z2 = ember.zeros(n, dtype="float32", device="cuda")
    k((n + 127) // 128, 128, [x, y, z2, n])  # a Python int is a long long
    np.testing.assert_array_equal(host(z2), a + b)


@needs_cuda
def test_raw_kernel_scalar_types_and_structs():
    src = r"""
    struct Pair { int a; double b; };
    extern "C" __global__ void put(double* out, float f, long long i, bool t, signed char c,
                                   double d, Pair p, unsigned short u) {
        out[0] = f; out[1] = i; out[2] = t; out[3] = c; out[4] = d; out[5] = p.a; out[6] = p.b;
        out[7] = u;
    }
    """
    pair = np.array([(7, 2.5)], dtype=np.dtype([("a", "i4"), ("b", "f8")], align=True))[0]
    out = ember.zeros(8, dtype="float64", device="cuda")
    args = (out, np.float32(1.5), np.int64(-3), np.bool_(True), np.int8(-5), 4.25, pair)
    ember.RawKernel(src, "put")(1, 1, args + (np.uint16(9),))
    np.testing.assert_array_equal(host(out), [1.5, -3, 1, -5, 4.25, 7, 2.5, 9])


@needs_cuda
def test_raw_kernel_argument_count_and_size():
    k = ember.RawKernel(VEC_ADD, "vec_add")
    x = ember.zeros(4, dtype="float32", device="cuda")
    if k._function().num_params is None:
        pytest.skip("the driver cannot report kernel parameters (cuFuncGetParamInfo)")
    with pytest.raises(TypeError, match="takes 4 arguments, got 3"):
        k(1, 4, (x, x, x))
    with pytest.raises(TypeError, match="4 bytes"):
        k(1, 4, (x, x, x, np.float32(4)))
    with pytest.raises(ValueError, match="cpu"):
        k(1, 4, (ember.zeros(4, dtype="float32", device="cpu"), x, x, 4))


@needs_cuda
def test_templated_raw_module():
    m = ember.RawModule(code=TEMPLATED, name_expressions=["axpy<float>", "axpy<double>"])
    for name, dt in (("axpy<float>", np.float32), ("axpy<double>", np.float64)):
        y0, x0 = np.arange(10, dtype=dt), np.ones(10, dtype=dt)
        y, x = gpu(y0), gpu(x0)
        m.get_function(name)(1, 32, (y, x, dt(3), np.int32(10)))
        np.testing.assert_array_equal(host(y), y0 + 3 * x0)
    with pytest.raises(ValueError, match="no kernel named"):
        m.get_function("nothing")


GLOBALS = r"""
extern "C" __constant__ float coef[4];
extern "C" __device__ int counter;
template <typename T> __device__ T scale;
extern "C" __global__ void use(float* y, const float* x) {
    int i = threadIdx.x;
    if (i < 4) y[i] = coef[i] * x[i] * scale<float>;
    if (i == 0) atomicAdd(&counter, 1);
}
"""


@needs_nvrtc
def test_name_expressions_of_variable_templates_and_kernels_lower():
    """NVRTC lowers the *address* of a name: a variable template needs the "&" a kernel's name
    does without; both spellings are accepted and keyed as the user wrote them."""
    m = ember.RawModule(code=GLOBALS, name_expressions=["scale<float>"])
    assert m._compile(90)[1] == {"scale<float>": "_Z5scaleIfE"}
    m = ember.RawModule(code=GLOBALS, name_expressions=["&scale<float>"])
    assert m._compile(90)[1] == {"&scale<float>": "_Z5scaleIfE"}
    m = ember.RawModule(code=TEMPLATED, name_expressions=["axpy<float>", "axpy<double>"])
    low = m._compile(90)[1]
    assert low["axpy<float>"].startswith("_Z4axpyIfE") and low["axpy<double>"].startswith(
        "_Z4axpyIdE"
    )


@needs_cuda
def test_raw_module_get_global():
    m = ember.RawModule(code=GLOBALS, name_expressions=["scale<float>"])
    c = m.get_global("coef")
    assert c.size == 16 and c.device_id == ember.cuda.current_device() and int(c) == c.ptr
    c.copy_from_host(np.array([1, 2, 3, 4], dtype=np.float32))
    ember.asarray(m.get_global("scale<float>")).view(np.float32)[...] = 0.5
    n = m.get_global("counter")
    n.memset(0)
    x, y = gpu(np.arange(4, dtype=np.float32)), ember.zeros(4, dtype="float32", device="cuda")
    k = m.get_function("use")
    k(1, 32, (y, x))
    k(1, 32, (y, x))
    np.testing.assert_array_equal(host(y), np.float32([0, 1, 3, 6]))
    out = np.zeros(1, dtype=np.int32)
    n.copy_to_host(out)
    assert out[0] == 2
    np.testing.assert_array_equal(host(ember.asarray(n).view(np.int32)), [2])
    back = np.zeros(4, dtype=np.float32)
    c.copy_to_host(back)
    np.testing.assert_array_equal(back, [1, 2, 3, 4])
    d = m.get_global("coef")
    d.copy_from_device(gpu(np.full(4, 7, np.float32)), size=8)
    d.copy_to_host(back)
    np.testing.assert_array_equal(back, [7, 7, 3, 4])
    with pytest.raises(ValueError, match="no global named 'nothing'"):
        m.get_global("nothing")
    with pytest.raises(ValueError, match="size must be"):
        c.copy_from_host(np.zeros(4, np.float32), size=17)
    with pytest.raises(TypeError, match="name must be a str"):
        m.get_global(3)


@needs_cuda
def test_attributes_and_dynamic_shared_memory():
    src = r"""
    extern "C" __global__ void rev(float* x, int n) {
        extern __shared__ float s[];
        int t = threadIdx.x;
        if (t < n) s[t] = x[t];
        __syncthreads();
        if (t < n) x[t] = s[n - 1 - t];
    }
    """
    k = ember.RawKernel(src, "rev")
    attrs = k.attributes
    for key in (
        "num_regs",
        "shared_size_bytes",
        "max_threads_per_block",
        "local_size_bytes",
        "const_size_bytes",
        "ptx_version",
        "binary_version",
    ):
        assert isinstance(attrs[key], int)
    assert attrs["max_threads_per_block"] >= 256 and attrs["num_regs"] > 0
    assert k.num_regs == attrs["num_regs"]
    k.max_dynamic_shared_size_bytes = 64 * 1024
    assert k.max_dynamic_shared_size_bytes == 64 * 1024
    n = 200
    x0 = np.arange(n, dtype=np.float32)
    x = gpu(x0)
    k(1, 256, (x, np.int32(n)), shared_mem=n * 4)
    np.testing.assert_array_equal(host(x), x0[::-1])
    with pytest.raises(ValueError):
        k.max_dynamic_shared_size_bytes = -1


@needs_cuda
def test_raw_module_file_launch(tmp_path):
    arch = _core._kernels.device_arch(ember.cuda.current_device())
    image, _ = ember.RawModule(code=VEC_ADD)._compile(arch)
    p = tmp_path / "v.cubin"
    p.write_bytes(image)
    k = ember.RawModule(path=p).get_function("vec_add")
    a = np.arange(5, dtype=np.float32)
    z = ember.empty(5, dtype="float32", device="cuda")
    k(1, 32, (gpu(a), gpu(a), z, 5))
    np.testing.assert_array_equal(host(z), 2 * a)


@needs_cuda
def test_raw_kernel_on_a_stream():
    k = ember.RawKernel(VEC_ADD, "vec_add")
    s = ember.cuda.Stream()
    a = gpu(np.ones(64, np.float32))
    z = ember.zeros(64, dtype="float32", device="cuda")
    ember.cuda.synchronize()
    k(1, 64, (a, a, z, 64), stream=s)
    s.synchronize()
    np.testing.assert_array_equal(host(z), 2 * np.ones(64, np.float32))


CLASSIC = r"""
#define TILE 16
extern "C" __global__ void matmul_tiled(const float* A, const float* B, float* C, int M, int N,
                                        int K) {
    __shared__ float As[TILE][TILE], Bs[TILE][TILE];
    int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0;
    for (int t = 0; t < (K + TILE - 1) / TILE; ++t) {
        int ka = t * TILE + threadIdx.x, kb = t * TILE + threadIdx.y;
        As[threadIdx.y][threadIdx.x] = row < M && ka < K ? A[row * K + ka] : 0.f;
        Bs[threadIdx.y][threadIdx.x] = kb < K && col < N ? B[kb * N + col] : 0.f;
        __syncthreads();
        for (int k = 0; k < TILE; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        __syncthreads();
    }
    if (row < M && col < N) C[row * N + col] = acc;
}
extern "C" __global__ void block_sum(const float* x, float* out, int n) {
    __shared__ float s[256];
    int t = threadIdx.x, i = blockIdx.x * 256 + t;
    s[t] = i < n ? x[i] : 0.f;
    __syncthreads();
    for (int w = 128; w > 0; w >>= 1) {
        if (t < w) s[t] += s[t + w];
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = s[0];
}
extern "C" __global__ void histogram(const unsigned char* x, unsigned int* bins, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)
        atomicAdd(&bins[x[i]], 1u);
}
extern "C" __global__ void transpose(const float* in, float* out, int rows, int cols) {
    __shared__ float tile[32][33];
    int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
    if (x < cols && y < rows) tile[threadIdx.y][threadIdx.x] = in[y * cols + x];
    __syncthreads();
    x = blockIdx.y * 32 + threadIdx.x;
    y = blockIdx.x * 32 + threadIdx.y;
    if (x < rows && y < cols) out[y * rows + x] = tile[threadIdx.x][threadIdx.y];
}
"""


@needs_cuda
def test_classic_kernels():
    rng = np.random.default_rng(1)
    m = ember.RawModule(code=CLASSIC)
    M, N, K = 37, 29, 45
    a = rng.standard_normal((M, K)).astype(np.float32)
    b = rng.standard_normal((K, N)).astype(np.float32)
    c = ember.empty((M, N), dtype="float32", device="cuda")
    grid = ((N + 15) // 16, (M + 15) // 16)
    m.get_function("matmul_tiled")(grid, (16, 16), (gpu(a), gpu(b), c, M, N, K))
    np.testing.assert_allclose(host(c), a @ b, rtol=1e-4, atol=1e-4)

    x = rng.standard_normal(1000).astype(np.float32)
    parts = ember.empty(4, dtype="float32", device="cuda")
    m.get_function("block_sum")(4, 256, (gpu(x), parts, 1000))
    np.testing.assert_allclose(host(parts).sum(), x.sum(), rtol=1e-4)

    v = rng.integers(0, 256, 5000).astype(np.uint8)
    bins = ember.zeros(256, dtype="uint32", device="cuda")
    m.get_function("histogram")(8, 128, (gpu(v), bins, v.size))
    np.testing.assert_array_equal(host(bins), np.bincount(v, minlength=256))

    t = rng.standard_normal((50, 70)).astype(np.float32)
    out = ember.empty((70, 50), dtype="float32", device="cuda")
    m.get_function("transpose")((3, 2), (32, 32), (gpu(t), out, 50, 70))
    np.testing.assert_array_equal(host(out), t.T)


@needs_cuda
def test_elementwise_squared_diff_and_broadcasting():
    rng = np.random.default_rng(2)
    a = rng.standard_normal((5, 6)).astype(np.float32)
    b = rng.standard_normal(6).astype(np.float32)
    sq = _sq()
    np.testing.assert_allclose(host(sq(gpu(a), gpu(a[::-1]))), (a - a[::-1]) ** 2, rtol=1e-6)
    np.testing.assert_allclose(host(sq(gpu(a), gpu(b))), (a - b) ** 2, rtol=1e-6)
    np.testing.assert_allclose(host(sq(gpu(a), 5)), (a - 5) ** 2, rtol=1e-6)
    got = sq(gpu(a), gpu(b))
    assert got.dtype == ember.float32 and got.shape == (5, 6)
    # explicit output
    z = ember.empty((5, 6), dtype="float32", device="cuda")
    assert sq(gpu(a), gpu(b), z) is z
    np.testing.assert_allclose(host(z), (a - b) ** 2, rtol=1e-6)
    # non-contiguous and 0-d inputs
    big = rng.standard_normal((8, 12)).astype(np.float32)
    g = gpu(big)
    np.testing.assert_allclose(
        host(sq(g[::2, 1::3], g[1::2, ::3])), (big[::2, 1::3] - big[1::2, ::3]) ** 2, rtol=1e-6
    )
    np.testing.assert_allclose(host(sq(g.T, gpu(np.float32(1.5)))), (big.T - 1.5) ** 2, rtol=1e-6)
    # empty
    assert sq(gpu(np.zeros((0, 3), np.float32)), 1.0).shape == (0, 3)
    with pytest.raises(ValueError, match="broadcast"):
        sq(gpu(a), gpu(np.ones(4, np.float32)))


@needs_cuda
@pytest.mark.parametrize("dtype", ["int8", "uint16", "int32", "int64", "float16", "float64"])
def test_elementwise_dtypes(dtype):
    a = (np.arange(12) % 5).astype(dtype).reshape(3, 4)
    k = ember.ElementwiseKernel("T x, T y", "T z", "z = x * y + x", "muladd")
    got = host(k(gpu(a), gpu(a[:, ::-1])))
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got, (a * a[:, ::-1] + a).astype(dtype))


@needs_cuda
def test_elementwise_raw_and_index():
    x0 = np.arange(10, dtype=np.float32)
    y0 = np.full(10, 2, dtype=np.float32)
    rev = ember.ElementwiseKernel("raw T x, T y", "T z", "z = x[_ind.size() - i - 1] * y", "rev")
    np.testing.assert_array_equal(host(rev(gpu(x0), gpu(y0))), x0[::-1] * 2)
    m = np.arange(12, dtype=np.float64).reshape(3, 4)
    flat = ember.ElementwiseKernel("raw T x", "T z", "z = x[i] + i", "flat_index")
    got = flat(gpu(m).T, ember.empty(12, dtype="float64", device="cuda"))
    np.testing.assert_array_equal(host(got), m.T.ravel() + np.arange(12))
    fill = ember.ElementwiseKernel("T v", "raw T y", "y[i] = v * i", "fill_raw")
    y = ember.zeros(6, dtype="int32", device="cuda")
    fill(np.int32(3), y, size=6)
    np.testing.assert_array_equal(host(y), 3 * np.arange(6))


@needs_cuda
def test_elementwise_explicit_types_and_options():
    a = np.arange(6, dtype=np.int16)
    k = ember.ElementwiseKernel(
        "float32 x, float64 s", "float64 y, T w", "y = x * s; w = x", "two", return_tuple=True
    )
    w = ember.empty(6, dtype="int32", device="cuda")
    y, w2 = k(gpu(a), 0.5, ember.empty(6, dtype="float64", device="cuda"), w)
    np.testing.assert_array_equal(host(y), a * 0.5)
    np.testing.assert_array_equal(host(w2), a)
    nr = ember.ElementwiseKernel("T x", "T y", "y = x", "copy_nr", no_return=True)
    out = ember.empty(6, dtype="int16", device="cuda")
    assert nr(gpu(a), out) is None
    np.testing.assert_array_equal(host(out), a)


@needs_cuda
def test_reduction_l2norm():
    x0 = np.arange(10, dtype=np.float32).reshape(2, 5)
    l2 = ember.ReductionKernel("T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "l2norm")
    x = gpu(x0)
    np.testing.assert_allclose(host(l2(x, axis=1)), np.sqrt((x0**2).sum(axis=1)), rtol=1e-6)
    np.testing.assert_allclose(host(l2(x)), np.sqrt((x0**2).sum()), rtol=1e-6)
    got = l2(x, axis=0, keepdims=True)
    assert got.shape == (1, 5)
    np.testing.assert_allclose(host(got), np.sqrt((x0**2).sum(axis=0, keepdims=True)), rtol=1e-6)
    rng = np.random.default_rng(3)
    big = rng.standard_normal((7, 300, 9)).astype(np.float64)
    g = gpu(big)
    for axis in (1, (0, 2), None, -1):
        np.testing.assert_allclose(
            host(l2(g, axis=axis)), np.sqrt((big**2).sum(axis=axis)), rtol=1e-12
        )
    np.testing.assert_allclose(
        host(l2(g[:, ::3, 1:], axis=1)), np.sqrt((big[:, ::3, 1:] ** 2).sum(axis=1)), rtol=1e-12
    )
    # deterministic: the same bits every run
    r1, r2 = host(l2(g, axis=1)), host(l2(g, axis=1))
    assert np.array_equal(r1, r2)
    # empty reduction gives post_map(identity)
    np.testing.assert_array_equal(host(l2(gpu(np.zeros((3, 0), np.float32)), axis=1)), np.zeros(3))


@needs_cuda
def test_reduction_variants():
    rng = np.random.default_rng(4)
    a = rng.standard_normal((6, 40)).astype(np.float32)
    b = rng.standard_normal(40).astype(np.float32)
    dot = ember.ReductionKernel(
        "T x, T y", "float64 z", "x * y", "a + b", "z = a", "0", "dot", reduce_type="float64"
    )
    np.testing.assert_allclose(
        host(dot(gpu(a), gpu(b), axis=1)), (a * b).astype(np.float64).sum(axis=1), rtol=1e-9
    )
    mx = ember.ReductionKernel("T x", "T y", "x", "max(a, b)", "y = a", None, "mx")
    ints = rng.integers(-100, 100, (5, 33)).astype(np.int32)
    np.testing.assert_array_equal(host(mx(gpu(ints), axis=1)), ints.max(axis=1))
    np.testing.assert_array_equal(host(mx(gpu(ints), axis=0)), ints.max(axis=0))
    out = ember.empty(5, dtype="int32", device="cuda")
    assert mx(gpu(ints), axis=1, out=out) is out
    np.testing.assert_array_equal(host(out), ints.max(axis=1))


def _ptx_param_sizes(source, name):
    ptx = _core._kernels.compile_ptx(source, name, 90)
    m = re.search(r"\.entry\s+" + name + r"\s*\((.*?)\)", ptx, re.S)
    assert m, ptx[:2000]
    sizes = []
    for decl in m.group(1).split(","):
        d = re.search(r"\.param\s+(?:\.align\s+\d+\s+)?\.[a-z]+(\d+)\s+\w+(?:\[(\d+)\])?", decl)
        sizes.append(int(d.group(1)) // 8 * int(d.group(2) or 1))
    return sizes


@needs_nvrtc
def test_generated_arguments_match_kernel_parameters():
    # What the launch passes (sizes of the packed arguments) against the compiled kernel's
    # parameters (read from its PTX): checks the by-value structs without a GPU.
    x = _arr("float32", (4, 6))
    cases = [
        (_sq(), (x, x)),
        (_sq(), (x[:, ::2], _arr("float32", (3,)))),
        (_sq(), (x.T, 2.5)),
        (
            ember.ElementwiseKernel(
                "T x, raw U w, float32 a, bool b, int8 c", "T z", "z = x + w[i] * a + b + c", "mix"
            ),
            (_arr("float16", (3, 4))[:, ::2], _arr("int64", (3, 4)).T, 2.0, True, 3),
        ),
        (
            ember.ElementwiseKernel("T x, T s", "T z", "z = x * s", "scale_b"),
            (_arr("bfloat16", (5,)), 2.0),
        ),
        (
            ember.ElementwiseKernel("T x, T s", "T z", "z = x * s", "scale_c"),
            (_arr("complex128", (2, 3))[:, 1:], 1j),
        ),
        (
            ember.ElementwiseKernel("T x, float16 s", "T z", "z = x * s", "scale_h"),
            (_arr("float16", (7,)), 0.5),
        ),
    ]
    for k, args in cases:
        src, kargs = k._launch_args(*args)
        assert _core._kernels.arg_sizes(list(kargs)) == _ptx_param_sizes(src, k.name), k.name
    size_only = ember.ElementwiseKernel("raw T x", "raw T y", "y[i] = x[i] + 1", "raw_only")
    src, kargs = size_only._launch_args(_arr("float32", (5,)), _arr("float32", (5,)), size=5)
    assert _core._kernels.arg_sizes(list(kargs)) == _ptx_param_sizes(src, "raw_only")
    l2 = ember.ReductionKernel("T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "l2norm")
    dot = ember.ReductionKernel(
        "T x, T y, raw T w, float64 s", "T z", "x * y * s", "a + b", "z = a + w[0]", "0", "dotw"
    )
    y = _arr("float64", (4, 5, 6))
    for k, args, kw in [
        (l2, (y,), {"axis": 1}),
        (l2, (y,), {}),
        (l2, (y[:, ::2],), {"axis": (0, 2), "keepdims": True}),
        (l2, (y,), {"axis": ()}),
        (dot, (y, _arr("float64", (6,)), _arr("float64", (3,)), 2), {"axis": -1}),
    ]:
        src, kargs = k._launch_args(*args, **kw)
        assert _core._kernels.arg_sizes(list(kargs)) == _ptx_param_sizes(src, k.name), k.name


@needs_nvrtc
def test_user_modules_share_the_kernel_cache(tmp_path):
    import os

    src = f'extern "C" __global__ void cached() {{}}  // {tmp_path}'  # new to every cache
    d = ember.cuda.kernel_cache_dir()
    before = set(os.listdir(d)) if d and os.path.isdir(d) else set()
    stats = ember.cuda.kernel_cache_stats()
    image1, _ = _core._kernels.compile(src, "cached", [], [], 90)
    image2, _ = _core._kernels.compile(src, "cached", [], [], 90)  # the memory cache's
    assert image1 == image2
    if d:  # one new entry in ember's on-disk kernel cache
        assert len(set(os.listdir(d)) - before) >= 1
    # compiles for an explicit architecture (no device) stay out of the process counters
    assert ember.cuda.kernel_cache_stats()["compiles"] == stats["compiles"]
