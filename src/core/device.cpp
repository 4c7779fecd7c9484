// Device parsing and the default device.
#include <cstdlib>
#include <string>

#include "backend/backend.hpp"
#include "ember/device.hpp"
#include "ember/error.hpp"

namespace ember {

Device Device::parse(std::string_view s) {
    auto bad = [&] {
        return ValueError("ember.Device: expected 'cpu', 'cuda' or 'cuda:N', got '" +
                          std::string(s) + "'");
    };
    if (s == "cpu") return {DeviceType::cpu, 0};
    if (s.substr(0, 4) == "cuda") {
        if (s.size() == 4) return {DeviceType::cuda, 0};
        if (s[4] != ':' || s.size() == 5 || s.size() > 9) throw bad();
        int idx = 0;
        for (char c : s.substr(5)) {
            if (c < '0' || c > '9') throw bad();
            idx = idx * 10 + (c - '0');
        }
        return {DeviceType::cuda, idx};
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
