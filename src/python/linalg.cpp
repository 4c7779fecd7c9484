// ember._core._factorize: the batched factorizations of ember/linalg.hpp, which Python's
// ember.linalg composes into NumPy's functions.
#include <nanobind/stl/tuple.h>

#include "ember/linalg.hpp"
#include "python/common.hpp"

namespace ember::python {

namespace {

using linalg::Factorization;

Factorization kind_of(const std::string& s) {
    static const char* const names[] = {"lu",   "lu_solve", "cholesky", "qr",
                                        "qr_q", "eigh",     "svd",      "eig"};
    for (int i = 0; i < 8; ++i)
        if (s == names[i]) return Factorization(i);
    throw ValueError("ember._core._factorize: unknown factorization '" + s + "'");
}

const Array* opt_array(nb::handle h, const char* what) {
    if (h.is_none()) return nullptr;
    if (!is_ndarray(h))
        throw TypeError("ember._core._factorize: " + std::string(what) + " must be an ndarray");
    return &as_array(h);
}

nb::object out(Array& a) { return a.defined() ? wrap(std::move(a)) : nb::none(); }

}  // namespace

void bind_linalg(nb::module_& m) {
    m.def(
        "_factorize",
        [](const std::string& kind, nb::handle a, nb::handle b, nb::handle ipiv, nb::handle tau,
           bool vectors, bool full) {
            const Array* x = opt_array(a, "a");
            if (!x) throw TypeError("ember._core._factorize: a must be an ndarray");
            const Array *pb = opt_array(b, "b"), *pp = opt_array(ipiv, "ipiv"),
                        *pt = opt_array(tau, "tau");
            const Factorization k = kind_of(kind);
            linalg::Factors f = heavy(
                x->size(), [&] { return linalg::factorize(k, *x, pb, pp, pt, vectors, full); });
            return nb::make_tuple(out(f.a), out(f.ipiv), out(f.tau), out(f.w), out(f.u), out(f.vt),
                                  out(f.info));
        },
        nb::arg("kind"), nb::arg("a"), nb::arg("b") = nb::none(), nb::arg("ipiv") = nb::none(),
        nb::arg("tau") = nb::none(), nb::arg("vectors") = true, nb::arg("full") = false,
        "One batched factorization (ember/linalg.hpp): (a, ipiv, tau, w, u, vt, info), None for "
        "what the kind does not produce.");
}

}  // namespace ember::python
