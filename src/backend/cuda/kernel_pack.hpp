// Shipped kernels: the cubins of the common kernels (precompile.hpp's common_kernels()), built
// with the package for a list of architectures and packed one file per architecture
// (ember/_shipped/sm_<arch>.pack), so that the first call of a built-in op loads machine code
// instead of compiling, with no NVRTC needed. No CUDA needed to write or read a pack.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "backend/cuda/disk_cache.hpp"

namespace ember::gpu {

// The key of a program in a pack: kernel_cache_key without NVRTC's version (the cubin was built
// by the package's NVRTC; loading it needs only the driver) and without -I options (where CCCL
// sat on the build machine does not change the code).
Hash128 ship_key(const Program& p, int arch);

// File format, little-endian: "EMBERPK1", u32 arch, u32 kernels, u32 chunks, u32 0; then per
// kernel (sorted by key) u64 lo, u64 hi, u32 chunk, u32 offset, u32 size; then per chunk u64 file
// offset, u32 stored size, u32 raw size; then the chunks: cubins concatenated, each chunk
// compressed with zlib when ember was built with it (stored = raw size: uncompressed). Chunks of
// about 1 MiB keep a first load to one small inflate while the cubins' redundancy still packs.
void write_kernel_pack(const std::string& path, int arch,
                       std::vector<std::pair<Hash128, std::string>> cubins);

class KernelPack {
public:
    // Reads the index of `path`; nullptr when absent or malformed (then `error` says why).
    static std::unique_ptr<KernelPack> open(const std::string& path, std::string* error = nullptr);
    int arch() const { return arch_; }
    size_t size() const { return index_.size(); }
    // The cubin of `key`, or nullopt. Thread-safe; a chunk is inflated once and kept.
    std::optional<std::string> find(const Hash128& key) const;

private:
    struct Entry {
        uint64_t lo, hi;
        uint32_t chunk, offset, size;
    };
    struct Chunk {
        uint64_t offset;
        uint32_t stored, raw;
    };
    std::string path_;
    int arch_ = 0;
    std::vector<Entry> index_;
    std::vector<Chunk> chunks_;
    mutable std::vector<std::shared_ptr<const std::string>> loaded_;
    mutable std::unique_ptr<std::mutex> mu_;  // (a pointer: the pack stays movable)
};

// The directory of the shipped packs (set by the Python module to ember/_shipped; "" when none)
// and the pack of `arch` from it (nullptr when there is none). EMBER_SHIPPED_KERNELS=0 ignores
// them.
void set_kernel_pack_dir(const std::string& dir);
const KernelPack* shipped_pack(int arch);

}  // namespace ember::gpu
