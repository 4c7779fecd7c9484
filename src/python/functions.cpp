// Module-level functions: every elementwise op of the table, creation, manipulation and the dtype
// functions (reductions: src/python/reductions.cpp).
#include <algorithm>
#include <cmath>
#include <string>

#include "ember/autograd.hpp"
#include "ember/debug.hpp"
#include "python/common.hpp"
#include "python/pydtype.hpp"

namespace ember::python {

Array reshape_as(const Array& x, nb::handle shape, nb::handle copy) {
    Shape s = reshape_shape(x, shape, "ember.reshape");
    if (!copy.is_none()) {
        if (nb::cast<bool>(copy)) return x.copy().reshape(s);
        if (auto v = x.reshape_view(s)) return *v;
        throw ValueError(
            "ember.reshape: copy=False but the array cannot be reshaped without a copy");
    }
    return x.reshape(s);
}

Array squeeze_axes(const Array& x, nb::handle axis) {
    if (axis.is_none()) return x.squeeze();
    return x.squeeze(*to_axes(axis, "ember.squeeze"));
}

Array transpose_axes(const Array& x, nb::handle axes) {
    if (axes.is_none()) return x.transpose();
    return x.permute(*to_axes(axes, "ember.transpose"));
}

Array swap_axes(const Array& x, int64_t axis1, int64_t axis2) { return x.swapaxes(axis1, axis2); }

Array astype_to(const Array& x, nb::handle dtype, bool copy, nb::handle device) {
    Array r = x.astype(to_dtype(dtype, "ember.astype"), copy);
    if (auto d = to_device(device, "ember.astype")) r = r.to(*d);
    return r;
}

namespace {

using namespace nb::literals;
using ops::OpId;

// A single axis (an integer; sequences are refused).
int64_t one_axis(nb::handle axis, const char* who) {
    if (PyTuple_Check(axis.ptr()) || PyList_Check(axis.ptr()))
        throw TypeError(std::string(who) + ": axis must be an integer or None, got a " +
                        nb::type_name(axis.type()).c_str());
    return (*to_axes(axis, who))[0];
}

Operand operand(nb::handle h, const char* who) {
    Operand o = Operand(false);
    to_operand(h, o, true, who);
    return o;
}

// An elementwise op's result: a new array, or written into `out` (NumPy's ufunc rules: the result
// broadcast to out's shape, cast under 'same_kind') and `out` returned.
nb::object result(OpId op, std::span<const Operand> xs, nb::handle out, const char* who) {
    if (out.is_none()) return wrap(heavy(max_size(xs), run_map, op, xs));
    const Array& o = out_array(out, who);
    heavy(std::max(max_size(xs), o.size()), [&] {
        map(op, xs, &o);
        return 0;
    });
    return nb::borrow(PyTuple_Check(out.ptr()) ? PyTuple_GET_ITEM(out.ptr(), 0) : out.ptr());
}

void bind_elementwise(nb::module_& m) {
    for (int i = 0; i < ops::num_ops; ++i) {
        const ops::OpInfo& oi = ops::op_infos[i];
        const OpId op = OpId(i);
        const std::string name(oi.name);
        // nanobind keeps these pointers: reserved up front so they never move.
        static std::vector<std::string> docs = [] {
            std::vector<std::string> v;
            v.reserve(ops::num_ops);
            return v;
        }();
        docs.push_back(std::string(oi.doc) +
                       "\n\nElementwise, with NumPy's broadcasting and type promotion (Python "
                       "scalars are weak).");
        const char* doc = docs.back().c_str();
        static std::vector<std::string> names = [] {
            std::vector<std::string> v;
            v.reserve(ops::num_ops);
            return v;
        }();
        names.push_back("ember." + name);
        const char* who = names.back().c_str();
        if (oi.arity == 1) {
            m.def(
                name.c_str(),
                [op, who](nb::handle x, nb::handle out) {
                    const Operand xs[1] = {operand(x, who)};
                    return result(op, xs, out, who);
                },
                "x"_a, "out"_a.none() = nb::none(), doc);
        } else if (oi.arity == 2) {
            m.def(
                name.c_str(),
                [op, who](nb::handle a, nb::handle b, nb::handle out) {
                    const Operand xs[2] = {operand(a, who), operand(b, who)};
                    return result(op, xs, out, who);
                },
                "x1"_a, "x2"_a, "out"_a.none() = nb::none(), doc);
        } else if (op == OpId::where) {
            // where(condition, x1, x2): the condition is cast to bool (truthiness, like NumPy).
            m.def(
                name.c_str(),
                [who](nb::handle c, nb::handle a, nb::handle b) {
                    Operand cond = operand(c, who);
                    if (cond.is_scalar)
                        cond = Operand(Scalar(cond.scalar.b));
                    else if (cond.array().dtype() != DType::bool_)
                        cond = Operand(not_equal(cond.array(), Operand(Scalar(false))));
                    const Operand xs[3] = {cond, operand(a, who), operand(b, who)};
                    return heavy(max_size(xs), run_map, OpId::where, std::span<const Operand>(xs));
                },
                "condition"_a, "x1"_a, "x2"_a, doc);
        } else {
            // clip(x, min=None, max=None, out=None): a missing bound is no bound.
            m.def(
                name.c_str(),
                [who](nb::handle x, nb::handle lo, nb::handle hi, nb::handle out) {
                    Operand a = operand(x, who);
                    if (lo.is_none() && hi.is_none()) {
                        Array r = a.is_scalar ? full({}, a.scalar) : a.array().copy();
                        if (out.is_none()) return wrap(std::move(r));
                        out_array(out, who).assign(r);
                        return nb::borrow(out);
                    }
                    if (lo.is_none()) {
                        const Operand xs[2] = {a, operand(hi, who)};
                        return result(OpId::minimum, xs, out, who);
                    }
                    if (hi.is_none()) {
                        const Operand xs[2] = {a, operand(lo, who)};
                        return result(OpId::maximum, xs, out, who);
                    }
                    const Operand xs[3] = {a, operand(lo, who), operand(hi, who)};
                    return result(OpId::clip, xs, out, who);
                },
                "x"_a, "min"_a.none() = nb::none(), "max"_a.none() = nb::none(),
                "out"_a.none() = nb::none(), doc);
        }
    }
    m.def(
        "elementwise_ops",
        [] {
            nb::list l;
            for (const ops::OpInfo& oi : ops::op_infos)
                l.append(nb::make_tuple(std::string(oi.name), oi.arity));
            return l;
        },
        "The op table: (name, arity) of every elementwise op.");
}

// A new array as a leaf that requires grad when asked (floating and complex dtypes only).
Array grad_leaf(Array a, bool requires_grad) {
    if (requires_grad) a.set_requires_grad(true);
    return a;
}

void bind_creation(nb::module_& m) {
    m.def(
        "empty",
        [](nb::handle shape, nb::handle dtype, nb::handle order, nb::handle device,
           bool requires_grad) {
            check_order(order, "ember.empty");
            return grad_leaf(empty(to_shape(shape, "ember.empty"),
                                   to_opt_dtype(dtype, "ember.empty").value_or(DType::float64),
                                   dev_or_default(device, "ember.empty")),
                             requires_grad);
        },
        "shape"_a, "dtype"_a.none() = nb::none(), "order"_a.none() = "C", nb::kw_only(),
        "device"_a.none() = nb::none(), "requires_grad"_a = false, "An uninitialized array.");
    m.def(
        "zeros",
        [](nb::handle shape, nb::handle dtype, nb::handle order, nb::handle device,
           bool requires_grad) {
            check_order(order, "ember.zeros");
            return grad_leaf(zeros(to_shape(shape, "ember.zeros"),
                                   to_opt_dtype(dtype, "ember.zeros").value_or(DType::float64),
                                   dev_or_default(device, "ember.zeros")),
                             requires_grad);
        },
        "shape"_a, "dtype"_a.none() = nb::none(), "order"_a.none() = "C", nb::kw_only(),
        "device"_a.none() = nb::none(), "requires_grad"_a = false, "An array of zeros.");
    m.def(
        "ones",
        [](nb::handle shape, nb::handle dtype, nb::handle order, nb::handle device,
           bool requires_grad) {
            check_order(order, "ember.ones");
            return grad_leaf(ones(to_shape(shape, "ember.ones"),
                                  to_opt_dtype(dtype, "ember.ones").value_or(DType::float64),
                                  dev_or_default(device, "ember.ones")),
                             requires_grad);
        },
        "shape"_a, "dtype"_a.none() = nb::none(), "order"_a.none() = "C", nb::kw_only(),
        "device"_a.none() = nb::none(), "requires_grad"_a = false, "An array of ones.");
    m.def(
        "full",
        [](nb::handle shape, nb::handle value, nb::handle dtype, nb::handle order,
           nb::handle device, bool requires_grad) {
            check_order(order, "ember.full");
            Scalar s;
            if (!weak_scalar(value, s)) {
                Operand o = operand(value, "ember.full");
                if (o.is_scalar)
                    s = o.scalar;
                else if (o.array().size() == 1)
                    s = o.array().item();
                else
                    throw TypeError("ember.full: fill_value must be a scalar");
            }
            return grad_leaf(
                full(to_shape(shape, "ember.full"), s, to_opt_dtype(dtype, "ember.full"),
                     dev_or_default(device, "ember.full")),
                requires_grad);
        },
        "shape"_a, "fill_value"_a, "dtype"_a.none() = nb::none(), "order"_a.none() = "C",
        nb::kw_only(), "device"_a.none() = nb::none(), "requires_grad"_a = false,
        "An array filled with `fill_value`.");
    auto scal = [](nb::handle h, const char* who) {
        Scalar s;
        if (weak_scalar(h, s)) return s;
        Operand o = operand(h, who);
        if (!o.is_scalar && o.array().size() == 1) {
            Scalar v = o.array().item();
            // Treat 0-d arrays and NumPy scalars like Python scalars of their kind.
            v.weak = is_complex(v.dtype)       ? WeakKind::complex
                     : is_floating(v.dtype)    ? WeakKind::floating
                     : v.dtype == DType::bool_ ? WeakKind::boolean
                                               : WeakKind::integer;
            return v;
        }
        throw TypeError(std::string(who) + ": expected a number, got " +
                        std::string(nb::type_name(h.type()).c_str()));
    };
    m.def(
        "arange",
        [scal](nb::handle start, nb::handle stop, nb::handle step, nb::handle dtype,
               nb::handle device, bool requires_grad) {
            const char* who = "ember.arange";
            Scalar a = scal(start, who), b, d = Scalar(int64_t(1));
            if (stop.is_none()) {
                b = a;
                a = Scalar(int64_t(0));
            } else {
                b = scal(stop, who);
            }
            if (!step.is_none()) d = scal(step, who);
            return grad_leaf(arange(a, b, d, to_opt_dtype(dtype, who), dev_or_default(device, who)),
                             requires_grad);
        },
        "start"_a, "stop"_a.none() = nb::none(), "step"_a.none() = nb::none(),
        "dtype"_a.none() = nb::none(), nb::kw_only(), "device"_a.none() = nb::none(),
        "requires_grad"_a = false, "Evenly spaced values in [start, stop) with the given step.");
    m.def(
        "linspace",
        [scal](nb::handle start, nb::handle stop, int64_t num, bool endpoint, bool retstep,
               nb::handle dtype, int64_t axis, nb::handle device, bool requires_grad) {
            const char* who = "ember.linspace";
            if (num < 0)
                throw ValueError("ember.linspace: number of samples, " + std::to_string(num) +
                                 ", must be non-negative");
            // Scalar bounds give a 1-d result: axis 0 (or -1) is its only axis.
            if (axis != 0 && axis != -1)
                throw AxisError("ember.linspace: axis " + std::to_string(axis) +
                                " is out of bounds for array of dimension 1");
            const Scalar a = scal(start, who), b = scal(stop, who);
            nb::object r = wrap(grad_leaf(linspace(a, b, num, to_opt_dtype(dtype, who),
                                                   dev_or_default(device, who), endpoint),
                                          requires_grad));
            if (!retstep) return r;
            const int64_t div = endpoint ? num - 1 : num;
            const std::complex<double> d = b.c - a.c;
            nb::object step =
                div > 0 ? scalar_to_python(Scalar(d / double(div))) : nb::object(nb::float_(NAN));
            if (div > 0 && d.imag() == 0) step = nb::float_(d.real() / double(div));
            return nb::object(nb::make_tuple(r, step));
        },
        "start"_a, "stop"_a, "num"_a = 50, "endpoint"_a = true, "retstep"_a = false,
        "dtype"_a.none() = nb::none(), "axis"_a = 0, nb::kw_only(), "device"_a.none() = nb::none(),
        "requires_grad"_a = false,
        "`num` evenly spaced samples over [start, stop] (or [start, stop) without the endpoint); "
        "with retstep, (samples, step).");
    m.def(
        "eye",
        [](int64_t n, std::optional<int64_t> cols, nb::handle k_obj, nb::handle dtype,
           nb::handle order, nb::handle device, bool requires_grad) {
            check_order(order, "ember.eye");
            // k is any Python integer: a diagonal beyond the matrix gives zeros (NumPy's).
            nb::object idx = nb::steal(PyNumber_Index(k_obj.ptr()));
            if (!idx.is_valid()) {
                PyErr_Clear();
                throw nb::type_error(("ember.eye: k must be an integer, got " +
                                      std::string(nb::type_name(k_obj.type()).c_str()))
                                         .c_str());
            }
            int overflow = 0;
            long long k = PyLong_AsLongLongAndOverflow(idx.ptr(), &overflow);
            if (overflow) k = overflow > 0 ? INT64_MAX : INT64_MIN;
            const int64_t c = cols.value_or(n);
            if (n >= 0 && c >= 0) k = std::clamp<long long>(k, -n - 1, c + 1);
            return grad_leaf(
                eye(n, cols, int64_t(k), to_opt_dtype(dtype, "ember.eye").value_or(DType::float64),
                    dev_or_default(device, "ember.eye")),
                requires_grad);
        },
        "n_rows"_a, "n_cols"_a.none() = nb::none(), "k"_a = 0, "dtype"_a.none() = nb::none(),
        "order"_a.none() = "C", nb::kw_only(), "device"_a.none() = nb::none(),
        "requires_grad"_a = false, "A 2-D array with ones on the k-th diagonal.");
    m.def(
        "_asarray",
        [](nb::handle obj, nb::handle dtype, nb::handle device, nb::handle copy, bool writable) {
            debug::ExplicitScope asked;  // a copy to the device is what asarray is for
            return asarray(obj, dtype, device, copy, writable);
        },
        "obj"_a, "dtype"_a.none() = nb::none(), "device"_a.none() = nb::none(),
        "copy"_a.none() = nb::none(), "writable"_a = true);
    m.def("_set_asarray_hook", &set_asarray_hook);
    m.def(
        "_gil_held_during_work",
        [](int64_t n) { return heavy(n, [] { return PyGILState_Check() == 1; }); },
        "Test hook: whether heavy() keeps the GIL for work of n elements.");
}

void bind_manipulation(nb::module_& m) {
    m.def(
        "reshape",
        [](nb::handle x, nb::handle shape, nb::handle copy) {
            return reshape_as(to_array(x, "ember.reshape"), shape, copy);
        },
        "x"_a, "shape"_a, nb::kw_only(), "copy"_a.none() = nb::none(),
        "A view with a new shape when possible, else a copy.");
    m.def(
        "permute_dims",
        [](nb::handle x, nb::handle axes) {
            const Array a = to_array(x, "ember.permute_dims");
            if (axes.is_none()) return a.transpose();
            return a.permute(*to_axes(axes, "ember.permute_dims"));
        },
        "x"_a, "axes"_a.none() = nb::none(),
        "Permutes the axes (reverses them when axes is None; a view).");
    m.def(
        "transpose",
        [](nb::handle x, nb::handle axes) {
            return transpose_axes(to_array(x, "ember.transpose"), axes);
        },
        "x"_a, "axes"_a.none() = nb::none(), "Reverses or permutes the axes (a view).");
    m.def(
        "swapaxes",
        [](nb::handle x, int64_t a, int64_t b) {
            return swap_axes(to_array(x, "ember.swapaxes"), a, b);
        },
        "x"_a, "axis1"_a, "axis2"_a, "Interchanges two axes (a view).");
    m.def(
        "matmul",
        [](nb::handle a, nb::handle b) {
            Operand x = operand(a, "ember.matmul"), y = operand(b, "ember.matmul");
            for (const Operand* o : {&x, &y})
                if (o->is_scalar)
                    throw ValueError(
                        "ember.matmul: operands must be arrays of at least one "
                        "dimension, got a scalar (use multiply)");
            const Array& xa = x.array();
            const Array& ya = y.array();
            return heavy(std::max(xa.size(), ya.size()), [&] { return matmul(xa, ya); });
        },
        "x1"_a, "x2"_a, "Matrix product with NumPy's rules (batched, broadcast, 1-D operands).");
    m.def(
        "_set_matmul_precision",
        [](const std::string& p) {
            if (p == "highest")
                set_matmul_precision(MatmulPrecision::highest);
            else if (p == "high")
                set_matmul_precision(MatmulPrecision::high);
            else
                throw ValueError(
                    "ember.set_matmul_precision: precision must be 'highest' or "
                    "'high', got '" +
                    p + "'");
        },
        "precision"_a);
    m.def("_get_matmul_precision",
          [] { return matmul_precision() == MatmulPrecision::high ? "high" : "highest"; });
    m.def(
        "take",
        [](nb::handle xh, nb::handle indices, nb::handle axis) {
            const Array x = to_array(xh, "ember.take");
            Operand i = operand(indices, "ember.take");
            const Array idx =
                i.is_scalar ? full({}, i.scalar, std::nullopt, x.device()) : Array(i.array());
            std::optional<int64_t> ax;
            if (!axis.is_none()) ax = one_axis(axis, "ember.take");
            return take(x, idx, ax);
        },
        "x"_a, "indices"_a, "axis"_a.none() = nb::none(),
        "Elements of x at integer indices along axis (of the flattened x when axis is None).");
    m.def(
        "_take_in_range",
        [](const Array& x, const Array& indices, nb::handle axis) {
            std::optional<int64_t> ax;
            if (!axis.is_none()) ax = one_axis(axis, "ember.take");
            return take(x, indices, ax, true);
        },
        "x"_a, "indices"_a, "axis"_a.none() = nb::none(),
        "take with indices the caller knows are in [0, n): no bounds check (no GPU sync).");
    m.def(
        "_memory_base",
        [](const Array& x) {
            return nb::make_tuple(reinterpret_cast<uintptr_t>(x.storage()->data()),
                                  x.offset() * int64_t(x.itemsize()));
        },
        "x"_a, "(address of the array's storage, byte offset of its first element there).");
    m.def(
        "_as_strided",
        [](const Array& x, std::vector<int64_t> shape, std::vector<int64_t> strides, int64_t offset,
           const std::string& who) {
            // shape, strides (elements) and the offset (elements from the storage's start) of a
            // view of x's storage; every element it reaches must lie in the storage.
            if (shape.size() != strides.size())
                throw ValueError(who + ": shape " + shape_str(Shape(shape)) + " and strides (" +
                                 std::to_string(strides.size()) + " values) need the same length");
            const int64_t item = int64_t(x.itemsize());
            const int64_t n = int64_t(x.storage()->nbytes()) / item;
            int64_t lo = offset, hi = offset, count = 1;
            for (size_t d = 0; d < shape.size(); ++d) {
                if (shape[d] < 0)
                    throw ValueError(who + ": negative dimension " + std::to_string(shape[d]) +
                                     " in shape " + shape_str(Shape(shape)));
                count *= shape[d] ? 1 : 0;
            }
            if (count) {
                for (size_t d = 0; d < shape.size(); ++d) {
                    int64_t span = 0;
                    bool over = __builtin_mul_overflow(shape[d] - 1, strides[d], &span);
                    over = over ||
                           __builtin_add_overflow(span < 0 ? lo : hi, span, span < 0 ? &lo : &hi);
                    if (over)
                        throw ValueError(who + ": shape " + shape_str(Shape(shape)) +
                                         " with these strides overflows 64-bit offsets");
                }
                if (lo < 0 || hi >= n)
                    throw ValueError(who + ": shape " + shape_str(Shape(shape)) +
                                     " with these strides and offset " + std::to_string(offset) +
                                     " reaches element " + std::to_string(lo < 0 ? lo : hi) +
                                     " of a storage of " + std::to_string(n) + " elements");
            } else if (offset < 0 || offset > n) {
                throw ValueError(who + ": offset " + std::to_string(offset) +
                                 " is outside a storage of " + std::to_string(n) + " elements");
            }
            return x.view(Shape(shape), Strides(strides), offset - x.offset());
        },
        "x"_a, "shape"_a, "strides"_a, "offset"_a, "who"_a,
        "A view of x's storage with the given shape, strides and offset (in elements); "
        "ValueError when it would reach outside the storage.");
    m.def(
        "_add_at",
        [](const Array& x, nb::handle indices, nb::handle values, nb::handle axis) {
            Operand i = operand(indices, "ember.add_at");
            const Array idx =
                i.is_scalar ? full({}, i.scalar, std::nullopt, x.device()) : Array(i.array());
            std::optional<int64_t> ax;
            if (!axis.is_none()) ax = one_axis(axis, "ember.add_at");
            add_at(x, idx, operand(values, "ember.add_at"), ax);
        },
        "x"_a, "indices"_a, "values"_a, "axis"_a.none() = nb::none(),
        "x[indices] += values along axis (of the flattened x when axis is None), in place; "
        "repeated indices accumulate, in order.");
    m.def(
        "_diagonal_view", [](const Array& x, int64_t k) { return x.diagonal_view(k); }, "x"_a,
        "k"_a, "The k-th diagonal of the last two axes (a view).");
    m.def(
        "matrix_transpose",
        [](nb::handle xh) {
            const Array x = to_array(xh, "ember.matrix_transpose");
            if (x.ndim() < 2)
                throw ValueError("ember.matrix_transpose: array must be at least 2-d");
            return x.swapaxes(-1, -2);
        },
        "x"_a, "Transposes the last two axes (a view).");
    m.def(
        "broadcast_to",
        [](nb::handle x, nb::handle shape) {
            Array r = to_array(x, "ember.broadcast_to")
                          .broadcast_to(to_shape(shape, "ember.broadcast_to"));
            r.set_writeable(false);  // as NumPy's: a write would land on repeated elements
            return r;
        },
        "x"_a, "shape"_a, "A read-only broadcast view (NumPy's broadcast_to).");
    m.def(
        "expand_dims",
        [](nb::handle x, int64_t axis) {
            return to_array(x, "ember.expand_dims").expand_dims(axis);
        },
        "x"_a, "axis"_a = 0, "Inserts a size-1 axis (a view).");
    m.def(
        "squeeze",
        [](nb::handle x, nb::handle axis) {
            return squeeze_axes(to_array(x, "ember.squeeze"), axis);
        },
        "x"_a, "axis"_a.none() = nb::none(), "Removes size-1 axes (a view).");
    m.def(
        "_view_as",
        [](const Array& x, nb::handle dtype) {
            DType t = to_dtype(dtype, "ember.ndarray.view");
            const int64_t from = int64_t(x.itemsize()), to = int64_t(itemsize(t));
            auto as_t = [&](int64_t offset, Shape shape, Strides strides) {
                Array r(x.storage(), offset, std::move(shape), std::move(strides), t);
                r.set_writeable(x.writeable());
                return r;
            };
            if (from == to) return as_t(x.offset(), x.shape(), x.strides());
            // Another item size: the last axis must be contiguous, and every byte offset and
            // stride, and the last axis's bytes, whole items of the new dtype (NumPy's rule).
            const std::string why = "ember.ndarray.view: cannot view " +
                                    std::string(name(x.dtype())) + " data of shape " +
                                    shape_str(x.shape()) + " as " + std::string(name(t));
            if (x.ndim() == 0) throw ValueError(why + ": the array is 0-d");
            const int last = x.ndim() - 1;
            if (x.shape()[size_t(last)] != 1 && x.strides()[size_t(last)] != 1)
                throw ValueError(why + ": the last axis is not contiguous");
            if (x.shape()[size_t(last)] * from % to)
                throw ValueError(why + ": the last axis's size in bytes is not a multiple of " +
                                 std::to_string(to));
            Shape shape = x.shape();
            Strides strides = x.strides();
            for (int d = 0; d < last; ++d)
                if (strides[size_t(d)] * from % to)
                    throw ValueError(why + ": a stride is not a multiple of " + std::to_string(to) +
                                     " bytes");
            if (x.offset() * from % to)
                throw ValueError(why + ": its offset is not a multiple of " + std::to_string(to) +
                                 " bytes");
            for (int d = 0; d < last; ++d)
                strides[size_t(d)] = strides[size_t(d)] * from / to;
            shape[size_t(last)] = shape[size_t(last)] * from / to;
            strides[size_t(last)] = 1;
            return as_t(x.offset() * from / to, shape, strides);
        },
        "x"_a, "dtype"_a);
    // The array API's astype(x, dtype, /, *, copy=True, device=None): unnamed arguments are
    // positional-only in nanobind; the signature names them.
    m.def("astype", &astype_to, nb::arg(), nb::arg(), nb::kw_only(), "copy"_a = true,
          "device"_a.none() = nb::none(),
          nb::sig("def astype(x: ndarray, dtype: object, /, *, copy: bool = True, "
                  "device: object | None = None) -> ndarray"),
          "Casts x to `dtype` (NumPy's unsafe casting).");
}

void bind_types(nb::module_& m) {
    m.def("_result_type", [](nb::args args) {
        std::vector<Operand> xs;
        for (nb::handle h : args) {
            if (nb::isinstance<PyDType>(h) || PyType_Check(h.ptr()) || PyUnicode_Check(h.ptr()) ||
                (nb::hasattr(h, "itemsize") && nb::hasattr(h, "name") && !is_ndarray(h))) {
                // A dtype: a strong 0-d stand-in.
                Scalar s;
                s = Scalar(int64_t(0)).strong(to_dtype(h, "ember.result_type"));
                xs.emplace_back(s);
            } else {
                xs.push_back(operand(h, "ember.result_type"));
            }
        }
        if (xs.empty())
            throw ValueError("ember.result_type: at least one array or dtype is required");
        return PyDType{result_type(xs)};
    });
    m.def("_can_cast", [](nb::handle from, nb::handle to) {
        DType f = is_ndarray(from) ? as_array(from).dtype() : to_dtype(from, "ember.can_cast");
        return can_cast(f, to_dtype(to, "ember.can_cast"));
    });
    m.def("_finfo", [](nb::handle t) {
        FInfo f = finfo(to_dtype(t, "ember.finfo"));
        return nb::make_tuple(f.bits, f.eps, f.max, f.min, f.smallest_normal, f.smallest_subnormal,
                              f.resolution, f.precision, PyDType{f.dtype});
    });
    m.def("_iinfo", [](nb::handle t) {
        IInfo i = iinfo(to_dtype(t, "ember.iinfo"));
        return nb::make_tuple(i.bits, i.min, i.max, PyDType{i.dtype});
    });
}

}  // namespace

void bind_functions(nb::module_& m) {
    bind_elementwise(m);
    bind_reductions(m);
    bind_creation(m);
    bind_manipulation(m);
    bind_types(m);
    // For Python subclasses of ndarray (ember.nn.Parameter): a new instance of `cls` holding a
    // copy of the array handle (same storage), built as wrap() builds the base type.
    m.def(
        "_wrap_as",
        [](nb::handle cls, const Array& a) {
            if (!PyType_Check(cls.ptr()) ||
                !PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(cls.ptr()), ndarray_type))
                throw nb::type_error("ember._wrap_as: cls must be a subclass of ember.ndarray");
            nb::object o = nb::inst_alloc(cls);
            new (nb::inst_ptr<Array>(o)) Array(a);
            nb::inst_mark_ready(o);
            return o;
        },
        "cls"_a, "array"_a,
        "A new instance of the ndarray subclass `cls` sharing the array's data (and handle).");
    m.def(
        "_set_data",
        [](nb::handle dst, nb::handle src) {
            if (!is_ndarray(dst) || !is_ndarray(src))
                throw nb::type_error("ember._set_data: both arguments must be ember arrays");
            Array& d = *nb::inst_ptr<Array>(dst);
            if (d.grad_meta() && d.grad_meta()->grad_fn)
                throw ValueError(
                    "ember._set_data: only a leaf array's data can be replaced (this one was "
                    "computed by an op that autograd recorded)");
            // The new data with the old autograd state (requires_grad, grad): PyTorch's
            // `param.data = new`, which keeps the Python object and so its identity.
            Array fresh = as_array(src).detach();
            fresh.set_grad_meta(d.grad_meta());
            d = fresh;
        },
        "dst"_a, "src"_a,
        "Points leaf array `dst` at `src`'s data (device, dtype, shape), keeping its autograd "
        "state and identity (Module.to).");
}

}  // namespace ember::python
