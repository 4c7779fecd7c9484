// The C++ operations on arrays: elementwise ops (one function per op-table row), reductions,
// creation, manipulation, indexing, and the usual operators.
#pragma once

#include <optional>
#include <span>
#include <vector>

#include "ember/array.hpp"
#include "ember/optable.hpp"
#include "ember/reducetable.hpp"

namespace ember {

// An elementwise operand: an array, or a weak scalar (a C++/Python literal). An lvalue array is
// referenced, not copied (operands live for the duration of a call); a temporary is held.
class Operand {
public:
    Scalar scalar;
    bool is_scalar = false;

    Operand(const Array& a) : ptr_(&a) {}
    Operand(Array&& a) : hold_(std::move(a)), ptr_(&hold_) {}
    Operand(const Scalar& s) : scalar(s), is_scalar(true) {}
    Operand(bool v) : scalar(v), is_scalar(true) {}
    Operand(int v) : scalar(v), is_scalar(true) {}
    Operand(int64_t v) : scalar(v), is_scalar(true) {}
    Operand(double v) : scalar(v), is_scalar(true) {}
    Operand(std::complex<double> v) : scalar(v), is_scalar(true) {}
    // Only a held temporary is copied; a referenced array stays referenced.
    Operand(const Operand& o)
        : scalar(o.scalar),
          is_scalar(o.is_scalar),
          hold_(o.ptr_ == &o.hold_ ? o.hold_ : Array()),
          ptr_(o.ptr_ == &o.hold_ ? &hold_ : o.ptr_) {}
    Operand& operator=(const Operand& o) {
        if (this == &o) return *this;
        scalar = o.scalar;
        is_scalar = o.is_scalar;
        // Only a held temporary is copied; a referenced array stays referenced.
        if (o.ptr_ == &o.hold_) {
            hold_ = o.hold_;
            ptr_ = &hold_;
        } else {
            if (hold_.defined()) hold_ = Array();
            ptr_ = o.ptr_;
        }
        return *this;
    }

    // Retargets this operand in place (no temporary Operand: one is a few hundred bytes, and
    // building and copying them showed in profiles of small ops).
    void refer(const Array& a) {
        drop_hold();
        is_scalar = false;
        ptr_ = &a;
    }
    void set_scalar(const Scalar& s) {
        drop_hold();
        scalar = s;
        is_scalar = true;
        ptr_ = &hold_;
    }
    void hold(Array&& a) {
        hold_ = std::move(a);
        is_scalar = false;
        ptr_ = &hold_;
    }

    const Array& array() const { return *ptr_; }
    DType dtype() const { return is_scalar ? scalar.dtype : ptr_->dtype(); }

private:
    void drop_hold() {
        if (hold_.defined()) hold_ = Array();
    }
    Array hold_;
    const Array* ptr_ = &hold_;
};

// Resolves the dtypes of an op: the loop (compute) dtype and the output dtype; TypeError when
// the op has no loop for the inputs.
struct OpTypes {
    DType loop;
    DType out;
};
OpTypes resolve_op_types(ops::OpId op, std::span<const Operand> operands);
DType result_type(std::span<const Operand> operands);

// Runs an elementwise op. With `out`, writes into it (in-place ops; NumPy's same_kind casting).
Array map(ops::OpId op, std::span<const Operand> operands, const Array* out = nullptr);

#define EMBER_DECLARE_OP_1(name) Array name(const Operand& a);
#define EMBER_DECLARE_OP_2(name) Array name(const Operand& a, const Operand& b);
#define EMBER_DECLARE_OP_3(name) Array name(const Operand& a, const Operand& b, const Operand& c);
#define EMBER_DECLARE_OP(name, arity, loops, out, flags, doc) EMBER_DECLARE_OP_##arity(name)
EMBER_ELEMENTWISE_OPS(EMBER_DECLARE_OP)
#undef EMBER_DECLARE_OP
#undef EMBER_DECLARE_OP_1
#undef EMBER_DECLARE_OP_2
#undef EMBER_DECLARE_OP_3

// ---- reductions -------------------------------------------------------------------------------
// `axes` empty optional = all axes. dtype = accumulation/result dtype (NumPy's rules if absent).
using Axes = std::optional<std::vector<int64_t>>;
// Any row of the reduction table (ember/reducetable.hpp); the named functions below call it.
// Index rows take at most one axis; dtype only rows with R_DTYPE.
Array reduce(ops::ReduceOp op, const Array& x, const Axes& axes = std::nullopt,
             bool keepdims = false, std::optional<DType> dtype = std::nullopt);
Array sum(const Array& x, const Axes& axes = std::nullopt, bool keepdims = false,
          std::optional<DType> dtype = std::nullopt);
Array prod(const Array& x, const Axes& axes = std::nullopt, bool keepdims = false,
           std::optional<DType> dtype = std::nullopt);
Array max(const Array& x, const Axes& axes = std::nullopt, bool keepdims = false);
Array min(const Array& x, const Axes& axes = std::nullopt, bool keepdims = false);
Array any(const Array& x, const Axes& axes = std::nullopt, bool keepdims = false);
Array all(const Array& x, const Axes& axes = std::nullopt, bool keepdims = false);
Array mean(const Array& x, const Axes& axes = std::nullopt, bool keepdims = false,
           std::optional<DType> dtype = std::nullopt);
Array var(const Array& x, const Axes& axes = std::nullopt, double correction = 0.0,
          bool keepdims = false, std::optional<DType> dtype = std::nullopt);
Array std(const Array& x, const Axes& axes = std::nullopt, double correction = 0.0,
          bool keepdims = false, std::optional<DType> dtype = std::nullopt);
Array argmax(const Array& x, std::optional<int64_t> axis = std::nullopt, bool keepdims = false);
Array argmin(const Array& x, std::optional<int64_t> axis = std::nullopt, bool keepdims = false);

// ---- creation ---------------------------------------------------------------------------------
Array empty(const Shape& shape, DType dtype = DType::float64, Device device = default_device());
Array zeros(const Shape& shape, DType dtype = DType::float64, Device device = default_device());
Array ones(const Shape& shape, DType dtype = DType::float64, Device device = default_device());
Array full(const Shape& shape, const Scalar& value, std::optional<DType> dtype = std::nullopt,
           Device device = default_device());
Array arange(const Scalar& start, const Scalar& stop, const Scalar& step = Scalar(int64_t(1)),
             std::optional<DType> dtype = std::nullopt, Device device = default_device());
Array linspace(const Scalar& start, const Scalar& stop, int64_t num,
               std::optional<DType> dtype = std::nullopt, Device device = default_device(),
               bool endpoint = true);
Array eye(int64_t n, std::optional<int64_t> m = std::nullopt, int64_t k = 0,
          DType dtype = DType::float64, Device device = default_device());
// From host memory (copied): `data` holds numel(shape) C-ordered elements of `dtype`.
Array from_host(const void* data, const Shape& shape, DType dtype,
                Device device = default_device());
template <class T>
Array from_vector(const std::vector<T>& v, Shape shape = {}, Device device = default_device()) {
    if (shape.empty()) shape = {int64_t(v.size())};
    return from_host(v.data(), shape, dtype_v<T>, device);
}
// Copies the array's elements (C order) to host memory as `std::vector<T>` (casting).
template <class T>
std::vector<T> to_vector(const Array& a) {
    Array h = a.astype(dtype_v<T>).to(cpu).contiguous();
    const T* p = reinterpret_cast<const T*>(h.data());
    return std::vector<T>(p, p + h.size());
}

// ---- basic indexing ---------------------------------------------------------------------------
struct Slice {
    std::optional<int64_t> start, stop, step;
};
struct NewAxis {};
struct Ellipsis {};
struct Index {
    enum class Kind : uint8_t { integer, slice, newaxis, ellipsis } kind;
    int64_t i = 0;
    Slice s;
    Index(int64_t v) : kind(Kind::integer), i(v) {}
    Index(int v) : kind(Kind::integer), i(v) {}
    Index(Slice v) : kind(Kind::slice), s(v) {}
    Index(NewAxis) : kind(Kind::newaxis) {}
    Index(Ellipsis) : kind(Kind::ellipsis) {}
};
// A view selected by basic indices (ints, slices, newaxis, ellipsis); IndexError when out of range.
Array index(const Array& x, std::span<const Index> idx);
// x[idx] = value (broadcast and cast into the selected view).
void index_assign(const Array& x, std::span<const Index> idx, const Operand& value);

// ---- operators --------------------------------------------------------------------------------
inline Array operator+(const Operand& a, const Operand& b) { return add(a, b); }
inline Array operator-(const Operand& a, const Operand& b) { return subtract(a, b); }
inline Array operator*(const Operand& a, const Operand& b) { return multiply(a, b); }
inline Array operator/(const Operand& a, const Operand& b) { return divide(a, b); }
inline Array operator%(const Operand& a, const Operand& b) { return remainder(a, b); }
inline Array operator==(const Array& a, const Operand& b) { return equal(a, b); }
inline Array operator!=(const Array& a, const Operand& b) { return not_equal(a, b); }
inline Array operator<(const Operand& a, const Operand& b) { return less(a, b); }
inline Array operator<=(const Operand& a, const Operand& b) { return less_equal(a, b); }
inline Array operator>(const Operand& a, const Operand& b) { return greater(a, b); }
inline Array operator>=(const Operand& a, const Operand& b) { return greater_equal(a, b); }
inline Array operator&(const Operand& a, const Operand& b) { return bitwise_and(a, b); }
inline Array operator|(const Operand& a, const Operand& b) { return bitwise_or(a, b); }
inline Array operator^(const Operand& a, const Operand& b) { return bitwise_xor(a, b); }
inline Array operator<<(const Operand& a, const Operand& b) { return bitwise_left_shift(a, b); }
inline Array operator>>(const Operand& a, const Operand& b) { return bitwise_right_shift(a, b); }
inline Array operator-(const Array& a) { return negative(a); }
inline Array operator~(const Array& a) { return bitwise_invert(a); }
// NumPy's take: elements of x at integer `indices` along `axis` (of the flattened x without one);
// negative indices count from the end; out-of-range ones raise IndexError.
// `in_range`: every index is known to be in [0, n) (no bounds check: no synchronization on a
// GPU); otherwise out-of-range indices raise IndexError and negative ones count from the end.
Array take(const Array& x, const Array& indices, std::optional<int64_t> axis = std::nullopt,
           bool in_range = false);
// take's adjoint, in place: x[indices] += values along `axis` (x flattened without one, which
// needs a C-contiguous x), with `values` broadcast to take's output shape; repeated indices
// accumulate (NumPy's np.add.at), in a fixed order. Not differentiable.
void add_at(const Array& x, const Array& indices, const Operand& values,
            std::optional<int64_t> axis = std::nullopt);

// ---- scans, compaction and advanced indexing (src/core/scan.cpp, advanced_indexing.cpp) -------
// Inclusive cumulative sum / product along `axis` (of x flattened without one). dtype as NumPy's
// cumsum: bool and signed ints give int64, unsigned ints uint64, others their own; 16-bit floats
// accumulate in float32. cumsum is differentiable, cumprod is not (its backward raises).
Array cumsum(const Array& x, std::optional<int64_t> axis = std::nullopt,
             std::optional<DType> dtype = std::nullopt);
Array cumprod(const Array& x, std::optional<int64_t> axis = std::nullopt,
              std::optional<DType> dtype = std::nullopt);
// The C-order positions (int64, 1-D, ascending) of the nonzero elements of x: a scan of the mask
// on the device; only the count comes to the host.
Array flatnonzero(const Array& x);
// NumPy's nonzero: one int64 array per dimension (ValueError for a 0-d x).
std::vector<Array> nonzero(const Array& x);
// x[mask] for a boolean mask over x's leading mask.ndim() dimensions (same sizes): shape
// (count, x.shape[mask.ndim():]...), one fused compaction pass. Not differentiable (index() is).
Array compress_mask(const Array& x, const Array& mask);

// One item of a NumPy index: a basic Index, or (array defined) an integer or boolean array on
// x's device.
struct IndexItem {
    Index index = Index(Slice{});
    Array array;
    IndexItem() = default;
    IndexItem(Index i) : index(i) {}
    IndexItem(Array a) : array(std::move(a)) {}
};
// NumPy's indexing with integer/boolean arrays (with ints, slices, newaxis and ellipsis): the
// broadcast advanced dimensions go in place when the advanced indices are adjacent, first
// otherwise. Differentiable (through take). Without arrays, the same as index().
Array index(const Array& x, std::span<const IndexItem> idx);
// x[idx] = value with NumPy's rules: value broadcast to the indexed shape and cast; where indices
// repeat the last value wins (also on the GPU). Differentiable in x and value (repeated indices:
// every value gets its position's gradient, as in PyTorch).
void index_assign(const Array& x, std::span<const IndexItem> idx, const Operand& value);

// Sorting along `axis` (stable by default; every sort is stable in fact). The order is NumPy's:
// NaN last, -0.0 equal to 0.0, complex by real then imaginary part; `descending` is its exact
// reverse (NaN first) with equal keys in input order. 0-d arrays raise AxisError. sort's values
// are differentiable (a take at argsort's positions); argsort's indices are int64.
Array sort(const Array& x, int64_t axis = -1, bool descending = false, bool stable = true);
Array argsort(const Array& x, int64_t axis = -1, bool descending = false, bool stable = true);
// For each element of `values`, the insertion position in the 1-D ascending `sorted` (same
// dtype, same device): the first i with sorted[i] >= value (`right`: > value). int64.
Array searchsorted(const Array& sorted, const Array& values, bool right = false);

// NumPy's matmul: 1-D operands, broadcast batch dimensions, promotion of the two dtypes.
Array matmul(const Array& a, const Array& b);
// float32 matmul on GPUs: "highest" keeps full float32 products; "high" allows TF32 tensor cores.
enum class MatmulPrecision : uint8_t { highest, high };
void set_matmul_precision(MatmulPrecision p);
MatmulPrecision matmul_precision();

Array& operator+=(Array& a, const Operand& b);
Array& operator-=(Array& a, const Operand& b);
Array& operator*=(Array& a, const Operand& b);
Array& operator/=(Array& a, const Operand& b);

}  // namespace ember
