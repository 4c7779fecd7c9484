// The GPU sort family: an LSD radix sort of order-preserving key bits (the CPU backend's mapping,
// src/backend/cpu/sort.cpp), 8 bits per pass, onesweep style, and binary searches. One kernel
// counts every pass's digits first (key passes from the keys, row passes from the row count).
// Then each pass is one launch: a block takes the next tile (a counter hands them out in order),
// ranks its keys within their digit with warp ballots, publishes its digit counts, reads the
// counts of the tiles before it (decoupled look-back: it stops at the first tile that has
// published its inclusive prefix), reorders the tile in shared memory by digit and writes each
// digit's run with consecutive threads (coalesced). Rows are sorted together: the key passes
// first, then stable passes on the row number (carried as the global position). Short rows
// (n <= 8192, many rows or one small one) skip all that: one block sorts each row through every
// pass in a single launch.
#include "backend/cuda/sort.hpp"

#include <string>

#include "backend/cuda/codegen.hpp"

#include "ember/error.hpp"

namespace ember::gpu {
namespace {

// Keys per thread of a pass's tile: the scatter's shared buffer holds a tile of keys or of int64
// positions, TILE * max(sizeof(K), 8) = 32 KB.
int items_per_thread(DType t) { return itemsize(t) > 8 ? 8 : 16; }
int64_t tile_of(DType t) { return 256 * int64_t(items_per_thread(t)); }
constexpr int64_t short_row = 8192;    // rows up to this long: one block per row
constexpr int64_t short_count = 4096;  // or one row up to this long

struct KeyText {
    const char* storage;  // a plain type of the key's size, moved as bits
    std::string code;
};

KeyText key_text(DType t) {
    switch (itemsize(t)) {
        case 1:
            return {"unsigned char", std::string(name(t))};
        case 2:
            return {"unsigned short", std::string(name(t))};
        case 4:
            return {"unsigned int", std::string(name(t))};
        case 8:
            return {"unsigned long long", std::string(name(t))};
        default:
            return {"ember_u128", std::string(name(t))};
    }
}

// Device code mapping a key to order-preserving unsigned bits: key_byte(v, pass) (the digit of
// pass `pass`, least significant first), key_passes, and key_less(a, b).
std::string key_functions(DType t) {
    std::string s;
    // Branch-free: negative values flip every bit, others only the sign; then -0.0 joins +0.0
    // and every NaN goes last (selects, no divergence in the counting and scatter kernels).
    s += "template <class U>\n"
         "__device__ __forceinline__ U map_float_bits(U u, U inf_bits) {\n"
         "    const U sign = U(U(1) << (sizeof(U) * 8 - 1));\n"
         "    const U mag = U(u & U(~sign));\n"
         "    const U flip = U(U(U(0) - U(u >> (sizeof(U) * 8 - 1))) | sign);\n"
         "    const U m = mag == 0 ? sign : U(u ^ flip);\n"
         "    return mag > inf_bits ? U(~U(0)) : m;\n"
         "}\n";
    // mapped(v): the order-preserving bits of a real key, as wide as the key (narrower shifts
    // than 64-bit ones in every pass's digit).
    auto real_map = [&](const std::string& fn, const std::string& arg, DType r) {
        const bool b = r == DType::bool_;
        const char* u = b || itemsize(r) == 1 ? "unsigned char"
                        : itemsize(r) == 2    ? "unsigned short"
                        : itemsize(r) == 4    ? "unsigned int"
                                              : "unsigned long long";
        std::string body;
        switch (r) {
            case DType::bool_:
                body = "return " + arg + " != 0;";
                break;
            case DType::float16:
                body = "return map_float_bits<unsigned short>(" + arg + ", 0x7c00u);";
                break;
            case DType::bfloat16:
                body = "return map_float_bits<unsigned short>(" + arg + ", 0x7f80u);";
                break;
            case DType::float32:
                body = "return map_float_bits<unsigned int>(" + arg + ", 0x7f800000u);";
                break;
            case DType::float64:
                body = "return map_float_bits<unsigned long long>(" + arg +
                       ", 0x7ff0000000000000ull);";
                break;
            default:
                if (kind(r) == Kind::signed_int)
                    body = "return (" + std::string(u) + ")(" + arg + " ^ ((" + u + ")1 << " +
                           std::to_string(itemsize(r) * 8 - 1) + "));";
                else
                    body = "return " + arg + ";";
        }
        return "__device__ __forceinline__ " + std::string(u) + " " + fn + " {\n    " + body +
               "\n}\n";
    };
    if (!is_complex(t)) {
        const int bytes = t == DType::bool_ ? 1 : int(itemsize(t));
        const char* u = itemsize(t) == 1   ? "unsigned char"
                        : itemsize(t) == 2 ? "unsigned short"
                        : itemsize(t) == 4 ? "unsigned int"
                                           : "unsigned long long";
        s += real_map(std::string("mapped(") + u + " v)", "v", t);
        s += "constexpr int key_passes = " + std::to_string(bytes) + ";\n";
        s += "__device__ __forceinline__ unsigned key_byte(K v, int pass) {\n"
             "    return unsigned(mapped(v) >> (8 * pass)) & 255u;\n"
             "}\n"
             "__device__ __forceinline__ bool key_less(K a, K b) { return mapped(a) < mapped(b); "
             "}\n";
        return s;
    }
    // Complex: NumPy's NaN classes, then the real part, then the imaginary part; the LSD passes
    // take the imaginary bytes, the real bytes, then the class.
    const bool c64 = t == DType::complex64;
    const DType r = c64 ? DType::float32 : DType::float64;
    const int w = int(itemsize(r));
    if (c64) {
        s += "__device__ __forceinline__ unsigned re_bits(K v) { return unsigned(v); }\n"
             "__device__ __forceinline__ unsigned im_bits(K v) { return unsigned(v >> 32); }\n";
        s += real_map("mapped(unsigned v)", "v", r);
        s += "__device__ __forceinline__ bool is_nan_bits(unsigned u) {\n"
             "    return (u & 0x7fffffffu) > 0x7f800000u;\n}\n";
    } else {
        s += "__device__ __forceinline__ unsigned long long re_bits(K v) { return v.a; }\n"
             "__device__ __forceinline__ unsigned long long im_bits(K v) { return v.b; }\n";
        s += real_map("mapped(unsigned long long v)", "v", r);
        s += "__device__ __forceinline__ bool is_nan_bits(unsigned long long u) {\n"
             "    return (u & 0x7fffffffffffffffull) > 0x7ff0000000000000ull;\n}\n";
    }
    s += "__device__ __forceinline__ unsigned key_class(K v) {\n"
         "    return (is_nan_bits(re_bits(v)) ? 2u : 0u) + (is_nan_bits(im_bits(v)) ? 1u : 0u);\n"
         "}\n";
    s += "constexpr int key_passes = " + std::to_string(2 * w + 1) + ";\n";
    s += "__device__ __forceinline__ unsigned key_byte(K v, int pass) {\n"
         "    if (pass < " +
         std::to_string(w) +
         ") return unsigned(mapped(im_bits(v)) >> (8 * pass)) & 255u;\n"
         "    if (pass < " +
         std::to_string(2 * w) + ") return unsigned(mapped(re_bits(v)) >> (8 * (pass - " +
         std::to_string(w) +
         "))) & 255u;\n"
         "    return key_class(v);\n"
         "}\n";
    s += "__device__ __forceinline__ bool key_less(K a, K b) {\n"
         "    const unsigned ca = key_class(a), cb = key_class(b);\n"
         "    if (ca != cb) return ca < cb;\n"
         "    const unsigned long long ra = mapped(re_bits(a)), rb = mapped(re_bits(b));\n"
         "    if (ra != rb) return ra < rb;\n"
         "    return mapped(im_bits(a)) < mapped(im_bits(b));\n"
         "}\n";
    return s;
}

// The kernels, shared by every key type (K, key_byte, key_passes and key_less come first).
constexpr const char* sort_body = R"(
#define ITEMS @ITEMS@
#define TILE (256 * ITEMS)
// Look-back words: the pass's epoch (pass + 1; 0: not yet written in this sort), whether the value
// is the inclusive prefix of the tile (or only its own count), and the value.
#define EPOCH_SHIFT 58
#define INCL_BIT (1ull << 57)
#define VALUE_MASK (INCL_BIT - 1ull)
#define EXCH_BYTES (TILE * (sizeof(K) > 8 ? sizeof(K) : 8))

// The digit of a key in key pass `pass`: its byte, inverted for descending sorts (flip = 255;
// else 0). The digit of element g in a row pass (pass >= key_passes): a byte of its row, g / n.
__device__ __forceinline__ unsigned key_digit(K v, int pass, unsigned flip) {
    return key_byte(v, pass) ^ flip;
}
__device__ __forceinline__ unsigned row_digit(long long g, long long n, int pass) {
    return unsigned((unsigned long long)(g / n) >> (8 * (pass - key_passes))) & 255u;
}

// The lanes of the warp whose digit equals this lane's, from one ballot per bit of the digit: a
// cost independent of how many distinct digits the warp holds (__match_any_sync's grows with them;
// on the H200 the ballots made the 2^28-key sort 20% faster). BITS = 8 for digits 0..255, 9 where
// 256 marks a lane without a key (the last tile).
template <int BITS>
__device__ __forceinline__ unsigned peers_of(unsigned d) {
    unsigned m = 0xffffffffu;
#pragma unroll
    for (int b = 0; b < BITS; ++b) {
        // The lanes sharing bit b with this one, in four instructions (the compiler's own
        // rendering of `bit ? ballot : ~ballot` tests the bit twice).
        unsigned e;
        asm("{\n\t.reg .pred p;\n\t"
            "and.b32 %0, %1, %2;\n\t"
            "setp.ne.u32 p, %0, 0;\n\t"
            "vote.sync.ballot.b32 %0, p, 0xffffffff;\n\t"
            "@!p not.b32 %0, %0;\n\t"
            "}"
            : "=r"(e)
            : "r"(d), "r"(1u << b));
        m &= e;
    }
    return m;
}

__device__ __forceinline__ void st_relaxed(unsigned long long* p, unsigned long long v) {
    asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
__device__ __forceinline__ unsigned long long ld_relaxed(const unsigned long long* p) {
    unsigned long long v;
    asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}

// counts[p * 256 + d] += the number of keys whose digit in pass p is d, for every pass (counts
// starts zeroed). Key passes: from the keys, per block in shared memory, then one atomic per bin.
// Row passes (p >= key_passes), whose digit is byte p - key_passes of the row number: block 0
// counts the rows (n keys each) arithmetically.
// One tile's keys into the shared bins of every key pass. FULL: TILE keys, none checked.
template <bool FULL>
__device__ __forceinline__ void count_tile(unsigned* bins, const K* __restrict__ keys,
                                           unsigned valid_n, unsigned flip) {
    const unsigned t = threadIdx.x;
    // All of the thread's keys are read before any is counted: the loads overlap.
    K v[ITEMS];
#pragma unroll
    for (int r = 0; r < ITEMS; ++r)
        if (FULL || unsigned(r) * 256u + t < valid_n) v[r] = keys[unsigned(r) * 256u + t];
#pragma unroll
    for (int r = 0; r < ITEMS; ++r) {
        if (FULL || unsigned(r) * 256u + t < valid_n) {
#pragma unroll
            for (int p = 0; p < key_passes; ++p)
                atomicAdd(&bins[p * 256 + key_digit(v[r], p, flip)], 1u);
        }
    }
}

extern "C" __global__ void NAME_counts(const K* __restrict__ keys, long long count, long long n,
                                       int passes, int desc,
                                       unsigned long long* __restrict__ counts) {
    __shared__ unsigned bins[key_passes * 256];
    const unsigned t = threadIdx.x;
    for (unsigned i = t; i < unsigned(key_passes) * 256u; i += 256u)
        bins[i] = 0;
    __syncthreads();
    const unsigned flip = desc ? 255u : 0u;
    const long long step = (long long)gridDim.x * TILE;
    for (long long c = (long long)blockIdx.x * TILE; c < count; c += step) {
        if (count - c >= TILE)
            count_tile<true>(bins, keys + c, TILE, flip);
        else
            count_tile<false>(bins, keys + c, unsigned(count - c), flip);
    }
    __syncthreads();
    for (unsigned i = t; i < unsigned(key_passes) * 256u; i += 256u)
        if (bins[i]) atomicAdd(&counts[i], (unsigned long long)bins[i]);
    if (blockIdx.x == 0) {
        const unsigned long long rows = (unsigned long long)(count / n);
        for (int p = key_passes; p < passes; ++p) {
            // Rows r < rows whose byte b is t: `span` consecutive rows share each byte value,
            // which repeats every `period` rows (rows < 2^31: b <= 3).
            const int b = p - key_passes;
            const unsigned long long span = 1ull << (8 * b), period = span << 8;
            const unsigned long long rest = rows % period, lo = (unsigned long long)t * span;
            const unsigned long long part = rest > lo ? (rest - lo < span ? rest - lo : span) : 0;
            counts[p * 256 + t] = ((rows / period) * span + part) * (unsigned long long)n;
        }
    }
}

// Moves tile b's keys (and positions) to their places, stably. Warp w reads keys
// [w * 32 * ITEMS, (w + 1) * 32 * ITEMS) of the tile, 32 at a time, and ranks each within its
// digit among the warp's earlier keys (peers from peers_of plus the warp's running digit
// counts); keys, digits and ranks stay in registers. Then the tile's digit counts, their
// exclusive scan (each digit's run in the tile-sorted order) and each digit's global start (the
// digit's start over all tiles, from the counts, plus its keys in earlier tiles, from the
// look-back) give every key its slot in the tile-sorted order; the keys go to shared memory in
// that order and thread j writes slot j to the digit's global start + (j - the run's start), so
// a digit's run is written by consecutive threads to consecutive addresses (coalesced). The
// positions follow through the same shared buffer. Four blocks per multiprocessor (at most 64
// registers): on the H200 the extra warps hiding shared-memory latency gave 15% over three.
struct ScatterShared {
    // exch: the tile-sorted keys, then the positions; first the per-warp digit counts.
    __align__(16) unsigned char exch[EXCH_BYTES];
    unsigned char sdig[TILE];
    unsigned long long delta[256];
    unsigned scan_l[256];
    unsigned long long wsum[8];  // per-warp sums of the digit scans
};

// The exclusive prefix sum of x over the block's 256 threads (thread t: digits < t), from a scan
// of each warp in shuffles and of the 8 warp sums; one barrier.
template <class T>
__device__ __forceinline__ T block_exclusive_scan(T x, unsigned long long* wsum) {
    const unsigned lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
    T s = x;
#pragma unroll
    for (int off = 1; off < 32; off <<= 1) {
        const T y = __shfl_up_sync(0xffffffffu, s, off);
        if (lane >= unsigned(off)) s += y;
    }
    if (lane == 31u) wsum[warp] = (unsigned long long)s;
    __syncthreads();
    T before = 0;
#pragma unroll
    for (int w = 0; w < 7; ++w)
        if (unsigned(w) < warp) before += T(wsum[w]);
    return before + s - x;
}

// FULL: the tile holds TILE keys (every tile but the last), so no key is checked and the digits
// need 8 ballots, not 9. ROWS: a row pass (digits from the row numbers), else a key pass.
template <bool FULL, bool ROWS>
__device__ __forceinline__ void scatter_tile(ScatterShared& sh, const K* __restrict__ kin,
                                             K* __restrict__ kout,
                                             const long long* __restrict__ iin,
                                             long long* __restrict__ iout, long long first,
                                             unsigned valid_n, long long n, int pass, int desc,
                                             unsigned tile, unsigned long long* status,
                                             unsigned long long tot) {
    unsigned (*wcount)[256] = reinterpret_cast<unsigned (*)[256]>(sh.exch);
    const unsigned t = threadIdx.x, lane = t & 31u, warp = t >> 5;
    // v[r]: the key of round r; dr[r]: its digit << 16 | its rank (256 << 16: no key).
    K v[ITEMS];
    unsigned dr[ITEMS];
    const unsigned wfirst = warp * (32u * ITEMS);
    // The loads first, all in flight together; then the digits (no barrier in between).
#pragma unroll
    for (int r = 0; r < ITEMS; ++r) {
        const unsigned j = wfirst + unsigned(r) * 32u + lane;
        if (FULL || j < valid_n) v[r] = kin[first + j];
    }
#pragma unroll
    for (int r = 0; r < ITEMS; ++r) {
        const unsigned j = wfirst + unsigned(r) * 32u + lane;
        const bool valid = FULL || j < valid_n;
        unsigned d;
        if constexpr (ROWS) {
            const long long i = first + j;
            d = row_digit(iin && valid ? iin[i] : i, n, pass);
        } else {
            d = key_digit(v[r], pass, desc ? 255u : 0u);
        }
        dr[r] = valid ? d : 256u;
    }
#pragma unroll
    for (int w = 0; w < 8; ++w)
        wcount[w][t] = 0;
    __syncthreads();
#pragma unroll
    for (int r = 0; r < ITEMS; ++r) {
        const unsigned j = wfirst + unsigned(r) * 32u + lane;
        const bool valid = FULL || j < valid_n;
        const unsigned d = dr[r];
        const unsigned peers = peers_of<FULL ? 8 : 9>(d);
        const unsigned below = __popc(peers & ((1u << lane) - 1u));
        const unsigned prior = valid ? wcount[warp][d] : 0u;
        dr[r] = d << 16 | (prior + below);
        __syncwarp();
        if (valid && below == 0) wcount[warp][d] = prior + __popc(peers);
        __syncwarp();
    }
    __syncthreads();
    // Thread t: digit t's count per warp -> the warp's offset within the digit's run.
    unsigned run = 0;
#pragma unroll
    for (int w = 0; w < 8; ++w) {
        const unsigned c = wcount[w][t];
        wcount[w][t] = run;
        run += c;
    }
    // Digit t's count in this tile, published for the tiles after it. Tile 0 publishes its
    // inclusive prefix, which starts at the digit's start over the whole pass (the digits below
    // t in all tiles: the exclusive scan of the pass's counts), so every tile's look-back sum is
    // the global position of its run of digit t.
    const unsigned long long tag = (unsigned long long)(pass + 1) << EPOCH_SHIFT;
    unsigned long long* mine = status + (unsigned long long)tile * 256u + t;
    unsigned long long before = 0;
    if (tile == 0) {
        before = block_exclusive_scan(tot, sh.wsum);
        st_relaxed(mine, tag | INCL_BIT | (before + run));
        __syncthreads();  // wsum is used again below
    } else {
        st_relaxed(mine, tag | run);
    }
    const unsigned lstart = block_exclusive_scan(run, sh.wsum);
    // Look-back: digit t's keys in the tiles before this one (and before them, in the digits
    // below t), walking back until a tile whose inclusive prefix is out; then this tile's own
    // inclusive prefix goes out.
    if (tile > 0) {
        const unsigned long long epoch = (unsigned long long)(pass + 1);
        for (long long j = (long long)tile - 1;;) {
            const unsigned long long w = ld_relaxed(status + (unsigned long long)j * 256u + t);
            if ((w >> EPOCH_SHIFT) != epoch) continue;  // not published yet
            before += w & VALUE_MASK;
            if (w & INCL_BIT) break;
            --j;
        }
        st_relaxed(mine, tag | INCL_BIT | (before + run));
    }
    sh.delta[t] = before - lstart;  // modulo 2^64: delta[d] + slot is the global position
    sh.scan_l[t] = lstart;
    __syncthreads();
    // dr[r] <- the key's slot in the tile-sorted order (or TILE: no key).
#pragma unroll
    for (int r = 0; r < ITEMS; ++r) {
        const unsigned d = dr[r] >> 16;
        if (FULL || d < 256u) {
            dr[r] = sh.scan_l[d] + wcount[warp][d] + (dr[r] & 0xffffu);
            sh.sdig[dr[r]] = (unsigned char)d;
        } else {
            dr[r] = unsigned(TILE);
        }
    }
    __syncthreads();  // wcount (in exch) is read: exch takes the keys
    K* skey = reinterpret_cast<K*>(sh.exch);
#pragma unroll
    for (int r = 0; r < ITEMS; ++r)
        if (FULL || dr[r] < unsigned(TILE)) skey[dr[r]] = v[r];
    __syncthreads();
#pragma unroll
    for (int r = 0; r < ITEMS; ++r) {
        const unsigned j = unsigned(r) * 256u + t;
        if (FULL || j < valid_n) kout[sh.delta[sh.sdig[j]] + j] = skey[j];
    }
    if (!iout) return;
    __syncthreads();
    long long* spos = reinterpret_cast<long long*>(sh.exch);
#pragma unroll
    for (int r = 0; r < ITEMS; ++r)
        if (FULL || dr[r] < unsigned(TILE)) {
            const long long i = first + wfirst + unsigned(r) * 32u + lane;
            spos[dr[r]] = iin ? iin[i] : i;  // not kept in registers: read here (again, row passes)
        }
    __syncthreads();
#pragma unroll
    for (int r = 0; r < ITEMS; ++r) {
        const unsigned j = unsigned(r) * 256u + t;
        if (FULL || j < valid_n) iout[sh.delta[sh.sdig[j]] + j] = spos[j];
    }
}

// A pass's tile: the key passes (pass < key_passes) and the row passes are separate kernels, so
// that each is register-allocated for its own path (the row passes' 64-bit positions and division
// made the key passes spill when they shared one).
template <bool ROWS>
__device__ __forceinline__ void scatter_pass(const K* __restrict__ kin, K* __restrict__ kout,
                                             const long long* __restrict__ iin,
                                             long long* __restrict__ iout, long long count,
                                             long long n, int pass, int desc,
                                             const unsigned long long* __restrict__ counts,
                                             unsigned long long* status, unsigned* next_tile) {
    __shared__ ScatterShared sh;
    __shared__ unsigned tile_s;
    const unsigned t = threadIdx.x;
    // Tiles in the order blocks start, so every tile looked back at has a running block.
    if (t == 0) tile_s = atomicAdd(next_tile, 1u);
    __syncthreads();
    const unsigned tile = tile_s;
    const unsigned long long tot = tile == 0 ? counts[t] : 0ull;  // digit t's keys in the pass
    const long long first = (long long)tile * TILE;
    const long long left = count - first;
    if (left >= TILE)
        scatter_tile<true, ROWS>(sh, kin, kout, iin, iout, first, TILE, n, pass, desc, tile,
                                 status, tot);
    else
        scatter_tile<false, ROWS>(sh, kin, kout, iin, iout, first, unsigned(left), n, pass, desc,
                                  tile, status, tot);
}

extern "C" __global__ void __launch_bounds__(256, 4)
    NAME_scatter(const K* __restrict__ kin, K* __restrict__ kout,
                 const long long* __restrict__ iin, long long* __restrict__ iout,
                 long long count, long long n, int pass, int desc,
                 const unsigned long long* __restrict__ counts, unsigned long long* status,
                 unsigned* next_tile) {
    scatter_pass<false>(kin, kout, iin, iout, count, n, pass, desc, counts, status, next_tile);
}

extern "C" __global__ void __launch_bounds__(256, 4)
    NAME_scatter_rows(const K* __restrict__ kin, K* __restrict__ kout,
                      const long long* __restrict__ iin, long long* __restrict__ iout,
                      long long count, long long n, int pass, int desc,
                      const unsigned long long* __restrict__ counts, unsigned long long* status,
                      unsigned* next_tile) {
    scatter_pass<true>(kin, kout, iin, iout, count, n, pass, desc, counts, status, next_tile);
}

// Short rows: block b sorts row b (n keys at b * n) by itself, every key pass in this one launch
// (the same stable ranking as NAME_scatter, over the whole row). Pass p writes buffer a when
// key_passes - 1 - p is even, so the last pass writes a (and ia: positions within the row, when
// asked for).
extern "C" __global__ void NAME_rows(const K* kin, K* ka, K* kb, long long* ia, long long* ib,
                                     long long n, int desc) {
    __shared__ unsigned bins[256];
    __shared__ unsigned long long base[256];
    __shared__ unsigned warp_count[8][256];
    const unsigned t = threadIdx.x, lane = t & 31u, warp = t >> 5;
    const long long row0 = (long long)blockIdx.x * n;
    const K* src = kin + row0;
    const long long* isrc = 0;
    for (int p = 0; p < key_passes; ++p) {
        const bool to_a = (key_passes - 1 - p) % 2 == 0;
        K* dst = (to_a ? ka : kb) + row0;
        long long* idst = ia ? (to_a ? ia : ib) + row0 : 0;
        bins[t] = 0;
        for (int w = 0; w < 8; ++w)
            warp_count[w][t] = 0;
        __syncthreads();
        for (long long i = t; i < n; i += 256)
            atomicAdd(&bins[key_digit(src[i], p, desc ? 255u : 0u)], 1u);
        __syncthreads();
        base[t] = bins[t];
        __syncthreads();
        for (int off = 1; off < 256; off <<= 1) {
            const unsigned long long add = t >= off ? base[t - off] : 0;
            __syncthreads();
            base[t] += add;
            __syncthreads();
        }
        base[t] -= bins[t];
        __syncthreads();
        for (long long r0 = 0; r0 < n; r0 += 256) {
            const long long i = r0 + t;
            const bool valid = i < n;
            K v;
            long long g = i;
            unsigned d = 256;
            if (valid) {
                v = src[i];
                if (isrc) g = isrc[i];
                d = key_digit(v, p, desc ? 255u : 0u);
            }
            const unsigned peers = peers_of<9>(d);
            const unsigned rank = __popc(peers & ((1u << lane) - 1u));
            if (valid && rank == 0) warp_count[warp][d] = __popc(peers);
            __syncthreads();
            unsigned long long run = 0;
            for (int w = 0; w < 8; ++w) {
                const unsigned c = warp_count[w][t];
                warp_count[w][t] = unsigned(run);
                run += c;
            }
            __syncthreads();
            if (valid) {
                const unsigned long long pos = base[d] + warp_count[warp][d] + rank;
                dst[pos] = v;
                if (idst) idst[pos] = g;
            }
            __syncthreads();
            base[t] += run;
            for (int w = 0; w < 8; ++w)
                warp_count[w][t] = 0;
            __syncthreads();
        }
        src = dst;
        isrc = idst;
    }
}

// Global positions -> positions within the row.
extern "C" __global__ void NAME_rowpos(long long* __restrict__ idx, long long count, long long n) {
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += step)
        idx[i] %= n;
}

// out[j] <- the first position in the n sorted keys whose key is >= values[j] (right: >).
extern "C" __global__ void NAME_search(const K* __restrict__ keys, long long n,
                                       const K* __restrict__ values, long long m, int right,
                                       long long* __restrict__ out) {
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x; j < m; j += step) {
        const K v = values[j];
        long long lo = 0, hi = n;
        while (lo < hi) {
            const long long mid = lo + (hi - lo) / 2;
            const K k = keys[mid];
            if (right ? !key_less(v, k) : key_less(k, v))
                lo = mid + 1;
            else
                hi = mid;
        }
        out[j] = lo;
    }
}
)";

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
    for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size()))
        s.replace(p, from.size(), to);
    return s;
}

int key_passes(DType t) {
    if (t == DType::bool_) return 1;
    if (is_complex(t)) return int(itemsize(t)) + 1;
    return int(itemsize(t));
}

constexpr uint64_t key_tag = 0x736f7274ull;  // "sort": the high word of every key of this family

CUfunction sort_kernel(DeviceState& d, DType t, int which, const char* kernel_name) {
    // Family 15 in the low 4 bits (unused by cuda_backend.cpp's families).
    const KernelKey key{0xfull | (uint64_t(t) << 4) | (uint64_t(which) << 12), key_tag};
    return kernel(d, key, [&] {
        return KernelSource{sort_program(t), sort_kernel_name(t, kernel_name)};
    });
}

// Scratch memory from the device pool, returned on the stream when the sort is done.
struct Scratch {
    DeviceState& d;
    void* p = nullptr;
    Scratch(DeviceState& dev, size_t bytes) : d(dev), p(bytes ? allocate(dev, bytes) : nullptr) {}
    ~Scratch() {
        if (p) deallocate(d, p);
    }
    Scratch(const Scratch&) = delete;
    Scratch& operator=(const Scratch&) = delete;
};

}  // namespace

std::string sort_kernel_name(DType t, const char* kernel) {
    return std::string("ember_sort_") + key_text(t).code + "_" + kernel;
}

Program sort_program(DType t) {
    const KeyText kt = key_text(t);
    const std::string prefix = std::string("ember_sort_") + kt.code;
    Program p;
    p.name = prefix + ".cu";
    p.source =
        "// Generated by ember (src/backend/cuda/sort.cpp): radix sort and binary search of " +
        std::string(name(t)) + " keys.\n";
    p.source += "struct __align__(16) ember_u128 { unsigned long long a, b; };\n";
    p.source += std::string("typedef ") + kt.storage + " K;\n";
    p.source += key_functions(t);
    std::string body = replace_all(sort_body, "NAME_", prefix + "_");
    p.source += replace_all(body, "@ITEMS@", std::to_string(items_per_thread(t)));
    return p;
}

void sort(DeviceState& d, const backend::SortCall& c) {
    const int64_t count = c.rows * c.n;
    if (count <= 0) return;
    const size_t isz = size_t(itemsize(c.dtype));
    const int kp = key_passes(c.dtype);
    // Short rows (many of them, or one that fits a tile): one block per row, one launch.
    if (c.n <= short_row && (c.rows >= 64 || count <= short_count) && c.rows < (int64_t(1) << 31)) {
        const size_t kbytes = size_t(count) * isz, ibytes = size_t(count) * sizeof(int64_t);
        Scratch kfinal(d, c.sorted ? 0 : kbytes), kother(d, kp > 1 ? kbytes : 0);
        Scratch iother(d, c.indices && kp > 1 ? ibytes : 0);
        CUfunction f = sort_kernel(d, c.dtype, 6, "rows");
        const void* kin = c.keys;
        void* ka = c.sorted ? c.sorted : kfinal.p;
        void* kb = kother.p;
        void* ia = c.indices;
        void* ib = iother.p;
        long long n = c.n;
        int desc = c.descending ? 1 : 0;
        void* args[] = {&kin, &ka, &kb, &ia, &ib, &n, &desc};
        launch(d, f, unsigned(c.rows), 1, args, "sort");
        return;
    }
    const int64_t tile = tile_of(c.dtype);
    const int64_t tiles = (count + tile - 1) / tile;
    if (tiles >= (int64_t(1) << 31))
        throw ValueError("ember.sort: too many elements for the GPU sort (" +
                         std::to_string(count) + ")");
    int row_passes = 0;
    for (int64_t r = c.rows - 1; r > 0; r >>= 8)
        ++row_passes;
    const int passes = kp + row_passes;
    const bool carry_idx = c.indices || row_passes > 0;

    CUfunction fc = sort_kernel(d, c.dtype, 0, "counts");
    CUfunction fx = sort_kernel(d, c.dtype, 2, "scatter");
    CUfunction fxr = row_passes > 0 ? sort_kernel(d, c.dtype, 7, "scatter_rows") : nullptr;

    // Pass p writes buffer A when passes - 1 - p is even, so the last pass writes the outputs.
    const size_t kbytes = size_t(count) * isz, ibytes = size_t(count) * sizeof(int64_t);
    Scratch kfinal(d, c.sorted ? 0 : kbytes), kother(d, passes > 1 ? kbytes : 0);
    Scratch ifinal(d, carry_idx && !c.indices ? ibytes : 0);
    Scratch iother(d, carry_idx && passes > 1 ? ibytes : 0);
    // One zeroed block: the look-back words (tiles x 256, shared by the passes through their
    // epochs), each pass's digit counts and each pass's tile counter.
    const size_t status_words = size_t(tiles) * 256, count_words = size_t(passes) * 256;
    const size_t meta_bytes = (status_words + count_words) * 8 + size_t(passes) * 4;
    Scratch meta(d, (meta_bytes + 7) / 8 * 8);
    check(api().cuMemsetD32Async(CUdeviceptr(reinterpret_cast<uintptr_t>(meta.p)), 0,
                                 (meta_bytes + 7) / 8 * 2, current_stream(d)),
          "cuMemsetD32Async");
    unsigned long long* status = static_cast<unsigned long long*>(meta.p);
    unsigned long long* counts = status + status_words;
    unsigned* next_tile = reinterpret_cast<unsigned*>(counts + count_words);
    void* ka = c.sorted ? c.sorted : kfinal.p;
    void* kb = kother.p;
    void* ia = carry_idx ? (c.indices ? static_cast<void*>(c.indices) : ifinal.p) : nullptr;
    void* ib = carry_idx ? iother.p : nullptr;

    const void* kin = c.keys;
    const void* iin = nullptr;
    long long cnt = count, n = c.n;
    int np = passes, desc = c.descending ? 1 : 0;
    {
        void* args[] = {&kin, &cnt, &n, &np, &desc, &counts};
        launch(d, fc, grid_for(d, tiles * 256), 1, args, "sort");
    }
    for (int p = 0; p < passes; ++p) {
        void* kout = (passes - 1 - p) % 2 == 0 ? ka : kb;
        void* iout = (passes - 1 - p) % 2 == 0 ? ia : ib;
        int pass = p;
        unsigned long long* pc = counts + size_t(p) * 256;
        unsigned* pt = next_tile + p;
        void* args[] = {&kin, &kout, &iin, &iout, &cnt, &n, &pass, &desc, &pc, &status, &pt};
        launch(d, p < kp ? fx : fxr, unsigned(tiles), 1, args, "sort");
        kin = kout;
        iin = iout;
    }
    if (c.indices && c.rows > 1) {
        CUfunction fr = sort_kernel(d, c.dtype, 3, "rowpos");
        void* ip = c.indices;
        void* args[] = {&ip, &cnt, &n};
        launch(d, fr, grid_for(d, count), 1, args, "sort");
    }
}

void searchsorted(DeviceState& d, const backend::SearchCall& c) {
    if (c.m <= 0) return;
    CUfunction f = sort_kernel(d, c.dtype, 4, "search");
    const void* keys = c.keys;
    const void* values = c.values;
    void* out = c.out;
    long long n = c.n, m = c.m;
    int right = c.right ? 1 : 0;
    void* args[] = {&keys, &n, &values, &m, &right, &out};
    launch(d, f, grid_for(d, c.m), 1, args, "searchsorted");
}

// ---- deterministic scatter-add ---------------------------------------------------------------

namespace {

const char* value_type(DType t) {
    switch (t) {
        case DType::bool_:
            return "bool";
        case DType::int8:
            return "signed char";
        case DType::int16:
            return "short";
        case DType::int32:
            return "int";
        case DType::int64:
            return "long long";
        case DType::uint8:
            return "unsigned char";
        case DType::uint16:
            return "unsigned short";
        case DType::uint32:
            return "unsigned int";
        case DType::uint64:
            return "unsigned long long";
        case DType::float16:
            return "ember::float16";
        case DType::bfloat16:
            return "ember::bfloat16";
        case DType::float32:
            return "float";
        case DType::float64:
            return "double";
        case DType::complex64:
            return "ember::dev::complex64";
        default:
            return "ember::dev::complex128";
    }
}

std::string scatter_add_kernel_name(DType t) {
    return std::string("ember_scatter_add_") + std::string(name(t));
}

}  // namespace

Program scatter_add_program(DType t) {
    const std::string nm = scatter_add_kernel_name(t);
    Program p;
    p.name = nm + ".cu";
    p.source = "// Generated by ember (src/backend/cuda/sort.cpp): scatter-add of " +
               std::string(name(t)) + " values over offsets sorted stably.\n";
    if (is_complex(t)) p.source += "#define EMBER_DEVICE_COMPLEX 1\n";
    p.source +=
        "#include \"ember/device_prelude.cuh\"\n"
        "#include \"ember/ops/scalar.hpp\"\n\n";
    p.source += std::string("typedef ") + value_type(t) + " T;\n";
    std::string add;
    if (t == DType::bool_)
        add = "acc = acc || v;";
    else if (t == DType::float16 || t == DType::bfloat16)
        add = "acc = convert<T>(convert<float>(acc) + convert<float>(v));";
    else if (kind(t) == Kind::floating || kind(t) == Kind::complex)
        add = "acc = acc + v;";
    else
        add = "acc = T(acc + v);";
    p.source +=
        "// The thread of the first of each run of equal sorted offsets adds the run's values to\n"
        "// its destination one after another, in input order (the sort was stable): the same "
        "sums\n"
        "// as the CPU's sequential loop, bit for bit.\n"
        "extern \"C\" __global__ void " +
        nm +
        "(T* dst, const T* __restrict__ src,\n"
        "    const long long* __restrict__ sorted, const long long* __restrict__ perm, long long "
        "n) "
        "{\n"
        "    using namespace ember::dev;\n"
        "    const long long step = (long long)gridDim.x * blockDim.x;\n"
        "    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += "
        "step) "
        "{\n"
        "        const long long o = sorted[i];\n"
        "        if (i > 0 && sorted[i - 1] == o) continue;\n"
        "        T acc = dst[o];\n"
        "        for (long long j = i; j < n && sorted[j] == o; ++j) {\n"
        "            const T v = src[perm[j]];\n"
        "            " +
        add +
        "\n"
        "        }\n"
        "        dst[o] = acc;\n"
        "    }\n"
        "}\n";
    p.headers = {{"ember/device_prelude.cuh", std::string(device_prelude_text())},
                 {"ember/ops/scalar.hpp", std::string(scalar_header_text())}};
    return p;
}

void scatter_add(DeviceState& d, void* dst, const void* src, const int64_t* offsets, int64_t n,
                 DType t) {
    if (n <= 0) return;
    Scratch so(d, size_t(n) * 8), perm(d, size_t(n) * 8);
    backend::SortCall c;
    c.device = d.index;
    c.dtype = DType::int64;
    c.rows = 1;
    c.n = n;
    c.keys = offsets;
    c.sorted = so.p;
    c.indices = static_cast<int64_t*>(perm.p);
    sort(d, c);
    const KernelKey key{0xfull | (uint64_t(t) << 4) | (uint64_t(5) << 12), key_tag};
    CUfunction f = kernel(d, key, [&] {
        return KernelSource{scatter_add_program(t), scatter_add_kernel_name(t)};
    });
    void* dp = dst;
    const void* sp = src;
    void* op = so.p;
    void* pp = perm.p;
    long long count = n;
    void* args[] = {&dp, &sp, &op, &pp, &count};
    launch(d, f, grid_for(d, n), 1, args, "add_at");
}

}  // namespace ember::gpu
