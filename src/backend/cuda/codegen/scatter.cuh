// Deterministic scatter, dst[off[i]] = src[i] with the last i winning where offsets repeat: the
// marking kernels keep the winner of each destination, the w0 / w8 / w32 / w64 kernels write (w0:
// no repeats; w8: a flag per i; w32 / w64: the winners' marks). Pasted by
// src/backend/cuda/scan.cpp after the program's struct ember_u128 and typedef of U (the element's
// bits); @NAME@ is the write kernels' prefix.

// win[off[i] - lo] = max(i + 1) over the i writing there (win starts at zero).
extern "C" __global__ void ember_scatter_mark32(const long long* __restrict__ off, long long n,
                                                long long lo, unsigned* __restrict__ win) {
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)
        atomicMax(win + (off[i] - lo), (unsigned)(i + 1));
}
extern "C" __global__ void ember_scatter_mark64(const long long* __restrict__ off, long long n,
                                                long long lo, unsigned long long* __restrict__ win) {
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step)
        atomicMax(win + (off[i] - lo), (unsigned long long)(i + 1));
}

extern "C" __global__ void @NAME@_w0(U* dst, const U* __restrict__ src, const long long* __restrict__ off, long long n,
    long long lo, const unsigned long long* __restrict__ win) {
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
        const long long o = off[i];
        dst[o] = src[i];
    }
}
extern "C" __global__ void @NAME@_w8(U* dst, const U* __restrict__ src, const long long* __restrict__ off, long long n,
    long long lo, const unsigned char* __restrict__ win) {
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
        const long long o = off[i];
        if (!win[i]) continue;
        dst[o] = src[i];
    }
}
extern "C" __global__ void @NAME@_w32(U* dst, const U* __restrict__ src, const long long* __restrict__ off, long long n,
    long long lo, const unsigned* __restrict__ win) {
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
        const long long o = off[i];
        if (win[o - lo] != (unsigned)(i + 1)) continue;
        dst[o] = src[i];
    }
}
extern "C" __global__ void @NAME@_w64(U* dst, const U* __restrict__ src, const long long* __restrict__ off, long long n,
    long long lo, const unsigned long long* __restrict__ win) {
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) {
        const long long o = off[i];
        if (win[o - lo] != (unsigned long long)(i + 1)) continue;
        dst[o] = src[i];
    }
}
