// Conversions between Python objects and ember values (scalars, dtypes, shapes, axes, devices,
// arrays from buffers/DLPack, NumPy views).
#include <cstring>
#include <string>

#include "python/common.hpp"
#include "python/pydtype.hpp"

namespace ember::python {

PyTypeObject* ndarray_type = nullptr;

namespace {

std::string py_type_name(nb::handle h) { return nb::type_name(h.type()).c_str(); }

nb::object& asarray_hook() {
    static nb::object* f = new nb::object();  // leaked: must outlive interpreter shutdown order
    return *f;
}

}  // namespace

void set_asarray_hook(nb::object f) { asarray_hook() = std::move(f); }

bool weak_scalar(nb::handle h, Scalar& out) {
    PyObject* o = h.ptr();
    if (PyBool_Check(o)) {
        out = Scalar(o == Py_True);
        return true;
    }
    if (PyLong_Check(o)) {  // int subclasses too (IntEnum, ndarray.size)
        int overflow = 0;
        long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
        if (!overflow) {
            out = Scalar(int64_t(v));
            return true;
        }
        if (overflow > 0) {
            unsigned long long u = PyLong_AsUnsignedLongLong(o);
            if (!PyErr_Occurred()) {
                out = Scalar::from_uint64(uint64_t(u));
                return true;
            }
            PyErr_Clear();
        }
        // Beyond 64 bits: kept as a weak integer of float64 magnitude, so comparisons still
        // answer (as NumPy's do) while arithmetic raises OverflowError.
        double d = PyLong_AsDouble(o);
        if (d == -1.0 && PyErr_Occurred()) throw nb::python_error();
        out = Scalar(d);
        out.weak = WeakKind::integer;
        return true;
    }
    if (PyFloat_CheckExact(o)) {
        out = Scalar(PyFloat_AS_DOUBLE(o));
        return true;
    }
    if (PyComplex_CheckExact(o)) {
        Py_complex c = PyComplex_AsCComplex(o);
        out = Scalar(std::complex<double>(c.real, c.imag));
        return true;
    }
    return false;
}

bool to_operand(nb::handle h, Operand& out, bool strict, const char* who) {
    if (is_ndarray(h)) {
        out.refer(as_array(h));
        return true;
    }
    Scalar s;
    if (weak_scalar(h, s)) {
        out.set_scalar(s);
        return true;
    }
    if (!strict) {
        // Leave unknown objects to their own reflected operators (NumPy arrays included: they
        // would otherwise turn `ndarray + np.ndarray` into a silent conversion).
        if (!nb::hasattr(h, "__array_interface__") && !PySequence_Check(h.ptr()) &&
            !nb::hasattr(h, "dtype"))
            return false;
    }
    nb::object a;
    try {
        // Host data given as an operand stays on the host (no hidden copy to a GPU, DESIGN.md
        // section 13): with a GPU operand it is the cross-device error, as in PyTorch and CuPy.
        a = asarray_hook()(h, nb::arg("device") = "cpu");
    } catch (nb::python_error& e) {
        if (!strict && (e.matches(PyExc_TypeError) || e.matches(PyExc_ValueError))) return false;
        throw;
    }
    if (!is_ndarray(a))
        throw TypeError(std::string(who) + ": cannot use an object of type " + py_type_name(h));
    const Array& arr = as_array(a);
    if (arr.ndim() == 0) {
        // A host 0-d value (a NumPy scalar) is a strong scalar of its dtype, so it combines
        // with arrays on any device (as PyTorch does with 0-d CPU tensors).
        out.set_scalar(arr.item());
        return true;
    }
    out.hold(Array(arr));  // held: `a` dies with this frame
    return true;
}

Array to_array(nb::handle h, const char* who) {
    if (is_ndarray(h)) return as_array(h);
    nb::object a;
    try {
        a = asarray_hook()(h);
    } catch (nb::python_error& e) {
        if (!e.matches(PyExc_TypeError)) throw;
        throw TypeError(std::string(who) +
                        ": expected an array or an object ember.asarray takes, "
                        "got " +
                        py_type_name(h));
    }
    if (!is_ndarray(a))
        throw TypeError(std::string(who) + ": cannot use an object of type " + py_type_name(h));
    return as_array(a);
}

const Array& out_array(nb::handle h, const char* who) {
    if (PyTuple_Check(h.ptr()) && PyTuple_GET_SIZE(h.ptr()) == 1) h = PyTuple_GET_ITEM(h.ptr(), 0);
    if (!is_ndarray(h))
        throw TypeError(std::string(who) + ": out must be an ember.ndarray, got " +
                        py_type_name(h));
    return as_array(h);
}

double to_float(nb::handle h, const char* who, const char* what) {
    PyObject* o = h.ptr();
    if (PyFloat_Check(o)) return PyFloat_AS_DOUBLE(o);
    if (!PyComplex_Check(o) && !PyUnicode_Check(o) && !PyBytes_Check(o) &&
        (PyLong_Check(o) || nb::hasattr(h, "__float__"))) {
        const double v = PyFloat_AsDouble(o);
        if (v == -1.0 && PyErr_Occurred()) throw nb::python_error();
        return v;
    }
    throw TypeError(std::string(who) + ": " + what + " must be a real number, got " +
                    py_type_name(h));
}

void check_order(nb::handle h, const char* who) {
    if (h.is_none()) return;
    if (PyUnicode_Check(h.ptr())) {
        const std::string s = nb::cast<std::string>(h);
        if (s == "C" || s == "K" || s == "A") return;
        if (s == "F")
            throw ValueError(std::string(who) +
                             ": order='F' is not supported (ember creates C-ordered arrays)");
    }
    throw ValueError(std::string(who) + ": order must be one of 'C', 'F', 'A' or 'K', got " +
                     std::string(nb::repr(h).c_str()));
}

DType to_dtype(nb::handle h, const char* who) {
    if (nb::isinstance<PyDType>(h)) return nb::cast<PyDType>(h).t;
    if (PyUnicode_Check(h.ptr())) return dtype_from_name(nb::cast<std::string>(h));
    if (PyType_Check(h.ptr())) {
        PyObject* o = h.ptr();
        if (o == (PyObject*)&PyBool_Type) return DType::bool_;
        if (o == (PyObject*)&PyLong_Type) return DType::int64;
        if (o == (PyObject*)&PyFloat_Type) return DType::float64;
        if (o == (PyObject*)&PyComplex_Type) return DType::complex128;
        if (nb::hasattr(h, "__name__")) {
            std::string n = nb::cast<std::string>(h.attr("__name__"));
            if (n == "bool_" || n == "bool") return DType::bool_;
            try {
                return dtype_from_name(n);
            } catch (const TypeError&) {
            }
        }
    } else if (nb::hasattr(h, "name") && nb::hasattr(h, "itemsize")) {  // numpy.dtype
        return dtype_from_name(nb::cast<std::string>(h.attr("name")));
    }
    throw TypeError(std::string(who) + ": cannot interpret " + std::string(nb::repr(h).c_str()) +
                    " as a data type");
}

std::optional<DType> to_opt_dtype(nb::handle h, const char* who) {
    if (h.is_none()) return std::nullopt;
    return to_dtype(h, who);
}

namespace {
int64_t to_int(nb::handle h, const char* who, const char* what) {
    if (PyBool_Check(h.ptr()) || PyFloat_Check(h.ptr()))
        throw TypeError(std::string(who) + ": " + what + " must be integers, got " +
                        std::string(nb::repr(h).c_str()));
    PyObject* idx = PyNumber_Index(h.ptr());
    if (!idx) {
        PyErr_Clear();
        throw TypeError(std::string(who) + ": " + what + " must be integers, got " +
                        std::string(nb::repr(h).c_str()));
    }
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(idx, &overflow);
    Py_DECREF(idx);
    if (overflow)
        throw ValueError(std::string(who) + ": " + what + " value " +
                         std::string(nb::repr(h).c_str()) + " is too large");
    return int64_t(v);
}
}  // namespace

Shape to_shape(nb::handle h, const char* who) {
    Shape s;
    if (PyLong_Check(h.ptr()) || (!PySequence_Check(h.ptr()) && nb::hasattr(h, "__index__"))) {
        s.push_back(to_int(h, who, "shape dimensions"));
    } else if (PySequence_Check(h.ptr()) && !PyUnicode_Check(h.ptr()) && !PyBytes_Check(h.ptr())) {
        const Py_ssize_t n = PySequence_Size(h.ptr());
        if (n < 0) throw nb::python_error();
        if (n > max_ndim)
            throw ValueError(std::string(who) + ": maximum supported dimension is " +
                             std::to_string(max_ndim) + ", got " + std::to_string(n));
        for (Py_ssize_t i = 0; i < n; ++i) {
            nb::object item = nb::steal(PySequence_GetItem(h.ptr(), i));
            if (!item.is_valid()) throw nb::python_error();
            s.push_back(to_int(item, who, "shape dimensions"));
        }
    } else {
        throw TypeError(std::string(who) + ": shape must be an int or a sequence of ints, got " +
                        py_type_name(h));
    }
    for (int64_t d : s)
        if (d < 0)
            throw ValueError(std::string(who) + ": negative dimensions are not allowed, got " +
                             shape_str(s));
    return s;
}

Shape reshape_shape(const Array& a, nb::handle h, const char* who) {
    std::vector<int64_t> v;
    if (PySequence_Check(h.ptr()) && !PyUnicode_Check(h.ptr())) {
        for (nb::handle item : nb::borrow<nb::sequence>(h))
            v.push_back(to_int(item, who, "shape dimensions"));
    } else {
        v.push_back(to_int(h, who, "shape dimensions"));
    }
    if (v.size() > size_t(max_ndim))
        throw ValueError(std::string(who) + ": too many dimensions (" + std::to_string(v.size()) +
                         ")");
    int infer = -1;
    int64_t known = 1;
    for (size_t i = 0; i < v.size(); ++i) {
        if (v[i] == -1) {
            if (infer >= 0)
                throw ValueError(std::string(who) + ": can only specify one unknown dimension");
            infer = int(i);
        } else if (v[i] < 0) {
            throw ValueError(std::string(who) + ": negative dimensions are not allowed, got " +
                             std::to_string(v[i]));
        } else {
            known = v[i] == 0 || known <= INT64_MAX / v[i] ? known * v[i] : INT64_MAX;
        }
    }
    if (infer >= 0) {
        if (known == 0 || a.size() % known != 0)
            throw ValueError(std::string(who) + ": cannot reshape array of size " +
                             std::to_string(a.size()) + " into shape " +
                             std::string(nb::repr(h).c_str()));
        v[size_t(infer)] = a.size() / known;
    }
    return Shape(v);
}

Axes to_axes(nb::handle h, const char* who) {
    if (h.is_none()) return std::nullopt;
    std::vector<int64_t> v;
    if (PyTuple_Check(h.ptr()) || PyList_Check(h.ptr())) {
        for (nb::handle item : nb::borrow<nb::sequence>(h))
            v.push_back(to_int(item, who, "axes"));
    } else {
        v.push_back(to_int(h, who, "axes"));
    }
    return v;
}

std::optional<Device> to_device(nb::handle h, const char* who) {
    if (h.is_none()) return std::nullopt;
    if (nb::isinstance<Device>(h)) return nb::cast<Device>(h);
    if (PyUnicode_Check(h.ptr())) return Device::parse(nb::cast<std::string>(h));
    throw TypeError(std::string(who) + ": device must be a string or ember.Device, got " +
                    py_type_name(h));
}

nb::object scalar_to_python(const Scalar& s) {
    switch (kind(s.dtype)) {
        case Kind::boolean:
            return nb::bool_(s.b);
        case Kind::signed_int:
            return nb::steal(PyLong_FromLongLong(s.i));
        case Kind::unsigned_int:
            return nb::steal(PyLong_FromUnsignedLongLong(s.u));
        case Kind::floating:
            return nb::float_(s.c.real());
        case Kind::complex:
            return nb::steal(PyComplex_FromDoubles(s.c.real(), s.c.imag()));
    }
    return nb::none();
}

namespace {

std::optional<DType> from_dlpack_dtype(nb::dlpack::dtype d) {
    using C = nb::dlpack::dtype_code;
    if (d.lanes != 1) return std::nullopt;
    switch (C(d.code)) {
        case C::Bool:
            return d.bits == 8 ? std::optional(DType::bool_) : std::nullopt;
        case C::Int:
            switch (d.bits) {
                case 8:
                    return DType::int8;
                case 16:
                    return DType::int16;
                case 32:
                    return DType::int32;
                case 64:
                    return DType::int64;
            }
            break;
        case C::UInt:
            switch (d.bits) {
                case 8:
                    return DType::uint8;
                case 16:
                    return DType::uint16;
                case 32:
                    return DType::uint32;
                case 64:
                    return DType::uint64;
            }
            break;
        case C::Float:
            switch (d.bits) {
                case 16:
                    return DType::float16;
                case 32:
                    return DType::float32;
                case 64:
                    return DType::float64;
            }
            break;
        case C::Bfloat:
            if (d.bits == 16) return DType::bfloat16;
            break;
        case C::Complex:
            if (d.bits == 64) return DType::complex64;
            if (d.bits == 128) return DType::complex128;
            break;
        default:
            break;
    }
    return std::nullopt;
}

nb::dlpack::dtype to_dlpack_dtype(DType t, bool numpy) {
    using C = nb::dlpack::dtype_code;
    nb::dlpack::dtype d;
    d.lanes = 1;
    d.bits = uint8_t(itemsize(t) * 8);
    switch (kind(t)) {
        case Kind::boolean:
            d.code = uint8_t(C::Bool);
            break;
        case Kind::signed_int:
            d.code = uint8_t(C::Int);
            break;
        case Kind::unsigned_int:
            d.code = uint8_t(C::UInt);
            break;
        case Kind::floating:
            d.code = uint8_t(t == DType::bfloat16 ? (numpy ? C::UInt : C::Bfloat) : C::Float);
            break;
        case Kind::complex:
            d.code = uint8_t(C::Complex);
            break;
    }
    return d;
}

Array finish_asarray(Array a, nb::handle dtype, nb::handle device, nb::handle copy, bool copied) {
    const char* who = "ember.asarray";
    std::optional<DType> dt = to_opt_dtype(dtype, who);
    std::optional<Device> dev = to_device(device, who);
    const bool force_copy = !copy.is_none() && nb::cast<bool>(copy);
    const bool no_copy = !copy.is_none() && !nb::cast<bool>(copy);
    if (dev && *dev != a.device()) {
        if (no_copy)
            throw ValueError(std::string(who) + ": copy=False but the array is on " +
                             a.device().str() + ", not " + dev->str());
        a = a.to(*dev);
        copied = true;
    }
    if (dt && *dt != a.dtype()) {
        if (no_copy)
            throw ValueError(std::string(who) + ": copy=False but converting " +
                             std::string(name(a.dtype())) + " to " + std::string(name(*dt)) +
                             " needs a copy");
        a = a.astype(*dt);
        copied = true;
    }
    if (force_copy && !copied) a = a.copy();
    return a;
}

}  // namespace

nb::object asarray(nb::handle obj, nb::handle dtype, nb::handle device, nb::handle copy,
                   bool writable) {
    const char* who = "ember.asarray";
    if (is_ndarray(obj)) return nb::cast(finish_asarray(as_array(obj), dtype, device, copy, false));
    Scalar s;
    if (weak_scalar(obj, s)) {
        std::optional<DType> dt = to_opt_dtype(dtype, who);
        std::optional<Device> dev = to_device(device, who);
        if (!copy.is_none() && !nb::cast<bool>(copy))
            throw ValueError(std::string(who) + ": copy=False is impossible for a Python scalar");
        return nb::cast(full({}, s, dt, dev.value_or(default_device())));
    }
    // Writable import first; a read-only source (flagged by the buffer or DLPack producer) is
    // then imported read-only and copied, so ember never writes into memory it may not write.
    nb::ndarray<nb::ro> nd;
    bool read_only = false;
    if (nb::ndarray<> w; nb::try_cast(obj, w, false)) {
        nd = nb::ndarray<nb::ro>(w);
    } else if (nb::try_cast(obj, nd, false)) {
        read_only = true;
    } else {
        throw TypeError(std::string(who) + ": cannot convert an object of type " +
                        py_type_name(obj) + " to an array");
    }
    writable = writable && !read_only;
    std::optional<DType> t = from_dlpack_dtype(nd.dtype());
    if (!t)
        throw TypeError(std::string(who) + ": unsupported element type (DLPack code " +
                        std::to_string(nd.dtype().code) + ", " + std::to_string(nd.dtype().bits) +
                        " bits)");
    if (nd.device_type() != nb::device::cpu::value)
        throw ValueError(std::string(who) + ": only CPU memory can be imported (DLPack device " +
                         std::to_string(nd.device_type()) + ")");
    Shape shape(nd.ndim());
    Strides strides(nd.ndim());
    int64_t lo = 0, hi = 1;
    bool any_zero = false;
    for (size_t i = 0; i < nd.ndim(); ++i) {
        shape[i] = nd.shape(i);
        strides[i] = nd.stride(i);
        if (shape[i] == 0)
            any_zero = true;
        else if (strides[i] < 0)
            lo += (shape[i] - 1) * strides[i];
        else
            hi += (shape[i] - 1) * strides[i];
    }
    const size_t nbytes = any_zero ? 0 : size_t((hi - lo) * itemsize(*t));
    auto* keep = new nb::ndarray<nb::ro>(nd);
    std::shared_ptr<void> owner(keep, [](void* p) {
        nb::gil_scoped_acquire gil;
        delete static_cast<nb::ndarray<nb::ro>*>(p);
    });
    auto storage = Storage::wrap(const_cast<void*>(nd.data()), nbytes, cpu, std::move(owner));
    Array a(std::move(storage), 0, std::move(shape), std::move(strides), *t);
    bool copied = false;
    if (!writable) {
        if (!copy.is_none() && !nb::cast<bool>(copy))
            throw ValueError(std::string(who) + ": copy=False but the source memory is read-only");
        a = a.copy();
        copied = true;
    }
    // Host memory goes to the default device when none is named (DESIGN.md section 7); it is
    // shared only when that device is the CPU.
    if (device.is_none() && !default_device().is_cpu()) {
        if (!copy.is_none() && !nb::cast<bool>(copy))
            throw ValueError(std::string(who) +
                             ": copy=False but host memory cannot be shared "
                             "with the default device " +
                             default_device().str() + " (pass device=\"cpu\")");
        a = a.to(default_device());
        copied = true;
    }
    return nb::cast(finish_asarray(std::move(a), dtype, device, copy, copied));
}

nb::object to_numpy_view(const Array& a) {
    if (!a.device().is_cpu())
        throw TypeError("ember: the array is on " + a.device().str() +
                        "; use ember.asnumpy(x) or x.cpu() to copy it to the host explicitly");
    auto* keep = new std::shared_ptr<Storage>(a.storage());
    nb::capsule owner(keep,
                      [](void* p) noexcept { delete static_cast<std::shared_ptr<Storage>*>(p); });
    std::vector<size_t> shape(a.shape().begin(), a.shape().end());
    nb::ndarray<nb::numpy> nd(a.data(), size_t(a.ndim()), shape.data(), owner, a.strides().data(),
                              to_dlpack_dtype(a.dtype(), true), nb::device::cpu::value, 0);
    return nb::cast(nd);
}

}  // namespace ember::python
