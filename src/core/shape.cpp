// Shape arithmetic: element counts with overflow checks, strides, broadcasting, axes.
#include <string>

#include "ember/error.hpp"
#include "ember/shape.hpp"

namespace ember {

int64_t checked_numel(const Shape& s, const char* who) {
    if (s.size() > size_t(max_ndim))
        throw ValueError(std::string(who) + ": too many dimensions (" + std::to_string(s.size()) +
                         " > " + std::to_string(max_ndim) + ")");
    // As NumPy, the product of the non-zero dimensions must fit even when a zero makes the
    // array empty: later shape arithmetic (reshapes, reductions) multiplies them.
    int64_t n = 1, nonzero = 1;
    bool empty = false;
    for (int64_t d : s) {
        if (d < 0)
            throw ValueError(std::string(who) + ": negative dimensions are not allowed, got " +
                             shape_str(s));
        if (d == 0) {
            empty = true;
            continue;
        }
        if (nonzero > INT64_MAX / d)
            throw ValueError(std::string(who) + ": array is too big; shape " + shape_str(s) +
                             " has more than 2**63 elements");
        nonzero *= d;
    }
    n = empty ? 0 : nonzero;
    return n;
}

void contiguous_strides(const Shape& s, Strides& st) {
    st.resize(s.size());
    int64_t acc = 1;
    for (size_t i = s.size(); i-- > 0;) {
        st[i] = acc;
        acc *= s[i] > 0 ? s[i] : 1;
    }
}

Strides contiguous_strides(const Shape& s) {
    Strides st;
    contiguous_strides(s, st);
    return st;
}

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* who) {
    const size_t n = a.size() > b.size() ? a.size() : b.size();
    Shape r(n);
    for (size_t i = 0; i < n; ++i) {
        const int64_t x = i < n - a.size() ? 1 : a[i - (n - a.size())];
        const int64_t y = i < n - b.size() ? 1 : b[i - (n - b.size())];
        if (x == y || y == 1)
            r[i] = x;
        else if (x == 1)
            r[i] = y;
        else
            throw ValueError(std::string(who) +
                             ": operands could not be broadcast together with shapes " +
                             shape_str(a) + " " + shape_str(b));
    }
    return r;
}

std::string shape_str(const Shape& s) {
    std::string r = "(";
    for (size_t i = 0; i < s.size(); ++i) {
        if (i) r += ", ";
        r += std::to_string(s[i]);
    }
    if (s.size() == 1) r += ",";
    return r + ")";
}

int normalize_axis(int64_t axis, int ndim, const char* who) {
    if (axis < -int64_t(ndim) || axis >= ndim)
        throw AxisError(std::string(who) + ": axis " + std::to_string(axis) +
                        " is out of bounds for array of dimension " + std::to_string(ndim));
    return int(axis < 0 ? axis + ndim : axis);
}

}  // namespace ember
