// The factorizations' front-end (ember/linalg.hpp): dtype and shape checks, the column-major
// copies LAPACK and cuSOLVER work in, output allocation, and one backend solver call for the
// whole batch.
#include <string>

#include "backend/backend.hpp"
#include "core/record.hpp"
#include "ember/error.hpp"
#include "ember/linalg.hpp"
#include "ember/ops.hpp"

namespace ember::linalg {

namespace {

const char* const names[] = {"lu", "lu_solve", "cholesky", "qr", "qr_q", "eigh", "svd", "eig"};

std::string who(Factorization k) { return std::string("ember.linalg.") + names[int(k)]; }

Shape batch_of(const Array& a) { return Shape(a.shape().begin(), a.shape().end() - 2); }

Shape with(Shape s, std::initializer_list<int64_t> tail) {
    for (int64_t d : tail)
        s.push_back(d);
    return s;
}

// A C-contiguous buffer of shape (..., cols, rows): the column-major layout of `a` (..., rows,
// cols), always a fresh copy (LAPACK overwrites it). Its swapaxes(-1, -2) view is `a`'s shape.
Array colmajor_copy(const Array& a) { return a.swapaxes(-1, -2).copy(); }

// `a`'s column-major buffer without a copy when it already is one (read-only uses).
Array colmajor(const Array& a) {
    Array t = a.swapaxes(-1, -2);
    return t.is_contiguous() ? t : t.copy();
}

Array view_of(const Array& buf) { return buf.swapaxes(-1, -2); }

}  // namespace

Factors factorize(Factorization kind, const Array& a, const Array* b, const Array* ipiv,
                  const Array* tau, bool vectors, bool full) {
    const std::string w = who(kind);
    if (!a.defined()) throw ValueError(w + ": undefined operand");
    if ((a.grad_meta() || (b && b->grad_meta())) && autograd::detail::should_record(a, b ? *b : a))
        [[unlikely]]
        return autograd::detail::factorize(kind, a, b, ipiv, tau, vectors, full);
    const DType t = a.dtype();
    if (t != DType::float32 && t != DType::float64 && t != DType::complex64 &&
        t != DType::complex128)
        throw TypeError(w + ": array type " + std::string(name(t)) +
                        " is unsupported in linalg (float32, float64, complex64, complex128)");
    if (a.ndim() < 2)
        throw ValueError(w + ": " + std::to_string(a.ndim()) +
                         "-dimensional array given. Array must be at least two-dimensional");
    const int64_t m = a.shape()[size_t(a.ndim() - 2)], n = a.shape()[size_t(a.ndim() - 1)];
    const int64_t p = m < n ? m : n;
    const bool square_only = kind == Factorization::lu_solve || kind == Factorization::cholesky ||
                             kind == Factorization::eigh || kind == Factorization::eig;
    if (square_only && m != n)
        throw ValueError(w + ": Last 2 dimensions of the array must be square (got " +
                         std::to_string(m) + " x " + std::to_string(n) + ")");
    const Shape batch = batch_of(a);
    const Device dev = a.device();
    const int64_t count = numel(batch);

    backend::SolverCall c;
    c.op = backend::SolverOp(int(kind));
    c.device = dev.index;
    c.dtype = t;
    c.batch = count;
    c.m = m;
    c.n = n;
    c.vectors = vectors;
    c.full = full;

    Factors f;
    f.info = zeros(batch, DType::int32, dev);
    Array buf, bbuf, qbuf, ubuf, vbuf, abuf;
    auto need = [&](const Array* x, const char* what) -> const Array& {
        if (!x || !x->defined()) throw ValueError(w + ": missing " + std::string(what));
        if (x->device() != dev)
            throw ValueError(w + ": operands are on different devices (" + dev.str() + " and " +
                             x->device().str() + ")");
        return *x;
    };
    switch (kind) {
        case Factorization::lu:
            buf = colmajor_copy(a);
            f.ipiv = Array::empty(with(batch, {p}), DType::int64, dev);
            c.ipiv = reinterpret_cast<int64_t*>(f.ipiv.data());
            f.a = view_of(buf);
            break;
        case Factorization::lu_solve: {
            const Array& rhs = need(b, "right-hand sides");
            const Array& piv = need(ipiv, "pivots");
            if (rhs.dtype() != t || rhs.ndim() != a.ndim() || batch_of(rhs) != batch ||
                rhs.shape()[size_t(rhs.ndim() - 2)] != n)
                throw ValueError(w + ": right-hand sides must be (..., " + std::to_string(n) +
                                 ", k) of the matrix's dtype and batch shape");
            if (piv.dtype() != DType::int64 || piv.shape() != with(batch, {n}))
                throw ValueError(w + ": pivots must be int64 of shape (..., n)");
            buf = colmajor(a);
            abuf = piv.contiguous();
            c.ipiv = reinterpret_cast<int64_t*>(abuf.data());
            bbuf = colmajor_copy(rhs);
            c.k = rhs.shape()[size_t(rhs.ndim() - 1)];
            c.b = bbuf.data();
            f.a = view_of(bbuf);
            break;
        }
        case Factorization::cholesky:
        case Factorization::eigh:
            buf = colmajor_copy(a);
            f.a = view_of(buf);
            if (kind == Factorization::eigh) {
                f.w = Array::empty(with(batch, {n}), real_dtype(t), dev);
                c.w = f.w.data();
            }
            break;
        case Factorization::qr:
            buf = colmajor_copy(a);
            f.tau = Array::empty(with(batch, {p}), t, dev);
            c.tau = f.tau.data();
            f.a = view_of(buf);
            break;
        case Factorization::qr_q: {
            const Array& tv = need(tau, "tau");
            if (tv.dtype() != t || tv.shape() != with(batch, {p}))
                throw ValueError(w + ": tau must be (..., min(m, n)) of the matrix's dtype");
            const int64_t cols = full ? m : p;
            buf = zeros(with(batch, {cols, m}), t, dev);
            const int64_t keep = n < cols ? n : cols;
            if (keep > 0 && m > 0)
                view_of(buf)
                    .slice(a.ndim() - 1, 0, keep, 1)
                    .assign(a.slice(a.ndim() - 1, 0, keep, 1));
            abuf = tv.contiguous();
            c.tau = abuf.data();
            c.n = cols;
            c.k = p;
            f.a = view_of(buf);
            break;
        }
        case Factorization::svd: {
            buf = colmajor_copy(a);
            f.w = Array::empty(with(batch, {p}), real_dtype(t), dev);
            c.w = f.w.data();
            if (vectors) {
                const int64_t uc = full ? m : p, vr = full ? n : p;
                ubuf = Array::empty(with(batch, {uc, m}), t, dev);
                vbuf = Array::empty(with(batch, {n, vr}), t, dev);
                c.u = ubuf.data();
                c.vt = vbuf.data();
                f.u = view_of(ubuf);
                f.vt = view_of(vbuf);
            }
            break;
        }
        case Factorization::eig: {
            buf = colmajor_copy(a);
            const DType ct = complex_dtype(t);
            f.w = Array::empty(with(batch, {n}), ct, dev);
            c.w = f.w.data();
            if (vectors) {
                ubuf = Array::empty(with(batch, {n, n}), ct, dev);
                c.u = ubuf.data();
                f.a = view_of(ubuf);
            }
            break;
        }
    }
    c.a = buf.data();
    c.info = reinterpret_cast<int32_t*>(f.info.data());
    if (count > 0) backend::of(dev, w.c_str()).solver(c);
    return f;
}

}  // namespace ember::linalg
