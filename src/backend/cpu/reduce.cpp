// CPU reductions. Two shapes of work: when the innermost (fastest) input dimension is reduced,
// each output is a blocked reduction over its input (fixed blocks, many accumulators, partials
// combined pairwise in a fixed order, so results never depend on the thread count); when it is
// kept, rows of the input are folded into rows of the output, split over columns.
#include "backend/cpu/reduce.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include "backend/cpu/cpu.hpp"
#include "ember/error.hpp"
#include "ops/convert.hpp"
#include "ops/reduce.hpp"
#include "support/thread_pool.hpp"

namespace ember::host {

using backend::Loop;
using ops::AccRule;
using ops::ReduceOp;

namespace {

constexpr int64_t block = 1 << 14;  // elements per partial result
constexpr int64_t grain = 1 << 15;  // elements per parallel task
constexpr int lanes = 16;           // independent accumulators in a contiguous row

// Float max/min of a float input (no conversion): vectorized with NaN tracking below.
template <class P>
constexpr bool is_float_extremum =
    P::extremum != 0 && std::is_floating_point_v<typename P::acc_t>&&
                            std::is_same_v<typename P::in_t, typename P::acc_t>;
template <class P>
constexpr bool is_max = P::extremum > 0;

// NaN-propagating max/min of n >= lanes contiguous floats, written with GCC/Clang vector
// extensions: the auto-vectorizer does not treat NaN-aware extrema as reductions.
template <bool IsMax, class T>
EMBER_CPU_CLONES T extremum_row(const T* __restrict x, int64_t n) {
    constexpr int W = 16 / int(sizeof(T));           // elements per 16-byte vector
    constexpr int V = lanes / W;                     // independent vector accumulators
    typedef T vec __attribute__((vector_size(16)));  // (an alias-declaration drops the attribute)
    using M = std::conditional_t<sizeof(T) == 4, int32_t, int64_t>;
    typedef M mvec __attribute__((vector_size(16)));
    vec acc[V];
    mvec bad[V];
    for (int k = 0; k < V; ++k) {
        std::memcpy(&acc[k], x + k * W, sizeof(vec));
        bad[k] = acc[k] != acc[k];
    }
    int64_t i = lanes;
    for (; i + lanes <= n; i += lanes)
        for (int k = 0; k < V; ++k) {
            vec v;
            std::memcpy(&v, x + i + k * W, sizeof(vec));
            if constexpr (IsMax)
                acc[k] = v > acc[k] ? v : acc[k];
            else
                acc[k] = v < acc[k] ? v : acc[k];
            bad[k] |= v != v;
        }
    bool any_bad = false;
    T r = x[0];
    for (int k = 0; k < V; ++k) {
        T a[W];
        M b[W];
        std::memcpy(a, &acc[k], sizeof(vec));
        std::memcpy(b, &bad[k], sizeof(mvec));
        for (int w = 0; w < W; ++w) {
            any_bad |= b[w] != 0;
            r = IsMax ? (a[w] > r ? a[w] : r) : (a[w] < r ? a[w] : r);
        }
    }
    for (; i < n; ++i) {
        const T v = x[i];
        any_bad |= v != v;
        r = IsMax ? (v > r ? v : r) : (v < r ? v : r);
    }
    return any_bad ? std::numeric_limits<T>::quiet_NaN() : r;
}

// Reduction of n elements starting at p (byte stride s) to one accumulator. (The policies of
// value reductions ignore load's position argument: these loops pass 0.)
template <class P>
EMBER_CPU_CLONES typename P::acc_t reduce_row(const char* p, int64_t s, int64_t n) {
    using T = typename P::in_t;
    using A = typename P::acc_t;
    if (s == sizeof(T) && n >= lanes) {
        const T* __restrict x = reinterpret_cast<const T*>(p);
        A acc[lanes];
        int64_t i = 0;
        if constexpr (is_float_extremum<P>) {
            return extremum_row<is_max<P>>(x, n);
        } else {
            for (int k = 0; k < lanes; ++k)
                acc[k] = P::identity();
            for (; i + lanes <= n; i += lanes)
                for (int k = 0; k < lanes; ++k)
                    acc[k] = P::combine(acc[k], P::load(x[i + k], 0));
            for (int w = lanes / 2; w >= 1; w /= 2)
                for (int k = 0; k < w; ++k)
                    acc[k] = P::combine(acc[k], acc[k + w]);
            A r = acc[0];
            for (; i < n; ++i)
                r = P::combine(r, P::load(x[i], 0));
            return r;
        }
    }
    A r = P::identity();
    for (int64_t i = 0; i < n; ++i, p += s)
        r = P::combine(r, P::load(*reinterpret_cast<const T*>(p), 0));
    return r;
}

// out[j] = combine(out[j], load(in[j])) for j < n.
template <class P>
EMBER_CPU_CLONES void fold_row(char* o, int64_t os, const char* p, int64_t s, int64_t n) {
    using T = typename P::in_t;
    using A = typename P::acc_t;
    if (os == sizeof(A) && s == sizeof(T)) {
        A* __restrict out = reinterpret_cast<A*>(o);
        const T* __restrict x = reinterpret_cast<const T*>(p);
        if constexpr (is_float_extremum<P>) {
            for (int64_t j = 0; j < n; ++j) {
                const A v = x[j];
                if constexpr (is_max<P>)
                    out[j] = ((v > out[j]) | (v != v)) ? v : out[j];
                else
                    out[j] = ((v < out[j]) | (v != v)) ? v : out[j];
            }
        } else {
            for (int64_t j = 0; j < n; ++j)
                out[j] = P::combine(out[j], P::load(x[j], 0));
        }
        return;
    }
    for (int64_t j = 0; j < n; ++j, o += os, p += s) {
        A* a = reinterpret_cast<A*>(o);
        *a = P::combine(*a, P::load(*reinterpret_cast<const T*>(p), 0));
    }
}

// A sub-loop over a chosen set of the loop's dims (kept ones or reduced ones).
ByteLoop sub_loop(const ByteLoop& L, bool keep_reduced, bool keep_kept) {
    ByteLoop S;
    S.nops = L.nops;
    S.ndim = 0;
    for (int k = 0; k < L.nops; ++k)
        S.base[k] = L.base[k];
    for (int d = 0; d < L.ndim; ++d) {
        const bool reduced = L.strides[0][d] == 0;
        if ((reduced && keep_reduced) || (!reduced && keep_kept)) {
            S.shape[S.ndim] = L.shape[d];
            for (int k = 0; k < L.nops; ++k)
                S.strides[k][S.ndim] = L.strides[k][d];
            ++S.ndim;
        }
    }
    return S;
}

int64_t loop_numel(const ByteLoop& L) {
    int64_t n = 1;
    for (int d = 0; d < L.ndim; ++d)
        n *= L.shape[d];
    return n;
}

// Reduces the whole space R (input operand 1, based at `in`) to one value: fixed blocks, each
// folded run by run, partials combined pairwise in index order.
template <class P>
typename P::acc_t reduce_space(const ByteLoop& R, char* in, bool parallel) {
    using A = typename P::acc_t;
    ByteLoop Q = R;
    Q.base[1] = in;
    const int64_t total = loop_numel(Q);
    auto block_value = [&](int64_t b) {
        A acc = P::identity();
        bool first = true;
        for_each_run(Q, b * block, std::min(total, (b + 1) * block), [&](char** p, int64_t m) {
            A v = reduce_row<P>(p[1], Q.ndim ? Q.strides[1][0] : 0, m);
            acc = first ? v : P::combine(acc, v);
            first = false;
        });
        return acc;
    };
    const int64_t nblocks = (total + block - 1) / block;
    if (nblocks <= 1) return block_value(0);
    std::unique_ptr<A[]> part(new A[size_t(nblocks)]);  // not vector<bool>
    if (parallel) {
        parallel_range(nblocks, std::max<int64_t>(1, grain / block), [&](int64_t b, int64_t e) {
            for (int64_t i = b; i < e; ++i)
                part[size_t(i)] = block_value(i);
        });
    } else {
        for (int64_t i = 0; i < nblocks; ++i)
            part[size_t(i)] = block_value(i);
    }
    for (int64_t w = 1; w < nblocks; w *= 2)
        for (int64_t i = 0; i + w < nblocks; i += 2 * w)
            part[size_t(i)] = P::combine(part[size_t(i)], part[size_t(i + w)]);
    return part[0];
}

// ops[0] is an accumulator-typed output, ops[1] has dtype P::in_t.
template <class P>
void run_reduce(const ByteLoop& L) {
    using A = typename P::acc_t;
    ByteLoop K = sub_loop(L, false, true);  // kept dims
    ByteLoop R = sub_loop(L, true, false);  // reduced dims
    const int64_t nout = loop_numel(K), nred = loop_numel(R);
    if (nout == 0) return;
    const bool inner_reduced = L.ndim == 0 || L.strides[0][0] == 0;
    if (inner_reduced || nred == 1) {
        const bool many = nout >= 2 * num_threads();
        auto one = [&](char** p, int64_t m) {
            for (int64_t t = 0; t < m; ++t) {
                A v = reduce_space<P>(R, p[1] + t * (K.ndim ? K.strides[1][0] : 0), !many);
                std::memcpy(p[0] + t * (K.ndim ? K.strides[0][0] : 0), &v, sizeof(A));
            }
        };
        if (many)
            parallel_range(nout, std::max<int64_t>(1, grain / std::max<int64_t>(nred, 1)),
                           [&](int64_t b, int64_t e) { for_each_run(K, b, e, one); });
        else
            for_each_run(K, 0, nout, one);
        return;
    }
    const A id = P::identity();
    if (L.ndim == 2 && L.strides[0][1] == 0) {
        // Rows folded into one output row: fixed blocks of rows fold into private partial rows
        // in parallel, then the partials combine in block order (deterministic, any threads).
        const int64_t n0 = L.shape[0], rows = L.shape[1];
        const int64_t rb = std::max<int64_t>(8, (int64_t(1) << 18) / n0);
        const int64_t nb = (rows + rb - 1) / rb;
        if (nb > 1) {
            std::unique_ptr<A[]> part(new A[size_t(nb * n0)]);
            const int64_t is0 = L.strides[1][0], is1 = L.strides[1][1];
            parallel_range(nb, 1, [&](int64_t b0, int64_t b1) {
                for (int64_t b = b0; b < b1; ++b) {
                    A* row = part.get() + b * n0;
                    for (int64_t j = 0; j < n0; ++j)
                        row[j] = id;
                    const int64_t r1 = std::min(rows, (b + 1) * rb);
                    for (int64_t r = b * rb; r < r1; ++r)
                        fold_row<P>(reinterpret_cast<char*>(row), sizeof(A), L.base[1] + r * is1,
                                    is0, n0);
                }
            });
            for (int64_t w = 1; w < nb; w *= 2)
                for (int64_t b = 0; b + w < nb; b += 2 * w) {
                    A* x = part.get() + b * n0;
                    const A* y = part.get() + (b + w) * n0;
                    for (int64_t j = 0; j < n0; ++j)
                        x[j] = P::combine(x[j], y[j]);
                }
            for (int64_t j = 0; j < n0; ++j)
                std::memcpy(L.base[0] + j * L.strides[0][0], &part[size_t(j)], sizeof(A));
            return;
        }
    }
    // Innermost dim kept: initialize, then fold every input row into its output row.
    for_each_run(K, 0, nout, [&](char** p, int64_t m) {
        for (int64_t t = 0; t < m; ++t)
            std::memcpy(p[0] + t * K.strides[0][0], &id, sizeof(A));
    });
    ByteLoop O = L;  // dims 1.. of the loop
    O.ndim = L.ndim - 1;
    for (int d = 0; d < O.ndim; ++d) {
        O.shape[d] = L.shape[d + 1];
        for (int k = 0; k < L.nops; ++k)
            O.strides[k][d] = L.strides[k][d + 1];
    }
    const int64_t n0 = L.shape[0], nother = loop_numel(O);
    const int64_t os0 = L.strides[0][0], is0 = L.strides[1][0];
    parallel_range(n0, std::max<int64_t>(64, grain / std::max<int64_t>(nother, 1)),
                   [&](int64_t c0, int64_t c1) {
                       for_each_run(O, 0, nother, [&](char** p, int64_t m) {
                           const int64_t o1 = O.ndim ? O.strides[0][0] : 0;
                           const int64_t i1 = O.ndim ? O.strides[1][0] : 0;
                           for (int64_t t = 0; t < m; ++t)
                               fold_row<P>(p[0] + t * o1 + c0 * os0, os0, p[1] + t * i1 + c0 * is0,
                                           is0, c1 - c0);
                       });
                   });
}

// Dispatch: which (input, accumulator) pairs have kernels. Others are converted first.
template <template <class, class, class> class Op, class A>
bool dispatch_arith(DType in, const ByteLoop& L) {
    bool done = false;
    visit_dtype(in, [&](auto tag) {
        using T = decltype(tag);
        using N = decltype(widen(T{}));
        constexpr bool natural_int =
            std::is_integral_v<T> && !std::is_same_v<T, bool> &&
            (std::is_signed_v<T> ? std::is_same_v<A, int64_t> : std::is_same_v<A, uint64_t>);
        constexpr bool ok = std::is_same_v<N, A> || natural_int ||
                            (std::is_same_v<T, bool> && std::is_same_v<A, int64_t>) ||
                            (std::is_same_v<A, double> && !is_cplx<T>::value) ||
                            (std::is_same_v<A, float> && is_half_v<T>);
        if constexpr (ok) {
            run_reduce<Op<T, A, A>>(L);
            done = true;
        }
    });
    return done;
}

template <template <class, class, class> class Op>
bool dispatch_acc(DType acc, DType in, const ByteLoop& L) {
    switch (acc) {
        case DType::int64:
            return dispatch_arith<Op, int64_t>(in, L);
        case DType::uint64:
            return dispatch_arith<Op, uint64_t>(in, L);
        case DType::float32:
            return dispatch_arith<Op, float>(in, L);
        case DType::float64:
            return dispatch_arith<Op, double>(in, L);
        case DType::complex64:
            return dispatch_arith<Op, std::complex<float>>(in, L);
        case DType::complex128:
            return dispatch_arith<Op, std::complex<double>>(in, L);
        default:
            break;
    }
    // Remaining accumulators of max/min: bool and the narrow integer types.
    bool done = false;
    if (in == acc)
        visit_dtype(acc, [&](auto tag) {
            using T = decltype(tag);
            if constexpr (!is_half_v<T>) {
                run_reduce<Op<T, T, T>>(L);
                done = true;
            }
        });
    return done;
}

// A row's kernels: bool accumulators take every input type as it is; the others the pairs above.
template <template <class, class, class> class Op, AccRule Rule, uint32_t Flags>
bool dispatch_row(DType acc, DType in, const ByteLoop& L) {
    if constexpr (Flags & ops::R_INDEX) {
        return false;  // index rows: arg_reduce below
    } else if constexpr (Rule == AccRule::boolean) {
        visit_dtype(in, [&](auto tag) { run_reduce<Op<decltype(tag), bool, bool>>(L); });
        return true;
    } else {
        return dispatch_acc<Op>(acc, in, L);
    }
}

bool dispatch(ReduceOp op, DType acc, DType in, const ByteLoop& L) {
    using namespace ops;  // the table's flag names
    switch (op) {
#define EMBER_REDUCE_CASE(name, identity, acc_rule, result, grad, flags, doc) \
    case ReduceOp::name:                                                      \
        return dispatch_row<reduce_##name, AccRule::acc_rule, flags>(acc, in, L);
        EMBER_REDUCTIONS(EMBER_REDUCE_CASE)
#undef EMBER_REDUCE_CASE
    }
    return false;
}

// A contiguous copy of operand k of the loop, converted to `to`; returns the storage and
// rewrites the loop's operand to point at it.
std::vector<unsigned char> convert_operand(ByteLoop& L, int k, DType from, DType to) {
    const int64_t n = loop_numel(L);
    const int64_t tsz = itemsize(to);
    std::vector<unsigned char> buf(size_t(std::max<int64_t>(n, 1) * tsz));
    ByteLoop S = L;
    S.nops = 2;
    S.base[0] = reinterpret_cast<char*>(buf.data());
    S.base[1] = L.base[k];
    int64_t st = tsz;
    for (int d = 0; d < L.ndim; ++d) {
        S.strides[0][d] = st;
        S.strides[1][d] = L.strides[k][d];
        st *= L.shape[d];
    }
    CastFn f = cast_table[int(from)][int(to)];
    parallel_range(n, grain, [&](int64_t b, int64_t e) {
        for_each_run(S, b, e, [&](char** p, int64_t m) {
            f(p[1], S.strides[1][0], p[0], S.strides[0][0], m);
        });
    });
    L.base[k] = reinterpret_cast<char*>(buf.data());
    for (int d = 0; d < L.ndim; ++d)
        L.strides[k][d] = S.strides[0][d];
    return buf;
}

// Index reductions: each output scans its run left to right with the row's stops/better rule
// (the same result as folding with its combine, at a scan's cost).
template <class P>
int64_t arg_scan(const char* p, int64_t s, int64_t n) {
    using T = typename P::in_t;
    using C = typename P::value_t;
    C best = ops::convert<C>(*reinterpret_cast<const T*>(p));
    if (P::stops(best)) return 0;
    int64_t bi = 0;
    p += s;
    for (int64_t i = 1; i < n; ++i, p += s) {
        const C v = ops::convert<C>(*reinterpret_cast<const T*>(p));
        if (P::stops(v)) return i;
        if (P::better(v, best)) {
            best = v;
            bi = i;
        }
    }
    return bi;
}

template <template <class, class, class> class Op>
void arg_reduce(const Loop& l) {
    ByteLoop L(l);
    int r = -1;
    for (int d = 0; d < L.ndim; ++d)
        if (L.strides[0][d] == 0 && L.shape[d] > 1) r = d;
    ByteLoop K = sub_loop(L, false, true);
    const int64_t nout = loop_numel(K);
    if (nout == 0) return;
    if (r < 0) {  // the reduced extent is 1: every index is 0
        for_each_run(K, 0, nout, [&](char** p, int64_t m) {
            for (int64_t t = 0; t < m; ++t)
                std::memset(p[0] + t * (K.ndim ? K.strides[0][0] : 0), 0, 8);
        });
        return;
    }
    const int64_t n = L.shape[r], s = L.strides[1][r];
    visit_dtype(l.dtype[1], [&](auto tag) {
        using T = decltype(tag);
        using P = Op<T, decltype(widen(T{})), int64_t>;
        parallel_range(nout, std::max<int64_t>(1, grain / n), [&](int64_t b, int64_t e) {
            for_each_run(K, b, e, [&](char** p, int64_t m) {
                for (int64_t t = 0; t < m; ++t) {
                    const char* in = p[1] + t * (K.ndim ? K.strides[1][0] : 0);
                    const int64_t idx = arg_scan<P>(in, s, n);
                    std::memcpy(p[0] + t * (K.ndim ? K.strides[0][0] : 0), &idx, 8);
                }
            });
        });
    });
}

template <template <class, class, class> class Op, uint32_t Flags>
bool index_row(const Loop& l) {
    if constexpr ((Flags & ops::R_INDEX) != 0) {
        arg_reduce<Op>(l);
        return true;
    } else {
        return false;
    }
}

bool dispatch_index(ReduceOp op, const Loop& l) {
    using namespace ops;  // the table's flag names
    switch (op) {
#define EMBER_REDUCE_CASE(name, identity, acc_rule, result, grad, flags, doc) \
    case ReduceOp::name:                                                      \
        return index_row<reduce_##name, flags>(l);
        EMBER_REDUCTIONS(EMBER_REDUCE_CASE)
#undef EMBER_REDUCE_CASE
    }
    return false;
}

}  // namespace

void reduce(ReduceOp op, DType acc, const Loop& l) {
    if (ops::info(op).index()) {
        if (!dispatch_index(op, l)) throw TypeError("ember: no CPU index reduction");
        return;
    }
    init_kernels();
    ByteLoop L(l);
    if (loop_numel(L) == 0) return;
    const DType out_t = l.dtype[0];
    DType in_t = l.dtype[1];

    // An accumulator-typed output: the real one, or a temporary laid out over the kept dims.
    std::vector<unsigned char> tmp_out;
    ByteLoop W = L;
    if (out_t != acc) {
        ByteLoop K = sub_loop(L, false, true);
        tmp_out.resize(size_t(std::max<int64_t>(loop_numel(K), 1) * itemsize(acc)));
        W.base[0] = reinterpret_cast<char*>(tmp_out.data());
        int64_t st = itemsize(acc);
        for (int d = 0; d < L.ndim; ++d) {
            if (L.strides[0][d] == 0) {
                W.strides[0][d] = 0;
            } else {
                W.strides[0][d] = st;
                st *= L.shape[d];
            }
        }
    }
    std::vector<unsigned char> tmp_in;
    if (!dispatch(op, acc, in_t, W)) {
        tmp_in = convert_operand(W, 1, in_t, acc);
        in_t = acc;
        if (!dispatch(op, acc, in_t, W))
            throw TypeError("ember: no CPU reduction for accumulator " + std::string(name(acc)));
    }
    if (out_t != acc) {
        ByteLoop K = sub_loop(L, false, true);
        ByteLoop KW = sub_loop(W, false, true);
        K.nops = 2;
        K.base[1] = KW.base[0];
        for (int d = 0; d < K.ndim; ++d)
            K.strides[1][d] = KW.strides[0][d];
        CastFn f = cast_table[int(acc)][int(out_t)];
        for_each_run(K, 0, loop_numel(K), [&](char** p, int64_t m) {
            f(p[1], K.ndim ? K.strides[1][0] : 0, p[0], K.ndim ? K.strides[0][0] : 0, m);
        });
    }
}

}  // namespace ember::host
