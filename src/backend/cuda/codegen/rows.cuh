// The row kernels (softmax, log_softmax, cross-entropy, layer norm and their backwards), pasted by
// src/backend/cuda/rows.cpp after what the program defines: T (storage) and C (compute) types, OP
// (the op, in rows_kernel's order), TPR (threads per row), K (register chunks per thread; 0: the
// row is streamed), VEC (vector width) and struct RowsArgs; @NAME@ becomes the kernel's name.

namespace rows {
using namespace ember::dev;

enum { SOFTMAX, LOG_SOFTMAX, SOFTMAX_BWD, LOG_SOFTMAX_BWD, CE, CE_BWD, LN, LN_BWD,
       LN_PARTIALS = 15 };
constexpr int KK = K > 0 ? K : 1;  // register chunks (1 placeholder when streamed)
constexpr int RPB = 256 / TPR;     // rows per block
constexpr int WARPS = TPR / 32;
constexpr unsigned FULL = 0xffffffffu;

__device__ inline float ex(float v) { return expf(v); }
__device__ inline double ex(double v) { return exp(v); }
__device__ inline float lg(float v) { return logf(v); }
__device__ inline double lg(double v) { return log(v); }
__device__ inline float root(float v) { return sqrtf(v); }
__device__ inline double root(double v) { return sqrt(v); }
__device__ inline C nanv() { return num_limits<C>::quiet_NaN(); }
__device__ inline C ninf() { return -num_limits<C>::infinity(); }
// max that propagates NaN
__device__ inline C vmax(C a, C b) { return (b > a || b != b) ? b : a; }

__device__ inline void ldv(const T* p, long long base, C (&o)[VEC]) {
    if constexpr (VEC > 1) {
        const vec_t<T, VEC> t = *reinterpret_cast<const vec_t<T, VEC>*>(p + base);
#pragma unroll
        for (int e = 0; e < VEC; ++e) o[e] = convert<C>(t.v[e]);
    } else {
        o[0] = convert<C>(p[base]);
    }
}
__device__ inline void stv(T* p, long long base, const C (&o)[VEC]) {
    if constexpr (VEC > 1) {
        vec_t<T, VEC> t;
#pragma unroll
        for (int e = 0; e < VEC; ++e) t.v[e] = convert<T>(o[e]);
        *reinterpret_cast<vec_t<T, VEC>*>(p + base) = t;
    } else {
        p[base] = convert<T>(o[0]);
    }
}
__device__ inline C ldw(const void* p, long long i) {
    return convert<C>(static_cast<const T*>(p)[i]);
}

// The register chunk kk of thread tid: elements base .. base + VEC - 1 (all in the row or none,
// since VEC > 1 needs n % VEC == 0).
__device__ inline long long chunk_base(int tid, int kk) { return (long long)(tid + kk * TPR) * VEC; }

__device__ inline void load_row(const T* p, long long n, int tid, C (&v)[KK][VEC], C fill) {
#pragma unroll
    for (int kk = 0; kk < KK; ++kk) {
        const long long b = chunk_base(tid, kk);
        if (b < n) {
            ldv(p, b, v[kk]);
        } else {
#pragma unroll
            for (int e = 0; e < VEC; ++e) v[kk][e] = fill;
        }
    }
}

// Combines NV values over the threads of a row: warp butterflies (the lower lane's value goes
// first, so every lane gets the same bits), then the block's warps in order.
template <int NV, class F>
__device__ inline void row_reduce(C (&v)[NV], F f, C* sh) {
    const int lane = threadIdx.x & 31;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        C t[NV];
#pragma unroll
        for (int i = 0; i < NV; ++i) t[i] = __shfl_xor_sync(FULL, v[i], o);
        if (lane & o) {
#pragma unroll
            for (int i = 0; i < NV; ++i) { const C s = v[i]; v[i] = t[i]; t[i] = s; }
        }
        f(v, t);
    }
    if constexpr (WARPS > 1) {
        const int w = threadIdx.x / 32;
        if (lane == 0) {
#pragma unroll
            for (int i = 0; i < NV; ++i) sh[i * WARPS + w] = v[i];
        }
        __syncthreads();
#pragma unroll
        for (int i = 0; i < NV; ++i) v[i] = sh[i * WARPS];
        for (int w2 = 1; w2 < WARPS; ++w2) {
            C t[NV];
#pragma unroll
            for (int i = 0; i < NV; ++i) t[i] = sh[i * WARPS + w2];
            f(v, t);
        }
        __syncthreads();
    }
}

struct Sum1 {
    __device__ void operator()(C (&a)[1], const C (&b)[1]) const { a[0] += b[0]; }
};
struct Sum2 {
    __device__ void operator()(C (&a)[2], const C (&b)[2]) const { a[0] += b[0]; a[1] += b[1]; }
};
struct Max1 {
    __device__ void operator()(C (&a)[1], const C (&b)[1]) const { a[0] = vmax(a[0], b[0]); }
};
// (max, sum of exp(x - max)) pairs; equal maxima (also both -inf) need no rescaling.
__device__ inline C rescale(C s, C m, C to) { return m == to ? s : s * ex(m - to); }
struct MaxSum {
    __device__ void operator()(C (&a)[2], const C (&b)[2]) const {
        const C m = vmax(a[0], b[0]);
        a[1] = rescale(a[1], a[0], m) + rescale(b[1], b[0], m);
        a[0] = m;
    }
};
__device__ inline void online(C& m, C& s, C v) {
    if (v > m) {
        s = rescale(s, m, v) + ex(v - v);  // exp(0), or NaN for +inf (as the two-pass sum)
        m = v;
    } else if (v == v && m == ninf()) {
        // v is -inf too: adds exp(-inf) = 0
    } else {
        s += ex(v - m);
        if (v != v) m = v;
    }
}
// Welford (count, mean, M2) triples, merged with Chan's formula.
struct Welford {
    __device__ void operator()(C (&a)[3], const C (&b)[3]) const {
        const C n = a[0] + b[0];
        if (n == C(0)) return;
        const C d = b[1] - a[1];
        const C fb = b[0] / n;
        a[1] = a[1] + d * fb;
        a[2] = a[2] + b[2] + d * d * a[0] * fb;
        a[0] = n;
    }
};

// What every row op reduces across its row, built on row_reduce: a sum, a maximum, the maximum of
// the values held in registers (-inf in the padding), the sum of exp(x - m) over the row's values
// in registers, and (max, sum of exp(x - max)) in one streamed pass over the row (online, from
// ms = (-inf, 0)).
__device__ inline C row_sum(C v, C* sh) {
    C s[1] = {v};
    row_reduce(s, Sum1{}, sh);
    return s[0];
}
__device__ inline C row_max(const C (&v)[KK][VEC], C* sh) {
    C m[1] = {ninf()};
#pragma unroll
    for (int kk = 0; kk < KK; ++kk)
#pragma unroll
        for (int e = 0; e < VEC; ++e) m[0] = vmax(m[0], v[kk][e]);
    row_reduce(m, Max1{}, sh);
    return m[0];
}
__device__ inline C row_sum_exp(const C (&v)[KK][VEC], C m, long long n, int tid, C* sh) {
    C s = C(0);
#pragma unroll
    for (int kk = 0; kk < KK; ++kk)
        if (chunk_base(tid, kk) < n)
#pragma unroll
            for (int e = 0; e < VEC; ++e) s += ex(v[kk][e] - m);
    return row_sum(s, sh);
}
__device__ inline void row_max_sum_exp(const T* xr, long long n, int tid, C (&ms)[2], C* sh) {
    for (long long b = (long long)tid * VEC; b < n; b += (long long)TPR * VEC) {
        C v[VEC];
        ldv(xr, b, v);
#pragma unroll
        for (int e = 0; e < VEC; ++e) online(ms[0], ms[1], v[e]);
    }
    row_reduce(ms, MaxSum{}, sh);
}

__device__ inline void row_body(const RowsArgs& a, long long row, int tid, C* sh) {
    const long long n = a.n;
    const long long off = row * n;
    const T* xr = static_cast<const T*>(a.x) + off;
    if constexpr (OP == SOFTMAX || OP == LOG_SOFTMAX) {
        T* yr = static_cast<T*>(a.out) + off;
        C ms[2] = {ninf(), C(0)};
        if constexpr (K > 0) {
            C v[KK][VEC];
            load_row(xr, n, tid, v, ninf());
            const C m = row_max(v, sh);
            const C s = row_sum_exp(v, m, n, tid, sh);
            const C inv = C(1) / s, ls = lg(s);
#pragma unroll
            for (int kk = 0; kk < KK; ++kk) {
                const long long b = chunk_base(tid, kk);
                if (b >= n) continue;
                C o[VEC];
#pragma unroll
                for (int e = 0; e < VEC; ++e)
                    o[e] = OP == LOG_SOFTMAX ? (v[kk][e] - m) - ls : ex(v[kk][e] - m) * inv;
                stv(yr, b, o);
            }
        } else {
            row_max_sum_exp(xr, n, tid, ms, sh);
            const C inv = C(1) / ms[1], ls = lg(ms[1]);
            for (long long b = (long long)tid * VEC; b < n; b += (long long)TPR * VEC) {
                C v[VEC];
                ldv(xr, b, v);
#pragma unroll
                for (int e = 0; e < VEC; ++e)
                    v[e] = OP == LOG_SOFTMAX ? (v[e] - ms[0]) - ls : ex(v[e] - ms[0]) * inv;
                stv(yr, b, v);
            }
        }
    } else if constexpr (OP == SOFTMAX_BWD || OP == LOG_SOFTMAX_BWD) {
        const T* yr = static_cast<const T*>(a.y) + off;
        const T* gr = static_cast<const T*>(a.dy) + off;
        T* dr = static_cast<T*>(a.out) + off;
        constexpr bool LOG = OP == LOG_SOFTMAX_BWD;
        C s = C(0);
        if constexpr (K > 0) {
            C y[KK][VEC], g[KK][VEC];
            load_row(yr, n, tid, y, C(0));
            load_row(gr, n, tid, g, C(0));
#pragma unroll
            for (int kk = 0; kk < KK; ++kk)
#pragma unroll
                for (int e = 0; e < VEC; ++e) s += LOG ? g[kk][e] : g[kk][e] * y[kk][e];
            s = row_sum(s, sh);
#pragma unroll
            for (int kk = 0; kk < KK; ++kk) {
                const long long b = chunk_base(tid, kk);
                if (b >= n) continue;
                C o[VEC];
#pragma unroll
                for (int e = 0; e < VEC; ++e)
                    o[e] = LOG ? g[kk][e] - ex(y[kk][e]) * s : y[kk][e] * (g[kk][e] - s);
                stv(dr, b, o);
            }
        } else {
            for (long long b = (long long)tid * VEC; b < n; b += (long long)TPR * VEC) {
                C y[VEC], g[VEC];
                ldv(yr, b, y);
                ldv(gr, b, g);
#pragma unroll
                for (int e = 0; e < VEC; ++e) s += LOG ? g[e] : g[e] * y[e];
            }
            s = row_sum(s, sh);
            for (long long b = (long long)tid * VEC; b < n; b += (long long)TPR * VEC) {
                C y[VEC], g[VEC];
                ldv(yr, b, y);
                ldv(gr, b, g);
#pragma unroll
                for (int e = 0; e < VEC; ++e)
                    g[e] = LOG ? g[e] - ex(y[e]) * s : y[e] * (g[e] - s);
                stv(dr, b, g);
            }
        }
    } else if constexpr (OP == CE) {
        const C lsm = C(a.label_smoothing);
        const bool smooth = a.label_smoothing > 0.0;
        C ms[2] = {ninf(), C(0)};  // the row's max and sum of exp(x - max)
        // sum_c w[c] (x[c] - max) and sum_c w[c], for label smoothing
        C sw[2] = {C(0), C(0)};
        if constexpr (K > 0) {
            C v[KK][VEC];
            load_row(xr, n, tid, v, ninf());
            ms[0] = row_max(v, sh);
            // row_sum_exp's sum, with the smoothing sums in the same pass over the registers
            C s = C(0);
#pragma unroll
            for (int kk = 0; kk < KK; ++kk) {
                const long long b = chunk_base(tid, kk);
                if (b >= n) continue;
#pragma unroll
                for (int e = 0; e < VEC; ++e) {
                    s += ex(v[kk][e] - ms[0]);
                    if (smooth) {
                        const C w = a.weight ? ldw(a.weight, b + e) : C(1);
                        sw[0] += w * (v[kk][e] - ms[0]);
                        sw[1] += w;
                    }
                }
            }
            ms[1] = row_sum(s, sh);
        } else {
            row_max_sum_exp(xr, n, tid, ms, sh);
            if (smooth) {
                for (long long b = (long long)tid * VEC; b < n; b += (long long)TPR * VEC) {
                    C v[VEC];
                    ldv(xr, b, v);
#pragma unroll
                    for (int e = 0; e < VEC; ++e) {
                        const C w = a.weight ? ldw(a.weight, b + e) : C(1);
                        sw[0] += w * (v[e] - ms[0]);
                        sw[1] += w;
                    }
                }
            }
        }
        if (smooth) row_reduce(sw, Sum2{}, sh);
        if (tid == 0) {
            const C lsum = lg(ms[1]);
            static_cast<C*>(a.row_max)[row] = ms[0];
            static_cast<C*>(a.logsum)[row] = lsum;
            const long long t = a.target[row];
            C loss, wt;
            if (t == a.ignore_index) {
                loss = C(0);
                wt = C(0);
            } else if (t < 0 || t >= n) {
                loss = nanv();
                wt = nanv();
            } else {
                wt = a.weight ? ldw(a.weight, t) : C(1);
                loss = (C(1) - lsm) * wt * (lsum - (convert<C>(xr[t]) - ms[0]));
                if (smooth) loss += lsm / C(n) * (sw[1] * lsum - sw[0]);
            }
            static_cast<C*>(a.loss)[row] = loss;
            static_cast<C*>(a.weight_out)[row] = wt;
        }
    } else if constexpr (OP == CE_BWD) {
        T* dr = static_cast<T*>(a.out) + off;
        const C lsm = C(a.label_smoothing);
        const bool smooth = a.label_smoothing > 0.0;
        C W = C(n);
        if (smooth && a.weight) {
            W = C(0);
            for (long long i = tid; i < n; i += TPR) W += ldw(a.weight, i);
            W = row_sum(W, sh);
        }
        const long long t = a.target[row];
        if (t == a.ignore_index || t < 0 || t >= n) {
            C o[VEC];
#pragma unroll
            for (int e = 0; e < VEC; ++e) o[e] = t == a.ignore_index ? C(0) : nanv();
            for (long long b = (long long)tid * VEC; b < n; b += (long long)TPR * VEC) stv(dr, b, o);
            return;
        }
        const C g = static_cast<const C*>(a.dloss)[row];
        const C m = static_cast<const C*>(a.row_max)[row];
        const C lsum = static_cast<const C*>(a.logsum)[row];
        const C wt = a.weight ? ldw(a.weight, t) : C(1);
        const C ca = g * (C(1) - lsm) * wt, cb = g * lsm / C(n);
        for (long long b = (long long)tid * VEC; b < n; b += (long long)TPR * VEC) {
            C v[VEC];
            ldv(xr, b, v);
#pragma unroll
            for (int e = 0; e < VEC; ++e) {
                const C p = ex((v[e] - m) - lsum);
                C d = ca * (p - (b + e == t ? C(1) : C(0)));
                if (smooth) d += cb * (W * p - (a.weight ? ldw(a.weight, b + e) : C(1)));
                v[e] = d;
            }
            stv(dr, b, v);
        }
    } else if constexpr (OP == LN) {
        T* yr = static_cast<T*>(a.out) + off;
        C mean, rstd;
        if constexpr (K > 0) {
            C v[KK][VEC];
            load_row(xr, n, tid, v, C(0));
            C s = C(0);
#pragma unroll
            for (int kk = 0; kk < KK; ++kk)
#pragma unroll
                for (int e = 0; e < VEC; ++e) s += v[kk][e];
            mean = row_sum(s, sh) / C(n);
            C q = C(0);
#pragma unroll
            for (int kk = 0; kk < KK; ++kk)
                if (chunk_base(tid, kk) < n)
#pragma unroll
                    for (int e = 0; e < VEC; ++e) {
                        const C d = v[kk][e] - mean;
                        q += d * d;
                    }
            rstd = C(1) / root(row_sum(q, sh) / C(n) + C(a.eps));
#pragma unroll
            for (int kk = 0; kk < KK; ++kk) {
                const long long b = chunk_base(tid, kk);
                if (b >= n) continue;
                C o[VEC];
#pragma unroll
                for (int e = 0; e < VEC; ++e) {
                    C h = (v[kk][e] - mean) * rstd;
                    if (a.gamma) h *= ldw(a.gamma, b + e);
                    if (a.beta) h += ldw(a.beta, b + e);
                    o[e] = h;
                }
                stv(yr, b, o);
            }
        } else {
            C w[3] = {C(0), C(0), C(0)};
            for (long long b = (long long)tid * VEC; b < n; b += (long long)TPR * VEC) {
                C v[VEC];
                ldv(xr, b, v);
#pragma unroll
                for (int e = 0; e < VEC; ++e) {
                    w[0] += C(1);
                    const C d = v[e] - w[1];
                    w[1] += d / w[0];
                    w[2] += d * (v[e] - w[1]);
                }
            }
            row_reduce(w, Welford{}, sh);
            mean = w[1];
            rstd = C(1) / root(w[2] / C(n) + C(a.eps));
            for (long long b = (long long)tid * VEC; b < n; b += (long long)TPR * VEC) {
                C v[VEC];
                ldv(xr, b, v);
#pragma unroll
                for (int e = 0; e < VEC; ++e) {
                    C h = (v[e] - mean) * rstd;
                    if (a.gamma) h *= ldw(a.gamma, b + e);
                    if (a.beta) h += ldw(a.beta, b + e);
                    v[e] = h;
                }
                stv(yr, b, v);
            }
        }
        if (tid == 0) {
            static_cast<C*>(a.mean)[row] = mean;
            static_cast<C*>(a.rstd)[row] = rstd;
        }
    } else if constexpr (OP == LN_BWD) {
        const T* gr = static_cast<const T*>(a.dy) + off;
        T* dr = static_cast<T*>(a.out) + off;
        const C mean = static_cast<const C*>(a.mean)[row];
        const C rstd = static_cast<const C*>(a.rstd)[row];
        const C inv_n = C(1) / C(n);
        C s[2] = {C(0), C(0)};  // sum(dy * gamma), sum(dy * gamma * xhat)
        if constexpr (K > 0) {
            C v[KK][VEC], g[KK][VEC];
            load_row(xr, n, tid, v, C(0));
            load_row(gr, n, tid, g, C(0));
#pragma unroll
            for (int kk = 0; kk < KK; ++kk) {
                const long long b = chunk_base(tid, kk);
                if (b >= n) continue;
#pragma unroll
                for (int e = 0; e < VEC; ++e) {
                    v[kk][e] = (v[kk][e] - mean) * rstd;
                    if (a.gamma) g[kk][e] *= ldw(a.gamma, b + e);
                    s[0] += g[kk][e];
                    s[1] += g[kk][e] * v[kk][e];
                }
            }
            row_reduce(s, Sum2{}, sh);
#pragma unroll
            for (int kk = 0; kk < KK; ++kk) {
                const long long b = chunk_base(tid, kk);
                if (b >= n) continue;
                C o[VEC];
#pragma unroll
                for (int e = 0; e < VEC; ++e)
                    o[e] = rstd * (g[kk][e] - s[0] * inv_n - v[kk][e] * (s[1] * inv_n));
                stv(dr, b, o);
            }
        } else {
            for (long long b = (long long)tid * VEC; b < n; b += (long long)TPR * VEC) {
                C v[VEC], g[VEC];
                ldv(xr, b, v);
                ldv(gr, b, g);
#pragma unroll
                for (int e = 0; e < VEC; ++e) {
                    const C xh = (v[e] - mean) * rstd;
                    const C d = a.gamma ? g[e] * ldw(a.gamma, b + e) : g[e];
                    s[0] += d;
                    s[1] += d * xh;
                }
            }
            row_reduce(s, Sum2{}, sh);
            for (long long b = (long long)tid * VEC; b < n; b += (long long)TPR * VEC) {
                C v[VEC], g[VEC];
                ldv(xr, b, v);
                ldv(gr, b, g);
#pragma unroll
                for (int e = 0; e < VEC; ++e) {
                    const C xh = (v[e] - mean) * rstd;
                    const C d = a.gamma ? g[e] * ldw(a.gamma, b + e) : g[e];
                    v[e] = rstd * (d - s[0] * inv_n - xh * (s[1] * inv_n));
                }
                stv(dr, b, v);
            }
        }
    }
}

}  // namespace rows

extern "C" __global__ void @NAME@(const RowsArgs a) {
    using namespace rows;
    if constexpr (OP == LN_PARTIALS) {
        // Column sums of dy * xhat and dy over the rows of part blockIdx.y, one column per thread.
        const long long c = (long long)blockIdx.x * 256 + threadIdx.x;
        if (c >= a.n) return;
        const long long p = blockIdx.y;
        const long long r0 = a.rows * p / a.parts, r1 = a.rows * (p + 1) / a.parts;
        const T* x = static_cast<const T*>(a.x);
        const T* dy = static_cast<const T*>(a.dy);
        const C* mean = static_cast<const C*>(a.mean);
        const C* rstd = static_cast<const C*>(a.rstd);
        C dg = C(0), db = C(0);
        for (long long r = r0; r < r1; ++r) {
            const C g = convert<C>(dy[r * a.n + c]);
            dg += g * ((convert<C>(x[r * a.n + c]) - mean[r]) * rstd[r]);
            db += g;
        }
        if (a.dgamma) static_cast<C*>(a.dgamma)[p * a.n + c] = dg;
        if (a.dbeta) static_cast<C*>(a.dbeta)[p * a.n + c] = db;
    } else {
        __shared__ C sh[3 * WARPS];
        const int sub = threadIdx.x / TPR, tid = threadIdx.x % TPR;
        for (long long row = (long long)blockIdx.x * RPB + sub; row < a.rows;
             row += (long long)gridDim.x * RPB)
            row_body(a, row, tid, sh);
    }
}
