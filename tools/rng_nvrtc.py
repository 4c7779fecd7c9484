"""src/ops/random.hpp through NVRTC, without building ember: the device prelude (from
src/backend/cuda/codegen.cpp), src/ops/scalar.hpp and src/ops/random.hpp, with the kernel loop of
codegen.cpp's random kernels, compiled as the CUDA backend compiles them
(-std=c++17 --fmad=false, sm_90 unless --arch).

    python3 tools/rng_nvrtc.py            # compile only (libnvrtc; no GPU needed)
    python3 tools/rng_nvrtc.py --bench    # on a GPU machine with CuPy: time each draw of 2^28
                                          # values against a plain store, in % of its bandwidth,
                                          # and check the normals' queued GPU loop against one
                                          # block per thread (bit for bit)
    python3 tools/rng_nvrtc.py --bench --variants   # also the normals without their slow path
"""

from __future__ import annotations

import argparse
import ctypes
import ctypes.util
import os
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent

# rng::Dist values (src/ops/random.hpp)
DIST = {"uniform": 1, "normal": 2, "exponential": 3, "gamma": 5}

KERNELS = r"""
// The loop of codegen.cpp's random kernels, with Params built from scalars.
template <class T, class C, int V>
__device__ void packed(T* __restrict__ out, ember::rng::Params p, unsigned long long n) {
    using namespace ember::dev;
    if (p.dist == ember::rng::Dist::normal) {
        ember::rng::normal_fill<T, C, V>(out, p, n);
        return;
    }
    const unsigned long long blocks = (n + V - 1) / V;
    const unsigned long long step = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long k = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
         k < blocks; k += step) {
        C c[V];
        ember::rng::packed_real(p, k, c);
        vec_t<T, V> y;
#pragma unroll
        for (int j = 0; j < V; ++j) y.v[j] = convert<T>(c[j]);
        if ((k + 1) * V <= n) {
            reinterpret_cast<vec_t<T, V>*>(out)[k] = y;
        } else {
#pragma unroll
            for (int j = 0; j < V; ++j)
                if (k * V + j < n) out[k * V + j] = y.v[j];
        }
    }
}
__device__ ember::rng::Params params(int dist, unsigned k0, unsigned k1, double a, double b) {
    ember::rng::Params p;
    p.dist = ember::rng::Dist(dist);
    p.key = {k0, k1};
    p.pos = 12345;
    p.a = a;
    p.b = b;
    return p;
}
#define ARGS unsigned long long n, int dist, unsigned k0, unsigned k1, double a, double b
extern "C" __global__ void draw_f32(float* out, ARGS) {
    packed<float, float, 4>(out, params(dist, k0, k1, a, b), n);
}
extern "C" __global__ void draw_f64(double* out, ARGS) {
    packed<double, double, 2>(out, params(dist, k0, k1, a, b), n);
}
extern "C" __global__ void draw_f16(ember::float16* out, ARGS) {
    packed<ember::float16, float, 4>(out, params(dist, k0, k1, a, b), n);
}
extern "C" __global__ void draw_streamed_f32(float* out, ARGS) {
    const ember::rng::Params p = params(dist, k0, k1, a, b);
    const unsigned long long step = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;
         i += step)
        out[i] = ember::dev::convert<float>(ember::rng::streamed_real(p, i));
}
extern "C" __global__ void store_f32(float* out, ARGS) {
    using namespace ember::dev;
    const unsigned long long step = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long k = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
         k < n / 4; k += step) {
        const float f = float(k);
        reinterpret_cast<vec_t<float, 4>*>(out)[k] = vec_t<float, 4>{{f, f, f, f}};
    }
}
"""


def source() -> str:
    """One translation unit: prelude, scalar.hpp, random.hpp, the kernels."""
    cg = (ROOT / "src/backend/cuda/codegen.cpp").read_text()
    m = re.search(r'R"EMBER_PRELUDE\((.*?)\)EMBER_PRELUDE"', cg, re.S)
    if not m:
        raise SystemExit("no device prelude in codegen.cpp")
    dims = re.search(
        r"max_strided_dims\s*=\s*(\d+)", (ROOT / "src/backend/cuda/codegen.hpp").read_text()
    )
    ops = re.search(
        r"max_map_operands\s*=\s*(\d+)", (ROOT / "src/backend/cuda/codegen.hpp").read_text()
    )
    prelude = m.group(1).replace("@MAX_DIMS@", dims.group(1) if dims else "8")
    prelude = prelude.replace("@MAX_OPS@", ops.group(1) if ops else "8")
    parts = [prelude]
    for h in ("src/ops/scalar.hpp", "src/ops/random.hpp"):
        parts.append((ROOT / h).read_text())
    text = "\n".join(parts) + KERNELS
    return "\n".join(ln for ln in text.splitlines() if ln.strip() != "#pragma once") + "\n"


OPTIONS = ["-std=c++17", "--fmad=false"]


def find_nvrtc() -> ctypes.CDLL:
    names = [os.environ.get("EMBER_NVRTC", "")]
    names += [f"/usr/local/cuda/lib64/libnvrtc.so{s}" for s in ("", ".13", ".12")]
    names += [ctypes.util.find_library("nvrtc") or ""]
    for n in names:
        if n:
            try:
                return ctypes.CDLL(n)
            except OSError:
                pass
    raise SystemExit("libnvrtc not found (set EMBER_NVRTC)")


def compile_cubin(src: str, arch: int) -> int:
    lib = find_nvrtc()
    prog = ctypes.c_void_p()
    rc = lib.nvrtcCreateProgram(ctypes.byref(prog), src.encode(), b"rng.cu", 0, None, None)
    assert rc == 0, rc
    opts = [f"--gpu-architecture=sm_{arch}".encode()] + [o.encode() for o in OPTIONS]
    arr = (ctypes.c_char_p * len(opts))(*opts)
    rc = lib.nvrtcCompileProgram(prog, len(opts), arr)
    size = ctypes.c_size_t()
    lib.nvrtcGetProgramLogSize(prog, ctypes.byref(size))
    log = ctypes.create_string_buffer(size.value)
    lib.nvrtcGetProgramLog(prog, log)
    text = log.value.decode(errors="replace").strip()
    if rc != 0:
        numbered = "\n".join(f"{i + 1:5}  {ln}" for i, ln in enumerate(src.splitlines()))
        print(numbered[-2000:] if os.environ.get("EMBER_DUMP_SOURCE") else "", file=sys.stderr)
        raise SystemExit(f"NVRTC failed ({rc}):\n{text}")
    if text:
        print(text)
    lib.nvrtcGetCUBINSize(prog, ctypes.byref(size))
    return size.value


# Experiments on the normal kernel, made by editing the source text (--variants).
def variants(src: str) -> dict[str, str]:
    v = {"base": src}
    loop = "while (__any_sync(0xffffffffu, miss != 0)) {"
    if loop in src:  # the fast path alone: a bound on what the slow path leaves
        v["no slow path (wrong numbers)"] = src.replace(loop, "while (false) {")
    # Two Philox blocks per lane and step (src/ops/random.hpp has four): the queue's per-step cost
    # over 8 values instead of 16.
    u2 = src.replace("constexpr int U = 4;", "constexpr int U = 2;")
    if u2 != src:
        v["U = 2"] = u2
    # The float32 uniform part without an integer-to-float conversion (a quarter-rate pipe):
    # 1 + m / 2^23 from the bits, minus 1, times the width scaled by 2^23 (the same product).
    conv = "C x = C(w >> shift) * l.w;"
    bits = (
        "C x; if constexpr (sizeof(C) == 4) x = (__uint_as_float(0x3f800000u | unsigned(w >> 9))"
        " - 1.0f) * l.w; else x = C(w >> shift) * l.w;"
    )
    scale = "if (i & 256u) l.w = -l.w;"
    scaled = scale + " if constexpr (sizeof(C) == 4) l.w *= 8388608.0f;"
    if conv in src and scale in src:
        v["no I2F"] = src.replace(conv, bits).replace(scale, scaled)
    return v


def bench(src: str, log2n: int, all_variants: bool, only: str | None = None) -> None:
    import cupy as cp

    n = 1 << log2n
    out = cp.empty(n, dtype=cp.float64)  # room for every width
    sms = cp.cuda.Device().attributes["MultiProcessorCount"]
    cases = [
        ("store_f32", "uniform", 4, "f32 plain store"),
        ("draw_f32", "uniform", 4, "f32 uniform"),
        ("draw_f32", "normal", 4, "f32 normal"),
        ("draw_f32", "normal", 4, "f32 normal(1, 2)", 1.0, 2.0),
        ("draw_f16", "normal", 2, "f16 normal"),
        ("draw_f64", "uniform", 8, "f64 uniform"),
        ("draw_f64", "normal", 8, "f64 normal"),
        ("draw_f32", "exponential", 4, "f32 exponential"),
        ("draw_streamed_f32", "gamma", 4, "f32 gamma(2)", 2.0),
    ]
    ref = None

    def args(count, dist, a=0.0, b=1.0):
        return (
            out,
            cp.uint64(count),
            cp.int32(DIST[dist]),
            cp.uint32(7),
            cp.uint32(9),
            cp.float64(a),
            cp.float64(b),
        )

    def run(mod, name, dist, itemsize, label, a=0.0, b=1.0, shapes=((256, 8), (256, 4))):
        nonlocal ref
        k = mod.get_function(name)
        for threads, per_sm in shapes:
            grid = sms * per_sm
            start, stop = cp.cuda.Event(), cp.cuda.Event()
            k((grid,), (threads,), args(n, dist, a, b))
            best = 1e30
            for _ in range(10):
                start.record()
                k((grid,), (threads,), args(n, dist, a, b))
                stop.record()
                stop.synchronize()
                best = min(best, cp.cuda.get_elapsed_time(start, stop))
            gbs = n * itemsize / best / 1e6
            ref = ref or gbs
            print(
                f"{label:34} grid {grid:5} x {threads:3}: {best:7.3f} ms {gbs:6.0f} GB/s"
                f" {100 * gbs / ref:5.1f}% of the f32 store",
                flush=True,
            )

    def check(mod):
        # the queued path (256 threads) against one block per thread (512 threads), a cut tail
        for name, view, m in (
            ("draw_f32", cp.float32, n - 3),
            ("draw_f64", cp.float64, n // 2 - 1),
            ("draw_f16", cp.float16, n - 1),
        ):
            k = mod.get_function(name)
            k((sms * 8,), (256,), args(m, "normal", 0.5, 3.0))
            x = out.view(view)[:m].copy()
            k((sms * 2,), (512,), args(m, "normal", 0.5, 3.0))
            y = out.view(view)[:m]
            z = (x.astype(cp.float64) - 0.5) / 3.0
            mean, var = float(z.mean()), float(z.var())
            tail = float((cp.abs(z) > 4).mean())
            print(
                f"{name} normal: queued == direct: {bool((x == y).all())}; mean {mean:.6f}"
                f" var {var:.6f} P(|z|>4) {tail:.4e} (6.334e-05)",
                flush=True,
            )

    def normals(mod):  # f32 and f64 normals of a cut length, for comparing variants
        got = []
        for name, view, m in (
            ("draw_f32", cp.float32, n - 3),
            ("draw_f64", cp.float64, n // 2 - 1),
        ):
            mod.get_function(name)((sms * 8,), (256,), args(m, "normal", 0.5, 3.0))
            got.append(out.view(view)[:m].copy())
        return got

    vs = variants(src) if all_variants else {"base": src}
    base = None
    for vname, text in vs.items():
        mod = cp.RawModule(code=text, options=tuple(OPTIONS))
        if vname == "base":
            for c in cases:
                if only is None or only in c[3]:
                    run(mod, *c)
            check(mod)
            base = normals(mod)
        else:
            run(mod, "draw_f32", "normal", 4, "f32 normal, " + vname)
            same = [bool((x == y).all()) for x, y in zip(normals(mod), base, strict=True)]
            print(f"  {vname}: f32, f64 normals equal to base's: {same}", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arch", type=int, default=90)
    ap.add_argument("--bench", action="store_true")
    ap.add_argument("--log2n", type=int, default=28)
    ap.add_argument("--variants", action="store_true", help="with --bench: also the experiments")
    ap.add_argument("--only", help="with --bench: only the base cases whose label holds this")
    a = ap.parse_args()
    src = source()
    if a.bench:
        bench(src, a.log2n, a.variants, a.only)
    else:
        print(f"compiled for sm_{a.arch}: {compile_cubin(src, a.arch)} bytes of cubin")
    return 0


if __name__ == "__main__":
    sys.exit(main())
