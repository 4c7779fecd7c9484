// Shipped kernel packs (kernel_pack.hpp): writing at package build time, reading at run time.
#include "backend/cuda/kernel_pack.hpp"

#include "backend/cuda/runtime.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#ifdef EMBER_HAVE_ZLIB
#include <zlib.h>
#endif

namespace ember::gpu {

namespace {

constexpr char magic[8] = {'E', 'M', 'B', 'E', 'R', 'P', 'K', '1'};
constexpr size_t chunk_target = size_t(1) << 20;

void put32(std::string& s, uint32_t v) { s.append(reinterpret_cast<const char*>(&v), 4); }
void put64(std::string& s, uint64_t v) { s.append(reinterpret_cast<const char*>(&v), 8); }
template <class T>
bool get(FILE* f, T& v) {
    return std::fread(&v, sizeof(T), 1, f) == 1;
}

std::string deflate_chunk(const std::string& raw) {
#ifdef EMBER_HAVE_ZLIB
    uLongf n = compressBound(uLong(raw.size()));
    std::string out(n, '\0');
    if (compress2(reinterpret_cast<Bytef*>(out.data()), &n,
                  reinterpret_cast<const Bytef*>(raw.data()), uLong(raw.size()), 6) == Z_OK &&
        n < raw.size()) {
        out.resize(n);
        return out;
    }
#endif
    return raw;  // stored: uncompressed
}

}  // namespace

Hash128 ship_key(const Program& p, int arch) {
    Hasher h;
    h.add("ember-ship-v1").add(p.name).add(p.source);
    h.add(int64_t(p.headers.size()));
    for (const auto& [name, text] : p.headers)
        h.add(name).add(text);
    for (const std::string& o : code_options(arch))  // not the -I: no finder call here
        h.add(o);
    h.add(arch);
    return h.digest();
}

void write_kernel_pack(const std::string& path, int arch,
                       std::vector<std::pair<Hash128, std::string>> cubins) {
    std::sort(cubins.begin(), cubins.end(), [](const auto& a, const auto& b) {
        return a.first.hi != b.first.hi ? a.first.hi < b.first.hi : a.first.lo < b.first.lo;
    });
    cubins.erase(std::unique(cubins.begin(), cubins.end(),
                             [](const auto& a, const auto& b) { return a.first == b.first; }),
                 cubins.end());
    // Chunks in key order (the index order): cubins of one kernel family are spread, but every
    // chunk compresses alike and a first call inflates one chunk per kernel at most.
    std::string index, table, data;
    std::vector<std::string> chunks(1);
    for (const auto& [key, cubin] : cubins) {
        if (!chunks.back().empty() && chunks.back().size() + cubin.size() > chunk_target)
            chunks.emplace_back();
        put64(index, key.lo);
        put64(index, key.hi);
        put32(index, uint32_t(chunks.size() - 1));
        put32(index, uint32_t(chunks.back().size()));
        put32(index, uint32_t(cubin.size()));
        chunks.back() += cubin;
    }
    const uint64_t header = sizeof(magic) + 16;
    uint64_t offset = header + index.size() + chunks.size() * 16;
    for (const std::string& raw : chunks) {
        std::string stored = deflate_chunk(raw);
        put64(table, offset);
        put32(table, uint32_t(stored.size()));
        put32(table, uint32_t(raw.size()));
        offset += stored.size();
        data += stored;
    }
    std::string head(magic, sizeof(magic));
    put32(head, uint32_t(arch));
    put32(head, uint32_t(cubins.size()));
    put32(head, uint32_t(chunks.size()));
    put32(head, 0);
    const std::string tmp = path + ".tmp";
    FILE* f = std::fopen(tmp.c_str(), "wb");
    if (!f) throw Error("ember: cannot write the kernel pack " + path);
    bool ok = std::fwrite(head.data(), 1, head.size(), f) == head.size();
    ok = ok && std::fwrite(index.data(), 1, index.size(), f) == index.size();
    ok = ok && std::fwrite(table.data(), 1, table.size(), f) == table.size();
    ok = ok && std::fwrite(data.data(), 1, data.size(), f) == data.size();
    ok = (std::fclose(f) == 0) && ok;
    if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0) {
        std::remove(tmp.c_str());
        throw Error("ember: cannot write the kernel pack " + path);
    }
}

std::unique_ptr<KernelPack> KernelPack::open(const std::string& path, std::string* error) {
    auto fail = [&](const std::string& why) -> std::unique_ptr<KernelPack> {
        if (error) *error = path + ": " + why;
        return nullptr;
    };
    FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) return fail("cannot open");
    char m[8];
    uint32_t arch = 0, n = 0, nchunks = 0, zero = 0;
    bool ok = std::fread(m, 1, 8, f) == 8 && std::memcmp(m, magic, 8) == 0 && get(f, arch) &&
              get(f, n) && get(f, nchunks) && get(f, zero);
    ok = ok && n < (1u << 24) && nchunks < (1u << 20);  // sane sizes before allocating
    auto pack = std::unique_ptr<KernelPack>(new KernelPack());
    pack->index_.resize(n);
    for (uint32_t i = 0; ok && i < n; ++i) {
        Entry& e = pack->index_[i];
        ok = get(f, e.lo) && get(f, e.hi) && get(f, e.chunk) && get(f, e.offset) && get(f, e.size);
        ok = ok && e.chunk < nchunks;
    }
    pack->chunks_.resize(nchunks);
    for (uint32_t i = 0; ok && i < nchunks; ++i) {
        Chunk& c = pack->chunks_[i];
        ok = get(f, c.offset) && get(f, c.stored) && get(f, c.raw);
    }
    std::fclose(f);
    if (!ok) return fail("not a kernel pack, or truncated");
    for (const Entry& e : pack->index_)
        if (uint64_t(e.offset) + e.size > pack->chunks_[e.chunk].raw)
            return fail("an entry lies outside its chunk");
    pack->path_ = path;
    pack->arch_ = int(arch);
    pack->loaded_.resize(nchunks);
    pack->mu_ = std::make_unique<std::mutex>();
    return pack;
}

std::optional<std::string> KernelPack::find(const Hash128& key) const {
    auto it = std::lower_bound(
        index_.begin(), index_.end(), key,
        [](const Entry& e, const Hash128& k) { return e.hi != k.hi ? e.hi < k.hi : e.lo < k.lo; });
    if (it == index_.end() || it->hi != key.hi || it->lo != key.lo) return std::nullopt;
    std::shared_ptr<const std::string> chunk;
    {
        std::lock_guard lk(*mu_);
        chunk = loaded_[it->chunk];
    }
    if (!chunk) {
        const Chunk& c = chunks_[it->chunk];
        std::string stored(c.stored, '\0');
        FILE* f = std::fopen(path_.c_str(), "rb");
        if (!f) return std::nullopt;
        const bool ok = std::fseek(f, long(c.offset), SEEK_SET) == 0 &&
                        std::fread(stored.data(), 1, stored.size(), f) == stored.size();
        std::fclose(f);
        if (!ok) return std::nullopt;
        std::string raw;
        if (c.stored == c.raw) {
            raw = std::move(stored);
        } else {
#ifdef EMBER_HAVE_ZLIB
            raw.assign(c.raw, '\0');
            uLongf n = c.raw;
            if (uncompress(reinterpret_cast<Bytef*>(raw.data()), &n,
                           reinterpret_cast<const Bytef*>(stored.data()), c.stored) != Z_OK ||
                n != c.raw)
                return std::nullopt;
#else
            return std::nullopt;  // a compressed pack and an ember built without zlib
#endif
        }
        chunk = std::make_shared<const std::string>(std::move(raw));
        std::lock_guard lk(*mu_);
        if (!loaded_[it->chunk]) loaded_[it->chunk] = chunk;
        chunk = loaded_[it->chunk];
    }
    return chunk->substr(it->offset, it->size);
}

namespace {
std::mutex packs_mu;
std::string& pack_dir() {
    static std::string d;
    return d;
}
std::map<int, std::unique_ptr<KernelPack>>& packs() {
    static auto* m = new std::map<int, std::unique_ptr<KernelPack>>();  // leaked: used at exit
    return *m;
}
}  // namespace

void set_kernel_pack_dir(const std::string& dir) {
    std::lock_guard lk(packs_mu);
    pack_dir() = dir;
    packs().clear();
}

const KernelPack* shipped_pack(int arch) {
    static const bool off = [] {
        const char* e = std::getenv("EMBER_SHIPPED_KERNELS");
        return e && std::strcmp(e, "0") == 0;
    }();
    if (off) return nullptr;
    std::lock_guard lk(packs_mu);
    auto it = packs().find(arch);
    if (it == packs().end()) {
        std::unique_ptr<KernelPack> p;
        if (!pack_dir().empty())
            p = KernelPack::open(pack_dir() + "/sm_" + std::to_string(arch) + ".pack");
        it = packs().emplace(arch, std::move(p)).first;
    }
    return it->second.get();
}

CUfunction load_shipped(DeviceState& d, const KernelKey& key, const KernelSource& src) {
    const KernelPack* pack = shipped_pack(d.arch);
    if (!pack) return nullptr;
    std::optional<std::string> cubin = pack->find(ship_key(src.program, d.arch));
    if (!cubin) return nullptr;
    const DriverApi& a = *driver();
    bind(d);
    CUmodule mod = nullptr;
    if (a.cuModuleLoadData(&mod, cubin->data()) != CUDA_SUCCESS) return nullptr;
    CUfunction f = nullptr;
    check(a.cuModuleGetFunction(&f, mod, src.name.c_str()), "cuModuleGetFunction");
    cache_counters().shipped_hits.fetch_add(1);
    std::lock_guard lk(d.kernel_mu);
    d.modules.push_back(mod);
    return d.kernels.emplace(key, f).first->second;
}

bool is_shipped(const DeviceState& d, const Program& p) {
    const KernelPack* pack = shipped_pack(d.arch);
    return pack && pack->find(ship_key(p, d.arch)).has_value();
}

}  // namespace ember::gpu
