// The CPU backend's LAPACK family (host::lapack_solver): each op's defining identity per dtype.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdlib>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "backend/cpu/lapack.hpp"
#include "ember/error.hpp"

using namespace ember;
using backend::SolverCall;
using backend::SolverOp;
using cd = std::complex<double>;
using CMat = std::vector<cd>;  // column-major, in double precision for the checks

namespace {

template <class T>
struct Real {
    using type = T;
};
template <class R>
struct Real<std::complex<R>> {
    using type = R;
};
template <class T>
using real_t = typename Real<T>::type;
template <class T>
constexpr bool is_complex = !std::is_same_v<T, real_t<T>>;

template <class T>
DType dtype_of() {
    if constexpr (std::is_same_v<T, float>) return DType::float32;
    if constexpr (std::is_same_v<T, double>) return DType::float64;
    if constexpr (std::is_same_v<T, std::complex<float>>) return DType::complex64;
    return DType::complex128;
}

template <class T>
double tol() {
    return std::is_same_v<real_t<T>, float> ? 1e-4 : 1e-11;
}

template <class T>
T from(cd z) {
    if constexpr (is_complex<T>)
        return T(real_t<T>(z.real()), real_t<T>(z.imag()));
    else
        return T(z.real());
}

template <class T>
std::vector<T> random_matrices(int64_t count, unsigned seed) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<double> d(-1, 1);
    std::vector<T> out(static_cast<size_t>(count));
    for (T& x : out) {
        const double re = d(gen);
        x = from<T>(is_complex<T> ? cd(re, d(gen)) : cd(re, 0));
    }
    return out;
}

// Matrix i (rows x cols) of a batch, widened to complex<double>.
template <class T>
CMat get(const std::vector<T>& v, int64_t i, int64_t rows, int64_t cols) {
    CMat out(size_t(rows * cols));
    for (int64_t j = 0; j < rows * cols; ++j)
        out[size_t(j)] = cd(v[size_t(i * rows * cols + j)]);
    return out;
}

CMat mul(const CMat& a, const CMat& b, int64_t m, int64_t k, int64_t n) {
    CMat c(size_t(m * n));
    for (int64_t j = 0; j < n; ++j)
        for (int64_t l = 0; l < k; ++l)
            for (int64_t i = 0; i < m; ++i)
                c[size_t(j * m + i)] += a[size_t(l * m + i)] * b[size_t(j * k + l)];
    return c;
}

CMat adjoint(const CMat& a, int64_t m, int64_t n) {
    CMat t(size_t(m * n));
    for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < m; ++i)
            t[size_t(i * n + j)] = std::conj(a[size_t(j * m + i)]);
    return t;
}

CMat eye(int64_t n) {
    CMat e(size_t(n * n));
    for (int64_t i = 0; i < n; ++i)
        e[size_t(i * n + i)] = 1;
    return e;
}

double max_diff(const CMat& a, const CMat& b) {
    double d = 0;
    for (size_t i = 0; i < a.size(); ++i)
        d = std::max(d, std::abs(a[i] - b[i]));
    return d;
}

template <class T>
SolverCall make_call(SolverOp op, int64_t batch, int64_t m, int64_t n, int64_t k = 0) {
    SolverCall c;
    c.op = op;
    c.dtype = dtype_of<T>();
    c.batch = batch;
    c.m = m;
    c.n = n;
    c.k = k;
    return c;
}

// A well-conditioned Hermitian positive definite n x n matrix per batch entry.
template <class T>
std::vector<T> hpd_matrices(int64_t batch, int64_t n, unsigned seed) {
    const std::vector<T> r = random_matrices<T>(batch * n * n, seed);
    std::vector<T> out(size_t(batch * n * n));
    for (int64_t b = 0; b < batch; ++b) {
        const CMat m = get(r, b, n, n);
        CMat h = mul(m, adjoint(m, n, n), n, n, n);
        for (int64_t i = 0; i < n; ++i)
            h[size_t(i * n + i)] += double(n);
        for (int64_t j = 0; j < n * n; ++j)
            out[size_t(b * n * n + j)] = from<T>(h[size_t(j)]);
    }
    return out;
}

template <class T>
class Lapack : public ::testing::Test {};
using Types = ::testing::Types<float, double, std::complex<float>, std::complex<double>>;
TYPED_TEST_SUITE(Lapack, Types);

struct Dims2 {
    int64_t m, n;
};
// Small ones, and ones large enough for LAPACK's blocked code paths (and bigger work spaces).
const Dims2 shapes[] = {{4, 4}, {5, 3}, {3, 5}, {130, 70}, {70, 130}};

// The tolerance for an n-sized problem: rounding error grows with the size.
template <class T>
double tol_for(int64_t n) {
    return tol<T>() * 10 * double(std::max<int64_t>(1, n / 8));
}

}  // namespace

TEST(LapackLibrary, ResolvesAndReportsItsLibrary) {
    const std::string lib = host::lapack_library();
    std::printf("LAPACK: %s\n", lib.c_str());
    // Pointing EMBER_BLAS at an OpenBLAS must give LAPACK from that same library.
    const char* b = std::getenv("EMBER_BLAS");
    if (b && std::string(b).find("openblas64") != std::string::npos) {
        EXPECT_NE(lib.find(b), std::string::npos) << lib;
        EXPECT_NE(lib.find("ILP64"), std::string::npos) << lib;
    }
}

TEST(LapackLibrary, MissingLibraryIsAnErrorNotACrash) {
    const std::string none = host::detail::lapack_probe({"/nonexistent/liblapack.so"});
    EXPECT_NE(none.find("no LAPACK library found"), std::string::npos) << none;
    EXPECT_NE(none.find("/nonexistent/liblapack.so"), std::string::npos) << none;
    EXPECT_NE(none.find("EMBER_LAPACK"), std::string::npos) << none;
    const std::string libc = host::detail::lapack_probe({"libc.so.6"});
    EXPECT_NE(libc.find("libc.so.6 (no LAPACK routines)"), std::string::npos) << libc;
}

TYPED_TEST(Lapack, LuReconstructsPA) {
    using T = TypeParam;
    const int64_t batch = 3;
    for (const Dims2 s : shapes) {
        const int64_t m = s.m, n = s.n, p = std::min(m, n);
        const std::vector<T> a0 = random_matrices<T>(batch * m * n, 1);
        std::vector<T> a = a0;
        std::vector<int64_t> ipiv(size_t(batch * p));
        std::vector<int32_t> info(batch, -7);
        SolverCall c = make_call<T>(SolverOp::lu, batch, m, n);
        c.a = a.data();
        c.ipiv = ipiv.data();
        c.info = info.data();
        host::lapack_solver(c);
        for (int64_t b = 0; b < batch; ++b) {
            EXPECT_EQ(info[size_t(b)], 0);
            const CMat f = get(a, b, m, n);
            CMat l(size_t(m * p)), u(size_t(p * n));
            for (int64_t j = 0; j < p; ++j)
                for (int64_t i = 0; i < m; ++i)
                    l[size_t(j * m + i)] = i == j ? cd(1) : i > j ? f[size_t(j * m + i)] : cd(0);
            for (int64_t j = 0; j < n; ++j)
                for (int64_t i = 0; i < p; ++i)
                    u[size_t(j * p + i)] = i <= j ? f[size_t(j * m + i)] : cd(0);
            CMat pa = get(a0, b, m, n);
            for (int64_t i = 0; i < p; ++i) {
                const int64_t r = ipiv[size_t(b * p + i)] - 1;
                ASSERT_GE(r, i);
                ASSERT_LT(r, m);
                for (int64_t j = 0; j < n; ++j)
                    std::swap(pa[size_t(j * m + i)], pa[size_t(j * m + r)]);
            }
            EXPECT_LT(max_diff(mul(l, u, m, p, n), pa), tol_for<T>(std::max(m, n)))
                << m << "x" << n;
        }
    }
}

TYPED_TEST(Lapack, LuOfSingularMatrixReportsInfo) {
    using T = TypeParam;
    const int64_t n = 3;
    std::vector<T> a = random_matrices<T>(2 * n * n, 2);
    for (int64_t i = 0; i < n; ++i)
        a[size_t(1 * n + i)] = T(0);  // matrix 0: column 1 is zero
    std::vector<int64_t> ipiv(2 * n);
    std::vector<int32_t> info(2, -7);
    SolverCall c = make_call<T>(SolverOp::lu, 2, n, n);
    c.a = a.data();
    c.ipiv = ipiv.data();
    c.info = info.data();
    host::lapack_solver(c);
    EXPECT_GT(info[0], 0);
    EXPECT_EQ(info[1], 0);
}

TYPED_TEST(Lapack, LuSolveSolves) {
    using T = TypeParam;
    const int64_t batch = 3, n = 4, k = 2;
    std::vector<T> a0 = random_matrices<T>(batch * n * n, 3);
    for (int64_t b = 0; b < batch; ++b)
        for (int64_t i = 0; i < n; ++i)
            a0[size_t(b * n * n + i * n + i)] += T(real_t<T>(n));
    const std::vector<T> b0 = random_matrices<T>(batch * n * k, 4);
    std::vector<T> a = a0, x = b0;
    std::vector<int64_t> ipiv(size_t(batch * n));
    std::vector<int32_t> info(batch, -7);
    SolverCall c = make_call<T>(SolverOp::lu, batch, n, n);
    c.a = a.data();
    c.ipiv = ipiv.data();
    c.info = info.data();
    host::lapack_solver(c);
    c = make_call<T>(SolverOp::lu_solve, batch, n, n, k);
    c.a = a.data();
    c.b = x.data();
    c.ipiv = ipiv.data();
    c.info = info.data();
    std::fill(info.begin(), info.end(), -7);
    host::lapack_solver(c);
    for (int64_t b = 0; b < batch; ++b) {
        EXPECT_EQ(info[size_t(b)], 0);
        const CMat ax = mul(get(a0, b, n, n), get(x, b, n, k), n, n, k);
        EXPECT_LT(max_diff(ax, get(b0, b, n, k)), tol<T>() * 10);
    }
}

TYPED_TEST(Lapack, LuSolveRejectsBadPivots) {
    using T = TypeParam;
    std::vector<T> a = {T(1), T(0), T(0), T(1)}, b = {T(1), T(2)};
    std::vector<int64_t> ipiv = {0, 2};
    std::vector<int32_t> info(1);
    SolverCall c = make_call<T>(SolverOp::lu_solve, 1, 2, 2, 1);
    c.a = a.data();
    c.b = b.data();
    c.ipiv = ipiv.data();
    c.info = info.data();
    EXPECT_THROW(host::lapack_solver(c), ValueError);
    ipiv = {1, 3};
    EXPECT_THROW(host::lapack_solver(c), ValueError);
}

TYPED_TEST(Lapack, CholeskyReconstructsA) {
    using T = TypeParam;
    const int64_t batch = 3, n = 4;
    const std::vector<T> a0 = hpd_matrices<T>(batch, n, 5);
    std::vector<T> a = a0;
    const T sentinel = T(42);
    for (int64_t b = 0; b < batch; ++b)
        for (int64_t j = 0; j < n; ++j)
            for (int64_t i = 0; i < j; ++i)
                a[size_t(b * n * n + j * n + i)] = sentinel;  // potrf lower must not read these
    std::vector<int32_t> info(batch, -7);
    SolverCall c = make_call<T>(SolverOp::cholesky, batch, n, n);
    c.a = a.data();
    c.info = info.data();
    host::lapack_solver(c);
    for (int64_t b = 0; b < batch; ++b) {
        EXPECT_EQ(info[size_t(b)], 0);
        CMat l = get(a, b, n, n);
        for (int64_t j = 0; j < n; ++j)
            for (int64_t i = 0; i < j; ++i) {
                EXPECT_EQ(l[size_t(j * n + i)], cd(sentinel)) << "upper triangle touched";
                l[size_t(j * n + i)] = 0;
            }
        EXPECT_LT(max_diff(mul(l, adjoint(l, n, n), n, n, n), get(a0, b, n, n)), tol<T>() * 40);
    }
}

TYPED_TEST(Lapack, CholeskyOfIndefiniteMatrixReportsInfo) {
    using T = TypeParam;
    std::vector<T> a = {T(1), T(2), T(2), T(1), T(1), T(0), T(0), T(1)};
    std::vector<int32_t> info(2, -7);
    SolverCall c = make_call<T>(SolverOp::cholesky, 2, 2, 2);
    c.a = a.data();
    c.info = info.data();
    host::lapack_solver(c);
    EXPECT_EQ(info[0], 2);
    EXPECT_EQ(info[1], 0);
}

TYPED_TEST(Lapack, QrReconstructsAWithUnitaryQ) {
    using T = TypeParam;
    const int64_t batch = 3;
    for (const Dims2 s : shapes) {
        const int64_t m = s.m, n = s.n, p = std::min(m, n);
        const std::vector<T> a0 = random_matrices<T>(batch * m * n, 6);
        std::vector<T> a = a0, tau(size_t(batch * p));
        std::vector<int32_t> info(batch, -7);
        SolverCall c = make_call<T>(SolverOp::qr, batch, m, n);
        c.a = a.data();
        c.tau = tau.data();
        c.info = info.data();
        host::lapack_solver(c);
        for (int64_t b = 0; b < batch; ++b)
            EXPECT_EQ(info[size_t(b)], 0);

        // The reduced Q (m x p) and the full one (m x m), from the first p columns.
        for (const int64_t qcols : {p, m}) {
            std::vector<T> q(size_t(batch * m * qcols));
            for (int64_t b = 0; b < batch; ++b)
                std::copy_n(a.begin() + b * m * n, m * p, q.begin() + b * m * qcols);
            c = make_call<T>(SolverOp::qr_q, batch, m, qcols, p);
            c.a = q.data();
            c.tau = tau.data();
            c.info = info.data();
            std::fill(info.begin(), info.end(), -7);
            host::lapack_solver(c);
            for (int64_t b = 0; b < batch; ++b) {
                EXPECT_EQ(info[size_t(b)], 0);
                const CMat qb = get(q, b, m, qcols), f = get(a, b, m, n);
                EXPECT_LT(max_diff(mul(adjoint(qb, m, qcols), qb, qcols, m, qcols), eye(qcols)),
                          tol_for<T>(m));
                CMat r(size_t(qcols * n));
                for (int64_t j = 0; j < n; ++j)
                    for (int64_t i = 0; i <= std::min(j, p - 1); ++i)
                        r[size_t(j * qcols + i)] = f[size_t(j * m + i)];
                EXPECT_LT(max_diff(mul(qb, r, m, qcols, n), get(a0, b, m, n)),
                          tol_for<T>(std::max(m, n)))
                    << m << "x" << n << " with " << qcols << " columns of Q";
            }
        }
    }
}

TYPED_TEST(Lapack, EighDiagonalizes) {
    using T = TypeParam;
    using R = real_t<T>;
    const int64_t batch = 3;
    for (const int64_t n : {5, 60}) {
        std::vector<T> a0 = hpd_matrices<T>(batch, n, 7);
        for (T& x : a0)
            x -= T(R(3));                                  // indefinite, still Hermitian
        const double eps = tol_for<T>(n) * 4 * double(n);  // |a| is about n
        std::vector<T> v = a0, a = a0;
        std::vector<R> w(size_t(batch * n)), w2(size_t(batch * n));
        std::vector<int32_t> info(batch, -7);
        SolverCall c = make_call<T>(SolverOp::eigh, batch, n, n);
        c.a = v.data();
        c.w = w.data();
        c.info = info.data();
        host::lapack_solver(c);
        c.vectors = false;
        c.a = a.data();
        c.w = w2.data();
        host::lapack_solver(c);
        for (int64_t b = 0; b < batch; ++b) {
            EXPECT_EQ(info[size_t(b)], 0);
            const CMat vb = get(v, b, n, n);
            CMat vd = vb;
            for (int64_t j = 0; j < n; ++j) {
                if (j > 0) {
                    EXPECT_LE(w[size_t(b * n + j - 1)], w[size_t(b * n + j)]);
                }
                EXPECT_NEAR(w[size_t(b * n + j)], w2[size_t(b * n + j)], eps);
                for (int64_t i = 0; i < n; ++i)
                    vd[size_t(j * n + i)] *= double(w[size_t(b * n + j)]);
            }
            EXPECT_LT(max_diff(mul(get(a0, b, n, n), vb, n, n, n), vd), eps) << n;
            EXPECT_LT(max_diff(mul(adjoint(vb, n, n), vb, n, n, n), eye(n)), tol_for<T>(n)) << n;
        }
    }
}

TYPED_TEST(Lapack, SvdReconstructsA) {
    using T = TypeParam;
    using R = real_t<T>;
    const int64_t batch = 3;
    for (const Dims2 s : shapes)
        for (const bool full : {false, true}) {
            const int64_t m = s.m, n = s.n, p = std::min(m, n);
            const int64_t ucols = full ? m : p, vrows = full ? n : p;
            const std::vector<T> a0 = random_matrices<T>(batch * m * n, 8);
            std::vector<T> a = a0, u(size_t(batch * m * ucols)), vt(size_t(batch * vrows * n));
            std::vector<R> w(size_t(batch * p)), w2(size_t(batch * p));
            std::vector<int32_t> info(batch, -7);
            SolverCall c = make_call<T>(SolverOp::svd, batch, m, n);
            c.full = full;
            c.a = a.data();
            c.w = w.data();
            c.u = u.data();
            c.vt = vt.data();
            c.info = info.data();
            host::lapack_solver(c);
            a = a0;
            c.vectors = false;
            c.w = w2.data();
            c.u = c.vt = nullptr;
            host::lapack_solver(c);
            for (int64_t b = 0; b < batch; ++b) {
                EXPECT_EQ(info[size_t(b)], 0);
                const CMat ub = get(u, b, m, ucols), vb = get(vt, b, vrows, n);
                const double eps = tol_for<T>(std::max(m, n));
                EXPECT_LT(max_diff(mul(adjoint(ub, m, ucols), ub, ucols, m, ucols), eye(ucols)),
                          eps);
                EXPECT_LT(max_diff(mul(vb, adjoint(vb, vrows, n), vrows, n, vrows), eye(vrows)),
                          eps);
                // U[:, :p] diag(s) V^H[:p, :]
                CMat us(size_t(m * p)), vp(size_t(p * n));
                for (int64_t j = 0; j < p; ++j) {
                    const R sj = w[size_t(b * p + j)];
                    EXPECT_GE(sj, 0);
                    if (j > 0) {
                        EXPECT_GE(w[size_t(b * p + j - 1)], sj);
                    }
                    EXPECT_NEAR(sj, w2[size_t(b * p + j)], eps * 4);
                    for (int64_t i = 0; i < m; ++i)
                        us[size_t(j * m + i)] = ub[size_t(j * m + i)] * double(sj);
                }
                for (int64_t j = 0; j < n; ++j)
                    for (int64_t i = 0; i < p; ++i)
                        vp[size_t(j * p + i)] = vb[size_t(j * vrows + i)];
                EXPECT_LT(max_diff(mul(us, vp, m, p, n), get(a0, b, m, n)), eps)
                    << m << "x" << n << (full ? " full" : " reduced");
            }
        }
}

namespace {

// Checks A u_j = w_j u_j with unit-norm u_j for each of the n columns of u.
template <class T>
void expect_eigenpairs(const CMat& a, const cd* w, const cd* u, int64_t n, double tolerance) {
    const CMat uc(u, u + n * n);
    const CMat au = mul(a, uc, n, n, n);
    for (int64_t j = 0; j < n; ++j) {
        double norm = 0, resid = 0;
        for (int64_t i = 0; i < n; ++i) {
            norm += std::norm(uc[size_t(j * n + i)]);
            resid = std::max(resid, std::abs(au[size_t(j * n + i)] - w[j] * uc[size_t(j * n + i)]));
        }
        EXPECT_NEAR(norm, 1, tolerance);
        EXPECT_LT(resid, tolerance) << "eigenpair " << j << " (" << w[j] << ")";
    }
}

template <class T>
void run_eig(const std::vector<T>& a0, int64_t batch, int64_t n, std::vector<cd>& w,
             std::vector<cd>& u, std::vector<cd>& w2) {
    using C = std::complex<real_t<T>>;
    std::vector<T> a = a0;
    std::vector<C> wc(size_t(batch * n)), uc(size_t(batch * n * n)), wc2(size_t(batch * n));
    std::vector<int32_t> info(batch, -7);
    SolverCall c = make_call<T>(SolverOp::eig, batch, n, n);
    c.a = a.data();
    c.w = wc.data();
    c.u = uc.data();
    c.info = info.data();
    host::lapack_solver(c);
    for (int32_t i : info)
        EXPECT_EQ(i, 0);
    a = a0;
    c.vectors = false;
    c.w = wc2.data();
    c.u = nullptr;
    host::lapack_solver(c);
    w.assign(wc.begin(), wc.end());
    u.assign(uc.begin(), uc.end());
    w2.assign(wc2.begin(), wc2.end());
}

}  // namespace

TYPED_TEST(Lapack, EigFindsRightEigenpairs) {
    using T = TypeParam;
    const int64_t batch = 3;
    for (const int64_t n : {5, 60}) {
        const std::vector<T> a0 = random_matrices<T>(batch * n * n, 9);
        const double eps = tol_for<T>(n) * 4;
        std::vector<cd> w, u, w2;
        run_eig(a0, batch, n, w, u, w2);
        bool any_complex = false;
        for (int64_t b = 0; b < batch; ++b) {
            expect_eigenpairs<T>(get(a0, b, n, n), w.data() + b * n, u.data() + b * n * n, n, eps);
            for (int64_t j = 0; j < n; ++j) {
                any_complex |= w[size_t(b * n + j)].imag() != 0;
                double best = 1e30;  // eigenvalues without vectors: the same set
                for (int64_t i = 0; i < n; ++i)
                    best = std::min(best, std::abs(w2[size_t(b * n + i)] - w[size_t(b * n + j)]));
                EXPECT_LT(best, eps * 10);
            }
        }
        EXPECT_TRUE(any_complex);  // random real matrices: some complex pairs
    }
}

TYPED_TEST(Lapack, EigOfRotationIsComplex) {
    using T = TypeParam;
    // diag(R(theta) * 2, 3) with R a rotation: eigenvalues 2 e^{+-i theta} and 3.
    const double th = 0.7, cs = 2 * std::cos(th), sn = 2 * std::sin(th);
    const std::vector<T> a0 = {T(cs), T(sn), T(0), T(-sn), T(cs), T(0), T(0), T(0), T(3)};
    std::vector<cd> w, u, w2;
    run_eig(a0, 1, 3, w, u, w2);
    expect_eigenpairs<T>(get(a0, 0, 3, 3), w.data(), u.data(), 3, tol<T>() * 10);
    std::vector<cd> want = {cd(cs, sn), cd(cs, -sn), cd(3, 0)};
    for (const cd& z : want) {
        double best = 1e30;
        for (const cd& x : w)
            best = std::min(best, std::abs(x - z));
        EXPECT_LT(best, tol<T>() * 10) << z;
    }
}

TYPED_TEST(Lapack, EmptyMatricesNeedNoLapack) {
    using T = TypeParam;
    using R = real_t<T>;
    const int64_t batch = 3;
    std::vector<int32_t> info(batch);
    std::vector<T> buf(64, T(9));
    std::vector<R> rbuf(64, R(9));
    std::vector<int64_t> ipiv(64, 9);
    const auto run = [&](SolverCall c) {
        c.a = c.b = c.tau = c.u = c.vt = buf.data();
        c.w = rbuf.data();
        c.ipiv = ipiv.data();
        c.info = info.data();
        std::fill(info.begin(), info.end(), -7);
        host::lapack_solver(c);
        for (int32_t i : info)
            EXPECT_EQ(i, 0);
    };
    for (const Dims2 s : {Dims2{0, 3}, Dims2{3, 0}, Dims2{0, 0}}) {
        run(make_call<T>(SolverOp::lu, batch, s.m, s.n));
        run(make_call<T>(SolverOp::qr, batch, s.m, s.n));
        SolverCall svd = make_call<T>(SolverOp::svd, batch, s.m, s.n);
        run(svd);
        svd.vectors = false;
        run(svd);
    }
    run(make_call<T>(SolverOp::lu_solve, batch, 0, 0, 2));
    run(make_call<T>(SolverOp::lu_solve, batch, 3, 3, 0));
    run(make_call<T>(SolverOp::cholesky, batch, 0, 0));
    run(make_call<T>(SolverOp::qr_q, batch, 3, 0, 0));
    run(make_call<T>(SolverOp::qr_q, batch, 0, 0, 0));
    run(make_call<T>(SolverOp::eigh, batch, 0, 0));
    run(make_call<T>(SolverOp::eig, batch, 0, 0));
    EXPECT_TRUE(std::all_of(buf.begin(), buf.end(), [](T x) { return x == T(9); }));

    // A full SVD of an empty matrix still has square U and V: the identity, like NumPy's.
    for (const Dims2 s : {Dims2{3, 0}, Dims2{0, 2}}) {
        std::vector<T> u(size_t(batch * s.m * s.m), T(9)), vt(size_t(batch * s.n * s.n), T(9));
        SolverCall c = make_call<T>(SolverOp::svd, batch, s.m, s.n);
        c.full = true;
        c.a = buf.data();
        c.w = rbuf.data();
        c.u = u.data();
        c.vt = vt.data();
        c.info = info.data();
        host::lapack_solver(c);
        for (int64_t b = 0; b < batch; ++b) {
            EXPECT_EQ(max_diff(get(u, b, s.m, s.m), eye(s.m)), 0);
            EXPECT_EQ(max_diff(get(vt, b, s.n, s.n), eye(s.n)), 0);
        }
    }

    // qr_q with no reflectors: the first n columns of the identity.
    std::vector<T> q(4 * 2, T(9));
    SolverCall c = make_call<T>(SolverOp::qr_q, 1, 4, 2, 0);
    c.a = q.data();
    c.info = info.data();
    host::lapack_solver(c);
    CMat want(8);
    want[0] = want[5] = 1;
    EXPECT_EQ(max_diff(get(q, 0, 4, 2), want), 0);
}

TYPED_TEST(Lapack, BadArgumentsThrowBeforeLapack) {
    using T = TypeParam;
    std::vector<T> a(16);
    std::vector<int32_t> info(1);
    SolverCall c = make_call<T>(SolverOp::lu, 1, -1, 2);
    c.a = a.data();
    c.info = info.data();
    EXPECT_THROW(host::lapack_solver(c), ValueError);
    c = make_call<T>(SolverOp::qr_q, 1, 2, 3, 1);  // n > m
    c.a = a.data();
    c.info = info.data();
    EXPECT_THROW(host::lapack_solver(c), ValueError);
    c = make_call<T>(SolverOp::qr_q, 1, 3, 2, 3);  // k > n
    c.a = a.data();
    c.info = info.data();
    EXPECT_THROW(host::lapack_solver(c), ValueError);
}

TEST(LapackErrors, IntegerDtypeIsATypeError) {
    std::vector<int32_t> a(4), info(1);
    SolverCall c;
    c.op = SolverOp::lu;
    c.dtype = DType::int32;
    c.m = c.n = 2;
    c.a = a.data();
    c.info = info.data();
    EXPECT_THROW(host::lapack_solver(c), TypeError);
}
