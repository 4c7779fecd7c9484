// Devices ("cpu", "cuda", "cuda:1") and the process-wide default device.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace ember {

enum class DeviceType : uint8_t { cpu, cuda };

struct Device {
    DeviceType type = DeviceType::cpu;
    int index = 0;

    constexpr Device() = default;
    constexpr Device(DeviceType t, int i = 0) : type(t), index(i) {}
    // Parses "cpu", "cuda", "cuda:N"; ValueError naming the string otherwise.
    static Device parse(std::string_view s);
    std::string str() const;  // "cpu", "cuda:0"
    bool is_cpu() const { return type == DeviceType::cpu; }
    friend bool operator==(const Device&, const Device&) = default;
};

inline constexpr Device cpu{DeviceType::cpu, 0};

// The default device: EMBER_DEVICE if set, else cuda:0 when a usable GPU exists, else cpu.
// set_default_device() replaces it for the calling thread (the Python context manager uses it).
Device default_device();
void set_default_device(Device d);
// Number of usable devices of a type in this process (1 for the CPU, 0 without a GPU).
int device_count(DeviceType t);
// Why devices of `t` cannot be used ("" when they can).
std::string unavailable_reason(DeviceType t);
// Throws ValueError when `d` names a device this process cannot use.
void check_device(Device d, const char* who);

}  // namespace ember
