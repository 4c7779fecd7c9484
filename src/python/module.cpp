// The ember._core extension module: exception mapping, dtype and Device objects, and the
// registration of the array class and functions.
#include <cstdlib>
#include <string>
#include <vector>

#include "ember/build_info.hpp"
#include "python/common.hpp"
#include "python/pydtype.hpp"

namespace ember::python {

void bind_rows(nb::module_& m);     // src/python/rows.cpp
void bind_kernels(nb::module_& m);  // src/python/kernels.cpp
void bind_interop(nb::module_& m);  // src/python/interop.cpp
void bind_debug(nb::module_& m);    // src/python/debug.cpp
namespace {

PyObject* axis_error = nullptr;
PyObject* out_of_memory_error = nullptr;
PyObject* cuda_error = nullptr;
PyObject* compile_error = nullptr;

bool dtype_equals(const PyDType& d, nb::handle other) {
    if (other.is_none()) return false;
    try {
        return to_dtype(other, "ember.dtype") == d.t;
    } catch (const Error&) {
        return false;
    } catch (nb::python_error&) {
        return false;
    } catch (const std::exception&) {
        return false;
    }
}

Py_hash_t dtype_hash(const PyDType& d) {
    static Py_hash_t cache[num_dtypes] = {};
    Py_hash_t& h = cache[int(d.t)];
    if (h == 0) {
        const std::string n(name(d.t));
        try {
            h = nb::hash(nb::module_::import_("numpy").attr("dtype")(n.c_str()));
        } catch (nb::python_error&) {
            h = nb::hash(nb::str(n.c_str()));  // bfloat16 without ml_dtypes loaded
        }
        if (h == 0 || h == -1) h = 1;
    }
    return h;
}

void bind_dtype(nb::module_& m) {
    auto cls = nb::class_<PyDType>(m, "dtype", "An ember data type (ember.float32, ...).");
    cls.def("__init__",
            [](PyDType* self, nb::args args, nb::kwargs kwargs) {
                // NumPy's dtype(dtype, align=False, copy=False, metadata=None).
                auto a = bind_args("ember.dtype", args, kwargs,
                                   {"dtype", "align", "copy", "metadata"}, 1);
                new (self) PyDType{to_dtype(a[0], "ember.dtype")};
            })
        .def_prop_ro("name", [](const PyDType& d) { return std::string(name(d.t)); })
        .def_prop_ro("itemsize", [](const PyDType& d) { return itemsize(d.t); })
        .def_prop_ro("kind",
                     [](const PyDType& d) {
                         switch (kind(d.t)) {
                             case Kind::boolean:
                                 return "b";
                             case Kind::signed_int:
                                 return "i";
                             case Kind::unsigned_int:
                                 return "u";
                             case Kind::floating:
                                 return "f";
                             case Kind::complex:
                                 return "c";
                         }
                         return "?";
                     })
        .def("__str__", [](const PyDType& d) { return std::string(name(d.t)); })
        .def("__repr__", [](const PyDType& d) { return "ember." + std::string(name(d.t)); })
        // NumPy's hash for the dtypes NumPy has, so an ember dtype and the NumPy dtype it
        // equals are one dict key.
        .def("__hash__", &dtype_hash)
        // Comparisons never raise: anything that is no dtype spelling is unequal (NumPy's rule).
        .def(
            "__eq__", [](const PyDType& d, nb::handle other) { return dtype_equals(d, other); },
            nb::arg("other").none())
        .def(
            "__ne__", [](const PyDType& d, nb::handle other) { return !dtype_equals(d, other); },
            nb::arg("other").none());
    for (int i = 0; i < num_dtypes; ++i) {
        std::string n(name(DType(i)));
        m.attr(n.c_str()) = PyDType{DType(i)};
    }
}

thread_local std::vector<Device> device_stack;

bool device_equals(const Device& d, nb::handle o) {
    if (o.is_none()) return false;
    try {
        auto od = to_device(o, "ember.Device");
        return od && *od == d;
    } catch (const Error&) {
        return false;
    } catch (nb::python_error&) {
        return false;
    } catch (const std::exception&) {
        return false;
    }
}

void bind_device(nb::module_& m) {
    nb::class_<Device>(m, "Device",
                       "A device: 'cpu', 'cuda' or 'cuda:N'. Also a context manager "
                       "that makes itself the default device.")
        .def("__init__",
             [](Device* self, nb::args args, nb::kwargs kwargs) {
                 auto a = bind_args("ember.Device", args, kwargs, {"type", "index"}, 1);
                 if (a[0].is_none())
                     throw TypeError(
                         "ember.Device: type must be 'cpu', 'cuda' or 'cuda:N', got None");
                 Device d = *to_device(a[0], "ember.Device");
                 if (a[1].is_valid() && !a[1].is_none()) {
                     if (!PyLong_Check(a[1].ptr()) || PyBool_Check(a[1].ptr()))
                         throw TypeError(std::string("ember.Device: index must be an int, got ") +
                                         nb::type_name(a[1].type()).c_str());
                     const long index = PyLong_AsLong(a[1].ptr());
                     if (index == -1 && PyErr_Occurred()) throw nb::python_error();
                     if (d.type == DeviceType::cpu && index != 0)
                         throw ValueError("ember.Device: the CPU has only index 0");
                     if (index < 0 || index > 1 << 20)
                         throw ValueError("ember.Device: index " + std::to_string(index) +
                                          " is not a device ordinal");
                     d.index = int(index);
                 }
                 new (self) Device(d);
             })
        .def_prop_ro("type", [](const Device& d) { return d.is_cpu() ? "cpu" : "cuda"; })
        .def_prop_ro("index", [](const Device& d) { return d.index; })
        .def("__str__", &Device::str)
        .def("__repr__",
             [](const Device& d) {
                 return d.is_cpu() ? std::string("ember.Device('cpu')")
                                   : "ember.Device('" + d.str() + "')";
             })
        // Comparisons never raise: anything that names no device is unequal.
        .def(
            "__eq__", [](const Device& d, nb::handle o) { return device_equals(d, o); },
            nb::arg("other").none())
        .def(
            "__ne__", [](const Device& d, nb::handle o) { return !device_equals(d, o); },
            nb::arg("other").none())
        .def("__hash__", [](const Device& d) { return int(d.type) * 1000 + d.index; })
        .def("__enter__",
             [](const Device& d) {
                 device_stack.push_back(default_device());
                 set_default_device(d);
                 return d;
             })
        .def("__exit__", [](const Device&, nb::args) {
            if (!device_stack.empty()) {
                set_default_device(device_stack.back());
                device_stack.pop_back();
            }
        });
    m.def("get_default_device", &default_device, "The device new arrays are created on.");
    m.def(
        "set_default_device",
        [](nb::handle d) { set_default_device(*to_device(d, "ember.set_default_device")); },
        nb::arg("device"), "Sets the default device of the calling thread.");
}

}  // namespace

void set_python_error(const std::exception_ptr& p) {
    try {
        std::rethrow_exception(p);
    } catch (nb::python_error& e) {
        e.restore();
    } catch (const OutOfMemoryError& e) {
        PyErr_SetString(out_of_memory_error, e.what());
    } catch (const CudaError& e) {
        PyErr_SetString(cuda_error, e.what());
    } catch (const CompileError& e) {
        PyErr_SetString(compile_error, e.what());
    } catch (const AxisError& e) {
        PyErr_SetString(axis_error, e.what());
    } catch (const ember::IndexError& e) {
        PyErr_SetString(PyExc_IndexError, e.what());
    } catch (const ember::ValueError& e) {
        PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const ember::TypeError& e) {
        PyErr_SetString(PyExc_TypeError, e.what());
    } catch (const ember::OverflowError& e) {
        PyErr_SetString(PyExc_OverflowError, e.what());
    } catch (const ember::MemoryError& e) {
        PyErr_SetString(PyExc_MemoryError, e.what());
    } catch (const ember::Error& e) {
        PyErr_SetString(PyExc_RuntimeError, e.what());
    } catch (const std::bad_alloc&) {
        PyErr_SetString(PyExc_MemoryError, "ember: out of host memory");
    } catch (const std::exception& e) {
        PyErr_SetString(PyExc_RuntimeError, e.what());
    } catch (...) {
        PyErr_SetString(PyExc_RuntimeError, "ember: unknown C++ exception");
    }
}

}  // namespace ember::python

NB_MODULE(_core, m) {
    using namespace ember;
    using namespace ember::python;
    m.doc() = "ember's C++ core (private: use the ember package).";
    // nanobind's report of ember objects alive at exit: on for ember's own leak test
    // (EMBER_DEBUG_LEAKS=1); off otherwise, since any library that caches ember objects in a
    // module global (hypothesis strategies, test suites) keeps some alive to exit by design.
    {
        const char* e = std::getenv("EMBER_DEBUG_LEAKS");
        nb::set_leak_warnings(e && *e && std::string(e) != "0");
    }

    axis_error = PyErr_NewException(
        "ember.AxisError",
        nb::make_tuple(nb::handle(PyExc_ValueError), nb::handle(PyExc_IndexError)).ptr(), nullptr);
    m.attr("AxisError") = nb::handle(axis_error);
    out_of_memory_error = PyErr_NewExceptionWithDoc(
        "ember.cuda.OutOfMemoryError",
        "The GPU is out of memory even after ember emptied its cache (a MemoryError).",
        PyExc_MemoryError, nullptr);
    m.attr("OutOfMemoryError") = nb::handle(out_of_memory_error);
    cuda_error =
        PyErr_NewExceptionWithDoc("ember.cuda.CudaError", "A CUDA driver call or a kernel failed.",
                                  PyExc_RuntimeError, nullptr);
    m.attr("CudaError") = nb::handle(cuda_error);
    compile_error = PyErr_NewExceptionWithDoc(
        "ember.CompileError",
        "A CUDA kernel failed to compile; the message shows the numbered source and the NVRTC log.",
        PyExc_RuntimeError, nullptr);
    m.attr("CompileError") = nb::handle(compile_error);
    nb::register_exception_translator([](const std::exception_ptr& p, void*) {
        try {
            std::rethrow_exception(p);
        } catch (const ember::Error&) {
            set_python_error(p);
        } catch (const std::bad_alloc&) {
            set_python_error(p);
        }
    });

    bind_dtype(m);
    bind_device(m);
    bind_array(m);
    bind_functions(m);
    bind_cuda(m);
    bind_random(m);
    bind_linalg(m);
    bind_fft(m);
    bind_autograd(m);
    bind_optim(m);
    bind_rows(m);
    bind_sort(m);
    bind_scan(m);
    bind_kernels(m);
    bind_kernel_support(m);
    bind_interop(m);
    bind_fp_status(m);
    bind_debug(m);
    bind_calls(m);

    m.attr("__version__") = ember::version;
    // What ember was built with and what it found at run time (ember.show_config): the compiler,
    // the BLAS and LAPACK libraries, the host threads, the CUDA driver and NVRTC.
    m.def("_build_info", [] {
        const BuildInfo b = build_info();
        nb::dict d;
        d["compiler"] = b.compiler;
        d["cxx_standard"] = b.cxx_standard;
        d["blas"] = b.host.blas;
        d["blas_ilp64"] = b.host.blas_ilp64;
        d["blas_unavailable_reason"] = b.host.blas_unavailable_reason;
        d["lapack"] = b.host.lapack;
        d["host_threads"] = b.host.host_threads;
        const CudaLibraries& c = b.cuda;
        d["cuda_driver_version"] =
            c.driver_version >= 0 ? nb::object(nb::int_(c.driver_version)) : nb::none();
        d["cuda_driver_unavailable_reason"] = c.driver_unavailable_reason;
        d["nvrtc_version"] = c.nvrtc_major >= 0
                                 ? nb::object(nb::make_tuple(c.nvrtc_major, c.nvrtc_minor))
                                 : nb::none();
        d["nvrtc_unavailable_reason"] = c.nvrtc_unavailable_reason;
        return d;
    });
    m.def("device_count",
          [](const std::string& type) { return device_count(Device::parse(type).type); });
    m.def("unavailable_reason",
          [](const std::string& type) { return unavailable_reason(Device::parse(type).type); });
}
