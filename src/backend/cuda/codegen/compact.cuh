// Stream compaction by a mask (tiles counted, the counts scanned by scan.cuh's kernels, then each
// tile writing its selected elements in order), pasted by src/backend/cuda/scan.cpp after the
// program's struct ember_u128 and typedef of U (the element's bits); @NAME@ is the kernel's name.
#define CTILE 4096

// Number of set mask bytes in each tile of CTILE.
extern "C" __global__ void ember_compact_count(const unsigned char* __restrict__ mask,
                                               long long n, long long* __restrict__ counts,
                                               long long ntiles) {
    for (long long tile = blockIdx.x; tile < ntiles; tile += gridDim.x) {
        int c = 0;
#pragma unroll
        for (int k = 0; k < 16; ++k) {
            const long long i = tile * CTILE + k * 256 + threadIdx.x;
            c += __syncthreads_count(i < n && mask[i] != 0);
        }
        if (threadIdx.x == 0) counts[tile] = c;
    }
}

// Tile `tile` writes its selected rows from position incl[tile - 1] on, in index order: 16
// rounds of 256 consecutive mask bytes, positions from the warps' ballots.
template <bool INDEX>
__device__ void compact_body(U* __restrict__ out, const U* __restrict__ src,
                             long long* __restrict__ iout, const unsigned char* __restrict__ mask,
                             long long n, long long row, const long long* __restrict__ incl,
                             long long ntiles) {
    __shared__ int wc[2][8];
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    for (long long tile = blockIdx.x; tile < ntiles; tile += gridDim.x) {
        long long carry = tile > 0 ? incl[tile - 1] : 0;
        bool m[16];
        U v[16];
#pragma unroll
        for (int k = 0; k < 16; ++k) {
            const long long i = tile * CTILE + k * 256 + threadIdx.x;
            m[k] = i < n && mask[i] != 0;
            if (!INDEX && row == 1 && m[k]) v[k] = src[i];
        }
#pragma unroll
        for (int k = 0; k < 16; ++k) {
            const unsigned b = __ballot_sync(0xffffffffu, m[k]);
            if (lane == 0) wc[k & 1][w] = __popc(b);
            __syncthreads();
            int off = 0, tot = 0;
            for (int q = 0; q < 8; ++q) {
                const int c = wc[k & 1][q];
                if (q < w) off += c;
                tot += c;
            }
            if (m[k]) {
                const long long i = tile * CTILE + k * 256 + threadIdx.x;
                const long long pos = carry + off + __popc(b & ((1u << lane) - 1u));
                if (INDEX) {
                    iout[pos] = i;
                } else if (row == 1) {
                    out[pos] = v[k];
                } else {
                    for (long long e = 0; e < row; ++e) out[pos * row + e] = src[i * row + e];
                }
            }
            carry += tot;
        }
        __syncthreads();
    }
}

extern "C" __global__ void @NAME@(U* out, const U* src, const unsigned char* mask, long long n, long long row,
    const long long* incl, long long ntiles) {
    compact_body<false>(out, src, nullptr, mask, n, row, incl, ntiles);
}

extern "C" __global__ void ember_compact_index(long long* out, const unsigned char* mask, long long n, const long long* incl,
    long long ntiles) {
    compact_body<true>(nullptr, nullptr, out, mask, n, 1, incl, ntiles);
}
