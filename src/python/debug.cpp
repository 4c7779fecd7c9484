// ember._core._debug: the sink of ember/debug.hpp's events (a Python callable: ember/debug.py's
// ledger and strict modes), Python source locations for the ring of recent launches and for
// memory snapshots, the profiler's op records (observe.hpp) and NVTX.
#include <chrono>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "ember/cuda.hpp"
#include "ember/debug.hpp"
#include "python/common.hpp"
#include "python/observe.hpp"

namespace ember::python {
namespace {

nb::object& callback() {
    static auto* f = new nb::object();  // leaked: events may come during interpreter exit
    return *f;
}

const char* kind_name(debug::EventKind k) {
    switch (k) {
        case debug::EventKind::sync:
            return "sync";
        case debug::EventKind::transfer:
            return "transfer";
        case debug::EventKind::compile:
            return "compile";
        case debug::EventKind::disk_load:
            return "disk_load";
        case debug::EventKind::shipped_load:
            return "shipped_load";
        case debug::EventKind::alloc:
            return "alloc";
        case debug::EventKind::oom_retry:
            return "oom_retry";
    }
    return "?";
}

// Called on the thread that caused the event; a Python exception (a strict mode's "error")
// propagates through the C++ op back to its caller.
void python_sink(debug::Event& e) {
    nb::gil_scoped_acquire gil;
    nb::object f = callback();
    if (!f.is_valid() || f.is_none()) return;
    const char* dir = e.direction == 1 ? "host->device" : e.direction == 2 ? "device->host" : "";
    f(kind_name(e.kind), e.op, e.reason, e.what, e.device, e.bytes, e.ms, dir, e.pinned,
      e.is_explicit);
}

// ---- Python source locations ------------------------------------------------------------------
// A location token is (index of the code object + 1) << 32 | the frame's last instruction. Code
// objects seen are kept alive (a program has a bounded number), so tokens stay valid.

struct Code {
    PyObject* code;
    bool internal;  // ember's own Python code: the location is its caller's
};
std::vector<Code>& codes() {
    static auto* v = new std::vector<Code>();
    return *v;
}
std::unordered_map<PyObject*, uint32_t>& code_index() {
    static auto* m = new std::unordered_map<PyObject*, uint32_t>();
    return *m;
}
std::string& package_dir() {
    static auto* s = new std::string();
    return *s;
}

uint32_t intern(PyObject* code) {
    auto [it, added] = code_index().emplace(code, uint32_t(codes().size()));
    if (added) {
        bool internal = false;
        PyObject* file = PyObject_GetAttrString(code, "co_filename");
        if (const char* f = file ? PyUnicode_AsUTF8(file) : nullptr)
            internal = !package_dir().empty() &&
                       std::string_view(f).substr(0, package_dir().size()) == package_dir();
        Py_XDECREF(file);
        PyErr_Clear();
        codes().push_back({Py_NewRef(code), internal});
    }
    return it->second;
}

// Called on every GPU launch (the ring of recent launches): ~80 instructions (callgrind,
// tools/host_profile.sh: 3304 -> 3385 per Python x + x on the fake driver).
uint64_t python_location() {
    // A thread has a current thread state only while it holds the GIL (launches from C++ threads
    // or with the GIL released get no location).
#if PY_VERSION_HEX >= 0x030D0000
    if (!PyThreadState_GetUnchecked()) return 0;
#else
    if (!_PyThreadState_UncheckedGet()) return 0;
#endif
    PyFrameObject* f = PyEval_GetFrame();  // borrowed
    Py_XINCREF(f);
    static PyObject* last_code = nullptr;  // a loop launches from one line: skip the lookup
    static uint32_t last_index = 0;
    while (f) {
        PyCodeObject* c = PyFrame_GetCode(f);
        PyObject* co = reinterpret_cast<PyObject*>(c);
        const uint32_t i = co == last_code ? last_index : intern(co);
        last_code = co;  // interned codes live forever: the pointer stays valid
        last_index = i;
        Py_DECREF(c);
        if (!codes()[i].internal) {
            const int lasti = PyFrame_GetLasti(f);
            Py_DECREF(f);
            return (uint64_t(i) + 1) << 32 | uint32_t(lasti < 0 ? 0 : lasti);
        }
        PyFrameObject* back = PyFrame_GetBack(f);
        Py_DECREF(f);
        f = back;
    }
    return 0;
}

std::string describe_python(uint64_t token) {
    if (!Py_IsInitialized()) return "";
    PyGILState_STATE g = PyGILState_Ensure();
    std::string s;
    const size_t i = size_t(token >> 32) - 1;
    if (i < codes().size()) {
        PyObject* code = codes()[i].code;
        const int line =
            PyCode_Addr2Line(reinterpret_cast<PyCodeObject*>(code), int(uint32_t(token)));
        PyObject* file = PyObject_GetAttrString(code, "co_filename");
        PyObject* name = PyObject_GetAttrString(code, "co_name");
        const char* f = file ? PyUnicode_AsUTF8(file) : nullptr;
        const char* n = name ? PyUnicode_AsUTF8(name) : nullptr;
        s = std::string(f ? f : "?") + ":" + std::to_string(line) + " in " + (n ? n : "?");
        Py_XDECREF(file);
        Py_XDECREF(name);
        PyErr_Clear();
    }
    PyGILState_Release(g);
    return s;
}

// ---- the profiler's op records ------------------------------------------------------------------

struct OpRecord {
    uint64_t id, parent;
    const char* name;
    int64_t t0, t1;
    uint64_t thread, bytes, alloc;
};
std::mutex ops_mu;
std::vector<OpRecord>& op_records() {
    static auto* v = new std::vector<OpRecord>();
    return *v;
}
std::atomic<uint64_t> next_op{1};

int64_t now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

uint64_t native_thread() {
    thread_local const uint64_t id = uint64_t(PyThread_get_thread_native_id());
    return id;
}

}  // namespace

void Observed::begin(const char* op) noexcept {
    if (!op) return;
    watched_ = true;
    what_ = debug::watching();
    op_ = op;
    prev_op_ = debug::detail::api_op;
    if (!prev_op_) debug::detail::api_op = op;
    if (what_ & debug::watch_profile) {
        id_ = next_op.fetch_add(1, std::memory_order_relaxed);
        parent_ = debug::detail::prof_op;
        debug::detail::prof_op = id_;
        bytes0_ = debug::detail::prof_bytes;
        alloc0_ = debug::detail::prof_alloc;
        t0_ = now_ns();
    }
    if (what_ & debug::watch_nvtx) cuda::nvtx_range_push(op);
}

void Observed::end() noexcept {
    if (what_ & debug::watch_nvtx) cuda::nvtx_range_pop();
    if (what_ & debug::watch_profile) {
        const int64_t t1 = now_ns();
        debug::detail::prof_op = parent_;
        try {
            std::lock_guard lk(ops_mu);
            op_records().push_back({id_, parent_, op_, t0_, t1, native_thread(),
                                    debug::detail::prof_bytes - bytes0_,
                                    debug::detail::prof_alloc - alloc0_});
        } catch (...) {  // out of memory for the record: the profile misses one op
        }
    }
    debug::detail::api_op = prev_op_;
}

void bind_debug(nb::module_& root) {
    nb::module_ m = root.def_submodule("_debug", "ember.debug's events (ember/debug.py)");
    debug::set_location_hooks(&python_location, &describe_python);
    m.def(
        "set_sink",
        [](nb::object f) {
            callback() = f;
            debug::set_sink(f.is_none() ? nullptr : &python_sink);
        },
        nb::arg("callback").none(),
        "Installs callback(kind, op, reason, what, device, bytes, ms, direction, pinned, "
        "explicit) for every event (None: off).");
    m.def("enabled", &debug::enabled);
    m.def(
        "set_package_dir", [](const std::string& d) { package_dir() = d; },
        "Code under this directory is ember's: locations name its caller.");
    m.def(
        "set_watch",
        [](const std::string& what, bool on) {
            const uint32_t bit = what == "profile"  ? debug::watch_profile
                                 : what == "nvtx"   ? debug::watch_nvtx
                                 : what == "memory" ? debug::watch_memory
                                                    : 0;
            if (!bit) throw ValueError("ember._debug.set_watch: unknown '" + what + "'");
            debug::set_watch(bit, on);
        },
        nb::arg("what"), nb::arg("on"));
    m.def(
        "to_host",
        [](const Array& a, const char* op, bool is_explicit) {
            // This call is itself a wrapped function: `op` replaces its name.
            struct Named {
                const char* prev = debug::detail::api_op;
                explicit Named(const char* op) { debug::detail::api_op = op; }
                ~Named() { debug::detail::api_op = prev; }
            } named(op);
            if (is_explicit) {
                debug::ExplicitScope ex;
                return a.to(cpu);
            }
            return a.to(cpu);
        },
        nb::arg("x"), nb::arg("op"), nb::arg("explicit"),
        "x on the host, the copy (if any) attributed to `op` and, when `explicit`, asked for.");
    m.def("location", &python_location, "This call's location token (tests).");
    m.def("describe", &describe_python, nb::arg("token"), "file:line in function of a token.");
    m.def("profile_start", [] {
        {
            std::lock_guard lk(ops_mu);
            op_records().clear();
        }
        cuda::profiler_start();
        debug::set_watch(debug::watch_profile, true);
    });
    m.def(
        "profile_stop",
        [] {
            debug::set_watch(debug::watch_profile, false);
            std::vector<cuda::KernelTiming> ks;
            {
                nb::gil_scoped_release nogil;  // waits for the device
                ks = cuda::profiler_stop();
            }
            std::vector<OpRecord> recs;
            {
                std::lock_guard lk(ops_mu);
                recs.swap(op_records());
            }
            nb::list ops, kernels;
            for (const OpRecord& r : recs)
                ops.append(
                    nb::make_tuple(r.id, r.parent, r.name, r.t0, r.t1, r.thread, r.bytes, r.alloc));
            for (const cuda::KernelTiming& k : ks)
                kernels.append(nb::make_tuple(k.op, k.thread, k.device, k.name, k.start_ms, k.ms));
            return nb::make_tuple(ops, kernels);
        },
        "Stops the profiler: (ops, kernels), ops as (id, parent, name, t0_ns, t1_ns, thread, "
        "bytes, alloc), kernels as (op, thread, device, name, start_ms, ms).");
    m.def("now_ns", &now_ns, "The profiler's clock (steady, ns).");
    m.def("range_begin", &cuda::profile_range_begin, nb::arg("device"),
          "A timed range's start on the device's current stream while profiling (else 0).");
    m.def("range_end", &cuda::profile_range_end, nb::arg("device"), nb::arg("handle"),
          nb::arg("label"), "Ends a timed range: its GPU time becomes a row named `label`.");
    m.def(
        "live_allocations",
        [] {
            nb::list out;
            for (const cuda::LiveAllocation& a : cuda::live_allocations())
                out.append(nb::make_tuple(a.device, a.address, a.bytes, a.stream,
                                          describe_python(a.where)));
            return out;
        },
        "(device, address, bytes, stream, 'file:line in function' or '') of live device "
        "allocations.");
    m.def("nvtx_available", &cuda::nvtx_available);
    m.def("nvtx_push", &cuda::nvtx_range_push, nb::arg("name"));
    m.def("nvtx_pop", &cuda::nvtx_range_pop);
    m.def("nvtx_mark", &cuda::nvtx_mark, nb::arg("name"));
}

}  // namespace ember::python
