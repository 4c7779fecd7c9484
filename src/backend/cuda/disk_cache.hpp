// The on-disk kernel cache: cubins keyed by a 128-bit hash of everything that determines them,
// written atomically (safe with concurrent writers) and verified on read. No CUDA needed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "backend/cuda/nvrtc.hpp"

namespace ember::gpu {

struct Hash128 {
    uint64_t lo = 0, hi = 0;
    std::string hex() const;  // 32 lowercase hex digits
    friend bool operator==(const Hash128&, const Hash128&) = default;
};

// Incremental 128-bit hash (two independent 64-bit lanes); each part is length-prefixed, so
// ("ab", "c") and ("a", "bc") differ.
class Hasher {
public:
    Hasher& add(std::string_view part);
    Hasher& add(int64_t v) { return add(std::to_string(v)); }
    Hash128 digest() const { return h_; }

private:
    Hash128 h_{0x9e3779b97f4a7c15ull, 0xc2b2ae3d27d4eb4full};
};

// The cache key of a program: its source and headers, the NVRTC options, NVRTC's version and
// the target architecture. The emitted code is never part of the key.
Hash128 kernel_cache_key(const Program& p, const std::vector<std::string>& options, int nvrtc_major,
                         int nvrtc_minor, int arch);

class DiskCache {
public:
    // `dir` is created on first store; an empty dir disables the cache.
    explicit DiskCache(std::string dir) : dir_(std::move(dir)) {}
    bool enabled() const { return !dir_.empty(); }
    const std::string& dir() const { return dir_; }
    std::string path(const Hash128& key) const;

    // The stored cubin, or nullopt when absent. A corrupt or truncated entry (bad magic, size or
    // checksum, or a different key) is removed, counted in *rejected and reported as absent.
    std::optional<std::string> load(const Hash128& key, bool* rejected = nullptr) const;
    // Writes to a unique temporary file and renames it over the entry, so readers see either no
    // entry or a whole one. Failures (read-only disk, full disk) are ignored: the cache is an
    // optimization.
    void store(const Hash128& key, std::string_view cubin) const;

private:
    std::string dir_;
};

// EMBER_CACHE_DIR, else $XDG_CACHE_HOME/ember/kernels, else ~/.cache/ember/kernels; "" when
// EMBER_DISK_CACHE=0 or no home directory is known.
std::string default_kernel_cache_dir();

}  // namespace ember::gpu
