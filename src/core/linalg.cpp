// matmul's front-end: NumPy's rules (1-D operands, broadcast batch dimensions, promotion), and
// operands laid out as BLAS takes them (row-major or transposed views pass through; other
// layouts are copied once) before the backends' matmul family.
#include <atomic>
#include <string>

#include "backend/backend.hpp"
#include "core/record.hpp"
#include "ember/error.hpp"
#include "ember/ops.hpp"

namespace ember {

namespace {

std::atomic<MatmulPrecision> precision{MatmulPrecision::highest};

struct Layout {
    bool ok = false, trans = false;
    int64_t ld = 0;
};

// How BLAS can read a rows x cols matrix with these element strides, if it can.
Layout blas_layout(int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
    const int64_t r1 = rows > 1 ? rows : 1, c1 = cols > 1 ? cols : 1;
    if ((cols == 1 || cs == 1) && (rows == 1 || rs >= c1))
        return {true, false, rows == 1 ? c1 : rs};
    if ((rows == 1 || rs == 1) && (cols == 1 || cs >= r1)) return {true, true, cols == 1 ? r1 : cs};
    return {};
}

}  // namespace

void set_matmul_precision(MatmulPrecision p) { precision.store(p); }
MatmulPrecision matmul_precision() { return precision.load(); }

Array matmul(const Array& a, const Array& b) {
    const char* who = "ember.matmul";
    if (!a.defined() || !b.defined()) throw ValueError(std::string(who) + ": undefined operand");
    if ((a.grad_meta() || b.grad_meta()) && autograd::detail::should_record(a, b)) [[unlikely]]
        return autograd::detail::matmul(a, b);
    for (int i = 0; i < 2; ++i)
        if ((i ? b : a).ndim() == 0)
            throw ValueError(std::string(who) + ": Input operand " + std::to_string(i) +
                             " does not have enough dimensions (it is 0-d; use multiply)");
    if (a.device() != b.device())
        throw ValueError(std::string(who) + ": operands are on different devices (" +
                         a.device().str() + " and " + b.device().str() +
                         "); move one with .to(device)");
    const Operand ops_[2] = {a, b};
    const DType t = result_type(ops_);
    Array x = a.ndim() == 1 ? a.expand_dims(0) : a;
    Array y = b.ndim() == 1 ? b.expand_dims(1) : b;
    const int64_t m = x.shape()[x.ndim() - 2], k = x.shape()[x.ndim() - 1];
    const int64_t k2 = y.shape()[y.ndim() - 2], n = y.shape()[y.ndim() - 1];
    if (k != k2)
        throw ValueError(std::string(who) +
                         ": Input operand 1 has a mismatch in its core dimension 0, with gufunc "
                         "signature (n?,k),(k,m?)->(n?,m?) (size " +
                         std::to_string(k2) + " is different from " + std::to_string(k) + ")");
    if (x.dtype() != t) x = x.astype(t);
    if (y.dtype() != t) y = y.astype(t);
    const Shape bx(x.shape().begin(), x.shape().end() - 2),
        by(y.shape().begin(), y.shape().end() - 2);
    const Shape batch = broadcast_shapes(bx, by, who);
    Shape out_shape = batch;
    out_shape.push_back(m);
    out_shape.push_back(n);
    Array out = (k == 0) ? zeros(out_shape, t, a.device()) : Array::empty(out_shape, t, a.device());
    if (k > 0 && out.size() > 0) {
        backend::MatmulLoop l;
        l.device = a.device().index;
        l.dtype = t;
        l.m = m;
        l.n = n;
        l.k = k;
        const Array* srcs[2] = {&x, &y};
        Array held[2];
        for (int i = 0; i < 2; ++i) {
            Array v = *srcs[i];
            const int nd = v.ndim();
            const int64_t rows = v.shape()[nd - 2], cols = v.shape()[nd - 1];
            Layout lay = blas_layout(rows, cols, v.strides()[nd - 2], v.strides()[nd - 1]);
            if (!lay.ok) {
                v = v.copy();
                lay = blas_layout(rows, cols, v.strides()[nd - 2], v.strides()[nd - 1]);
            }
            Shape full = batch;
            full.push_back(rows);
            full.push_back(cols);
            held[i] = v.broadcast_to(full);
            l.trans[i + 1] = lay.trans;
            l.ld[i + 1] = lay.ld;
            l.data[i + 1] = held[i].data();
        }
        l.ld[0] = n;
        l.data[0] = out.data();
        // Batch dims of size 1 carry no stride information: dropped.
        for (size_t d = 0; d < batch.size(); ++d) {
            if (batch[d] == 1) continue;
            l.batch.push_back(batch[d]);
            l.batch_strides[0].push_back(out.strides()[d]);
            l.batch_strides[1].push_back(held[0].strides()[d]);
            l.batch_strides[2].push_back(held[1].strides()[d]);
        }
        backend::of(a.device(), who).matmul(l);
    }
    // 1-D operands: their added dimension goes again.
    if (a.ndim() == 1 && b.ndim() == 1) return out.reshape({});
    if (a.ndim() == 1) return out.squeeze({int64_t(out.ndim() - 2)});
    if (b.ndim() == 1) return out.squeeze({int64_t(out.ndim() - 1)});
    return out;
}

}  // namespace ember
