// Device parsing and the default device.
#include <cctype>
#include <cstdlib>
#include <optional>
#include <string>

#include "backend/backend.hpp"
#include "ember/device.hpp"
#include "ember/error.hpp"

namespace ember {

namespace {

bool iequal(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (std::tolower(static_cast<unsigned char>(a[i])) != b[i]) return false;
    return true;
}

// A device index: 1 to 4 decimal digits.
std::optional<int> parse_index(std::string_view d) {
    if (d.empty() || d.size() > 4) return std::nullopt;
    int idx = 0;
    for (char c : d) {
        if (c < '0' || c > '9') return std::nullopt;
        idx = idx * 10 + (c - '0');
    }
    return idx;
}

}  // namespace

Device Device::parse(std::string_view s) {
    auto bad = [&] {
        return ValueError(
            "ember.Device: expected 'cpu', 'cuda' or 'cuda:N' (or TensorFlow's '/GPU:N', "
            "'/CPU:0', '/device:GPU:N'), got '" +
            std::string(s) + "'");
    };
    if (s == "cpu") return {DeviceType::cpu, 0};
    if (s.substr(0, 4) == "cuda") {
        if (s.size() == 4) return {DeviceType::cuda, 0};
        if (s[4] != ':') throw bad();
        const auto idx = parse_index(s.substr(5));
        if (!idx) throw bad();
        return {DeviceType::cuda, *idx};
    }
    // TensorFlow's names: [/job:x/replica:0/task:0]/device:GPU:0, /physical_device:CPU:0,
    // /GPU:1, GPU:0, cpu:0 (case-insensitive): the last path component decides.
    std::string_view t = s.substr(s.rfind('/') == std::string_view::npos ? 0 : s.rfind('/') + 1);
    for (std::string_view prefix : {"device:", "physical_device:"})
        if (t.size() > prefix.size() && iequal(t.substr(0, prefix.size()), prefix)) {
            t.remove_prefix(prefix.size());
            break;
        }
    if (t.size() < 3) throw bad();
    const std::string_view kind = t.substr(0, 3), rest = t.substr(3);
    int idx = 0;
    // a bare "gpu"/"cpu" is no TensorFlow name (they need a slash or an index): PyTorch's error
    if (rest.empty() && s.find('/') == std::string_view::npos) throw bad();
    if (!rest.empty()) {
        if (rest[0] != ':') throw bad();
        const auto i = parse_index(rest.substr(1));
        if (!i) throw bad();
        idx = *i;
    }
    if (iequal(kind, "gpu")) return {DeviceType::cuda, idx};
    if (iequal(kind, "cpu")) {
        if (idx != 0)
            throw ValueError("ember.Device: ember has one CPU device ('cpu'), got '" +
                             std::string(s) + "'");
        return {DeviceType::cpu, 0};
    }
    throw bad();
}

std::string Device::str() const {
    return type == DeviceType::cpu ? "cpu" : "cuda:" + std::to_string(index);
}

namespace {

Device initial_default() {
    if (const char* env = std::getenv("EMBER_DEVICE")) {
        if (*env) {
            Device d = Device::parse(env);
            check_device(d, "EMBER_DEVICE");
            return d;
        }
    }
    if (backend::get(DeviceType::cuda)) return {DeviceType::cuda, 0};
    return cpu;
}

Device& process_default() {
    static Device d = initial_default();
    return d;
}

thread_local bool has_override = false;
thread_local Device override_device;

}  // namespace

Device default_device() { return has_override ? override_device : process_default(); }

void set_default_device(Device d) {
    check_device(d, "ember.set_default_device");
    override_device = d;
    has_override = true;
}

int device_count(DeviceType t) {
    if (t == DeviceType::cpu) return 1;
    return backend::cuda() ? backend::cuda_device_count() : 0;
}

std::string unavailable_reason(DeviceType t) {
    if (t == DeviceType::cpu) return "";
    return backend::cuda() ? "" : backend::cuda_unavailable_reason();
}

void check_device(Device d, const char* who) {
    if (d.type == DeviceType::cpu) {
        if (d.index != 0)
            throw ValueError(std::string(who) + ": there is only one CPU device, got " + d.str());
        return;
    }
    backend::of(d, who);
    if (d.index < 0 || d.index >= device_count(d.type))
        throw ValueError(std::string(who) + ": device '" + d.str() + "' does not exist (" +
                         std::to_string(device_count(d.type)) + " CUDA device" +
                         (device_count(d.type) == 1 ? "" : "s") + ")");
}

}  // namespace ember

namespace ember::backend {

Backend* get(DeviceType type) { return type == DeviceType::cpu ? &cpu() : cuda(); }

Backend& of(Device d, const char* who) {
    Backend* b = get(d.type);
    if (!b)
        throw ValueError(std::string(who) + ": device '" + d.str() +
                         "' is not available: " + cuda_unavailable_reason());
    return *b;
}

}  // namespace ember::backend
