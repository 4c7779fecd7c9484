// The GPU sort family's kernels for every key type (sort.cpp pastes in what follows this line).
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
