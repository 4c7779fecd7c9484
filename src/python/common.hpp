// Shared declarations of the nanobind bindings: conversions between Python objects and ember
// values, and the registration functions of each binding file.
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "ember/ember.hpp"

namespace ember::python {

namespace nb = nanobind;

// The Python type object of ember.ndarray (set when the class is registered).
extern PyTypeObject* ndarray_type;
inline bool is_ndarray(nb::handle h) {
    return Py_TYPE(h.ptr()) == ndarray_type || PyObject_TypeCheck(h.ptr(), ndarray_type);
}
inline const Array& as_array(nb::handle h) { return *nb::inst_ptr<Array>(h); }
// A new ember.ndarray owning `a`, built directly (skips nanobind's type lookup in nb::cast).
inline nb::object wrap(Array&& a) {
    nb::object o = nb::inst_alloc(nb::handle(reinterpret_cast<PyObject*>(ndarray_type)));
    new (nb::inst_ptr<Array>(o)) Array(std::move(a));
    nb::inst_mark_ready(o);
    return o;
}

// Python scalars (bool, int, float, complex) to weak Scalars; false when `h` is none of these.
bool weak_scalar(nb::handle h, Scalar& out);
// An elementwise operand: ndarray, Python scalar, NumPy scalar (strong), or anything asarray
// accepts. Returns false (for NotImplemented) when `h` cannot be converted and `strict` is off.
bool to_operand(nb::handle h, Operand& out, bool strict, const char* who);

// An array argument: an ndarray as is, anything else as ember.asarray(h) makes it (lists, tuples,
// scalars, NumPy arrays, DLPack and buffer objects); a TypeError naming `who` otherwise.
Array to_array(nb::handle h, const char* who);
// An `out=` argument: an ndarray (or a 1-tuple of one, as NumPy's ufuncs take); a TypeError
// naming `who` otherwise.
const Array& out_array(nb::handle h, const char* who);
// A real number argument (int, float, NumPy scalar, 0-d array); a TypeError naming `who` and
// `what` otherwise.
double to_float(nb::handle h, const char* who, const char* what);
// An `order=` argument of a creation function: 'C' (or 'K', 'A'); anything else is a ValueError.
void check_order(nb::handle h, const char* who);

DType to_dtype(nb::handle h, const char* who);                     // ember/NumPy dtypes, str, type
std::optional<DType> to_opt_dtype(nb::handle h, const char* who);  // None -> nullopt
Shape to_shape(nb::handle h, const char* who);                     // int or sequence of ints
Axes to_axes(nb::handle h, const char* who);                       // None, int or tuple
// A new shape for `a`: an int or sequence of ints, one of which may be -1 (inferred).
Shape reshape_shape(const Array& a, nb::handle h, const char* who);
// ember.reshape and ndarray.reshape: a view when possible, else a copy; copy=True always copies,
// copy=False raises when a view is impossible.
Array reshape_as(const Array& x, nb::handle shape, nb::handle copy);
// ember.squeeze and ndarray.squeeze: every size-1 axis (axis None) or the given ones.
Array squeeze_axes(const Array& x, nb::handle axis);
// ember.transpose and ndarray.transpose: the axes reversed (axes None) or permuted (a view).
Array transpose_axes(const Array& x, nb::handle axes);
// ember.swapaxes and ndarray.swapaxes: two axes interchanged (a view).
Array swap_axes(const Array& x, int64_t axis1, int64_t axis2);
// ember.astype and ndarray.astype: NumPy's unsafe cast to `dtype` (copy=False: x itself when it
// has the dtype already), then moved to `device` unless that is None.
Array astype_to(const Array& x, nb::handle dtype, bool copy, nb::handle device);
std::optional<Device> to_device(nb::handle h, const char* who);  // None, str or Device
// The device a creation function makes its array on: a named one must exist on this machine
// (ValueError naming it and the device count otherwise), or the default device.
inline Device dev_or_default(nb::handle h, const char* who) {
    if (h.is_none()) return default_device();
    const Device d = *to_device(h, who);
    check_device(d, who);
    return d;
}
nb::object scalar_to_python(const Scalar& s);  // bool/int/float/complex

// asarray for ndarrays, Python scalars and objects with the buffer protocol or DLPack
// (`writable` says whether their memory may be shared for writing; otherwise it is copied).
nb::object asarray(nb::handle obj, nb::handle dtype, nb::handle device, nb::handle copy,
                   bool writable);
// A NumPy array viewing a CPU array's memory (bfloat16 exported as uint16).
nb::object to_numpy_view(const Array& a);
// A DLPack capsule of `a` per the 2024 protocol (src/python/interop.cpp): versioned when
// max_version >= (1, 0), copied to dl_device or when copy=True, the consumer `stream` made to
// wait for ember's current stream.
nb::object dlpack_capsule(const Array& a, nb::handle stream, nb::handle max_version,
                          nb::handle dl_device, nb::handle copy);
// The Python-level ember.asarray, used for operands of other types (lists, NumPy scalars).
void set_asarray_hook(nb::object f);

// Sets the Python error for a C++ exception (for code called directly from CPython slots).
void set_python_error(const std::exception_ptr& p);

// Hands the floating-point flags the CPU loops raised to ember's errstate handler (NumPy's
// warnings, FloatingPointError, ...); throws nb::python_error when the handler raises.
void report_fp_status();

// Calls f(args...) without the GIL when the work covers at least 2^17 elements, so other Python
// threads run meanwhile (as NumPy's loops do). The arguments are converted before, with the GIL.
// Afterwards, with the GIL, the floating-point flags CPU loops raised are reported (flags of work
// that ran outside heavy() are reported here too, under the name of the op that raised them).
template <class F, class... A>
auto heavy(int64_t n, F&& f, A&&... args) {
    auto r = [&] {
        if (n < (int64_t(1) << 17)) return f(std::forward<A>(args)...);
        nb::gil_scoped_release unlocked;
        return f(std::forward<A>(args)...);
    }();
    if (fp_status_pending()) report_fp_status();
    return r;
}

// map() for heavy(): the largest array operand, and map without an output.
inline int64_t max_size(std::span<const Operand> xs) {
    int64_t n = 0;
    for (const Operand& x : xs)
        if (!x.is_scalar && x.array().size() > n) n = x.array().size();
    return n;
}
inline Array run_map(ops::OpId op, std::span<const Operand> xs) { return map(op, xs); }

void bind_array(nb::module_& m);
void bind_functions(nb::module_& m);
void bind_cuda(nb::module_& m);
void bind_random(nb::module_& m);
void bind_linalg(nb::module_& m);
void bind_fft(nb::module_& m);
void bind_autograd(nb::module_& m);
// ndarray's autograd attributes (requires_grad, grad, backward, ...), from bind_array.
void bind_array_autograd(nb::class_<Array>& cls);
void bind_optim(nb::module_& m);
// Reductions (src/python/reductions.cpp): module functions, from bind_functions; ndarray methods,
// from bind_array.
void bind_reductions(nb::module_& m);
void bind_reduction_methods(nb::class_<Array>& cls);
void bind_sort(nb::module_& m);
void bind_scan(nb::module_& m);
void bind_kernel_support(nb::module_& m);
void bind_fp_status(nb::module_& m);  // src/python/fp_status.cpp
// Call wrappers for the public functions and methods (src/python/calls.cpp).
void bind_calls(nb::module_& m);
// Binds a call's (args, kwargs) to parameter `names` by Python's rules, the first `required` of
// them required, raising Python's TypeError for a call that does not bind ("ember.dtype() got
// an unexpected keyword argument 'x'"); absent optional parameters are null handles. For
// constructors, which nanobind calls without the wrappers.
std::vector<nb::handle> bind_args(const char* who, nb::args args, nb::kwargs kwargs,
                                  std::initializer_list<const char*> names, size_t required);

}  // namespace ember::python
