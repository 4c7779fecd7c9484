// The ember.ndarray class: attributes, operators (straight to the C++ op front-end), basic
// and advanced indexing (index arrays uploaded to the array's device), conversions and the buffer
// protocol.
#include <cstring>
#include <string>
#include <utility>

#include <nanobind/stl/pair.h>

#include "ember/interop.hpp"
#include "python/common.hpp"
#include "python/observe.hpp"
#include "python/pydtype.hpp"

namespace ember::python {

namespace {

using ops::OpId;

nb::object binary(OpId op, nb::handle self, nb::handle other, bool reflected) {
    // The operands are filled in place (see Operand::refer).
    Operand xs[2] = {Operand(false), Operand(false)};
    if (!to_operand(other, xs[reflected ? 0 : 1], false, "ember.ndarray"))
        return nb::borrow(Py_NotImplemented);
    xs[reflected ? 1 : 0].refer(as_array(self));
    return wrap(heavy(max_size(xs), run_map, op, std::span<const Operand>(xs)));
}

nb::object inplace(OpId op, nb::handle self, nb::handle other) {
    const Array& a = as_array(self);
    Operand xs[2] = {Operand(a), Operand(false)};
    if (!to_operand(other, xs[1], false, "ember.ndarray")) return nb::borrow(Py_NotImplemented);
    heavy(a.size(), [&] {
        map(op, xs, &a);
        return 0;
    });
    return nb::borrow(self);
}

nb::object unary(OpId op, nb::handle self) {
    const Operand xs[1] = {Operand(as_array(self))};
    return wrap(heavy(max_size(xs), run_map, op, std::span<const Operand>(xs)));
}

// An index array from a non-basic index item (bool, ndarray, list, tuple, NumPy array or
// scalar): integer or boolean, on `dev` (host index data is uploaded).
Array index_array(nb::handle k, Device dev) {
    PyObject* o = k.ptr();
    if (PyBool_Check(o)) return full({}, Scalar(o == Py_True), DType::bool_, dev);
    Array a;
    if (is_ndarray(k)) {
        a = as_array(k);
    } else {
        Operand op = Operand(false);
        try {
            to_operand(k, op, true, "ember.ndarray.__getitem__");
        } catch (const nb::python_error& e) {
            // A list NumPy cannot read as an integer array (say, an int beyond 64 bits) is no
            // valid index: NumPy's IndexError, not the conversion's TypeError.
            if (!e.matches(PyExc_TypeError) || !(PyList_Check(o) || PyTuple_Check(o))) throw;
            throw IndexError(
                "ember: only integers, slices (`:`), ellipsis (`...`), None and integer or "
                "boolean arrays are valid indices");
        }
        a = op.is_scalar ? full({}, op.scalar, std::nullopt, cpu) : op.array();
        // NumPy reads an empty list as an empty integer index.
        if (a.size() == 0 && !is_integer(a.dtype()) && a.dtype() != DType::bool_ &&
            !is_ndarray(k) && (PyList_Check(o) || PyTuple_Check(o)))
            a = a.astype(DType::int64);
    }
    if (a.dtype() != DType::bool_ && !is_integer(a.dtype()))
        throw IndexError(
            "ember: arrays used as indices must be of integer (or boolean) type, got dtype " +
            std::string(name(a.dtype())));
    if (a.device() != dev) a = a.to(dev);
    return a.detach();
}

// Parses a Python index (int, slice, None, Ellipsis, arrays, lists, tuple of these).
void parse_index(nb::handle key, std::vector<IndexItem>& out, Device dev) {
    auto one = [&](nb::handle k) {
        PyObject* o = k.ptr();
        if (PyLong_CheckExact(o)) {
            int overflow = 0;
            long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
            if (overflow)
                throw IndexError("ember: index " + std::string(nb::str(k).c_str()) +
                                 " is out of bounds");
            out.emplace_back(Index(int64_t(v)));
        } else if (PySlice_Check(o)) {
            Py_ssize_t start, stop, step;
            if (PySlice_Unpack(o, &start, &stop, &step) < 0) throw nb::python_error();
            Slice s;
            PySliceObject* so = reinterpret_cast<PySliceObject*>(o);
            if (so->start != Py_None) s.start = start;
            if (so->stop != Py_None) s.stop = stop;
            if (so->step != Py_None) s.step = step;
            if (so->step != Py_None && step == 0)
                throw ValueError("ember: slice step cannot be zero");
            out.emplace_back(Index(s));
        } else if (o == Py_None) {
            out.emplace_back(Index(NewAxis{}));
        } else if (o == Py_Ellipsis) {
            out.emplace_back(Index(Ellipsis{}));
        } else if (PyBool_Check(o) || is_ndarray(k) || PyList_Check(o) || PyTuple_Check(o)) {
            out.emplace_back(index_array(k, dev));
        } else if (!PyFloat_Check(o) && nb::hasattr(k, "__index__") && !nb::hasattr(k, "__len__")) {
            PyObject* idx = PyNumber_Index(o);
            if (!idx) throw nb::python_error();
            long long v = PyLong_AsLongLong(idx);
            Py_DECREF(idx);
            if (v == -1 && PyErr_Occurred()) throw nb::python_error();
            out.emplace_back(Index(int64_t(v)));
        } else if (nb::hasattr(k, "__array_interface__") || nb::hasattr(k, "__array__") ||
                   nb::hasattr(k, "__dlpack__")) {
            out.emplace_back(index_array(k, dev));
        } else {
            throw IndexError(
                "ember: only integers, slices (`:`), ellipsis (`...`), None and integer or "
                "boolean arrays are valid indices, got " +
                std::string(nb::type_name(k.type()).c_str()));
        }
    };
    if (PyTuple_Check(key.ptr())) {
        for (nb::handle k : nb::borrow<nb::tuple>(key))
            one(k);
    } else {
        one(key);
    }
}

nb::tuple to_tuple(const Dims& d, int64_t scale = 1) {
    nb::object t = nb::steal(PyTuple_New(Py_ssize_t(d.size())));
    for (size_t i = 0; i < d.size(); ++i)
        PyTuple_SET_ITEM(t.ptr(), Py_ssize_t(i), PyLong_FromLongLong(d[i] * scale));
    return nb::borrow<nb::tuple>(t);
}

Scalar one_element(const Array& a, const char* what, const char* op) {
    Observed scope(op);
    if (a.size() != 1)
        throw TypeError(std::string("ember: only arrays with one element can be converted to ") +
                        what + " (size is " + std::to_string(a.size()) + ")");
    return a.item();
}

// ---- buffer protocol ----------------------------------------------------------------------------

struct BufferInfo {
    std::vector<Py_ssize_t> shape, strides;
};

const char* buffer_format(DType t) {
    switch (t) {
        case DType::bool_:
            return "?";
        case DType::int8:
            return "b";
        case DType::int16:
            return "h";
        case DType::int32:
            return "i";
        case DType::int64:
            return "q";
        case DType::uint8:
            return "B";
        case DType::uint16:
            return "H";
        case DType::uint32:
            return "I";
        case DType::uint64:
            return "Q";
        case DType::float16:
            return "e";
        case DType::float32:
            return "f";
        case DType::float64:
            return "d";
        case DType::complex64:
            return "Zf";
        case DType::complex128:
            return "Zd";
        default:
            return nullptr;
    }
}

int getbuffer(PyObject* self, Py_buffer* view, int flags) {
    const Array& a = *nb::inst_ptr<Array>(self);
    if (!a.device().is_cpu()) {
        PyErr_Format(PyExc_BufferError,
                     "ember: the array is on %s; the buffer protocol needs "
                     "CPU memory (use x.cpu())",
                     a.device().str().c_str());
        return -1;
    }
    const char* fmt = buffer_format(a.dtype());
    if (!fmt) {
        PyErr_SetString(PyExc_BufferError,
                        "ember: bfloat16 has no buffer-protocol format; use DLPack instead");
        return -1;
    }
    if ((flags & PyBUF_WRITABLE) && !a.writeable()) {
        PyErr_SetString(PyExc_BufferError, "ember: the array is read-only");
        return -1;
    }
    if ((flags & PyBUF_C_CONTIGUOUS) == PyBUF_C_CONTIGUOUS && !a.is_contiguous()) {
        PyErr_SetString(PyExc_BufferError, "ember: the array is not C-contiguous");
        return -1;
    }
    if ((flags & PyBUF_F_CONTIGUOUS) == PyBUF_F_CONTIGUOUS && !a.is_f_contiguous()) {
        PyErr_SetString(PyExc_BufferError, "ember: the array is not Fortran-contiguous");
        return -1;
    }
    if ((flags & PyBUF_STRIDES) != PyBUF_STRIDES && !a.is_contiguous()) {
        PyErr_SetString(PyExc_BufferError, "ember: the array is not contiguous");
        return -1;
    }
    auto* info = new BufferInfo;
    for (size_t i = 0; i < size_t(a.ndim()); ++i) {
        info->shape.push_back(Py_ssize_t(a.shape()[i]));
        info->strides.push_back(Py_ssize_t(a.strides()[i] * a.itemsize()));
    }
    view->buf = a.data();
    view->obj = Py_NewRef(self);
    view->len = Py_ssize_t(a.nbytes());
    view->readonly = a.writeable() ? 0 : 1;
    view->itemsize = Py_ssize_t(a.itemsize());
    view->format = (flags & PyBUF_FORMAT) ? const_cast<char*>(fmt) : nullptr;
    view->ndim = a.ndim();
    view->shape = (flags & PyBUF_ND) ? info->shape.data() : nullptr;
    view->strides = (flags & PyBUF_STRIDES) == PyBUF_STRIDES ? info->strides.data() : nullptr;
    view->suboffsets = nullptr;
    view->internal = info;
    return 0;
}

void releasebuffer(PyObject*, Py_buffer* view) { delete static_cast<BufferInfo*>(view->internal); }

// Number-protocol slots called by CPython directly (no method lookup, no argument parsing):
// the per-call cost of `x + y` stays close to NumPy's.
// "ember.<op>": the name of an operator's op for ember.debug and the profiler.
const char* op_label(OpId op) {
    static const auto* labels = [] {
        auto* v = new std::vector<std::string>();
        for (int i = 0; i < ops::num_ops; ++i)
            v->push_back("ember." + std::string(ops::info(OpId(i)).name));
        return v;
    }();
    return (*labels)[size_t(op)].c_str();
}

template <OpId op>
PyObject* slot_binary(PyObject* a, PyObject* b) noexcept {
    Observed scope(debug::watching() ? op_label(op) : nullptr);
    try {
        const bool left = is_ndarray(a);
        return binary(op, left ? a : b, left ? b : a, !left).release().ptr();
    } catch (...) {
        set_python_error(std::current_exception());
        return nullptr;
    }
}
template <OpId op>
PyObject* slot_inplace(PyObject* a, PyObject* b) noexcept {
    Observed scope(debug::watching() ? op_label(op) : nullptr);
    try {
        return inplace(op, a, b).release().ptr();
    } catch (...) {
        set_python_error(std::current_exception());
        return nullptr;
    }
}
template <OpId op>
PyObject* slot_unary(PyObject* a) noexcept {
    Observed scope(debug::watching() ? op_label(op) : nullptr);
    try {
        return unary(op, a).release().ptr();
    } catch (...) {
        set_python_error(std::current_exception());
        return nullptr;
    }
}
PyObject* slot_matmul(PyObject* a, PyObject* b) noexcept {
    try {
        const bool left = is_ndarray(a);
        Operand o = Operand(false);
        if (!to_operand(left ? b : a, o, false, "ember.matmul"))
            return nb::borrow(Py_NotImplemented).release().ptr();
        if (o.is_scalar)
            throw ValueError("ember.matmul: Input operand " + std::string(left ? "1" : "0") +
                             " does not have enough dimensions (a scalar; use multiply)");
        const Array& x = as_array(left ? a : b);
        const Array& y = o.array();
        const int64_t n = std::max(x.size(), y.size());
        return wrap(heavy(n, [&] { return left ? matmul(x, y) : matmul(y, x); })).release().ptr();
    } catch (...) {
        set_python_error(std::current_exception());
        return nullptr;
    }
}
PyObject* slot_power(PyObject* a, PyObject* b, PyObject* mod) noexcept {
    if (mod != Py_None) {
        PyErr_SetString(PyExc_TypeError, "ember: pow() with a modulus is not supported");
        return nullptr;
    }
    return slot_binary<OpId::pow>(a, b);
}
PyObject* slot_ipower(PyObject* a, PyObject* b, PyObject* mod) noexcept {
    if (mod != Py_None) {
        PyErr_SetString(PyExc_TypeError, "ember: pow() with a modulus is not supported");
        return nullptr;
    }
    return slot_inplace<OpId::pow>(a, b);
}
// Whether `b` has array or operator protocols of its own (then ember leaves it the comparison).
bool defers(nb::handle b) {
    if (b.is_none() || PyUnicode_Check(b.ptr()) || PyBytes_Check(b.ptr())) return false;
    for (const char* name : {"__array_ufunc__", "__array_function__", "__array_priority__",
                             "__dlpack__", "__array_namespace__", "__cuda_array_interface__"})
        if (nb::hasattr(b.type(), name)) return true;
    return false;
}

PyObject* slot_richcompare(PyObject* a, PyObject* b, int cmp) noexcept {
    static constexpr OpId ops[] = {OpId::less,      OpId::less_equal, OpId::equal,
                                   OpId::not_equal, OpId::greater,    OpId::greater_equal};
    if (!is_ndarray(a)) return Py_NewRef(Py_NotImplemented);
    try {
        nb::object r = binary(ops[cmp], a, b, false);
        // == and != with an object that is no array and no number (None, a string, any object)
        // compare elementwise as NumPy's do: all False, or all True for !=. Objects that take
        // part in array protocols get their own reflected operator first.
        if (r.ptr() == Py_NotImplemented && (cmp == Py_EQ || cmp == Py_NE) &&
            !defers(nb::handle(b))) {
            const Array& x = as_array(a);
            return wrap(full(x.shape(), Scalar(cmp == Py_NE), DType::bool_, x.device()))
                .release()
                .ptr();
        }
        return r.release().ptr();
    } catch (...) {
        set_python_error(std::current_exception());
        return nullptr;
    }
}

void setitem(const Array& a, nb::handle key, nb::handle value) {
    std::vector<IndexItem> idx;
    parse_index(key, idx, a.device());
    Scalar s;
    if (weak_scalar(value, s)) {
        index_assign(a, std::span<const IndexItem>(idx), Operand(s));
        return;
    }
    Operand v = Operand(false);
    to_operand(value, v, true, "ember.ndarray.__setitem__");
    if (!v.is_scalar && v.array().device() != a.device()) v = Operand(v.array().to(a.device()));
    index_assign(a, std::span<const IndexItem>(idx), v);
}

// Indexing as mapping slots (x[key], x[key] = value), like the operators.
PyObject* slot_getitem(PyObject* self, PyObject* key) noexcept {
    try {
        std::vector<IndexItem> idx;
        const Array& a = as_array(self);
        parse_index(key, idx, a.device());
        return wrap(index(a, std::span<const IndexItem>(idx))).release().ptr();
    } catch (...) {
        set_python_error(std::current_exception());
        return nullptr;
    }
}
int slot_setitem(PyObject* self, PyObject* key, PyObject* value) noexcept {
    if (!value) {
        PyErr_SetString(PyExc_ValueError, "ember: array elements cannot be deleted");
        return -1;
    }
    try {
        setitem(as_array(self), key, value);
        return 0;
    } catch (...) {
        set_python_error(std::current_exception());
        return -1;
    }
}

PyType_Slot array_slots[] = {
    {Py_mp_subscript, (void*)slot_getitem},
    {Py_mp_ass_subscript, (void*)slot_setitem},
    {Py_bf_getbuffer, (void*)getbuffer},
    {Py_bf_releasebuffer, (void*)releasebuffer},
    {Py_nb_add, (void*)slot_binary<OpId::add>},
    {Py_nb_matrix_multiply, (void*)slot_matmul},
    {Py_nb_subtract, (void*)slot_binary<OpId::subtract>},
    {Py_nb_multiply, (void*)slot_binary<OpId::multiply>},
    {Py_nb_true_divide, (void*)slot_binary<OpId::divide>},
    {Py_nb_floor_divide, (void*)slot_binary<OpId::floor_divide>},
    {Py_nb_remainder, (void*)slot_binary<OpId::remainder>},
    {Py_nb_power, (void*)slot_power},
    {Py_nb_and, (void*)slot_binary<OpId::bitwise_and>},
    {Py_nb_or, (void*)slot_binary<OpId::bitwise_or>},
    {Py_nb_xor, (void*)slot_binary<OpId::bitwise_xor>},
    {Py_nb_lshift, (void*)slot_binary<OpId::bitwise_left_shift>},
    {Py_nb_rshift, (void*)slot_binary<OpId::bitwise_right_shift>},
    {Py_nb_inplace_add, (void*)slot_inplace<OpId::add>},
    {Py_nb_inplace_subtract, (void*)slot_inplace<OpId::subtract>},
    {Py_nb_inplace_multiply, (void*)slot_inplace<OpId::multiply>},
    {Py_nb_inplace_true_divide, (void*)slot_inplace<OpId::divide>},
    {Py_nb_inplace_floor_divide, (void*)slot_inplace<OpId::floor_divide>},
    {Py_nb_inplace_remainder, (void*)slot_inplace<OpId::remainder>},
    {Py_nb_inplace_power, (void*)slot_ipower},
    {Py_nb_inplace_and, (void*)slot_inplace<OpId::bitwise_and>},
    {Py_nb_inplace_or, (void*)slot_inplace<OpId::bitwise_or>},
    {Py_nb_inplace_xor, (void*)slot_inplace<OpId::bitwise_xor>},
    {Py_nb_inplace_lshift, (void*)slot_inplace<OpId::bitwise_left_shift>},
    {Py_nb_inplace_rshift, (void*)slot_inplace<OpId::bitwise_right_shift>},
    {Py_nb_negative, (void*)slot_unary<OpId::negative>},
    {Py_nb_positive, (void*)slot_unary<OpId::positive>},
    {Py_nb_absolute, (void*)slot_unary<OpId::abs>},
    {Py_nb_invert, (void*)slot_unary<OpId::bitwise_invert>},
    {Py_tp_richcompare, (void*)slot_richcompare},
    {0, nullptr},
};

}  // namespace

// Freed ndarray objects are parked for reuse (nanobind 2.13+): a result of `x + y` then costs no
// Python allocation and no update of nanobind's C++-to-Python instance map, on the hot path of
// every small op.
#if NB_VERSION_MAJOR > 2 || (NB_VERSION_MAJOR == 2 && NB_VERSION_MINOR >= 13)
#define EMBER_NDARRAY_POOL , nb::pooled(256)
#else
#define EMBER_NDARRAY_POOL
#endif

void bind_array(nb::module_& m) {
    auto cls = nb::class_<Array>(m, "ndarray", nb::type_slots(array_slots) EMBER_NDARRAY_POOL,
                                 "An n-dimensional array on a device (CPU or CUDA GPU).");
    ndarray_type = reinterpret_cast<PyTypeObject*>(cls.ptr());

    // NumPy's low-level constructor: ndarray(shape, dtype=float64) is an uninitialized array
    // (ember.empty); views of foreign buffers come from ember.asarray or frombuffer instead.
    cls.def("__init__", [](Array* self, nb::args args, nb::kwargs kwargs) {
        const char* who = "ember.ndarray";
        auto a = bind_args(who, args, kwargs,
                           {"shape", "dtype", "buffer", "offset", "strides", "order"}, 1);
        for (size_t i : {2, 3, 4})
            if (a[i].is_valid() && !a[i].is_none() &&
                !(i == 3 && PyLong_Check(a[i].ptr()) && PyLong_AsLong(a[i].ptr()) == 0))
                throw ValueError(std::string(who) +
                                 ": buffer, offset and strides are not supported; use "
                                 "ember.asarray or ember.frombuffer");
        if (a[5].is_valid()) check_order(a[5], who);
        const std::optional<DType> dt = a[1].is_valid() ? to_opt_dtype(a[1], who) : std::nullopt;
        new (self) Array(empty(to_shape(a[0], who), dt.value_or(DType::float64), default_device()));
    });
    cls.def_prop_ro("shape", [](const Array& a) { return to_tuple(a.shape()); })
        .def_prop_ro("dtype", [](const Array& a) { return PyDType{a.dtype()}; })
        .def_prop_ro("ndim", &Array::ndim)
        .def_prop_ro("size", &Array::size)
        .def_prop_ro("itemsize", &Array::itemsize)
        .def_prop_ro("nbytes", &Array::nbytes)
        .def_prop_ro(
            "strides", [](const Array& a) { return to_tuple(a.strides(), a.itemsize()); },
            "Strides in bytes, as in NumPy (ember stores them in elements).")
        .def_prop_ro("device", &Array::device)
        // NumPy's flags.writeable (ndarray.flags, in Python, reads and sets it).
        .def_prop_rw("_writeable", &Array::writeable, &Array::set_writeable)
        .def_prop_ro("_owndata",
                     [](const Array& a) {
                         return a.storage()->owned() && a.offset() == 0 && a.is_contiguous() &&
                                size_t(a.nbytes()) == a.storage()->nbytes();
                     })
        // NumPy's .T reverses every axis (the Array API defines it for 2-d only).
        .def_prop_ro("T", [](const Array& a) { return a.transpose(); })
        .def_prop_ro("mT",
                     [](const Array& a) {
                         if (a.ndim() < 2)
                             throw ValueError("ember.ndarray.mT: array must be at least 2-d");
                         return a.swapaxes(-1, -2);
                     })
        .def("item", [](const Array& a) { return scalar_to_python(a.item()); })
        .def("copy", &Array::copy)
        .def(
            "astype",
            [](const Array& a, nb::handle dtype, bool copy) {
                return astype_to(a, dtype, copy, nb::none());
            },
            nb::arg("dtype"), nb::arg("copy") = true)
        .def(
            "reshape",
            [](const Array& a, nb::args args, nb::handle copy) {
                return reshape_as(a, args.size() == 1 ? args[0] : nb::handle(args), copy);
            },
            nb::arg("shape"), nb::kw_only(), nb::arg("copy").none() = nb::none())
        .def("transpose",
             [](const Array& a, nb::args axes) {
                 // NumPy's forms: x.transpose(), x.transpose(None), x.transpose(axes) and
                 // x.transpose(*axes)
                 if (axes.size() == 0) return a.transpose();
                 return transpose_axes(a, axes.size() == 1 && !PyLong_Check(axes[0].ptr())
                                              ? axes[0]
                                              : nb::handle(axes));
             })
        .def("swapaxes", &swap_axes, nb::arg("axis1"), nb::arg("axis2"))
        .def("squeeze", &squeeze_axes, nb::arg("axis").none() = nb::none())
        .def("flatten", [](const Array& a) { return a.copy().reshape({a.size()}); })
        .def("ravel", [](const Array& a) { return a.reshape({a.size()}); })
        .def(
            "to",
            [](const Array& a, nb::handle device, bool non_blocking) {
                const Device d = *to_device(device, "ember.ndarray.to");
                debug::ExplicitScope asked;
                return non_blocking ? cuda::to_non_blocking(a, d) : a.to(d);
            },
            nb::arg("device"), nb::kw_only(), nb::arg("non_blocking") = false,
            "A copy on `device` (the array itself when it is already there). non_blocking=True "
            "copies between pinned host memory and a CUDA device without waiting for the host.")
        .def(
            "to_device",
            [](const Array& a, nb::handle device, nb::handle) {
                const Device d = *to_device(device, "ember.ndarray.to_device");
                debug::ExplicitScope asked;
                return a.to(d);
            },
            nb::arg("device"), nb::kw_only(), nb::arg("stream").none() = nb::none())
        .def(
            "cpu",
            [](const Array& a, bool non_blocking) {
                debug::ExplicitScope asked;
                return non_blocking ? cuda::to_non_blocking(a, cpu) : a.to(cpu);
            },
            nb::kw_only(), nb::arg("non_blocking") = false)
        .def(
            "cuda",
            [](const Array& a, std::optional<int> index, bool non_blocking) {
                const int i = index ? *index : cuda::current_device();
                const Device d(DeviceType::cuda, i);
                check_device(d, "ember.ndarray.cuda");
                debug::ExplicitScope asked;
                return non_blocking ? cuda::to_non_blocking(a, d) : a.to(d);
            },
            nb::arg("device").none() = nb::none(), nb::kw_only(), nb::arg("non_blocking") = false,
            "A copy on CUDA device `device` (the current one when None); the array itself when "
            "it is already there. non_blocking as in to().")
        .def("_numpy_view", &to_numpy_view)
        .def("__dlpack_device__",
             [](const Array& a) {
                 return nb::make_tuple(a.device().is_cpu() ? 1 : 2, a.device().index);
             })
        .def("__dlpack__", &dlpack_capsule, nb::kw_only(), nb::arg("stream").none() = nb::none(),
             nb::arg("max_version").none() = nb::none(), nb::arg("dl_device").none() = nb::none(),
             nb::arg("copy").none() = nb::none(),
             "Exports the array as a DLPack capsule (versioned when max_version >= (1, 0); "
             "zero-copy unless copy=True or dl_device names another device).")
        // Python protocols.
        .def("__len__",
             [](const Array& a) {
                 if (a.ndim() == 0) throw TypeError("ember: len() of a 0-d array");
                 return a.shape()[0];
             })
        .def("__bool__",
             [](const Array& a) {
                 if (a.size() != 1)
                     throw ValueError("ember: the truth value of an array with " +
                                      std::to_string(a.size()) +
                                      " elements is ambiguous; use .any() or .all()");
                 Observed scope("bool(x)");
                 return a.item().b;
             })
        .def("__int__",
             [](const Array& a) {
                 Scalar s = one_element(a, "int", "int(x)");
                 if (is_complex(s.dtype))
                     throw TypeError("ember: cannot convert a complex array to int; use .real");
                 if (is_inexact(s.dtype)) {
                     double v = s.c.real();
                     if (v != v) throw ValueError("ember: cannot convert float NaN to integer");
                     return nb::steal(PyNumber_Long(nb::float_(v).ptr()));
                 }
                 return s.dtype == DType::bool_ ? nb::steal(PyLong_FromLong(s.b))
                                                : scalar_to_python(s);
             })
        .def("__index__",
             [](const Array& a) {
                 if (!is_integer(a.dtype()) && a.dtype() != DType::bool_)
                     throw TypeError(
                         "ember: only integer arrays with one element can be used "
                         "as an index");
                 Scalar s = one_element(a, "an index", "operator.index(x)");
                 return scalar_to_python(s);
             })
        .def("__float__",
             [](const Array& a) {
                 Scalar s = one_element(a, "float", "float(x)");
                 if (is_complex(s.dtype))
                     throw TypeError("ember: cannot convert a complex array to float; use .real");
                 return s.c.real();
             })
        .def("__complex__", [](const Array& a) {
            Scalar s = one_element(a, "complex", "complex(x)");
            return nb::steal(PyComplex_FromDoubles(s.c.real(), s.c.imag()));
        });

    // Arrays compare elementwise, so they cannot be hashed.
    nb::setattr(cls, "__hash__", nb::none());
    bind_array_autograd(cls);
    bind_reduction_methods(cls);
}

}  // namespace ember::python
