// Bindings of user CUDA kernels (private: ember.RawKernel and friends in python/ember/_kernels.py
// wrap them): compilation, modules, functions and the launch with CuPy's argument conventions.
#include <Python.h>
#include <nanobind/stl/pair.h>

#include <algorithm>
#include <cstring>
#include <deque>

#include "ember/user_kernels.hpp"
#include "python/common.hpp"

namespace ember::python {

namespace {

namespace user = ember::cuda::user;

// NumPy's scalar classes, looked up once (NumPy is a dependency of ember's Python package).
struct NumpyTypes {
    PyObject* generic = nullptr;
    PyObject* number = nullptr;
    PyObject* bool_ = nullptr;
    PyObject* void_ = nullptr;
};
const NumpyTypes& numpy_types() {
    static const NumpyTypes t = [] {
        nb::module_ np = nb::module_::import_("numpy");
        NumpyTypes n;
        n.generic = nb::object(np.attr("generic")).release().ptr();
        n.number = nb::object(np.attr("number")).release().ptr();
        n.bool_ = nb::object(np.attr("bool_")).release().ptr();
        n.void_ = nb::object(np.attr("void")).release().ptr();
        return n;
    }();
    return t;
}

std::string py_type_name(nb::handle h) { return nb::type_name(h.type()).c_str(); }

// The packed kernel arguments: each value's bytes, and the pointer array cuLaunchKernel takes.
// Nothing is allocated for up to inline_slots arguments of at most 16 bytes (the common launch).
struct Packed {
    static constexpr int inline_slots = 32;
    alignas(16) unsigned char slots[inline_slots][16];
    // Values over 16 bytes and slots past inline_slots (a deque keeps them in place).
    std::unique_ptr<std::deque<std::string>> big;
    void* ptrs[inline_slots];
    std::vector<void*> more_ptrs;
    int n = 0;

    void* slot(size_t bytes) {
        if (bytes <= 16 && n < inline_slots) return slots[n];
        if (!big) big = std::make_unique<std::deque<std::string>>();
        big->emplace_back(bytes < 16 ? 16 : bytes, '\0');
        return big->back().data();
    }
    void push(void* p) {
        if (n < inline_slots)
            ptrs[n] = p;
        else {
            if (more_ptrs.empty()) more_ptrs.assign(ptrs, ptrs + inline_slots);
            more_ptrs.push_back(p);
        }
        ++n;
    }
    void** args() { return n <= inline_slots ? ptrs : more_ptrs.data(); }
};

[[noreturn]] void size_mismatch(const std::string& who, size_t i, nb::handle h, size_t got,
                                size_t want) {
    throw TypeError(who + ": argument " + std::to_string(i) + " (" + py_type_name(h) + ", " +
                    std::to_string(got) + " bytes) does not match the kernel's parameter " +
                    std::to_string(i) + " (" + std::to_string(want) + " bytes)");
}

// Packs one argument. `f` null: only checks the argument's type (no CUDA needed).
void pack_one(Packed& p, size_t i, nb::handle h, const user::Function* f, const std::string& who) {
    const size_t want = f && f->known && i < f->param_sizes.size() ? f->param_sizes[i] : 0;
    auto check_size = [&](size_t got) {
        if (want && got != want) size_mismatch(who, i, h, got, want);
    };
    if (is_ndarray(h)) {
        const Array& a = as_array(h);
        if (f && (a.device().type != DeviceType::cuda || a.device().index != f->device))
            throw ValueError(who + ": argument " + std::to_string(i) + " is an array on " +
                             a.device().str() +
                             ", the kernel runs on cuda:" + std::to_string(f->device));
        check_size(8);
        void* s = p.slot(8);
        const uint64_t ptr = uint64_t(uintptr_t(a.data()));
        std::memcpy(s, &ptr, 8);
        p.push(s);
        return;
    }
    PyObject* o = h.ptr();
    if (PyBool_Check(o)) {
        check_size(1);
        void* s = p.slot(1);
        *static_cast<unsigned char*>(s) = o == Py_True;
        p.push(s);
        return;
    }
    if (PyLong_Check(o)) {
        // Python ints are long long, narrowed to a smaller integer parameter when it fits (CuPy
        // passes 8 bytes there, which only works by little-endian accident).
        int overflow = 0;
        const long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
        if (overflow)
            throw OverflowError(who + ": argument " + std::to_string(i) +
                                " does not fit in a long long: " + nb::repr(h).c_str());
        const size_t n = want == 1 || want == 2 || want == 4 ? want : 8;
        check_size(n);
        if (n < 8) {
            const long long lo = n == 1 ? -128 : n == 2 ? -32768 : -2147483648ll;
            const long long hi = n == 1 ? 255 : n == 2 ? 65535 : 4294967295ll;
            if (v < lo || v > hi)
                throw OverflowError(who + ": argument " + std::to_string(i) + " (" +
                                    std::to_string(v) + ") does not fit the kernel's " +
                                    std::to_string(n) + "-byte parameter");
        }
        void* s = p.slot(8);
        std::memcpy(s, &v, n);  // little-endian: the low bytes
        p.push(s);
        return;
    }
    if (PyFloat_Check(o)) {
        const double v = PyFloat_AS_DOUBLE(o);
        void* s = p.slot(8);
        if (want == 4) {
            const float x = float(v);
            std::memcpy(s, &x, 4);
        } else {
            check_size(8);
            std::memcpy(s, &v, 8);
        }
        p.push(s);
        return;
    }
    if (PyComplex_Check(o)) {
        check_size(16);
        const double v[2] = {PyComplex_RealAsDouble(o), PyComplex_ImagAsDouble(o)};
        void* s = p.slot(16);
        std::memcpy(s, v, 16);
        p.push(s);
        return;
    }
    const NumpyTypes& np = numpy_types();
    if (PyObject_IsInstance(o, np.generic) == 1) {
        if (PyObject_IsInstance(o, np.number) != 1 && PyObject_IsInstance(o, np.bool_) != 1 &&
            PyObject_IsInstance(o, np.void_) != 1)
            throw TypeError(who + ": argument " + std::to_string(i) + " has the unsupported type " +
                            py_type_name(h) + " (NumPy numbers, bool_ and structured scalars are)");
        Py_buffer view;
        if (PyObject_GetBuffer(o, &view, PyBUF_SIMPLE) != 0) throw nb::python_error();
        const size_t n = size_t(view.len);
        try {
            check_size(n);
        } catch (...) {
            PyBuffer_Release(&view);
            throw;
        }
        void* s = p.slot(n);
        std::memcpy(s, view.buf, n);
        PyBuffer_Release(&view);
        p.push(s);
        return;
    }
    if (PyObject_HasAttrString(o, "__cuda_array_interface__") == 1) {
        nb::object cai = h.attr("__cuda_array_interface__");
        const uint64_t ptr = nb::cast<uint64_t>(nb::cast<nb::tuple>(cai["data"])[0]);
        check_size(8);
        void* s = p.slot(8);
        std::memcpy(s, &ptr, 8);
        p.push(s);
        return;
    }
    throw TypeError(who + ": argument " + std::to_string(i) + " has the unsupported type " +
                    py_type_name(h) +
                    " (expected an ember array, a NumPy scalar, or a Python bool, int, float or "
                    "complex)");
}

void pack(Packed& p, nb::handle args, const user::Function* f, const std::string& who) {
    if (!PyTuple_Check(args.ptr()) && !PyList_Check(args.ptr()))
        throw TypeError(who + ": args must be a tuple or a list, got " + py_type_name(args));
    const size_t n = size_t(PySequence_Fast_GET_SIZE(args.ptr()));
    PyObject** items = PySequence_Fast_ITEMS(args.ptr());
    if (f && f->known && n != f->param_sizes.size()) {
        Packed types_only;  // an unsupported argument is named before the count
        for (size_t i = 0; i < n; ++i)
            pack_one(types_only, i, nb::handle(items[i]), nullptr, who);
        throw TypeError(who + ": the kernel takes " + std::to_string(f->param_sizes.size()) +
                        " argument" + (f->param_sizes.size() == 1 ? "" : "s") + ", got " +
                        std::to_string(n));
    }
    for (size_t i = 0; i < n; ++i)
        pack_one(p, i, nb::handle(items[i]), f, who);
}

// A grid or block: an int or a tuple of 1 to 3 ints, each >= 1.
void dims(nb::handle h, unsigned out[3], const char* what, const std::string& who) {
    out[0] = out[1] = out[2] = 1;
    auto one = [&](PyObject* o, int k) {
        if (PyBool_Check(o) || !PyLong_Check(o))
            throw TypeError(who + ": " + what + " must be an int or a tuple of up to 3 ints, got " +
                            nb::repr(h).c_str());
        const long long v = PyLong_AsLongLong(o);
        if (v == -1 && PyErr_Occurred()) {
            PyErr_Clear();
            throw ValueError(who + ": " + what + " dimension out of range: " + nb::repr(h).c_str());
        }
        if (v < 1 || v > 0xffffffffll)
            throw ValueError(who + ": " + what + " dimensions must be >= 1, got " +
                             nb::repr(h).c_str());
        out[k] = unsigned(v);
    };
    PyObject* o = h.ptr();
    if (PyTuple_Check(o) || PyList_Check(o)) {
        const Py_ssize_t n = PySequence_Size(o);
        if (n < 1 || n > 3)
            throw ValueError(who + ": " + what + " must have 1 to 3 dimensions, got " +
                             nb::repr(h).c_str());
        for (Py_ssize_t k = 0; k < n; ++k)
            one(PySequence_Fast_GET_ITEM(o, k), int(k));
    } else {
        one(o, 0);
    }
}

void* stream_handle(nb::handle s, const std::string& who) {
    if (s.is_none()) return nullptr;
    auto as_handle = [&](PyObject* o) -> void* {
        const size_t v = PyLong_AsSize_t(o);
        if (v == size_t(-1) && PyErr_Occurred()) {
            PyErr_Clear();
            throw ValueError(who + ": bad stream handle " + nb::repr(s).c_str());
        }
        return reinterpret_cast<void*>(v);
    };
    if (PyLong_Check(s.ptr()) && !PyBool_Check(s.ptr())) return as_handle(s.ptr());
    for (const char* attr : {"handle", "ptr", "cuda_stream"})
        if (nb::hasattr(s, attr)) {
            nb::object v = s.attr(attr);
            if (PyLong_Check(v.ptr())) return as_handle(v.ptr());
        }
    throw TypeError(who +
                    ": stream must be an ember.cuda.Stream, a stream handle (int) or None, got " +
                    py_type_name(s));
}

nb::object call(const user::Function& f, nb::handle grid, nb::handle block, nb::handle args,
                long long shared_mem, nb::handle stream) {
    const std::string& who = f.label;
    unsigned g[3], b[3];
    dims(grid, g, "grid", who);
    dims(block, b, "block", who);
    if (shared_mem < 0 || shared_mem > 0xffffffffll)
        throw ValueError(who + ": shared_mem must be a byte count >= 0, got " +
                         std::to_string(shared_mem));
    void* s = stream_handle(stream, who);
    Packed p;
    pack(p, args, &f, who);
    user::launch(f, g, b, unsigned(shared_mem), s, p.args());
    return nb::none();
}

// The base of ember.RawKernel: the kernel's loaded function per device, so that a launch goes
// from Python straight to C++. A device without one yet (or no CUDA) takes the Python path,
// RawKernel._call_slow, which loads the function (and remembers it here) or reports the error.
struct KernelBase {
    std::vector<std::shared_ptr<const user::Function>> by_device;
};

nb::object kernel_call(KernelBase& k, nb::handle grid, nb::handle block, nb::handle args,
                       long long shared_mem, nb::handle stream) {
    const int dev = user::current_device_or_none();
    if (dev >= 0 && size_t(dev) < k.by_device.size() && k.by_device[size_t(dev)])
        return call(*k.by_device[size_t(dev)], grid, block, args, shared_mem, stream);
    return nb::find(&k).attr("_call_slow")(grid, block, args, shared_mem, stream);
}

// ---- ember.cuda.jit's launch path --------------------------------------------------------------
// A specialization's plan, made from the arguments of its first launch: per argument 'A' + dtype +
// ndim (an ember CUDA array), 'b', 'i', 'u', 'f', 'c' (Python bool, int in int64, int in uint64,
// float, complex) or 'S' (a NumPy scalar of the type at the same position of `types`). A launch
// checks its arguments against the plan and packs them as the generated kernel's flattened
// parameters (arrays: data, shape, element strides), with no Python object per argument.

nb::object jit_plan(nb::handle args) {
    std::string plan;
    nb::list types;
    const size_t n = size_t(PySequence_Fast_GET_SIZE(args.ptr()));
    PyObject** items = PySequence_Fast_ITEMS(args.ptr());
    const NumpyTypes& np = numpy_types();
    for (size_t i = 0; i < n; ++i) {
        PyObject* o = items[i];
        if (is_ndarray(o)) {
            const Array& a = as_array(o);
            if (a.device().type != DeviceType::cuda || a.ndim() > 255) return nb::none();
            plan += 'A';
            plan += char(int(a.dtype()));
            plan += char(a.ndim());
        } else if (PyBool_Check(o)) {
            plan += 'b';
        } else if (PyLong_Check(o)) {
            int overflow = 0;
            PyLong_AsLongLongAndOverflow(o, &overflow);
            plan += overflow ? 'u' : 'i';
        } else if (PyFloat_Check(o)) {
            plan += 'f';
        } else if (PyComplex_Check(o)) {
            plan += 'c';
        } else if (PyObject_IsInstance(o, np.generic) == 1) {
            plan += 'S';
            types.append(nb::handle(reinterpret_cast<PyObject*>(Py_TYPE(o))));
        } else {
            return nb::none();
        }
    }
    return nb::make_tuple(nb::bytes(plan.data(), plan.size()), nb::tuple(types));
}

bool jit_launch(KernelBase& k, nb::handle grid, nb::handle block, long long shared_mem,
                nb::handle stream, nb::handle args, nb::bytes plan, nb::tuple types,
                bool cooperative) {
    const int dev = user::current_device_or_none();
    if (dev < 0 || size_t(dev) >= k.by_device.size() || !k.by_device[size_t(dev)]) return false;
    const user::Function& f = *k.by_device[size_t(dev)];
    const char* pl = plan.c_str();
    const size_t plen = plan.size(), n = size_t(PySequence_Fast_GET_SIZE(args.ptr()));
    PyObject** items = PySequence_Fast_ITEMS(args.ptr());
    Packed p;
    size_t at = 0, t = 0;
    auto put = [&](const void* v, size_t bytes) {
        void* s = p.slot(bytes);
        std::memcpy(s, v, bytes);
        p.push(s);
    };
    for (size_t i = 0; i < n; ++i) {
        if (at >= plen) return false;
        PyObject* o = items[i];
        const char c = pl[at++];
        if (c == 'A') {
            if (!is_ndarray(o) || at + 2 > plen) return false;
            const Array& a = as_array(o);
            if (int(a.dtype()) != int((unsigned char)pl[at]) ||
                a.ndim() != int((unsigned char)pl[at + 1]) || a.device().type != DeviceType::cuda ||
                a.device().index != f.device)
                return false;
            at += 2;
            const uint64_t ptr = uint64_t(uintptr_t(a.data()));
            put(&ptr, 8);
            const int nd = a.ndim();
            for (int d = 0; d < std::max(nd, 1); ++d) {
                const long long v = nd ? (long long)a.shape()[size_t(d)] : 1;
                put(&v, 8);
            }
            for (int d = 0; d < std::max(nd, 1); ++d) {
                const long long v = nd ? (long long)a.strides()[size_t(d)] : 0;
                put(&v, 8);
            }
        } else if (c == 'b') {
            if (!PyBool_Check(o)) return false;
            const unsigned char v = o == Py_True;
            put(&v, 1);
        } else if (c == 'i' || c == 'u') {
            if (!PyLong_Check(o) || PyBool_Check(o)) return false;
            int overflow = 0;
            const long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
            if ((overflow != 0) != (c == 'u')) return false;
            if (c == 'u') {
                const unsigned long long u = PyLong_AsUnsignedLongLong(o);
                if (PyErr_Occurred()) {
                    PyErr_Clear();
                    return false;
                }
                put(&u, 8);
            } else {
                put(&v, 8);
            }
        } else if (c == 'f') {
            if (!PyFloat_Check(o)) return false;
            const double v = PyFloat_AS_DOUBLE(o);
            put(&v, 8);
        } else if (c == 'c') {
            if (!PyComplex_Check(o)) return false;
            const double v[2] = {PyComplex_RealAsDouble(o), PyComplex_ImagAsDouble(o)};
            put(v, 16);
        } else if (c == 'S') {
            if (t >= types.size() || reinterpret_cast<PyObject*>(Py_TYPE(o)) != types[t].ptr())
                return false;
            ++t;
            Py_buffer view;
            if (PyObject_GetBuffer(o, &view, PyBUF_SIMPLE) != 0) {
                PyErr_Clear();
                return false;
            }
            put(view.buf, size_t(view.len));
            PyBuffer_Release(&view);
        } else {
            return false;
        }
    }
    if (at != plen) return false;
    const std::string& who = f.label;
    unsigned g[3], b[3];
    dims(grid, g, "griddim", who);
    dims(block, b, "blockdim", who);
    if (shared_mem < 0 || shared_mem > 0xffffffffll)
        throw ValueError(who + ": sharedmem must be a byte count >= 0, got " +
                         std::to_string(shared_mem));
    user::launch(f, g, b, unsigned(shared_mem), stream_handle(stream, who), p.args(), cooperative);
    return true;
}

}  // namespace

void bind_kernels(nb::module_& root) {
    nb::module_ m =
        root.def_submodule("_kernels", "User CUDA kernels (private: use ember.RawKernel).");
    m.def(
        "compile",
        [](const std::string& source, const std::string& name,
           const std::vector<std::string>& options,
           const std::vector<std::string>& name_expressions, int arch) {
            std::shared_ptr<const user::CompiledModule> c;
            {
                nb::gil_scoped_release r;
                c = user::compile(source, name, options, name_expressions, arch);
            }
            nb::dict lowered;
            for (const auto& [e, l] : c->lowered)
                lowered[nb::str(e.c_str())] = nb::str(l.c_str());
            return nb::make_tuple(nb::bytes(c->image.data(), c->image.size()), lowered);
        },
        nb::arg("source"), nb::arg("name"), nb::arg("options"), nb::arg("name_expressions"),
        nb::arg("arch"));
    m.def("include_dirs", &user::include_dirs);
    m.def("embedded_header", &user::embedded_header, nb::arg("name"),
          "The text of an embedded header (ember/ops/scalar.hpp, ember/half.hpp); '' if none.");
    m.def(
        "compile_ptx",
        [](const std::string& source, const std::string& name, int arch) {
            nb::gil_scoped_release r;
            return user::compile_ptx(source, name, arch);
        },
        nb::arg("source"), nb::arg("name"), nb::arg("arch"));
    m.def(
        "arg_sizes",
        [](nb::handle args) {
            // The bytes each argument passes as (a Python int or float: 8).
            Packed p;
            pack(p, args, nullptr, "ember.RawKernel");
            std::vector<size_t> sizes;
            PyObject** items = PySequence_Fast_ITEMS(args.ptr());
            for (int i = 0; i < p.n; ++i) {
                nb::handle h(items[i]);
                size_t n = 8;
                if (PyBool_Check(h.ptr()))
                    n = 1;
                else if (PyComplex_Check(h.ptr()))
                    n = 16;
                else if (!is_ndarray(h) && !PyLong_Check(h.ptr()) && !PyFloat_Check(h.ptr())) {
                    Py_buffer view;
                    if (PyObject_GetBuffer(h.ptr(), &view, PyBUF_SIMPLE) == 0) {
                        n = size_t(view.len);
                        PyBuffer_Release(&view);
                    }
                }
                sizes.push_back(n);
            }
            return sizes;
        },
        nb::arg("args"));
    m.def("device_arch", &user::device_arch, nb::arg("device"));
    m.def("multiprocessor_count", &user::multiprocessor_count, nb::arg("device"));
    m.def(
        "load_module",
        [](nb::bytes image, int device) {
            std::string img(static_cast<const char*>(image.data()), image.size());
            return uintptr_t(user::load_module(img, device));
        },
        nb::arg("image"), nb::arg("device"));
    m.def(
        "module_global",
        [](uintptr_t module, int device, const std::string& name) {
            return user::module_global(reinterpret_cast<void*>(module), device, name);
        },
        nb::arg("module"), nb::arg("device"), nb::arg("name"));
    m.def(
        "check_args",
        [](nb::handle args) {
            Packed p;
            pack(p, args, nullptr, "ember.RawKernel");
        },
        nb::arg("args"));
    m.def(
        "check_dims",
        [](nb::handle grid, nb::handle block) {
            unsigned g[3], b[3];
            dims(grid, g, "grid", "ember.RawKernel");
            dims(block, b, "block", "ember.RawKernel");
        },
        nb::arg("grid"), nb::arg("block"));
    m.def(
        "data_ptr",
        [](nb::handle a) {
            if (!is_ndarray(a)) throw TypeError("expected an ember array, got " + py_type_name(a));
            return uintptr_t(as_array(a).data());
        },
        nb::arg("array"));

    nb::class_<user::Function>(m, "Function")
        .def_static(
            "get",
            [](uintptr_t module, int device, const std::string& name) {
                user::Function f =
                    user::get_function(reinterpret_cast<void*>(module), device, name);
                f.label = "ember.RawKernel '" + name + "'";
                return f;
            },
            nb::arg("module"), nb::arg("device"), nb::arg("name"))
        .def_prop_ro("name", [](const user::Function& f) { return f.name; })
        .def_prop_ro("device", [](const user::Function& f) { return f.device; })
        .def_prop_ro("num_params",
                     [](const user::Function& f) -> std::optional<int> {
                         if (!f.known) return std::nullopt;
                         return int(f.param_sizes.size());
                     })
        .def("attribute", &user::function_attribute, nb::arg("attribute"))
        .def("set_attribute", &user::set_function_attribute, nb::arg("attribute"), nb::arg("value"))
        .def("__call__", &call, nb::arg("grid"), nb::arg("block"), nb::arg("args"),
             nb::arg("shared_mem") = 0, nb::arg("stream") = nb::none());
    m.def("jit_plan", &jit_plan, nb::arg("args"),
          "ember.cuda.jit: the launch plan of these arguments (plan bytes, NumPy scalar types), "
          "or None when one needs the Python path (NumPy arrays, CPU arrays, other objects).");
    m.def("jit_launch", &jit_launch, nb::arg("kernel"), nb::arg("grid"), nb::arg("block"),
          nb::arg("shared_mem"), nb::arg("stream").none(), nb::arg("args"), nb::arg("plan"),
          nb::arg("types"), nb::arg("cooperative") = false,
          "ember.cuda.jit: launches when the arguments fit the plan (True), else False.");
    nb::class_<KernelBase>(m, "KernelBase")
        .def(nb::init<>())
        .def("_remember",
             [](KernelBase& k, const user::Function& f) {
                 if (f.device < 0) return;
                 if (k.by_device.size() <= size_t(f.device))
                     k.by_device.resize(size_t(f.device) + 1);
                 k.by_device[size_t(f.device)] = std::make_shared<const user::Function>(f);
             })
        .def("__call__", &kernel_call, nb::arg("grid"), nb::arg("block"), nb::arg("args"),
             nb::arg("shared_mem") = 0, nb::arg("stream") = nb::none());
}

}  // namespace ember::python
