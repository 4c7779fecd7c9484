// On-disk cubin cache: entry format, verification and atomic replacement.
#include "backend/cuda/disk_cache.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace ember::gpu {
namespace {

// One 64-bit lane: FNV-1a over the bytes, then a final avalanche (splitmix64's mixer).
uint64_t fnv1a(uint64_t h, std::string_view s) {
    for (unsigned char c : s) {
        h ^= c;
        h *= 0x100000001b3ull;
    }
    return h;
}
uint64_t mix(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

constexpr char magic[8] = {'E', 'M', 'B', 'R', 'C', 'B', 'N', '1'};
struct Header {
    char magic[8];
    uint64_t key_lo, key_hi;
    uint64_t size;
    uint64_t checksum;  // of the cubin bytes
};

uint64_t checksum(std::string_view s) { return mix(fnv1a(0xcbf29ce484222325ull, s)); }

bool make_dirs(const std::string& dir) {
    std::string cur;
    size_t pos = 0;
    while (pos != std::string::npos) {
        pos = dir.find('/', pos + 1);
        cur = dir.substr(0, pos);
        if (cur.empty()) continue;
        if (mkdir(cur.c_str(), 0755) != 0 && errno != EEXIST) return false;
    }
    return true;
}

}  // namespace

std::string Hash128::hex() const {
    char buf[33];
    std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(hi),
                  static_cast<unsigned long long>(lo));
    return buf;
}

Hasher& Hasher::add(std::string_view part) {
    const std::string len = std::to_string(part.size()) + ":";
    h_.lo = mix(fnv1a(fnv1a(h_.lo, len), part));
    h_.hi = mix(fnv1a(fnv1a(h_.hi ^ 0x5bd1e9955bd1e995ull, len), part) + 0x632be59bd9b4e019ull);
    return *this;
}

Hash128 kernel_cache_key(const Program& p, const std::vector<std::string>& options, int nvrtc_major,
                         int nvrtc_minor, int arch) {
    Hasher h;
    h.add("ember-kernel-v1").add(p.name).add(p.source);
    h.add(int64_t(p.headers.size()));
    for (const auto& [name, text] : p.headers)
        h.add(name).add(text);
    h.add(int64_t(options.size()));
    for (const std::string& o : options)
        h.add(o);
    h.add(nvrtc_major).add(nvrtc_minor).add(arch);
    return h.digest();
}

std::string DiskCache::path(const Hash128& key) const { return dir_ + "/" + key.hex() + ".cubin"; }

std::optional<std::string> DiskCache::load(const Hash128& key, bool* rejected) const {
    if (!enabled()) return std::nullopt;
    const std::string file = path(key);
    FILE* f = std::fopen(file.c_str(), "rb");
    if (!f) return std::nullopt;
    Header h{};
    std::string data;
    bool ok = std::fread(&h, sizeof h, 1, f) == 1 && std::memcmp(h.magic, magic, 8) == 0 &&
              h.key_lo == key.lo && h.key_hi == key.hi && h.size > 0 && h.size < (1ull << 31);
    if (ok) {
        data.resize(size_t(h.size));
        ok = std::fread(data.data(), 1, data.size(), f) == data.size() && std::fgetc(f) == EOF &&
             checksum(data) == h.checksum;
    }
    std::fclose(f);
    if (ok) return data;
    if (rejected) *rejected = true;
    std::remove(file.c_str());  // a concurrent writer's rename may already have replaced it
    return std::nullopt;
}

void DiskCache::store(const Hash128& key, std::string_view cubin) const {
    if (!enabled() || !make_dirs(dir_)) return;
    static std::atomic<unsigned> counter{0};
    const std::string final_path = path(key);
    const std::string tmp = final_path + ".tmp." + std::to_string(getpid()) + "." +
                            std::to_string(counter.fetch_add(1));
    Header h{};
    std::memcpy(h.magic, magic, 8);
    h.key_lo = key.lo;
    h.key_hi = key.hi;
    h.size = cubin.size();
    h.checksum = checksum(cubin);
    FILE* f = std::fopen(tmp.c_str(), "wb");
    if (!f) return;
    bool ok = std::fwrite(&h, sizeof h, 1, f) == 1 &&
              std::fwrite(cubin.data(), 1, cubin.size(), f) == cubin.size();
    ok = (std::fclose(f) == 0) && ok;
    if (!ok || std::rename(tmp.c_str(), final_path.c_str()) != 0) std::remove(tmp.c_str());
}

std::string default_kernel_cache_dir() {
    if (const char* off = std::getenv("EMBER_DISK_CACHE"); off && std::strcmp(off, "0") == 0)
        return "";
    if (const char* d = std::getenv("EMBER_CACHE_DIR"); d && *d) return d;
    if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x)
        return std::string(x) + "/ember/kernels";
    if (const char* home = std::getenv("HOME"); home && *home)
        return std::string(home) + "/.cache/ember/kernels";
    return "";
}

}  // namespace ember::gpu
