// Row-wise softmax, log_softmax, cross-entropy and layer norm on the CPU (and their backwards):
// elementwise math in float for the 16-bit types (double for float64), row sums accumulated in
// double, rows spread over the thread pool.
#include "backend/cpu/rows.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "backend/cpu/cpu.hpp"
#include "ember/error.hpp"
#include "support/thread_pool.hpp"

namespace ember::host {

namespace {

using backend::RowsCall;
using backend::RowsOp;

template <class T, class C>
C ld(const void* p, int64_t i) {
    return convert<C>(static_cast<const T*>(p)[i]);
}
template <class T, class C>
void st(void* p, int64_t i, C v) {
    static_cast<T*>(p)[i] = convert<T>(v);
}

// max and log(sum(exp(x - max))) of one row; a row holding +inf or only -inf gets NaN (inf -
// inf), as the composed formula.
template <class T, class C>
void row_max_sum(const T* x, int64_t n, C& mx, double& sum) {
    C m = -std::numeric_limits<C>::infinity();
    for (int64_t i = 0; i < n; ++i) {
        const C v = convert<C>(x[i]);
        m = v > m || v != v ? v : m;
    }
    double s = 0;
    for (int64_t i = 0; i < n; ++i)
        s += double(std::exp(convert<C>(x[i]) - m));
    mx = m;
    sum = s;
}

template <class T, class C>
void run_rows(const RowsCall& c) {
    const int64_t n = c.n, R = c.rows;
    const int64_t grain_rows = std::max<int64_t>(1, (int64_t(1) << 14) / std::max<int64_t>(n, 1));
    auto each_row = [&](auto&& body) {
        parallel_range(R, grain_rows, [&](int64_t b, int64_t e) {
            for (int64_t r = b; r < e; ++r)
                body(r);
        });
    };
    const T* x = static_cast<const T*>(c.x);
    const T* y = static_cast<const T*>(c.y);
    const T* dy = static_cast<const T*>(c.dy);
    T* out = static_cast<T*>(c.out);
    const C nan = std::numeric_limits<C>::quiet_NaN();
    switch (c.op) {
        case RowsOp::softmax:
        case RowsOp::log_softmax: {
            const bool log = c.op == RowsOp::log_softmax;
            parallel_range(R, grain_rows, [&](int64_t rb, int64_t re) {
                std::vector<C> e(log ? 0 : size_t(n));  // exp(x - max) of the row, computed once
                for (int64_t r = rb; r < re; ++r) {
                    const T* xr = x + r * n;
                    T* o = out + r * n;
                    C m = -std::numeric_limits<C>::infinity();
                    for (int64_t i = 0; i < n; ++i) {
                        const C v = convert<C>(xr[i]);
                        m = v > m || v != v ? v : m;
                    }
                    double s = 0;
                    if (log) {
                        for (int64_t i = 0; i < n; ++i)
                            s += double(std::exp(convert<C>(xr[i]) - m));
                        const C ls = C(std::log(s));
                        for (int64_t i = 0; i < n; ++i)
                            o[i] = convert<T>((convert<C>(xr[i]) - m) - ls);
                    } else {
                        for (int64_t i = 0; i < n; ++i) {
                            e[size_t(i)] = C(std::exp(convert<C>(xr[i]) - m));
                            s += double(e[size_t(i)]);
                        }
                        // exp(x - m) / sum, not exp(x - lse): lse rounds at the logits' magnitude
                        const C inv = C(1.0 / s);
                        for (int64_t i = 0; i < n; ++i)
                            o[i] = convert<T>(e[size_t(i)] * inv);
                    }
                }
            });
            break;
        }
        case RowsOp::softmax_backward:
        case RowsOp::log_softmax_backward: {
            const bool log = c.op == RowsOp::log_softmax_backward;
            each_row([&](int64_t r) {
                const T *yr = y + r * n, *g = dy + r * n;
                T* o = out + r * n;
                double s = 0;
                for (int64_t i = 0; i < n; ++i)
                    s += log ? double(convert<C>(g[i]))
                             : double(convert<C>(g[i]) * convert<C>(yr[i]));
                const C sc = C(s);
                for (int64_t i = 0; i < n; ++i) {
                    const C yv = convert<C>(yr[i]), gv = convert<C>(g[i]);
                    o[i] = convert<T>(log ? gv - C(std::exp(yv)) * sc : yv * (gv - sc));
                }
            });
            break;
        }
        case RowsOp::cross_entropy: {
            const double ls = c.label_smoothing;
            double wall = double(n);
            if (c.weight) {
                wall = 0;
                for (int64_t i = 0; i < n; ++i)
                    wall += double(ld<T, C>(c.weight, i));
            }
            each_row([&](int64_t r) {
                const T* xr = x + r * n;
                C m;
                double s;
                row_max_sum(xr, n, m, s);
                const C lsum = C(std::log(s));
                st<C, C>(c.row_max, r, m);
                st<C, C>(c.logsum, r, lsum);
                const int64_t t = c.target[r];
                if (t == c.ignore_index) {
                    st<C, C>(c.loss, r, C(0));
                    st<C, C>(c.weight_out, r, C(0));
                    return;
                }
                if (t < 0 || t >= n) {
                    st<C, C>(c.loss, r, nan);
                    st<C, C>(c.weight_out, r, nan);
                    return;
                }
                const C wt = c.weight ? ld<T, C>(c.weight, t) : C(1);
                // lse - x[t] = log(sum) - (x[t] - max): no rounding at the logits' magnitude
                double loss = (1.0 - ls) * double(wt) * double(lsum - (convert<C>(xr[t]) - m));
                if (ls > 0) {
                    // sum_c w[c] (lse - x[c]) = W log(sum) - sum_c w[c] (x[c] - max)
                    double sx = 0;
                    for (int64_t i = 0; i < n; ++i)
                        sx += double(c.weight ? ld<T, C>(c.weight, i) : C(1)) *
                              double(convert<C>(xr[i]) - m);
                    loss += ls / double(n) * (wall * double(lsum) - sx);
                }
                st<C, C>(c.loss, r, C(loss));
                st<C, C>(c.weight_out, r, wt);
            });
            break;
        }
        case RowsOp::cross_entropy_backward: {
            const C ls = C(c.label_smoothing);
            C wall = C(n);
            if (c.weight) {
                double s = 0;
                for (int64_t i = 0; i < n; ++i)
                    s += double(ld<T, C>(c.weight, i));
                wall = C(s);
            }
            each_row([&](int64_t r) {
                const T* xr = x + r * n;
                T* o = out + r * n;
                const int64_t t = c.target[r];
                if (t == c.ignore_index || t < 0 || t >= n) {
                    const C fill = t == c.ignore_index ? C(0) : nan;
                    for (int64_t i = 0; i < n; ++i)
                        o[i] = convert<T>(fill);
                    return;
                }
                const C g = ld<C, C>(c.dloss, r), m = ld<C, C>(c.row_max, r);
                const C lsum = ld<C, C>(c.logsum, r);
                const C wt = c.weight ? ld<T, C>(c.weight, t) : C(1);
                const C a = g * (C(1) - ls) * wt, b = g * ls / C(n);
                for (int64_t i = 0; i < n; ++i) {
                    const C p = C(std::exp((convert<C>(xr[i]) - m) - lsum));
                    const C wi = c.weight ? ld<T, C>(c.weight, i) : C(1);
                    C v = a * (p - (i == t ? C(1) : C(0)));
                    if (ls != C(0)) v += b * (wall * p - wi);
                    o[i] = convert<T>(v);
                }
            });
            break;
        }
        case RowsOp::layer_norm: {
            each_row([&](int64_t r) {
                const T* xr = x + r * n;
                T* o = out + r * n;
                double s = 0;
                for (int64_t i = 0; i < n; ++i)
                    s += double(convert<C>(xr[i]));
                const C mean = C(s / double(n));
                double v = 0;
                for (int64_t i = 0; i < n; ++i) {
                    const C d = convert<C>(xr[i]) - mean;
                    v += double(d) * double(d);
                }
                const C rstd = C(1.0 / std::sqrt(v / double(n) + c.eps));
                st<C, C>(c.mean, r, mean);
                st<C, C>(c.rstd, r, rstd);
                for (int64_t i = 0; i < n; ++i) {
                    C h = (convert<C>(xr[i]) - mean) * rstd;
                    if (c.gamma) h *= ld<T, C>(c.gamma, i);
                    if (c.beta) h += ld<T, C>(c.beta, i);
                    o[i] = convert<T>(h);
                }
            });
            break;
        }
        case RowsOp::layer_norm_backward: {
            const int64_t P = std::clamp<int64_t>(c.parts, 1, std::max<int64_t>(R, 1));
            C* dg = static_cast<C*>(c.dgamma);
            C* db = static_cast<C*>(c.dbeta);
            parallel_for(P, [&](int64_t p) {
                const int64_t b = R * p / P, e = R * (p + 1) / P;
                C* dgp = dg ? dg + p * n : nullptr;
                C* dbp = db ? db + p * n : nullptr;
                for (int64_t i = 0; i < n; ++i) {
                    if (dgp) dgp[i] = C(0);
                    if (dbp) dbp[i] = C(0);
                }
                for (int64_t r = b; r < e; ++r) {
                    const T *xr = x + r * n, *g = dy + r * n;
                    T* o = out ? out + r * n : nullptr;
                    const C mean = ld<C, C>(c.mean, r), rstd = ld<C, C>(c.rstd, r);
                    double sa = 0, sb = 0;
                    for (int64_t i = 0; i < n; ++i) {
                        const C xh = (convert<C>(xr[i]) - mean) * rstd;
                        const C gv = convert<C>(g[i]);
                        const C d = c.gamma ? gv * ld<T, C>(c.gamma, i) : gv;
                        sa += double(d);
                        sb += double(d) * double(xh);
                        if (dgp) dgp[i] += gv * xh;
                        if (dbp) dbp[i] += gv;
                    }
                    if (!o) continue;
                    const C ma = C(sa / double(n)), mb = C(sb / double(n));
                    for (int64_t i = 0; i < n; ++i) {
                        const C xh = (convert<C>(xr[i]) - mean) * rstd;
                        const C gv = convert<C>(g[i]);
                        const C d = c.gamma ? gv * ld<T, C>(c.gamma, i) : gv;
                        o[i] = convert<T>(rstd * (d - ma - xh * mb));
                    }
                }
            });
            break;
        }
    }
}

}  // namespace

void rows(const RowsCall& c) {
    if (c.rows <= 0 && c.op != RowsOp::layer_norm_backward) return;
    switch (c.dtype) {
        case DType::float16:
            return run_rows<float16, float>(c);
        case DType::bfloat16:
            return run_rows<bfloat16, float>(c);
        case DType::float32:
            return run_rows<float, float>(c);
        case DType::float64:
            return run_rows<double, double>(c);
        default:
            throw TypeError("ember.nn: row-wise ops need a floating-point dtype, got " +
                            std::string(name(c.dtype)));
    }
}

}  // namespace ember::host
