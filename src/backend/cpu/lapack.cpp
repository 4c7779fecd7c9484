// LAPACK through the BLAS library (see lapack.hpp).
#include "backend/cpu/lapack.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdlib>
#include <limits>
#include <new>
#include <type_traits>

#include <dlfcn.h>

#include "backend/cpu/blas.hpp"
#include "ember/error.hpp"

namespace ember::host {

namespace {

using backend::SolverCall;
using backend::SolverOp;

enum Routine { getrf, getrs, potrf, geqrf, orgqr, syevd, gesdd, geev, n_routines };

// Fortran names without the trailing underscore, by dtype: float32, float64, complex64,
// complex128.
const char* const names[n_routines][4] = {
    {"sgetrf", "dgetrf", "cgetrf", "zgetrf"}, {"sgetrs", "dgetrs", "cgetrs", "zgetrs"},
    {"spotrf", "dpotrf", "cpotrf", "zpotrf"}, {"sgeqrf", "dgeqrf", "cgeqrf", "zgeqrf"},
    {"sorgqr", "dorgqr", "cungqr", "zungqr"}, {"ssyevd", "dsyevd", "cheevd", "zheevd"},
    {"sgesdd", "dgesdd", "cgesdd", "zgesdd"}, {"sgeev", "dgeev", "cgeev", "zgeev"},
};

struct Lapack {
    std::string path;
    bool ilp64 = false;
    std::string prefix, suffix;
    void* fn[n_routines][4] = {};
};

struct Loaded {
    Lapack lib;
    bool ok = false;
    std::string reason;
};

struct Variant {
    const char *prefix, *suffix;
    bool ilp64;
};
// OpenBLAS's symbol names, as in blas.cpp: NumPy's (scipy_ prefix, 64_ suffix: 64-bit integers),
// other ILP64 builds (64_ suffix), scipy-openblas32, and the plain Fortran names.
constexpr Variant variants[] = {
    {"scipy_", "64_", true}, {"", "64_", true}, {"scipy_", "", false}, {"", "", false}};

bool resolve(void* h, const Variant& v, Lapack& l) {
    for (int r = 0; r < n_routines; ++r)
        for (int t = 0; t < 4; ++t) {
            const std::string name = std::string(v.prefix) + names[r][t] + "_" + v.suffix;
            l.fn[r][t] = dlsym(h, name.c_str());
            if (!l.fn[r][t]) return false;
        }
    l.ilp64 = v.ilp64;
    l.prefix = v.prefix;
    l.suffix = v.suffix;
    return true;
}

void note(std::string& tried, const std::string& s) { tried += (tried.empty() ? "" : ", ") + s; }

bool load_from(const std::vector<std::string>& candidates, Loaded& l, std::string& tried) {
    for (const std::string& c : candidates) {
        void* h = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            note(tried, c);
            continue;
        }
        for (const Variant& v : variants)
            if (resolve(h, v, l.lib)) {
                l.lib.path = c;
                l.ok = true;
                return true;
            }
        note(tried, c + " (no LAPACK routines)");
        dlclose(h);
    }
    return false;
}

std::string no_lapack(const std::string& tried) {
    return "ember.linalg: no LAPACK library found (tried " + (tried.empty() ? "nothing" : tried) +
           "); set EMBER_LAPACK";
}

Loaded load() {
    Loaded l;
    std::string tried;
    // The BLAS library first, under the names its BLAS has: one OpenBLAS, one thread pool.
    if (const Blas* b = blas(); b && b->handle) {
        if (resolve(b->handle, {b->prefix, b->suffix, b->ilp64}, l.lib)) {
            l.lib.path = b->path;
            l.ok = true;
            return l;
        }
        note(tried, b->path + " (the BLAS library, no LAPACK routines)");
    }
    std::vector<std::string> candidates;
    if (const char* e = std::getenv("EMBER_LAPACK"); e && *e) candidates.emplace_back(e);
    candidates.emplace_back("liblapack.so.3");
    candidates.emplace_back("liblapack.so");
    if (!load_from(candidates, l, tried)) l.reason = no_lapack(tried);
    return l;
}

const Lapack& library() {
    static const Loaded l = load();
    if (!l.ok) throw Error(l.reason);
    return l.lib;
}

template <class T>
struct real_of {
    using type = T;
};
template <class R>
struct real_of<std::complex<R>> {
    using type = R;
};
template <class T>
using real_t = typename real_of<T>::type;
template <class T>
constexpr bool is_complex = !std::is_same_v<T, real_t<T>>;

using flen = size_t;  // gfortran's hidden length argument of a CHARACTER dummy

const char* op_name(SolverOp op) {
    switch (op) {
        case SolverOp::lu:
            return "lu";
        case SolverOp::lu_solve:
            return "lu_solve";
        case SolverOp::cholesky:
            return "cholesky";
        case SolverOp::qr:
            return "qr";
        case SolverOp::qr_q:
            return "qr_q";
        case SolverOp::eigh:
            return "eigh";
        case SolverOp::svd:
            return "svd";
        case SolverOp::eig:
            return "eig";
    }
    return "?";
}

int dtype_index(const SolverCall& c) {
    switch (c.dtype) {
        case DType::float32:
            return 0;
        case DType::float64:
            return 1;
        case DType::complex64:
            return 2;
        case DType::complex128:
            return 3;
        default:
            throw TypeError(std::string("ember.linalg.") + op_name(c.op) +
                            ": LAPACK has no routine for dtype " + std::string(name(c.dtype)));
    }
}

template <class X>
std::vector<X> buffer(int64_t n) {
    try {
        return std::vector<X>(size_t(std::max<int64_t>(n, 1)));
    } catch (const std::bad_alloc&) {
        throw MemoryError("ember.linalg: cannot allocate " + std::to_string(n) + " x " +
                          std::to_string(sizeof(X)) + " bytes of LAPACK work space");
    }
}

template <class T>
void set_identity(void* p, int64_t n) {
    T* a = static_cast<T*>(p);
    std::fill(a, a + n * n, T(0));
    for (int64_t i = 0; i < n; ++i)
        a[i * n + i] = T(1);
}

void set_identity(DType t, void* p, int64_t n) {
    switch (t) {
        case DType::float32:
            return set_identity<float>(p, n);
        case DType::float64:
            return set_identity<double>(p, n);
        case DType::complex64:
            return set_identity<std::complex<float>>(p, n);
        default:
            return set_identity<std::complex<double>>(p, n);
    }
}

void check(const SolverCall& c) {
    const std::string who = std::string("ember.linalg.") + op_name(c.op);
    if (c.batch < 0 || c.m < 0 || c.n < 0 || c.k < 0)
        throw ValueError(who + ": negative size (batch " + std::to_string(c.batch) + ", m " +
                         std::to_string(c.m) + ", n " + std::to_string(c.n) + ", k " +
                         std::to_string(c.k) + ")");
    if (c.op == SolverOp::qr_q && !(c.m >= c.n && c.n >= c.k))
        throw ValueError(who + ": needs m >= n >= k, got m " + std::to_string(c.m) + ", n " +
                         std::to_string(c.n) + ", k " + std::to_string(c.k));
    // Every buffer holds batch x (a few of m, n, k multiplied): keep those products in range.
    const int64_t big = std::max({c.m, c.n, c.k});
    int64_t prod = 0;
    if (__builtin_mul_overflow(big, big, &prod) || __builtin_mul_overflow(prod, c.batch, &prod) ||
        prod > std::numeric_limits<int64_t>::max() / 16)
        throw ValueError(who + ": sizes overflow");
    if (c.batch > 0 && !c.info) throw Error(who + ": internal error: no info array");
}

// The buffers a non-empty call (or a full SVD) writes or reads must be there.
void check_buffers(const SolverCall& c) {
    const auto need = [&](const void* p, const char* what) {
        if (!p)
            throw Error(std::string("ember.linalg.") + op_name(c.op) + ": internal error: no " +
                        what + " buffer");
    };
    const bool empty_svd = c.op == SolverOp::svd && (c.m == 0 || c.n == 0);
    if (!empty_svd) need(c.a, "a");
    switch (c.op) {
        case SolverOp::lu:
            need(c.ipiv, "ipiv");
            break;
        case SolverOp::lu_solve:
            need(c.ipiv, "ipiv");
            need(c.b, "b");
            break;
        case SolverOp::qr:
            need(c.tau, "tau");
            break;
        case SolverOp::qr_q:
            if (c.k > 0) need(c.tau, "tau");
            break;
        case SolverOp::eigh:
        case SolverOp::eig:
            need(c.w, "w");
            if (c.op == SolverOp::eig && c.vectors) need(c.u, "u");
            break;
        case SolverOp::svd:
            if (!empty_svd) need(c.w, "w");
            if (c.vectors && (c.full || !empty_svd)) {
                if (c.m > 0) need(c.u, "u");
                if (c.n > 0) need(c.vt, "vt");
            }
            break;
        case SolverOp::cholesky:
            break;
    }
}

// Calls with nothing to factor are finished here, without LAPACK (whose size rules differ by
// routine for empty matrices). Returns true when `c` was such a call.
bool finish_empty(const SolverCall& c) {
    const int64_t m = c.m, n = c.n;
    bool empty = false;
    switch (c.op) {
        case SolverOp::lu:
        case SolverOp::qr:
        case SolverOp::svd:
            empty = m == 0 || n == 0;
            break;
        case SolverOp::lu_solve:
            empty = n == 0 || c.k == 0;
            break;
        case SolverOp::cholesky:
        case SolverOp::qr_q:
        case SolverOp::eigh:
        case SolverOp::eig:
            empty = n == 0;
            break;
    }
    if (!empty) return false;
    std::fill(c.info, c.info + c.batch, 0);
    if (c.op == SolverOp::svd && c.vectors && c.full) {
        check_buffers(c);
        // U and V of an empty matrix are any unitary matrices; NumPy gives the identity.
        const int64_t isz = itemsize(c.dtype);
        for (int64_t i = 0; i < c.batch; ++i) {
            if (m > 0) set_identity(c.dtype, static_cast<char*>(c.u) + i * m * m * isz, m);
            if (n > 0) set_identity(c.dtype, static_cast<char*>(c.vt) + i * n * n * isz, n);
        }
    }
    return true;
}

template <class T, class I>
class Solver {
public:
    using R = real_t<T>;
    using C = std::complex<R>;

    Solver(const Lapack& lib, const SolverCall& c, int t) : lib_(lib), c_(c), t_(t) {}

    void run() {
        switch (c_.op) {
            case SolverOp::lu:
                return lu();
            case SolverOp::lu_solve:
                return lu_solve();
            case SolverOp::cholesky:
                return cholesky();
            case SolverOp::qr:
                return qr();
            case SolverOp::qr_q:
                return qr_q();
            case SolverOp::eigh:
                return eigh();
            case SolverOp::svd:
                return svd();
            case SolverOp::eig:
                return eig();
        }
    }

private:
    const Lapack& lib_;
    const SolverCall& c_;
    int t_;

    template <class F>
    F fn(Routine r) const {
        return reinterpret_cast<F>(lib_.fn[r][t_]);
    }

    std::string where() const { return std::string("ember.linalg.") + op_name(c_.op); }

    // A size as the library's integer; 32-bit libraries cannot take every size.
    I to_int(int64_t v) const {
        if (v > int64_t(std::numeric_limits<I>::max()))
            throw ValueError(where() + ": the LAPACK in use (" + lib_.path +
                             ") takes 32-bit sizes; " + std::to_string(v) + " is too large");
        return I(v);
    }

    // The size a work-space query returned (a floating value; float32 may round it down).
    I queried(T v) const {
        double d = double(std::real(v));
        if constexpr (std::is_same_v<R, float>) d *= 1.0 + 1e-6;
        if (!(d < 9.0e18)) throw ValueError(where() + ": LAPACK asked for an impossible work size");
        return to_int(std::max<int64_t>(1, int64_t(std::ceil(d))));
    }

    void done(Routine r, int64_t i, I info) const {
        c_.info[i] = int32_t(info);
        if (info < 0)
            throw ValueError(where() + ": LAPACK " + names[r][t_] + " rejected argument " +
                             std::to_string(-int64_t(info)) + " (an internal error in ember)");
    }

    T* at(void* p, int64_t i, int64_t per) const { return static_cast<T*>(p) + i * per; }

    void lu() {
        const int64_t m = c_.m, n = c_.n, p = std::min(m, n);
        const I M = to_int(m), N = to_int(n);
        I info = 0;
        auto f = fn<void (*)(const I*, const I*, T*, const I*, I*, I*)>(getrf);
        std::vector<I> piv = std::is_same_v<I, int64_t> ? std::vector<I>() : buffer<I>(p);
        for (int64_t i = 0; i < c_.batch; ++i) {
            int64_t* out = c_.ipiv + i * p;
            I* ip = piv.empty() ? reinterpret_cast<I*>(out) : piv.data();
            f(&M, &N, at(c_.a, i, m * n), &M, ip, &info);
            if (!piv.empty()) std::copy(piv.begin(), piv.begin() + p, out);
            done(getrf, i, info);
        }
    }

    void lu_solve() {
        const int64_t n = c_.n, k = c_.k;
        const I N = to_int(n), K = to_int(k);
        I info = 0;
        auto f = fn<void (*)(const char*, const I*, const I*, const T*, const I*, const I*, T*,
                             const I*, I*, flen)>(getrs);
        std::vector<I> piv = std::is_same_v<I, int64_t> ? std::vector<I>() : buffer<I>(n);
        // getrs swaps rows by these indices unchecked: a bad one would write out of bounds.
        // All are checked first, so a bad one leaves every b as it was.
        for (int64_t j = 0; j < c_.batch * n; ++j)
            if (c_.ipiv[j] < 1 || c_.ipiv[j] > n)
                throw ValueError(where() + ": pivot index " + std::to_string(c_.ipiv[j]) +
                                 " is out of range [1, " + std::to_string(n) + "]");
        for (int64_t i = 0; i < c_.batch; ++i) {
            const int64_t* in = c_.ipiv + i * n;
            if (!piv.empty()) std::copy(in, in + n, piv.begin());
            const I* ip = piv.empty() ? reinterpret_cast<const I*>(in) : piv.data();
            f("N", &N, &K, at(c_.a, i, n * n), &N, ip, at(c_.b, i, n * k), &N, &info, 1);
            done(getrs, i, info);
        }
    }

    void cholesky() {
        const int64_t n = c_.n;
        const I N = to_int(n);
        I info = 0;
        auto f = fn<void (*)(const char*, const I*, T*, const I*, I*, flen)>(potrf);
        for (int64_t i = 0; i < c_.batch; ++i) {
            f("L", &N, at(c_.a, i, n * n), &N, &info, 1);
            done(potrf, i, info);
        }
    }

    void qr() {
        const int64_t m = c_.m, n = c_.n, p = std::min(m, n);
        const I M = to_int(m), N = to_int(n);
        I info = 0, lwork = -1;
        auto f = fn<void (*)(const I*, const I*, T*, const I*, T*, T*, const I*, I*)>(geqrf);
        T q{};
        f(&M, &N, at(c_.a, 0, 0), &M, at(c_.tau, 0, 0), &q, &lwork, &info);
        done(geqrf, 0, info);
        lwork = queried(q);
        std::vector<T> work = buffer<T>(lwork);
        for (int64_t i = 0; i < c_.batch; ++i) {
            f(&M, &N, at(c_.a, i, m * n), &M, at(c_.tau, i, p), work.data(), &lwork, &info);
            done(geqrf, i, info);
        }
    }

    void qr_q() {
        const int64_t m = c_.m, n = c_.n, k = c_.k;
        const I M = to_int(m), N = to_int(n), K = to_int(k);
        I info = 0, lwork = -1;
        auto f =
            fn<void (*)(const I*, const I*, const I*, T*, const I*, const T*, T*, const I*, I*)>(
                orgqr);
        T q{}, no_tau{};
        const auto tau = [&](int64_t i) -> const T* { return k ? at(c_.tau, i, k) : &no_tau; };
        f(&M, &N, &K, at(c_.a, 0, 0), &M, tau(0), &q, &lwork, &info);
        done(orgqr, 0, info);
        lwork = queried(q);
        std::vector<T> work = buffer<T>(lwork);
        for (int64_t i = 0; i < c_.batch; ++i) {
            f(&M, &N, &K, at(c_.a, i, m * n), &M, tau(i), work.data(), &lwork, &info);
            done(orgqr, i, info);
        }
    }

    void eigh() {
        const int64_t n = c_.n;
        const I N = to_int(n);
        const char* jobz = c_.vectors ? "V" : "N";
        I info = 0, lwork = -1, liwork = -1, lrwork = -1;
        T q{};
        I iq = 0;
        R rq = 0;
        R* w0 = static_cast<R*>(c_.w);
        if constexpr (!is_complex<T>) {
            auto f = fn<void (*)(const char*, const char*, const I*, T*, const I*, R*, T*, const I*,
                                 I*, const I*, I*, flen, flen)>(syevd);
            f(jobz, "L", &N, at(c_.a, 0, 0), &N, w0, &q, &lwork, &iq, &liwork, &info, 1, 1);
            done(syevd, 0, info);
            lwork = queried(q);
            liwork = to_int(std::max<int64_t>(1, int64_t(iq)));
            std::vector<T> work = buffer<T>(lwork);
            std::vector<I> iwork = buffer<I>(liwork);
            for (int64_t i = 0; i < c_.batch; ++i) {
                f(jobz, "L", &N, at(c_.a, i, n * n), &N, w0 + i * n, work.data(), &lwork,
                  iwork.data(), &liwork, &info, 1, 1);
                done(syevd, i, info);
            }
        } else {
            auto f = fn<void (*)(const char*, const char*, const I*, T*, const I*, R*, T*, const I*,
                                 R*, const I*, I*, const I*, I*, flen, flen)>(syevd);
            f(jobz, "L", &N, at(c_.a, 0, 0), &N, w0, &q, &lwork, &rq, &lrwork, &iq, &liwork, &info,
              1, 1);
            done(syevd, 0, info);
            lwork = queried(q);
            lrwork = queried(T(rq));
            liwork = to_int(std::max<int64_t>(1, int64_t(iq)));
            std::vector<T> work = buffer<T>(lwork);
            std::vector<R> rwork = buffer<R>(lrwork);
            std::vector<I> iwork = buffer<I>(liwork);
            for (int64_t i = 0; i < c_.batch; ++i) {
                f(jobz, "L", &N, at(c_.a, i, n * n), &N, w0 + i * n, work.data(), &lwork,
                  rwork.data(), &lrwork, iwork.data(), &liwork, &info, 1, 1);
                done(syevd, i, info);
            }
        }
    }

    void svd() {
        const int64_t m = c_.m, n = c_.n, p = std::min(m, n), mx = std::max(m, n);
        const bool vec = c_.vectors, full = c_.full;
        const char* jobz = !vec ? "N" : full ? "A" : "S";
        const int64_t ucols = full ? m : p, vrows = full ? n : p;
        const I M = to_int(m), N = to_int(n);
        const I ldu = vec ? M : 1, ldvt = vec ? to_int(vrows) : 1;
        I info = 0, lwork = -1;
        std::vector<I> iwork = buffer<I>(8 * p);
        T q{}, no_u{}, no_vt{};
        R* s0 = static_cast<R*>(c_.w);
        const auto u = [&](int64_t i) { return vec ? at(c_.u, i, m * ucols) : &no_u; };
        const auto vt = [&](int64_t i) { return vec ? at(c_.vt, i, vrows * n) : &no_vt; };
        if constexpr (!is_complex<T>) {
            auto f = fn<void (*)(const char*, const I*, const I*, T*, const I*, R*, T*, const I*,
                                 T*, const I*, T*, const I*, I*, I*, flen)>(gesdd);
            f(jobz, &M, &N, at(c_.a, 0, 0), &M, s0, u(0), &ldu, vt(0), &ldvt, &q, &lwork,
              iwork.data(), &info, 1);
            done(gesdd, 0, info);
            lwork = queried(q);
            std::vector<T> work = buffer<T>(lwork);
            for (int64_t i = 0; i < c_.batch; ++i) {
                f(jobz, &M, &N, at(c_.a, i, m * n), &M, s0 + i * p, u(i), &ldu, vt(i), &ldvt,
                  work.data(), &lwork, iwork.data(), &info, 1);
                done(gesdd, i, info);
            }
        } else {
            // ?gesdd does not report RWORK's size; these are its documented minimums (LAPACK
            // before 3.7 wanted 7 * p for JOBZ = 'N').
            const int64_t lrwork =
                vec ? std::max(5 * p * p + 5 * p, 2 * mx * p + 2 * p * p + p) : 7 * p;
            to_int(lrwork);
            std::vector<R> rwork = buffer<R>(lrwork);
            auto f = fn<void (*)(const char*, const I*, const I*, T*, const I*, R*, T*, const I*,
                                 T*, const I*, T*, const I*, R*, I*, I*, flen)>(gesdd);
            f(jobz, &M, &N, at(c_.a, 0, 0), &M, s0, u(0), &ldu, vt(0), &ldvt, &q, &lwork,
              rwork.data(), iwork.data(), &info, 1);
            done(gesdd, 0, info);
            lwork = queried(q);
            std::vector<T> work = buffer<T>(lwork);
            for (int64_t i = 0; i < c_.batch; ++i) {
                f(jobz, &M, &N, at(c_.a, i, m * n), &M, s0 + i * p, u(i), &ldu, vt(i), &ldvt,
                  work.data(), &lwork, rwork.data(), iwork.data(), &info, 1);
                done(gesdd, i, info);
            }
        }
    }

    void eig() {
        const int64_t n = c_.n;
        const I N = to_int(n), one = 1;
        const bool vec = c_.vectors;
        const char* jobvr = vec ? "V" : "N";
        const I ldvr = vec ? N : 1;
        I info = 0, lwork = -1;
        T q{}, no_vl{};
        C* w0 = static_cast<C*>(c_.w);
        C* u0 = static_cast<C*>(c_.u);
        if constexpr (!is_complex<T>) {
            auto f = fn<void (*)(const char*, const char*, const I*, T*, const I*, T*, T*, T*,
                                 const I*, T*, const I*, T*, const I*, I*, flen, flen)>(geev);
            std::vector<T> wr = buffer<T>(n), wi = buffer<T>(n), vr = buffer<T>(vec ? n * n : 1);
            f("N", jobvr, &N, at(c_.a, 0, 0), &N, wr.data(), wi.data(), &no_vl, &one, vr.data(),
              &ldvr, &q, &lwork, &info, 1, 1);
            done(geev, 0, info);
            lwork = queried(q);
            std::vector<T> work = buffer<T>(lwork);
            for (int64_t i = 0; i < c_.batch; ++i) {
                f("N", jobvr, &N, at(c_.a, i, n * n), &N, wr.data(), wi.data(), &no_vl, &one,
                  vr.data(), &ldvr, work.data(), &lwork, &info, 1, 1);
                done(geev, i, info);
                C* w = w0 + i * n;
                for (int64_t j = 0; j < n; ++j)
                    w[j] = C(wr[size_t(j)], wi[size_t(j)]);
                if (!vec) continue;
                // A complex pair (wi > 0, then its conjugate) packs v = vr[:,j] + i vr[:,j+1].
                C* u = u0 + i * n * n;
                for (int64_t j = 0; j < n; ++j) {
                    const T* re = vr.data() + j * n;
                    if (wi[size_t(j)] != 0 && j + 1 < n) {
                        const T* im = re + n;
                        for (int64_t r = 0; r < n; ++r) {
                            u[j * n + r] = C(re[r], im[r]);
                            u[(j + 1) * n + r] = C(re[r], -im[r]);
                        }
                        ++j;
                    } else {
                        for (int64_t r = 0; r < n; ++r)
                            u[j * n + r] = C(re[r], 0);
                    }
                }
            }
        } else {
            auto f = fn<void (*)(const char*, const char*, const I*, T*, const I*, T*, T*, const I*,
                                 T*, const I*, T*, const I*, R*, I*, flen, flen)>(geev);
            T no_vr{};
            const auto vr = [&](int64_t i) { return vec ? u0 + i * n * n : &no_vr; };
            std::vector<R> rwork = buffer<R>(2 * n);
            f("N", jobvr, &N, at(c_.a, 0, 0), &N, w0, &no_vl, &one, vr(0), &ldvr, &q, &lwork,
              rwork.data(), &info, 1, 1);
            done(geev, 0, info);
            lwork = queried(q);
            std::vector<T> work = buffer<T>(lwork);
            for (int64_t i = 0; i < c_.batch; ++i) {
                f("N", jobvr, &N, at(c_.a, i, n * n), &N, w0 + i * n, &no_vl, &one, vr(i), &ldvr,
                  work.data(), &lwork, rwork.data(), &info, 1, 1);
                done(geev, i, info);
            }
        }
    }
};

template <class I>
void dispatch(const Lapack& lib, const SolverCall& c, int t) {
    switch (t) {
        case 0:
            return Solver<float, I>(lib, c, t).run();
        case 1:
            return Solver<double, I>(lib, c, t).run();
        case 2:
            return Solver<std::complex<float>, I>(lib, c, t).run();
        default:
            return Solver<std::complex<double>, I>(lib, c, t).run();
    }
}

}  // namespace

void lapack_solver(const SolverCall& c) {
    check(c);
    const int t = dtype_index(c);
    if (c.batch == 0 || finish_empty(c)) return;
    check_buffers(c);
    const Lapack& lib = library();
    if (lib.ilp64)
        dispatch<int64_t>(lib, c, t);
    else
        dispatch<int32_t>(lib, c, t);
}

std::string lapack_library() {
    const Lapack& l = library();
    return l.path + " (" + (l.ilp64 ? "ILP64" : "LP64") + ", symbols like " + l.prefix + "dgesdd_" +
           l.suffix + ")";
}

namespace detail {
std::string lapack_probe(const std::vector<std::string>& candidates) {
    Loaded l;
    std::string tried;
    return load_from(candidates, l, tried) ? std::string() : no_lapack(tried);
}
}  // namespace detail

}  // namespace ember::host
