// Storage: a reference-counted block of device memory that arrays view.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "ember/device.hpp"

namespace ember {

class Storage {
public:
    // Allocates `nbytes` on `device` through its backend (MemoryError when that fails).
    static std::shared_ptr<Storage> allocate(size_t nbytes, Device device);
    // Wraps memory owned by someone else (a NumPy array, a DLPack producer); `owner` keeps it
    // alive and is released with the storage.
    static std::shared_ptr<Storage> wrap(void* data, size_t nbytes, Device device,
                                         std::shared_ptr<void> owner);

    Storage(const Storage&) = delete;
    Storage& operator=(const Storage&) = delete;
    ~Storage();

    void* data() const { return data_; }
    size_t nbytes() const { return nbytes_; }
    Device device() const { return device_; }
    bool owned() const { return !owner_; }
    // Version counter: every in-place write through ember bumps it, so autograd can tell when
    // an array it saved for backward was modified.
    uint64_t version() const { return version_.load(std::memory_order_relaxed); }
    void bump_version() { version_.fetch_add(1, std::memory_order_relaxed); }
    // How many recorded in-place ops gave an array on this storage a new history (views made
    // before one have a stale history).
    uint64_t rebases() const { return rebases_.load(std::memory_order_relaxed); }
    void bump_rebases() { rebases_.fetch_add(1, std::memory_order_relaxed); }

    Storage(void* data, size_t nbytes, Device device, std::shared_ptr<void> owner)
        : data_(data), nbytes_(nbytes), device_(device), owner_(std::move(owner)) {}

private:
    void* data_;
    size_t nbytes_;
    Device device_;
    std::shared_ptr<void> owner_;  // null when ember allocated the memory
    std::atomic<uint64_t> version_{0};
    std::atomic<uint64_t> rebases_{0};
};

}  // namespace ember
