// Call wrappers for the public nanobind functions and ndarray methods: a call goes straight to the
// wrapped nanobind function (one extra vectorcall); when nanobind rejects the arguments, or a
// conversion inside fails with a bare C++ cast error, a Python hook (ember/_calls.py) raises the
// error Python itself would raise for a function of that signature. The wrappers also carry what
// inspect.signature() and help() read (__signature__, __name__, __qualname__, __doc__,
// __module__).
#include <cstring>
#include <string>
#include <vector>

#include "python/common.hpp"
#include "python/observe.hpp"

namespace ember::python {

namespace {

struct Wrapper {
    PyObject_HEAD vectorcallfunc
        vectorcall;         // this object's entry point (CPython reads it at the offset)
    PyObject* func;         // the nanobind function or method
    vectorcallfunc target;  // func's own vectorcall
    PyObject* name;         // __name__
    PyObject* qualname;     // __qualname__ ("sum", "ndarray.sum")
    PyObject* module;       // __module__ ("ember")
    PyObject* described;    // (signature, doc, text signature) from the hook, once asked
    PyObject* dict;         // __dict__ (functools.wraps, user attributes)
    PyObject* op;           // "module.qualname": the op's name for ember.debug and the profiler
};

// The hooks (set once by ember/_calls.py): on_error(wrapper, exc, args, kwargs) raises the error
// to show or returns the call's result; describe(wrapper) returns (signature, doc, text).
PyObject* on_error_hook = nullptr;
PyObject* describe_hook = nullptr;

// Whether `exc` is nanobind's overload-resolution error or its bare cast error.
bool is_binding_error(PyObject* exc) {
    if (!PyErr_GivenExceptionMatches(exc, PyExc_TypeError) &&
        !PyErr_GivenExceptionMatches(exc, PyExc_RuntimeError))
        return false;
    PyObject* s = PyObject_Str(exc);
    if (!s) {
        PyErr_Clear();
        return false;
    }
    const char* m = PyUnicode_AsUTF8(s);
    bool hit = false;
    if (m) {
        hit = std::strstr(m, "(): incompatible function arguments") != nullptr ||
              std::strcmp(m, "std::bad_cast") == 0 || std::strstr(m, "nanobind::") != nullptr;
    } else {
        PyErr_Clear();
    }
    Py_DECREF(s);
    return hit;
}

// The raised exception, normalized (PyErr_GetRaisedException before Python 3.12).
PyObject* take_exception() {
#if PY_VERSION_HEX >= 0x030C0000
    return PyErr_GetRaisedException();
#else
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (tb && value) PyException_SetTraceback(value, tb);
    Py_XDECREF(type);
    Py_XDECREF(tb);
    return value;
#endif
}

void restore_exception(PyObject* exc) {
#if PY_VERSION_HEX >= 0x030C0000
    PyErr_SetRaisedException(exc);
#else
    PyErr_Restore(Py_NewRef(reinterpret_cast<PyObject*>(Py_TYPE(exc))), exc,
                  PyException_GetTraceback(exc));
#endif
}

NB_NOINLINE PyObject* handle_error(Wrapper* w, PyObject* const* args, size_t nargs,
                                   PyObject* kwnames) {
    PyObject* exc = take_exception();
    if (!exc) return nullptr;
    if (!on_error_hook || !is_binding_error(exc)) {
        restore_exception(exc);
        return nullptr;
    }
    PyObject* tuple = PyTuple_New(Py_ssize_t(nargs));
    PyObject* kwargs = PyDict_New();
    if (!tuple || !kwargs) {
        Py_XDECREF(tuple);
        Py_XDECREF(kwargs);
        restore_exception(exc);
        return nullptr;
    }
    for (size_t i = 0; i < nargs; ++i)
        PyTuple_SET_ITEM(tuple, Py_ssize_t(i), Py_NewRef(args[i]));
    const Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t i = 0; i < nkw; ++i)
        PyDict_SetItem(kwargs, PyTuple_GET_ITEM(kwnames, i), args[nargs + size_t(i)]);
    PyObject* r = PyObject_CallFunctionObjArgs(on_error_hook, reinterpret_cast<PyObject*>(w), exc,
                                               tuple, kwargs, nullptr);
    Py_DECREF(tuple);
    Py_DECREF(kwargs);
    Py_DECREF(exc);
    return r;
}

PyObject* wrapper_vectorcall(PyObject* self, PyObject* const* args, size_t nargsf,
                             PyObject* kwnames) {
    Wrapper* w = reinterpret_cast<Wrapper*>(self);
    PyObject* r;
    if (debug::watching()) [[unlikely]] {
        Observed scope(PyUnicode_AsUTF8(w->op));
        r = w->target(w->func, args, nargsf, kwnames);
    } else {
        r = w->target(w->func, args, nargsf, kwnames);
    }
    if (r) [[likely]]
        return r;
    return handle_error(w, args, PyVectorcall_NARGS(nargsf), kwnames);
}

void wrapper_dealloc(PyObject* self) {
    Wrapper* w = reinterpret_cast<Wrapper*>(self);
    PyObject_GC_UnTrack(self);
    Py_CLEAR(w->func);
    Py_CLEAR(w->name);
    Py_CLEAR(w->qualname);
    Py_CLEAR(w->module);
    Py_CLEAR(w->described);
    Py_CLEAR(w->dict);
    Py_CLEAR(w->op);
    PyObject_GC_Del(self);
}

int wrapper_traverse(PyObject* self, visitproc visit, void* arg) {
    Wrapper* w = reinterpret_cast<Wrapper*>(self);
    Py_VISIT(w->func);
    Py_VISIT(w->described);
    Py_VISIT(w->dict);
    return 0;
}

int wrapper_clear(PyObject* self) {
    Wrapper* w = reinterpret_cast<Wrapper*>(self);
    Py_CLEAR(w->described);
    Py_CLEAR(w->dict);
    return 0;
}

// A method binds like a Python function: x.sum is a bound method; ndarray.sum the wrapper itself.
PyObject* method_descr_get(PyObject* self, PyObject* obj, PyObject*) {
    if (!obj || obj == Py_None) return Py_NewRef(self);
    return PyMethod_New(self, obj);
}

PyObject* function_descr_get(PyObject* self, PyObject*, PyObject*) { return Py_NewRef(self); }

// (signature, doc, text signature), asked of the hook once.
PyObject* described(Wrapper* w, Py_ssize_t i) {
    if (!w->described) {
        if (!describe_hook) Py_RETURN_NONE;
        PyObject* d = PyObject_CallOneArg(describe_hook, reinterpret_cast<PyObject*>(w));
        if (!d) return nullptr;
        if (!PyTuple_Check(d) || PyTuple_GET_SIZE(d) != 3) {
            Py_DECREF(d);
            PyErr_SetString(PyExc_TypeError, "ember: the describe hook must return a 3-tuple");
            return nullptr;
        }
        w->described = d;
    }
    return Py_NewRef(PyTuple_GET_ITEM(w->described, i));
}

PyObject* get_signature(PyObject* self, void*) {
    return described(reinterpret_cast<Wrapper*>(self), 0);
}
PyObject* get_doc(PyObject* self, void*) { return described(reinterpret_cast<Wrapper*>(self), 1); }
PyObject* get_text_signature(PyObject* self, void*) {
    return described(reinterpret_cast<Wrapper*>(self), 2);
}
PyObject* get_name(PyObject* self, void*) {
    return Py_NewRef(reinterpret_cast<Wrapper*>(self)->name);
}
PyObject* get_qualname(PyObject* self, void*) {
    return Py_NewRef(reinterpret_cast<Wrapper*>(self)->qualname);
}
PyObject* get_module(PyObject* self, void*) {
    return Py_NewRef(reinterpret_cast<Wrapper*>(self)->module);
}
PyObject* get_wrapped(PyObject* self, void*) {
    return Py_NewRef(reinterpret_cast<Wrapper*>(self)->func);
}

PyObject* wrapper_repr(PyObject* self) {
    Wrapper* w = reinterpret_cast<Wrapper*>(self);
    return PyUnicode_FromFormat("<ember function %U.%U>", w->module, w->qualname);
}

// Pickled by reference, as Python functions are: module + qualified name.
PyObject* wrapper_reduce(PyObject* self, PyObject*) {
    return Py_NewRef(reinterpret_cast<Wrapper*>(self)->qualname);
}

PyGetSetDef wrapper_getset[] = {
    {"__signature__", get_signature, nullptr, nullptr, nullptr},
    {"__doc__", get_doc, nullptr, nullptr, nullptr},
    {"__text_signature__", get_text_signature, nullptr, nullptr, nullptr},
    {"__name__", get_name, nullptr, nullptr, nullptr},
    {"__qualname__", get_qualname, nullptr, nullptr, nullptr},
    {"__module__", get_module, nullptr, nullptr, nullptr},
    {"__wrapped__", get_wrapped, nullptr, nullptr, nullptr},
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, nullptr, nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

PyMethodDef wrapper_methods[] = {
    {"__reduce__", wrapper_reduce, METH_NOARGS, nullptr},
    {nullptr, nullptr, 0, nullptr},
};

PyTypeObject make_type(const char* name, bool method) {
    PyTypeObject t{PyVarObject_HEAD_INIT(nullptr, 0)};
    t.tp_name = name;
    t.tp_basicsize = sizeof(Wrapper);
    t.tp_dealloc = wrapper_dealloc;
    t.tp_vectorcall_offset = offsetof(Wrapper, vectorcall);
    t.tp_call = PyVectorcall_Call;
    t.tp_repr = wrapper_repr;
    t.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL |
                 (method ? Py_TPFLAGS_METHOD_DESCRIPTOR : 0);
    t.tp_traverse = wrapper_traverse;
    t.tp_clear = wrapper_clear;
    t.tp_getset = wrapper_getset;
    t.tp_methods = wrapper_methods;
    t.tp_dictoffset = offsetof(Wrapper, dict);
    // A function stays unbound as a class attribute (as nanobind's functions do); having
    // __get__ also makes it a routine to inspect and help().
    t.tp_descr_get = method ? method_descr_get : function_descr_get;
    t.tp_doc = "A public ember function (a nanobind function with NumPy-style argument errors).";
    return t;
}

PyTypeObject function_type = make_type("ember.builtin_function", false);
PyTypeObject method_type = make_type("ember.builtin_method", true);

nb::object wrap_callable(PyTypeObject* type, nb::handle func, nb::str name, nb::str qualname,
                         nb::str module) {
    vectorcallfunc target = PyVectorcall_Function(func.ptr());
    if (!target) throw nb::type_error("ember._core._wrap: the callable has no vectorcall entry");
    Wrapper* w = PyObject_GC_New(Wrapper, type);
    if (!w) throw nb::python_error();
    w->vectorcall = wrapper_vectorcall;
    w->func = Py_NewRef(func.ptr());
    w->target = target;
    w->name = Py_NewRef(name.ptr());
    w->qualname = Py_NewRef(qualname.ptr());
    w->module = Py_NewRef(module.ptr());
    w->described = nullptr;
    w->dict = nullptr;
    w->op = PyUnicode_FromFormat("%U.%U", module.ptr(), qualname.ptr());
    if (!w->op) {
        Py_DECREF(reinterpret_cast<PyObject*>(w));
        throw nb::python_error();
    }
    PyUnicode_AsUTF8(w->op);  // caches the UTF-8 form the scope reads
    PyObject_GC_Track(reinterpret_cast<PyObject*>(w));
    return nb::steal(reinterpret_cast<PyObject*>(w));
}

}  // namespace

std::vector<nb::handle> bind_args(const char* who, nb::args args, nb::kwargs kwargs,
                                  std::initializer_list<const char*> names, size_t required) {
    const std::vector<const char*> ps(names);
    std::vector<nb::handle> out(ps.size());
    const size_t n = args.size();
    if (n > ps.size()) {
        const std::string takes = required == ps.size() ? std::to_string(ps.size())
                                                        : "from " + std::to_string(required) +
                                                              " to " + std::to_string(ps.size());
        throw TypeError(std::string(who) + "() takes " + takes + " positional argument" +
                        (ps.size() == 1 && required == 1 ? "" : "s") + " but " + std::to_string(n) +
                        (n == 1 ? " was" : " were") + " given");
    }
    for (size_t i = 0; i < n; ++i)
        out[i] = args[i];
    for (auto [k, v] : kwargs) {
        const std::string key = nb::str(k).c_str();
        size_t i = 0;
        while (i < ps.size() && key != ps[i])
            ++i;
        if (i == ps.size())
            throw TypeError(std::string(who) + "() got an unexpected keyword argument '" + key +
                            "'");
        if (out[i].is_valid())
            throw TypeError(std::string(who) + "() got multiple values for argument '" + key + "'");
        out[i] = v;
    }
    for (size_t i = 0; i < required; ++i)
        if (!out[i].is_valid())
            throw TypeError(std::string(who) + "() missing required argument '" + ps[i] + "'");
    return out;
}

void bind_calls(nb::module_& m) {
    for (PyTypeObject* t : {&function_type, &method_type})
        if (PyType_Ready(t) < 0) throw nb::python_error();
    m.attr("builtin_function") = nb::handle(reinterpret_cast<PyObject*>(&function_type));
    m.attr("builtin_method") = nb::handle(reinterpret_cast<PyObject*>(&method_type));
    m.def(
        "_wrap_function",
        [](nb::handle f, nb::str name, nb::str qualname, nb::str module) {
            return wrap_callable(&function_type, f, name, qualname, module);
        },
        nb::arg("func"), nb::arg("name"), nb::arg("qualname"), nb::arg("module"),
        "A function wrapper of the nanobind function `func` (see ember/_calls.py).");
    m.def(
        "_wrap_method",
        [](nb::handle f, nb::str name, nb::str qualname, nb::str module) {
            return wrap_callable(&method_type, f, name, qualname, module);
        },
        nb::arg("func"), nb::arg("name"), nb::arg("qualname"), nb::arg("module"),
        "A method-descriptor wrapper of the nanobind method `func` (see ember/_calls.py).");
    m.def(
        "_set_call_hooks",
        [](nb::handle on_error, nb::handle describe) {
            // Kept for the life of the process (called at shutdown-safe times only).
            Py_XSETREF(on_error_hook, Py_NewRef(on_error.ptr()));
            Py_XSETREF(describe_hook, Py_NewRef(describe.ptr()));
        },
        nb::arg("on_error"), nb::arg("describe"));
}

}  // namespace ember::python
