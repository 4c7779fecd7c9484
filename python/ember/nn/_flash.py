"""The fused attention kernel behind ``F.scaled_dot_product_attention`` on the GPU (float16 and
bfloat16, head dimension 64 or 128, no explicit mask, no dropout): FlashAttention-2's algorithm
(Dao, 2023) written for ember: one block of 8 warps per 128 query rows of one (batch, head),
keys and values streamed through shared memory in tiles (cp.async, double buffered), Q K^T and
P V on the tensor cores (mma.sync m16n8k16, fragments loaded with ldmatrix from XOR-swizzled
tiles), the softmax online in registers (base-2 exponentials with the scale folded in), so the
L x S score matrix is never stored. It also returns each row's log-sum-exp (float32), which the
backward uses to recompute the probabilities. Compiled by NVRTC at first use per (dtype, head
dimension) and cached like every generated kernel (ember.cuda.kernel_cache_dir).

The backward is composed of ember ops (batched matmuls and elementwise ops over the recomputed
probabilities, in float32), as PyTorch's math backend computes it.
"""

from __future__ import annotations

import math

import numpy as np

from .. import _core

_SOURCE = r"""
// ember's fused attention forward (FlashAttention-2's algorithm): python/ember/nn/_flash.py
typedef unsigned short u16;
typedef unsigned int u32;

#define BM 128
#define NT 256
#define CH (HD / 8)
#define TILE (BN * HD)
#define BUF (2 * TILE)
#define QSZ (BM * HD)
#define SMEM (BUF + (QSZ > BUF ? QSZ : BUF))

#define NEG_INF __int_as_float(0xff800000)

__device__ __forceinline__ u32 saddr(const void* p) {
    u32 a;
    asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(a) : "l"(p));
    return a;
}
__device__ __forceinline__ void cp16(void* dst, const void* src, bool ok) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(saddr(dst)), "l"(src),
                 "r"(ok ? 16 : 0));
}
__device__ __forceinline__ void cp_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N> __device__ __forceinline__ void cp_wait() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}
__device__ __forceinline__ void ldm4(u32& a, u32& b, u32& c, u32& d, const void* p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(a), "=r"(b), "=r"(c), "=r"(d) : "r"(saddr(p)));
}
__device__ __forceinline__ void ldm4t(u32& a, u32& b, u32& c, u32& d, const void* p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(a), "=r"(b), "=r"(c), "=r"(d) : "r"(saddr(p)));
}
__device__ __forceinline__ void mma(float* c, const u32* a, u32 b0, u32 b1) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32." DT "." DT ".f32 "
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
// (lo, hi) as two 16-bit values, lo in the low half
__device__ __forceinline__ u32 pack(float lo, float hi) {
    u32 d;
    asm("cvt.rn." DT "x2.f32 %0, %1, %2;\n" : "=r"(d) : "f"(hi), "f"(lo));
    return d;
}
__device__ __forceinline__ float ex2(float x) {
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
    return y;
}
// element offset of 16-byte chunk `ch` of row `r` in a swizzled tile of rows of HD elements
__device__ __forceinline__ int sw(int r, int ch) { return r * HD + ((ch ^ (r & 7)) << 3); }

extern "C" __global__ void __launch_bounds__(NT) ember_flash_fwd(
    const u16* __restrict__ q, const u16* __restrict__ k, const u16* __restrict__ v,
    u16* __restrict__ o, float* __restrict__ lse, long long qsb, long long qsl, long long ksb,
    long long ksl, long long vsb, long long vsl, long long osb, long long osl, int L, int S,
    float scale_log2, int causal) {
    __shared__ __align__(128) u16 sm[SMEM];
    const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
    const int mb = gridDim.x - 1 - blockIdx.x;  // the longest (causal) row blocks first
    const long long bh = blockIdx.y;
    const int m0 = mb * BM;
    q += bh * qsb;
    k += bh * ksb;
    v += bh * vsb;
    o += bh * osb;
    u16* sq = sm + BUF;  // Q's tile, later the second key/value buffer
    for (int c = tid; c < BM * CH; c += NT) {
        const int r = c / CH, ch = c % CH;
        const bool ok = m0 + r < L;
        cp16(sq + sw(r, ch), q + (long long)(ok ? m0 + r : 0) * qsl + ch * 8, ok);
    }
    const int kend = causal ? min(S, m0 + BM) : S;
    const int nblocks = (kend + BN - 1) / BN;
    auto load_kv = [&](int nb, u16* buf) {
        const int n0 = nb * BN;
        for (int c = tid; c < TILE / 8; c += NT) {
            const int r = c / CH, ch = c % CH;
            const bool ok = n0 + r < S;
            const long long rr = ok ? n0 + r : 0;
            cp16(buf + sw(r, ch), k + rr * ksl + ch * 8, ok);
            cp16(buf + TILE + sw(r, ch), v + rr * vsl + ch * 8, ok);
        }
    };
    load_kv(0, sm);
    cp_commit();
    cp_wait<0>();
    __syncthreads();
    u32 qf[HD / 16][4];
#pragma unroll
    for (int kk = 0; kk < HD / 16; ++kk)
        ldm4(qf[kk][0], qf[kk][1], qf[kk][2], qf[kk][3],
             sq + sw(warp * 16 + (lane & 15), 2 * kk + (lane >> 4)));
    __syncthreads();  // Q's tile is free: it becomes the second buffer

    float acc[HD / 8][4];
#pragma unroll
    for (int j = 0; j < HD / 8; ++j) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.f;
    float mrow[2] = {NEG_INF, NEG_INF}, lrow[2] = {0.f, 0.f};
    const int g = lane >> 2, t = lane & 3;
    const int row0 = m0 + warp * 16 + g;  // this thread's rows: row0 and row0 + 8
    const int mi = lane >> 3, r8 = lane & 7;
    for (int nb = 0; nb < nblocks; ++nb) {
        const u16* sk = sm + (nb & 1) * BUF;
        const u16* sv = sk + TILE;
        if (nb + 1 < nblocks) load_kv(nb + 1, sm + ((nb + 1) & 1) * BUF);
        cp_commit();
        cp_wait<1>();
        __syncthreads();
        float s[BN / 8][4];
#pragma unroll
        for (int j = 0; j < BN / 8; ++j) s[j][0] = s[j][1] = s[j][2] = s[j][3] = 0.f;
#pragma unroll
        for (int kk = 0; kk < HD / 16; ++kk) {
#pragma unroll
            for (int j = 0; j < BN / 8; j += 2) {
                u32 b0, b1, b2, b3;
                ldm4(b0, b1, b2, b3, sk + sw(8 * (j + (mi >> 1)) + r8, 2 * kk + (mi & 1)));
                mma(s[j], qf[kk], b0, b1);
                mma(s[j + 1], qf[kk], b2, b3);
            }
        }
        const int n0 = nb * BN;
        const bool edge = n0 + BN > S || (causal && n0 + BN - 1 > m0 + warp * 16);
#pragma unroll
        for (int j = 0; j < BN / 8; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                float x = s[j][e] * scale_log2;
                if (edge) {
                    const int col = n0 + 8 * j + 2 * t + (e & 1), row = row0 + ((e >> 1) << 3);
                    if (col >= S || (causal && col > row)) x = NEG_INF;
                }
                s[j][e] = x;
            }
#pragma unroll
        for (int i = 0; i < 2; ++i) {
            float mx = mrow[i];
#pragma unroll
            for (int j = 0; j < BN / 8; ++j) mx = fmaxf(mx, fmaxf(s[j][2 * i], s[j][2 * i + 1]));
            mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
            mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
            const float mu = mx == NEG_INF ? 0.f : mx;
            const float alpha = ex2(mrow[i] - mu);
            mrow[i] = mx;
            float sum = 0.f;
#pragma unroll
            for (int j = 0; j < BN / 8; ++j) {
                s[j][2 * i] = ex2(s[j][2 * i] - mu);
                s[j][2 * i + 1] = ex2(s[j][2 * i + 1] - mu);
                sum += s[j][2 * i] + s[j][2 * i + 1];
            }
            lrow[i] = lrow[i] * alpha + sum;
#pragma unroll
            for (int j = 0; j < HD / 8; ++j) {
                acc[j][2 * i] *= alpha;
                acc[j][2 * i + 1] *= alpha;
            }
        }
#pragma unroll
        for (int kk = 0; kk < BN / 16; ++kk) {
            const u32 a[4] = {pack(s[2 * kk][0], s[2 * kk][1]), pack(s[2 * kk][2], s[2 * kk][3]),
                              pack(s[2 * kk + 1][0], s[2 * kk + 1][1]),
                              pack(s[2 * kk + 1][2], s[2 * kk + 1][3])};
#pragma unroll
            for (int jd = 0; jd < HD / 8; jd += 2) {
                u32 b0, b1, b2, b3;
                ldm4t(b0, b1, b2, b3, sv + sw(16 * kk + 8 * (mi & 1) + r8, jd + (mi >> 1)));
                mma(acc[jd], a, b0, b1);
                mma(acc[jd + 1], a, b2, b3);
            }
        }
        __syncthreads();  // this buffer is loaded again two tiles on
    }
#pragma unroll
    for (int i = 0; i < 2; ++i) {
        float l = lrow[i];
        l += __shfl_xor_sync(0xffffffffu, l, 1);
        l += __shfl_xor_sync(0xffffffffu, l, 2);
        const float inv = l > 0.f ? 1.f / l : 0.f;
        const int row = row0 + 8 * i;
        if (row < L) {
            u32* out = reinterpret_cast<u32*>(o + (long long)row * osl + 2 * t);
#pragma unroll
            for (int j = 0; j < HD / 8; ++j)
                out[4 * j] = pack(acc[j][2 * i] * inv, acc[j][2 * i + 1] * inv);
            if (t == 0) lse[bh * L + row] = (mrow[i] + log2f(l)) * 0.6931471805599453f;
        }
    }
}
"""

_BLOCK_N = {64: 64, 128: 32}  # keys per tile: 48 KB of shared memory at most


def supported(q, k, v, attn_mask, dropout_p, enable_gqa):
    """Whether the fused kernel computes this call (otherwise the composed ops do)."""
    if attn_mask is not None or dropout_p or enable_gqa:
        return False
    if q.device.type != "cuda" or not (q.device == k.device == v.device):
        return False
    if q.dtype not in (_core.float16, _core.bfloat16) or not (q.dtype == k.dtype == v.dtype):
        return False
    if q.ndim < 2 or not (q.ndim == k.ndim == v.ndim):
        return False
    d = q.shape[-1]
    if d not in _BLOCK_N or k.shape[-1] != d or v.shape[-1] != d:
        return False
    if q.shape[:-2] != k.shape[:-2] or k.shape[:-2] != v.shape[:-2]:
        return False
    if k.shape[-2] != v.shape[-2] or q.shape[-2] == 0 or k.shape[-2] == 0:
        return False
    return math.prod(q.shape[:-2]) < 65536


def _rows(x):
    """x as (N, rows, D) with unit stride along D, rows 16-byte aligned (a copy if needed)."""
    x3 = x.reshape((-1, x.shape[-2], x.shape[-1]))
    st = [s // x3.itemsize for s in x3.strides]
    if st[2] != 1 or st[1] % 8 or st[0] % 8 or _core._kernels.data_ptr(x3) % 16:
        from .._creation import ascontiguousarray

        x3 = ascontiguousarray(x3)
    return x3


def forward(q, k, v, causal, scale):
    """(out, lse): softmax(q k^T * scale [causal]) v and each row's log-sum-exp (float32)."""
    from .._kernels._launch import _generated_function

    d = q.shape[-1]
    q3, k3, v3 = _rows(q), _rows(k), _rows(v)
    n, L, S = q3.shape[0], q3.shape[1], k3.shape[1]  # noqa: N806
    out = _core.empty(q3.shape, dtype=q.dtype, device=q.device)
    lse = _core.empty((n, L), dtype=_core.float32, device=q.device)
    dt = "bf16" if q.dtype == _core.bfloat16 else "f16"
    opts = (f"-DHD={d}", f"-DBN={_BLOCK_N[d]}", f'-DDT="{dt}"', "-std=c++17")
    fn = _generated_function(_SOURCE, "ember_flash_fwd", opts, q.device.index)
    st = [[s // q3.itemsize for s in a.strides] for a in (q3, k3, v3, out)]
    i64, i32 = np.int64, np.int32
    args = [q3, k3, v3, out, lse]
    for s in st:
        args += [i64(s[0]), i64(s[1])]
    args += [i32(L), i32(S), np.float32(scale * math.log2(math.e)), i32(bool(causal))]
    fn(((L + 127) // 128, n, 1), (256, 1, 1), args, 0, None)
    return out.reshape(q.shape), lse.reshape(q.shape[:-1])


def backward(q, k, v, out, lse, dout, causal, scale):
    """The gradients (dq, dk, dv) from the recomputed probabilities (float32)."""
    f32 = _core.float32
    dt = q.dtype
    s = (q @ k.swapaxes(-1, -2)).astype(f32) * scale
    if causal:
        L, S = q.shape[-2], k.shape[-2]  # noqa: N806
        from .._matrices import tril

        keep = tril(_core.ones((L, S), dtype=_core.bool, device=q.device))
        s = _core.where(keep, s, -math.inf)
    p = _core.exp(s - lse[..., None])
    dv = p.astype(dt).swapaxes(-1, -2) @ dout
    dp = (dout @ v.swapaxes(-1, -2)).astype(f32)
    dsum = (dout.astype(f32) * out.astype(f32)).sum(axis=-1, keepdims=True)
    ds = (p * (dp - dsum) * scale).astype(dt)
    return ds @ k, ds.swapaxes(-1, -2) @ q, dv


def attention(q, k, v, causal, scale):
    """The fused attention, differentiable (the backward above) when an input requires grad."""
    from .. import autograd

    if autograd.is_grad_enabled() and (q.requires_grad or k.requires_grad or v.requires_grad):
        return _Attention.apply(q, k, v, causal, scale)
    return forward(q, k, v, causal, scale)[0]


def _attention_function():
    from ..autograd import Function

    class FlashAttention(Function):
        @staticmethod
        def forward(ctx, q, k, v, causal, scale):
            out, lse = forward(q, k, v, causal, scale)
            ctx.save_for_backward(q, k, v, out, lse)
            ctx.causal, ctx.scale = causal, scale
            return out

        @staticmethod
        def backward(ctx, dout):
            q, k, v, out, lse = ctx.saved_tensors
            dq, dk, dv = backward(q, k, v, out, lse, dout, ctx.causal, ctx.scale)
            return dq, dk, dv, None, None

    return FlashAttention


class _Lazy:
    cls = None

    def apply(self, *args):
        if _Lazy.cls is None:
            _Lazy.cls = _attention_function()
        return _Lazy.cls.apply(*args)


_Attention = _Lazy()
