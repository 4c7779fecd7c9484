// Bindings of ember::cuda (private: the ember.cuda Python module wraps them).
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>

#include "ember/cuda.hpp"
#include "python/common.hpp"

namespace ember::python {

namespace {

nb::dict props_dict(const cuda::DeviceProperties& p) {
    nb::dict d;
    d["name"] = p.name;
    d["major"] = p.major;
    d["minor"] = p.minor;
    d["total_memory"] = p.total_memory;
    d["multi_processor_count"] = p.multi_processor_count;
    d["l2_cache_size"] = p.l2_cache_size;
    d["max_threads_per_multi_processor"] = p.max_threads_per_multi_processor;
    d["max_shared_memory_per_block"] = p.max_shared_memory_per_block;
    d["clock_rate_khz"] = p.clock_rate_khz;
    d["memory_clock_rate_khz"] = p.memory_clock_rate_khz;
    d["memory_bus_width"] = p.memory_bus_width;
    d["pci_bus_id"] = p.pci_bus_id;
    return d;
}

// The Python finder of CUDA's libraries and headers (ember/_cuda_paths.py), called with the GIL
// from whichever thread loads a library first; any error means "not found".
nb::object* py_finder = nullptr;  // never destroyed: it may be asked during teardown
std::string call_py_finder(const char* kind, const char* name) {
    if (!Py_IsInitialized()) return {};
    nb::gil_scoped_acquire gil;
    if (!py_finder) return {};
    try {
        nb::object r = (*py_finder)(kind, name);
        return r.is_none() ? std::string() : nb::cast<std::string>(r);
    } catch (const std::exception&) {
        PyErr_Clear();
        return {};
    }
}

}  // namespace

void bind_cuda(nb::module_& root) {
    nb::module_ m = root.def_submodule("_cuda", "ember's CUDA runtime (private: use ember.cuda).");
    m.def("is_available", &cuda::is_available);
    m.def("device_count", &cuda::device_count);
    m.def("unavailable_reason", &cuda::unavailable_reason);
    m.def("current_device", &cuda::current_device);
    m.def("set_device", &cuda::set_device, nb::arg("device"));
    m.def(
        "get_device_properties",
        [](int device) { return props_dict(cuda::get_device_properties(device)); },
        nb::arg("device"));
    m.def(
        "synchronize",
        [](int device) {
            nb::gil_scoped_release r;
            cuda::synchronize(device);
        },
        nb::arg("device"));

    nb::class_<cuda::Stream>(m, "Stream")
        .def_static("create", &cuda::Stream::create, nb::arg("device"))
        .def_static("current", &cuda::Stream::current, nb::arg("device"))
        .def_static("default", &cuda::Stream::default_stream, nb::arg("device"))
        .def_prop_ro("device", &cuda::Stream::device)
        .def_prop_ro("handle", [](const cuda::Stream& s) { return uintptr_t(s.handle()); })
        .def("synchronize",
             [](const cuda::Stream& s) {
                 nb::gil_scoped_release r;
                 s.synchronize();
             })
        .def("query", &cuda::Stream::query)
        .def("wait_event", &cuda::Stream::wait_event, nb::arg("event"))
        .def("__eq__", [](const cuda::Stream& a, const cuda::Stream& b) { return a == b; })
        .def("__hash__", [](const cuda::Stream& s) { return uintptr_t(s.handle()); });
    m.def("set_current_stream", &cuda::set_current_stream, nb::arg("stream"));

    nb::class_<cuda::Graph>(m, "Graph")
        .def(nb::init<>())
        .def(
            "capture_begin",
            [](cuda::Graph& g, int device, const cuda::Stream* s) { g.capture_begin(device, s); },
            nb::arg("device"), nb::arg("stream").none())
        .def("capture_end", &cuda::Graph::capture_end)
        .def("capture_abort", &cuda::Graph::capture_abort)
        .def("replay", &cuda::Graph::replay)
        .def("reset",
             [](cuda::Graph& g) {
                 nb::gil_scoped_release r;
                 g.reset();
             })
        .def_prop_ro("capturing", &cuda::Graph::capturing)
        .def_prop_ro("captured", &cuda::Graph::captured)
        .def_prop_ro("num_nodes", &cuda::Graph::num_nodes)
        .def_prop_ro("device", &cuda::Graph::device);

    nb::class_<cuda::Event>(m, "Event")
        .def(nb::init<bool, int>(), nb::arg("enable_timing"), nb::arg("device"))
        .def(
            "record", [](cuda::Event& e, const cuda::Stream& s) { e.record(s); }, nb::arg("stream"))
        .def("synchronize",
             [](const cuda::Event& e) {
                 nb::gil_scoped_release r;
                 e.synchronize();
             })
        .def("query", &cuda::Event::query)
        .def("elapsed_time", &cuda::Event::elapsed_time, nb::arg("end"))
        .def_prop_ro("device", &cuda::Event::device)
        .def_prop_ro("handle", [](const cuda::Event& e) { return uintptr_t(e.handle()); });

    m.def(
        "memory_stats",
        [](int device) {
            const cuda::MemoryStats s = cuda::memory_stats(device);
            nb::dict d;
            d["allocated_bytes"] = s.allocated;
            d["peak_allocated_bytes"] = s.peak_allocated;
            d["reserved_bytes"] = s.reserved;
            d["peak_reserved_bytes"] = s.peak_reserved;
            d["limit_bytes"] = s.limit;
            d["num_allocs"] = s.num_allocs;
            d["num_frees"] = s.num_frees;
            d["num_ooms"] = s.num_ooms;
            d["num_alloc_retries"] = s.num_retries;
            d["device_free_bytes"] = s.device_free;
            d["device_total_bytes"] = s.device_total;
            return d;
        },
        nb::arg("device"));
    m.def(
        "empty_cache",
        [](int device) {
            nb::gil_scoped_release r;
            cuda::empty_cache(device);
        },
        nb::arg("device"));
    m.def("set_memory_limit", &cuda::set_memory_limit, nb::arg("bytes"), nb::arg("device"));
    m.def("reset_peak_memory_stats", &cuda::reset_peak_memory_stats, nb::arg("device"));
    m.def("kernel_cache_stats", [] {
        const cuda::KernelCacheStats s = cuda::kernel_cache_stats();
        nb::dict d;
        d["memory_hits"] = s.memory_hits;
        d["disk_hits"] = s.disk_hits;
        d["compiles"] = s.compiles;
        d["compile_ms"] = s.compile_ms;
        d["disk_rejects"] = s.disk_rejects;
        d["prefetch_hits"] = s.prefetch_hits;
        d["shipped_hits"] = s.shipped_hits;
        d["launches"] = s.launches;
        d["library_calls"] = s.library_calls;
        return d;
    });
    m.def("kernel_cache_dir", &cuda::kernel_cache_dir);
    m.def(
        "_set_path_finder",
        [](nb::object finder) {
            if (!py_finder) py_finder = new nb::object();
            *py_finder = std::move(finder);
            cuda::set_path_finder(call_py_finder);
        },
        nb::arg("finder"));
    m.def("library_origins", [] {
        nb::dict d;
        for (const auto& [lib, path] : cuda::library_origins())
            d[lib.c_str()] = path;
        return d;
    });
    m.def("cccl_include_dir", &cuda::cccl_include_dir);
    m.def(
        "write_kernel_pack",
        [](const std::string& path, int arch, int threads, const std::string& name_filter) {
            cuda::PrecompileStats s;
            {
                nb::gil_scoped_release r;
                s = cuda::write_kernel_pack(path, arch, threads, name_filter);
            }
            nb::dict d;
            d["kernels"] = s.kernels;
            d["compiled"] = s.compiled;
            d["cached"] = s.cached;
            d["seconds"] = s.seconds;
            return d;
        },
        nb::arg("path"), nb::arg("arch"), nb::arg("threads"), nb::arg("name_filter"));
    m.def("set_kernel_pack_dir", &cuda::set_kernel_pack_dir, nb::arg("dir"));
    m.def(
        "kernel_pack_info",
        [](const std::string& path) {
            auto [n, arch] = cuda::kernel_pack_info(path);
            return nb::make_tuple(n, arch);
        },
        nb::arg("path"));
    m.def(
        "precompile",
        [](int arch, int threads, const std::string& name_filter) {
            cuda::PrecompileStats s;
            {
                nb::gil_scoped_release r;
                s = cuda::precompile(arch, threads, name_filter);
            }
            nb::dict d;
            d["kernels"] = s.kernels;
            d["compiled"] = s.compiled;
            d["cached"] = s.cached;
            d["seconds"] = s.seconds;
            return d;
        },
        nb::arg("arch"), nb::arg("threads"), nb::arg("name_filter"));
    m.def("clear_kernel_memory_cache", &cuda::clear_kernel_memory_cache);
    m.def("_launch_faulting_kernel", &cuda::detail::launch_faulting_kernel, nb::arg("device"));
    m.def("_wait_background_compiles", [] {
        nb::gil_scoped_release r;
        cuda::detail::wait_background_compiles();
    });
    m.def("_bare_launch_seconds", &cuda::detail::bare_launch_seconds, nb::arg("calls"),
          nb::arg("device") = -1);
    m.def("_add_loop_seconds", &cuda::detail::add_loop_seconds, nb::arg("calls"),
          nb::arg("device") = -1);
}

}  // namespace ember::python
