// Finding and calling the BLAS library (see blas.hpp).
#include "backend/cpu/blas.hpp"

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <vector>

#include <dlfcn.h>
#include <link.h>

#include "ember/error.hpp"

namespace ember::host {

namespace {

struct Loaded {
    Blas blas;
    bool ok = false;
    std::string reason;
};

// Resolves cblas_?gemm under the names OpenBLAS builds use: NumPy's (scipy_ prefix, 64_ suffix
// for the 64-bit integer interface), the plain ones, and OpenBLAS's ILP64 suffix.
bool resolve(void* h, Blas& b) {
    static const char* const bases[4] = {"cblas_sgemm", "cblas_dgemm", "cblas_cgemm",
                                         "cblas_zgemm"};
    struct Variant {
        const char *prefix, *suffix;
        bool ilp64;
    } const variants[] = {
        {"scipy_", "64_", true}, {"", "64_", true}, {"scipy_", "", false}, {"", "", false}};
    for (const Variant& v : variants) {
        bool all = true;
        for (int i = 0; i < 4 && all; ++i) {
            const std::string name = std::string(v.prefix) + bases[i] + v.suffix;
            b.gemm[i] = dlsym(h, name.c_str());
            all = b.gemm[i] != nullptr;
        }
        if (all) {
            b.ilp64 = v.ilp64;
            b.prefix = v.prefix;
            b.suffix = v.suffix;
            return true;
        }
    }
    return false;
}

int find_loaded(dl_phdr_info* info, size_t, void* out) {
    const char* p = info->dlpi_name;
    if (p && *p && std::strstr(p, "openblas")) {
        *static_cast<std::string*>(out) = p;
        return 1;
    }
    return 0;
}

Loaded load() {
    Loaded l;
    std::vector<std::string> candidates;
    if (const char* e = std::getenv("EMBER_BLAS"); e && *e) candidates.emplace_back(e);
    std::string loaded;
    dl_iterate_phdr(find_loaded, &loaded);
    if (!loaded.empty()) candidates.push_back(loaded);
    for (const char* n : {"libopenblas.so.0", "libopenblas64_.so.0", "libopenblas.so",
                          "libblas.so.3", "libcblas.so.3", "libblas.so"})
        candidates.emplace_back(n);
    std::string tried;
    for (const std::string& c : candidates) {
        void* h = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            tried += (tried.empty() ? "" : ", ") + c;
            continue;
        }
        if (resolve(h, l.blas)) {
            l.blas.path = c;
            l.blas.handle = h;
            l.ok = true;
            return l;
        }
        tried += (tried.empty() ? "" : ", ") + c + " (no cblas_?gemm)";
    }
    l.reason = "no BLAS library found (tried " + tried + "); set EMBER_BLAS to one";
    return l;
}

const Loaded& state() {
    static const Loaded l = load();
    return l;
}

enum { row_major = 101, no_trans = 111, trans = 112 };

template <class I>
void call(const Blas& b, DType t, bool ta, bool tb, int64_t m, int64_t n, int64_t k, const void* a,
          int64_t lda, const void* bm, int64_t ldb, void* c, int64_t ldc) {
    const int oa = ta ? trans : no_trans, ob = tb ? trans : no_trans;
    switch (t) {
        case DType::float32: {
            using F = void (*)(int, int, int, I, I, I, float, const void*, I, const void*, I, float,
                               void*, I);
            reinterpret_cast<F>(b.gemm[0])(row_major, oa, ob, I(m), I(n), I(k), 1.0f, a, I(lda), bm,
                                           I(ldb), 0.0f, c, I(ldc));
            return;
        }
        case DType::float64: {
            using F = void (*)(int, int, int, I, I, I, double, const void*, I, const void*, I,
                               double, void*, I);
            reinterpret_cast<F>(b.gemm[1])(row_major, oa, ob, I(m), I(n), I(k), 1.0, a, I(lda), bm,
                                           I(ldb), 0.0, c, I(ldc));
            return;
        }
        case DType::complex64:
        case DType::complex128: {
            using F = void (*)(int, int, int, I, I, I, const void*, const void*, I, const void*, I,
                               const void*, void*, I);
            const double one[2] = {1, 0}, zero[2] = {0, 0};
            const float onef[2] = {1, 0}, zerof[2] = {0, 0};
            const bool single = t == DType::complex64;
            reinterpret_cast<F>(b.gemm[single ? 2 : 3])(
                row_major, oa, ob, I(m), I(n), I(k), single ? (const void*)onef : one, a, I(lda),
                bm, I(ldb), single ? (const void*)zerof : zero, c, I(ldc));
            return;
        }
        default:
            throw TypeError("ember.matmul: BLAS has no routine for dtype " + std::string(name(t)));
    }
}

}  // namespace

const Blas* blas() { return state().ok ? &state().blas : nullptr; }
const std::string& blas_unavailable_reason() { return state().reason; }

void gemm(DType t, bool ta, bool tb, int64_t m, int64_t n, int64_t k, const void* a, int64_t lda,
          const void* b, int64_t ldb, void* c, int64_t ldc) {
    const Blas* lib = blas();
    if (!lib) throw Error("ember.matmul: " + blas_unavailable_reason());
    if (!lib->ilp64) {
        const int64_t lim = int64_t(1) << 31;
        if (m >= lim || n >= lim || k >= lim || lda >= lim || ldb >= lim || ldc >= lim)
            throw ValueError("ember.matmul: the BLAS in use (" + lib->path +
                             ") takes 32-bit sizes; these matrices are larger");
        call<int32_t>(*lib, t, ta, tb, m, n, k, a, lda, b, ldb, c, ldc);
    } else {
        call<int64_t>(*lib, t, ta, tb, m, n, k, a, lda, b, ldb, c, ldc);
    }
}

}  // namespace ember::host
