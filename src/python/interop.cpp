// Bindings of zero-copy interop: DLPack (2024: versioned and legacy capsules, stream handshake),
// __cuda_array_interface__ v3 export and import, pinned host arrays, record_stream.
#include <nanobind/stl/pair.h>

#include <cstring>

#include "ember/interop.hpp"
#include "python/common.hpp"

namespace ember::python {

namespace {

// The DLPack ABI (dlpack.h, v1.x), spelled out here so no header is needed.
namespace dl {
enum : int32_t { cpu = 1, cuda = 2, cuda_host = 3, cuda_managed = 13 };
enum : uint8_t { int_ = 0, uint_ = 1, float_ = 2, bfloat = 4, complex_ = 5, bool_ = 6 };
constexpr uint64_t flag_read_only = 1, flag_is_copied = 2;
struct Device {
    int32_t device_type;
    int32_t device_id;
};
struct DataType {
    uint8_t code;
    uint8_t bits;
    uint16_t lanes;
};
struct Tensor {
    void* data;
    Device device;
    int32_t ndim;
    DataType dtype;
    int64_t* shape;
    int64_t* strides;
    uint64_t byte_offset;
};
struct Managed {
    Tensor dl_tensor;
    void* manager_ctx;
    void (*deleter)(Managed*);
};
struct Version {
    uint32_t major, minor;
};
struct ManagedVersioned {
    Version version;
    void* manager_ctx;
    void (*deleter)(ManagedVersioned*);
    uint64_t flags;
    Tensor dl_tensor;
};
}  // namespace dl

constexpr uint32_t dlpack_minor = 0;  // the DLPack version exported: 1.0 (all ember needs)

dl::DataType dl_dtype(DType t) {
    dl::DataType d{0, uint8_t(itemsize(t) * 8), 1};
    switch (kind(t)) {
        case Kind::boolean:
            d.code = dl::bool_;
            break;
        case Kind::signed_int:
            d.code = dl::int_;
            break;
        case Kind::unsigned_int:
            d.code = dl::uint_;
            break;
        case Kind::floating:
            d.code = t == DType::bfloat16 ? dl::bfloat : dl::float_;
            break;
        case Kind::complex:
            d.code = dl::complex_;
            break;
    }
    return d;
}

std::optional<DType> from_dl_dtype(dl::DataType d) {
    if (d.lanes != 1) return std::nullopt;
    for (DType t :
         {DType::bool_, DType::int8, DType::int16, DType::int32, DType::int64, DType::uint8,
          DType::uint16, DType::uint32, DType::uint64, DType::float16, DType::bfloat16,
          DType::float32, DType::float64, DType::complex64, DType::complex128}) {
        const dl::DataType e = dl_dtype(t);
        if (e.code == d.code && e.bits == d.bits) return t;
    }
    return std::nullopt;
}

// What an exported capsule owns: the storage and the shape/strides arrays it points to.
struct ExportCtx {
    std::shared_ptr<Storage> storage;
    std::vector<int64_t> shape, strides;
    dl::Managed legacy{};
    dl::ManagedVersioned versioned{};
};

void fill_tensor(dl::Tensor& t, const Array& a, ExportCtx* ctx) {
    // Never null pointers, even for 0-d arrays (some consumers read them regardless of ndim).
    ctx->shape.reserve(1);
    ctx->strides.reserve(1);
    ctx->shape.assign(a.shape().begin(), a.shape().end());
    ctx->strides.assign(a.strides().begin(), a.strides().end());
    t.data = a.data();
    t.device = a.device().is_cpu() ? dl::Device{dl::cpu, 0}
                                   : dl::Device{dl::cuda, int32_t(a.device().index)};
    t.ndim = int32_t(a.ndim());
    t.dtype = dl_dtype(a.dtype());
    t.shape = ctx->shape.data();
    t.strides = ctx->strides.data();
    t.byte_offset = 0;
}

void capsule_destructor(PyObject* cap, const char* name, bool versioned) {
    // A capsule still carrying its original name was never consumed: free it here.
    if (!PyCapsule_IsValid(cap, name)) return;
    void* p = PyCapsule_GetPointer(cap, name);
    if (!p) {
        PyErr_Clear();
        return;
    }
    if (versioned) {
        auto* m = static_cast<dl::ManagedVersioned*>(p);
        if (m->deleter) m->deleter(m);
    } else {
        auto* m = static_cast<dl::Managed*>(p);
        if (m->deleter) m->deleter(m);
    }
}

nb::object export_capsule(const Array& a, bool versioned, bool copied) {
    auto* ctx = new ExportCtx;
    ctx->storage = a.storage();
    PyObject* cap;
    if (versioned) {
        dl::ManagedVersioned& m = ctx->versioned;
        m.version = {1, dlpack_minor};
        m.manager_ctx = ctx;
        m.deleter = [](dl::ManagedVersioned* self) {
            delete static_cast<ExportCtx*>(self->manager_ctx);
        };
        m.flags = copied ? dl::flag_is_copied : a.writeable() ? 0 : dl::flag_read_only;
        fill_tensor(m.dl_tensor, a, ctx);
        cap = PyCapsule_New(&m, "dltensor_versioned",
                            [](PyObject* c) { capsule_destructor(c, "dltensor_versioned", true); });
    } else {
        dl::Managed& m = ctx->legacy;
        m.manager_ctx = ctx;
        m.deleter = [](dl::Managed* self) { delete static_cast<ExportCtx*>(self->manager_ctx); };
        fill_tensor(m.dl_tensor, a, ctx);
        cap = PyCapsule_New(&m, "dltensor",
                            [](PyObject* c) { capsule_destructor(c, "dltensor", false); });
    }
    if (!cap) {
        delete ctx;
        throw nb::python_error();
    }
    return nb::steal(cap);
}

// (device type, index) of a __dlpack_device__-style tuple as an ember Device; nullopt when ember
// cannot address that device type.
std::optional<Device> dl_to_device(int type, int index) {
    if (type == dl::cpu || type == dl::cuda_host) return Device(DeviceType::cpu, 0);
    if (type == dl::cuda || type == dl::cuda_managed) return Device(DeviceType::cuda, index);
    return std::nullopt;
}

nb::object dlpack_export(const Array& a0, nb::handle stream, nb::handle max_version,
                         nb::handle dl_device, nb::handle copy) {
    const char* who = "ember.ndarray.__dlpack__";
    const std::optional<bool> want_copy =
        copy.is_none() ? std::nullopt : std::optional<bool>(nb::cast<bool>(copy));
    Array a = a0;
    bool copied = false;
    if (!dl_device.is_none()) {
        auto t = nb::cast<std::pair<int, int>>(dl_device);
        std::optional<Device> dev = dl_to_device(t.first, t.second);
        if (!dev)
            throw nb::buffer_error((std::string(who) + ": cannot export to DLPack device type " +
                                    std::to_string(t.first))
                                       .c_str());
        if (*dev != a.device()) {
            if (want_copy == false)
                throw nb::buffer_error((std::string(who) + ": exporting an array on " +
                                        a.device().str() + " to " + dev->str() +
                                        " needs a copy, but copy=False")
                                           .c_str());
            if (dev->type == DeviceType::cuda && !cuda::is_available())
                throw nb::buffer_error((std::string(who) + ": cannot export to " + dev->str() +
                                        ": " + cuda::unavailable_reason())
                                           .c_str());
            a = a.to(*dev);
            copied = true;
        }
    }
    if (want_copy == true && !copied) {
        a = a.copy();
        copied = true;
    }
    // The stream handshake: the consumer's stream waits for the work ember queued on the array.
    if (a.device().type == DeviceType::cuda) {
        if (!stream.is_none()) {
            long long s = nb::cast<long long>(stream);
            if (s == 0) s = 1;  // disallowed by the protocol; producers read it as the legacy one
            if (s != -1) cuda::consumer_wait_current(a.device().index, uintptr_t(s));
            // The consumer frees its view whenever its host code is done with it, maybe before
            // its kernels have run: ember's block is then reused only after them. Only the two
            // default streams are recorded: they cannot be destroyed before the block is freed.
            if (s == 1 || s == 2) cuda::record_stream_handle(a, uintptr_t(s));
        } else {
            cuda::consumer_wait_current(a.device().index, 1);  // None: the legacy default stream
            cuda::record_stream_handle(a, 1);
        }
    } else if (!stream.is_none() && nb::cast<long long>(stream) != -1) {
        throw nb::value_error((std::string(who) + ": stream must be None for a CPU array").c_str());
    }
    bool versioned = false;
    if (!max_version.is_none()) {
        auto v = nb::cast<std::pair<int, int>>(max_version);
        versioned = v.first >= 1;
    }
    // As NumPy: only a versioned capsule can say that its memory is read-only.
    if (!versioned && !copied && !a.writeable())
        throw nb::buffer_error((std::string(who) +
                                ": cannot export a read-only array as a DLPack 0.x capsule, "
                                "which cannot mark it read-only (pass max_version=(1, 0) or "
                                "copy=True)")
                                   .c_str());
    return export_capsule(a, versioned, copied);
}

// Wraps foreign memory [base + lo, base + hi) elements as an Array with the given layout.
Array wrap_foreign(char* data, const Shape& shape, const Strides& strides, DType t, Device dev,
                   std::shared_ptr<void> owner) {
    int64_t lo = 0, hi = 1;
    bool any_zero = false;
    for (size_t i = 0; i < shape.size(); ++i) {
        if (shape[i] == 0)
            any_zero = true;
        else if (strides[i] < 0)
            lo += (shape[i] - 1) * strides[i];
        else
            hi += (shape[i] - 1) * strides[i];
    }
    const int64_t isz = itemsize(t);
    if (any_zero) lo = 0, hi = 0;
    if (dev.type == DeviceType::cuda) {
        // ember's kernels on this memory may still be queued when the array dies: the producer
        // gets its memory back only after they have run.
        void* raw = owner.get();
        owner =
            std::shared_ptr<void>(raw, [inner = std::move(owner), idx = dev.index](void*) mutable {
                cuda::release_after_current_work(idx, std::move(inner));
            });
    }
    auto storage = Storage::wrap(data + lo * isz, size_t((hi - lo) * isz), dev, std::move(owner));
    return Array(std::move(storage), -lo, shape, strides, t);
}

// Applies the `device` and `copy` requests of from_dlpack / asarray to an imported array.
Array finish_import(Array a, nb::handle device, std::optional<bool> want_copy, bool read_only,
                    const char* who) {
    bool copied = false;
    if (!device.is_none()) {
        std::optional<Device> dev = to_device(device, who);
        if (dev && *dev != a.device()) {
            if (want_copy == false)
                throw nb::buffer_error((std::string(who) + ": moving the data from " +
                                        a.device().str() + " to " + dev->str() +
                                        " needs a copy, but copy=False")
                                           .c_str());
            a = a.to(*dev);
            copied = true;
        }
    }
    if (!copied && (want_copy == true || read_only)) {
        if (want_copy == false)
            throw nb::buffer_error(
                (std::string(who) + ": the source memory is read-only and copy=False").c_str());
        a = a.copy();
    }
    return a;
}

Array import_capsule(nb::handle cap, nb::handle device, nb::handle copy) {
    const char* who = "ember.from_dlpack";
    const std::optional<bool> want_copy =
        copy.is_none() ? std::nullopt : std::optional<bool>(nb::cast<bool>(copy));
    PyObject* c = cap.ptr();
    dl::Tensor* t = nullptr;
    std::shared_ptr<void> owner;
    uint64_t flags = 0;
    if (PyCapsule_IsValid(c, "dltensor_versioned")) {
        auto* m = static_cast<dl::ManagedVersioned*>(PyCapsule_GetPointer(c, "dltensor_versioned"));
        if (m->version.major != 1)
            throw nb::buffer_error((std::string(who) + ": unsupported DLPack version " +
                                    std::to_string(m->version.major) + "." +
                                    std::to_string(m->version.minor))
                                       .c_str());
        if (PyCapsule_SetName(c, "used_dltensor_versioned") != 0) throw nb::python_error();
        owner = std::shared_ptr<void>(m, [](void* p) {
            auto* mm = static_cast<dl::ManagedVersioned*>(p);
            if (!mm->deleter) return;
            if (nb::is_alive()) {
                nb::gil_scoped_acquire gil;
                mm->deleter(mm);
            }
        });
        t = &m->dl_tensor;
        flags = m->flags;
    } else if (PyCapsule_IsValid(c, "dltensor")) {
        auto* m = static_cast<dl::Managed*>(PyCapsule_GetPointer(c, "dltensor"));
        if (PyCapsule_SetName(c, "used_dltensor") != 0) throw nb::python_error();
        owner = std::shared_ptr<void>(m, [](void* p) {
            auto* mm = static_cast<dl::Managed*>(p);
            if (!mm->deleter) return;
            if (nb::is_alive()) {
                nb::gil_scoped_acquire gil;
                mm->deleter(mm);
            }
        });
        t = &m->dl_tensor;
    } else {
        throw TypeError(std::string(who) +
                        ": expected an unconsumed DLPack capsule (\"dltensor\" or "
                        "\"dltensor_versioned\")");
    }
    std::optional<DType> dt = from_dl_dtype(t->dtype);
    if (!dt)
        throw TypeError(std::string(who) + ": unsupported DLPack element type (code " +
                        std::to_string(t->dtype.code) + ", " + std::to_string(t->dtype.bits) +
                        " bits, " + std::to_string(t->dtype.lanes) + " lanes)");
    std::optional<Device> dev = dl_to_device(t->device.device_type, t->device.device_id);
    if (!dev)
        throw nb::buffer_error((std::string(who) + ": unsupported DLPack device type " +
                                std::to_string(t->device.device_type))
                                   .c_str());
    if (t->ndim < 0 || t->ndim > 64)
        throw ValueError(std::string(who) + ": bad ndim " + std::to_string(t->ndim));
    Shape shape(size_t(t->ndim));
    for (int i = 0; i < t->ndim; ++i) {
        if (t->shape[i] < 0)
            throw ValueError(std::string(who) + ": negative dimension " +
                             std::to_string(t->shape[i]) + " in the DLPack tensor");
        shape[size_t(i)] = t->shape[i];
    }
    Strides strides =
        t->strides ? Strides(t->strides, t->strides + t->ndim) : contiguous_strides(shape);
    Array a = wrap_foreign(static_cast<char*>(t->data) + t->byte_offset, shape, strides, *dt, *dev,
                           std::move(owner));
    return finish_import(std::move(a), device, want_copy, (flags & dl::flag_read_only) != 0, who);
}

// ember.from_dlpack(x): a bare capsule, or an object with __dlpack__. A CUDA producer (by its
// __dlpack_device__) gets ember's current stream of that device, to order its work before
// ember's (the handshake), and is asked for a versioned capsule, falling back to the legacy call
// for producers from before the 2023 protocol (TypeError on the keywords).
Array from_dlpack(nb::handle x, nb::handle device, nb::handle copy) {
    if (PyCapsule_CheckExact(x.ptr())) return import_capsule(x, device, copy);
    nb::object export_ = nb::getattr(x, "__dlpack__", nb::none());
    if (export_.is_none())
        throw TypeError(std::string("ember.from_dlpack: ") + Py_TYPE(x.ptr())->tp_name +
                        " does not support __dlpack__");
    nb::object stream = nb::none();
    if (nb::object where = nb::getattr(x, "__dlpack_device__", nb::none()); !where.is_none()) {
        nb::object dev = where();
        const int type = nb::cast<int>(dev[0]);
        if (type == dl::cuda || type == dl::cuda_managed)
            stream = nb::int_(cuda::current_stream_handle(nb::cast<int>(dev[1])));
    }
    static const nb::handle version = nb::make_tuple(1, 0).release();  // leaked: lives to exit
    nb::object cap;
    try {
        cap = export_(nb::arg("stream") = stream, nb::arg("max_version") = version);
    } catch (nb::python_error& e) {
        if (!e.matches(PyExc_TypeError)) throw;
        cap = stream.is_none() ? export_() : export_(nb::arg("stream") = stream);
    }
    return import_capsule(cap, device, copy);
}

// ---- __cuda_array_interface__ ------------------------------------------------------------------

const char* cai_typestr(DType t) {
    switch (t) {
        case DType::bool_:
            return "|b1";
        case DType::int8:
            return "|i1";
        case DType::int16:
            return "<i2";
        case DType::int32:
            return "<i4";
        case DType::int64:
            return "<i8";
        case DType::uint8:
            return "|u1";
        case DType::uint16:
            return "<u2";
        case DType::uint32:
            return "<u4";
        case DType::uint64:
            return "<u8";
        case DType::float16:
            return "<f2";
        case DType::float32:
            return "<f4";
        case DType::float64:
            return "<f8";
        case DType::complex64:
            return "<c8";
        case DType::complex128:
            return "<c16";
        default:
            return nullptr;
    }
}

nb::dict cai_export(const Array& a) {
    if (a.device().type != DeviceType::cuda)
        throw nb::attribute_error(
            ("ember.ndarray.__cuda_array_interface__: the array is on " + a.device().str() +
             "; only CUDA arrays export it (use __array_interface__ or DLPack)")
                .c_str());
    const char* ts = cai_typestr(a.dtype());
    if (!ts)
        throw nb::attribute_error(
            "ember.ndarray.__cuda_array_interface__: bfloat16 has no typestr in the "
            "__cuda_array_interface__ protocol; use DLPack (__dlpack__) instead");
    nb::dict d;
    nb::list shape;
    for (int64_t s : a.shape())
        shape.append(s);
    d["shape"] = nb::tuple(shape);
    d["typestr"] = ts;
    nb::list descr;
    descr.append(nb::make_tuple("", ts));
    d["descr"] = descr;
    d["data"] = nb::make_tuple(uintptr_t(a.size() == 0 ? 0 : uintptr_t(a.data())), false);
    if (a.is_contiguous()) {
        d["strides"] = nb::none();
    } else {
        nb::list st;
        for (int64_t s : a.strides())
            st.append(s * a.itemsize());
        d["strides"] = nb::tuple(st);
    }
    d["version"] = 3;
    d["stream"] = cuda::current_stream_handle(a.device().index);
    return d;
}

DType from_typestr(const std::string& ts, const char* who) {
    if (ts.size() >= 3 && ts[0] != '>') {
        for (DType t : {DType::bool_, DType::int8, DType::int16, DType::int32, DType::int64,
                        DType::uint8, DType::uint16, DType::uint32, DType::uint64, DType::float16,
                        DType::float32, DType::float64, DType::complex64, DType::complex128}) {
            const char* e = cai_typestr(t);
            if (std::strcmp(e + 1, ts.c_str() + 1) == 0) return t;
        }
    }
    throw TypeError(std::string(who) + ": unsupported __cuda_array_interface__ typestr '" + ts +
                    "'");
}

// An ember array viewing the CUDA memory an object exports with __cuda_array_interface__, on
// device `dev_index` (-1: the device the pointer belongs to).
[[noreturn]] void cai_bad(nb::handle v, const char* key, const char* expected) {
    throw TypeError(std::string("ember.asarray: __cuda_array_interface__[\"") + key +
                    "\"] must be " + expected + ", got " +
                    (v.is_valid() ? nb::repr(v).c_str() : "nothing"));
}

// Entry `key` of a __cuda_array_interface__ dict as a T (TypeError naming it otherwise; a bool is
// no int here).
template <class T>
T cai_entry(nb::handle v, const char* key, const char* expected) {
    T out{};
    if (!nb::try_cast<T>(v, out) || nb::isinstance<nb::bool_>(v) != std::is_same_v<T, bool>)
        cai_bad(v, key, expected);
    return out;
}

nb::object cai_required(nb::dict d, const char* key) {
    if (!d.contains(key))
        throw ValueError(std::string("ember.asarray: __cuda_array_interface__ lacks the entry \"") +
                         key + "\"");
    return d[key];
}

// A tuple or list of ints.
std::vector<int64_t> cai_ints(nb::handle v, const char* key) {
    const char* expected = "a tuple of ints";
    if (!nb::isinstance<nb::tuple>(v) && !nb::isinstance<nb::list>(v)) cai_bad(v, key, expected);
    std::vector<int64_t> out;
    for (nb::handle e : v) {
        if (!nb::isinstance<nb::int_>(e) || nb::isinstance<nb::bool_>(e)) cai_bad(v, key, expected);
        out.push_back(nb::cast<int64_t>(e));
    }
    return out;
}

Array cai_import(nb::handle obj, nb::handle device, nb::handle copy, int dev_index) {
    const char* who = "ember.asarray";
    const std::optional<bool> want_copy =
        copy.is_none() ? std::nullopt : std::optional<bool>(nb::cast<bool>(copy));
    nb::object cai = obj.attr("__cuda_array_interface__");
    if (!nb::isinstance<nb::dict>(cai))
        throw TypeError(std::string(who) + ": __cuda_array_interface__ of " +
                        nb::type_name(obj.type()).c_str() + " is not a dict");
    nb::dict d = nb::borrow<nb::dict>(cai);
    const int version =
        d.contains("version") ? cai_entry<int>(d["version"], "version", "an int") : 0;
    const DType t = from_typestr(
        cai_entry<std::string>(cai_required(d, "typestr"), "typestr", "a string such as '<f4'"),
        who);
    Shape shape;
    for (int64_t n : cai_ints(cai_required(d, "shape"), "shape")) {
        shape.push_back(n);
        if (n < 0)
            throw ValueError(std::string(who) + ": negative dimension " + std::to_string(n) +
                             " in __cuda_array_interface__");
    }
    Strides strides;
    if (d.contains("strides") && !d["strides"].is_none()) {
        for (int64_t b : cai_ints(d["strides"], "strides")) {
            if (b % int64_t(itemsize(t)) != 0)
                throw ValueError(std::string(who) + ": stride of " + std::to_string(b) +
                                 " bytes is not a multiple of the item size");
            strides.push_back(b / int64_t(itemsize(t)));
        }
        if (strides.size() != shape.size())
            throw ValueError(std::string(who) +
                             ": __cuda_array_interface__ strides and shape "
                             "differ in length");
    } else {
        strides = contiguous_strides(shape);
    }
    if (d.contains("mask") && !d["mask"].is_none())
        throw ValueError(std::string(who) +
                         ": masked __cuda_array_interface__ arrays are not "
                         "supported");
    nb::object data_entry = cai_required(d, "data");
    if (!nb::isinstance<nb::tuple>(data_entry) || nb::len(data_entry) != 2)
        cai_bad(data_entry, "data", "a tuple (pointer: int, read_only: bool)");
    const std::pair<uintptr_t, bool> data{
        cai_entry<uintptr_t>(data_entry[0], "data", "a tuple (pointer: int, read_only: bool)"),
        cai_entry<bool>(data_entry[1], "data", "a tuple (pointer: int, read_only: bool)")};
    if (dev_index < 0) {
        dev_index = data.first ? cuda::pointer_device(data.first) : -1;
        if (dev_index < 0) dev_index = cuda::current_device();
    }
    // Producer's stream (v3): ember's current stream waits for the work queued on it so far.
    // No stream (None, or a version before 3) is read as the legacy default stream: such data can
    // still be in flight there (Numba's to_device returns before its copy lands), and ember's
    // streams are non-blocking, so nothing else orders them after it.
    long long s = 1;
    if (version >= 3 && d.contains("stream") && !d["stream"].is_none()) {
        s = cai_entry<long long>(d["stream"], "stream", "an int or None");
        if (s == 0) s = 1;  // disallowed by the protocol; read as the legacy default stream
    }
    cuda::current_wait_producer(dev_index, uintptr_t(s));
    auto* keep = new nb::object(nb::borrow(obj));
    std::shared_ptr<void> owner(keep, [](void* p) {
        if (!nb::is_alive()) return;
        nb::gil_scoped_acquire gil;
        delete static_cast<nb::object*>(p);
    });
    Array a = wrap_foreign(reinterpret_cast<char*>(data.first), shape, strides, t,
                           Device(DeviceType::cuda, dev_index), std::move(owner));
    return finish_import(std::move(a), device, want_copy, data.second, who);
}

}  // namespace

nb::object dlpack_capsule(const Array& a, nb::handle stream, nb::handle max_version,
                          nb::handle dl_device, nb::handle copy) {
    return dlpack_export(a, stream, max_version, dl_device, copy);
}

void bind_interop(nb::module_& m) {
    m.def("_from_dlpack", &from_dlpack, nb::arg("x"), nb::arg("device").none() = nb::none(),
          nb::arg("copy").none() = nb::none());
    m.def("_cai_export", &cai_export, nb::arg("a"));
    m.def("_cai_import", &cai_import, nb::arg("obj"), nb::arg("device").none() = nb::none(),
          nb::arg("copy").none() = nb::none(), nb::arg("device_index") = -1);
    nb::module_ c = nb::borrow<nb::module_>(m.attr("_cuda"));
    c.def(
        "pinned_empty",
        [](nb::handle shape, nb::handle dtype) {
            return cuda::pinned_empty(
                to_shape(shape, "ember.cuda.pinned_empty"),
                to_opt_dtype(dtype, "ember.cuda.pinned_empty").value_or(DType::float64));
        },
        nb::arg("shape"), nb::arg("dtype").none() = nb::none());
    c.def("is_pinned", &cuda::is_pinned, nb::arg("a"));
    c.def(
        "to_non_blocking",
        [](const Array& a, nb::handle device) {
            return cuda::to_non_blocking(a, *to_device(device, "ember.ndarray.to"));
        },
        nb::arg("a"), nb::arg("device"));
    c.def("current_stream_handle", &cuda::current_stream_handle, nb::arg("device"));
    c.def("record_stream", &cuda::record_stream, nb::arg("a"), nb::arg("stream"));
    c.def("retire_finished_work", &cuda::retire_finished_work);
}

}  // namespace ember::python
