// Loop construction: dimension ordering and collapsing shared by every backend.
#include <algorithm>
#include <cstring>

#include "core/internal.hpp"
#include "ember/launch.hpp"

namespace ember::detail {

backend::Loop make_loop(const Array* const* ops, int nops, int order_by) {
    backend::Loop l;
    l.nops = nops;
    l.device = ops[0]->device().index;
    const Shape& shape = ops[0]->shape();
    const int nd = int(shape.size());
    // Keep non-trivial dims, innermost first.
    int64_t perm[max_ndim];
    int n = 0;
    for (int d = nd - 1; d >= 0; --d)
        if (shape[d] != 1) perm[n++] = d;
    // Sort by |stride| of the ordering operand (stable insertion sort; ndim is small); ties keep
    // C order.
    const Strides& os = ops[order_by]->strides();
    auto key = [&](int64_t d) { return os[size_t(d)] < 0 ? -os[size_t(d)] : os[size_t(d)]; };
    for (int i = 1; i < n; ++i) {
        int64_t v = perm[i];
        int j = i - 1;
        while (j >= 0 && key(perm[j]) > key(v)) {
            perm[j + 1] = perm[j];
            --j;
        }
        perm[j + 1] = v;
    }
    for (int k = 0; k < l.nops; ++k) {
        l.data[k] = ops[k]->data();
        l.dtype[k] = ops[k]->dtype();
    }
    // Merge neighbours contiguous in every operand (the rule user kernels share, ember/launch.hpp).
    collapse_dims(
        shape, perm, n, l.nops, [&](int k, int64_t d) { return ops[k]->strides()[size_t(d)]; },
        l.shape, l.strides);
    return l;
}

void set_scalar_operand(backend::Loop& l, int k, DType dtype, const void* value) {
    l.scalar[k] = true;
    l.dtype[k] = dtype;
    l.data[k] = nullptr;
    l.strides[k] = Strides(l.shape.size(), 0);
    std::memcpy(l.scalar_value[k], value, size_t(itemsize(dtype)));
}

namespace {
void byte_range(const Array& a, intptr_t& lo, intptr_t& hi) {
    const intptr_t base = reinterpret_cast<intptr_t>(a.data());
    lo = base;
    hi = base;
    for (size_t d = 0; d < a.shape().size(); ++d) {
        const intptr_t ext = intptr_t((a.shape()[d] - 1) * a.strides()[d] * a.itemsize());
        if (ext < 0)
            lo += ext;
        else
            hi += ext;
    }
    hi += intptr_t(a.itemsize());
}
}  // namespace

bool may_overlap(const Array& a, const Array& b) {
    if (!a.defined() || !b.defined() || a.storage() != b.storage()) return false;
    if (a.size() == 0 || b.size() == 0) return false;
    intptr_t al, ah, bl, bh;
    byte_range(a, al, ah);
    byte_range(b, bl, bh);
    return al < bh && bl < ah;
}

bool same_view(const Array& a, const Array& b) {
    return a.storage() == b.storage() && a.offset() == b.offset() && a.shape() == b.shape() &&
           a.strides() == b.strides() && a.dtype() == b.dtype();
}

}  // namespace ember::detail
