// Inclusive scans of rows (one thread per short row, a block per row, or the three phases for a
// few long rows), pasted by src/backend/cuda/scan.cpp after the program's typedef of T (the value
// type); @ID@ is the identity (0 or 1), @OP@ the operator (+ or *), @NAME@ the kernels' prefix.
#define ID T(@ID@)
#define TILE 2048
#define ITEMS 8
#define PAD(i) ((i) + ((i) >> 5))
__device__ __forceinline__ T op(T a, T b) { return a @OP@ b; }

// The exclusive prefix of v over the block (thread order) and the block total, in a fixed
// order: a warp shuffle scan, then the warp totals folded left to right.
__device__ __forceinline__ T block_exclusive(T v, T* ws, T& total) {
    const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
    for (int o = 1; o < 32; o <<= 1) {
        const T n = __shfl_up_sync(0xffffffffu, v, o);
        if (lane >= o) v = op(n, v);
    }
    T ex = __shfl_up_sync(0xffffffffu, v, 1);
    if (lane == 0) ex = ID;
    if (lane == 31) ws[w] = v;
    __syncthreads();
    T pre = ID;
    total = ID;
    for (int i = 0; i < 8; ++i) {
        if (i == w) pre = total;
        total = op(total, ws[i]);
    }
    __syncthreads();
    return op(pre, ex);
}

// Scans the tile at `base` of a row (coalesced through shared memory), starting from `carry`;
// returns the carry for the next tile.
__device__ T scan_tile(const T* s, T* d, long long base, long long len, T carry, T* sm, T* ws) {
    const int t = threadIdx.x;
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
        const long long i = base + k * 256 + t;
        sm[PAD(k * 256 + t)] = i < len ? s[i] : ID;
    }
    __syncthreads();
    T loc[ITEMS];
    T acc = ID;
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
        acc = op(acc, sm[PAD(t * ITEMS + k)]);
        loc[k] = acc;
    }
    T total;
    const T pre = op(carry, block_exclusive(acc, ws, total));
#pragma unroll
    for (int k = 0; k < ITEMS; ++k)
        sm[PAD(t * ITEMS + k)] = op(pre, loc[k]);
    __syncthreads();
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
        const long long i = base + k * 256 + t;
        if (i < len) d[i] = sm[PAD(k * 256 + t)];
    }
    __syncthreads();
    return op(carry, total);
}

extern "C" __global__ void @NAME@_serial(T* out, const T* in, long long rows, long long len) {
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long r = (long long)blockIdx.x * blockDim.x + threadIdx.x; r < rows; r += step) {
        T acc = ID;
        for (long long i = 0; i < len; ++i) {
            acc = op(acc, in[r * len + i]);
            out[r * len + i] = acc;
        }
    }
}

extern "C" __global__ void @NAME@_rows(T* out, const T* in, long long rows, long long len) {
    __shared__ T sm[TILE + TILE / 32];
    __shared__ T ws[8];
    for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
        T carry = ID;
        for (long long base = 0; base < len; base += TILE)
            carry = scan_tile(in + r * len, out + r * len, base, len, carry, sm, ws);
    }
}

extern "C" __global__ void @NAME@_totals(T* partial, const T* in, long long len, long long ntiles) {
    __shared__ T ws[8];
    const T* s = in + (long long)blockIdx.y * len;
    for (long long tile = blockIdx.x; tile < ntiles; tile += gridDim.x) {
        T acc = ID;
#pragma unroll
        for (int k = 0; k < ITEMS; ++k) {
            const long long i = tile * TILE + k * 256 + threadIdx.x;
            if (i < len) acc = op(acc, s[i]);
        }
        for (int o = 16; o > 0; o >>= 1) acc = op(acc, __shfl_down_sync(0xffffffffu, acc, o));
        if ((threadIdx.x & 31) == 0) ws[threadIdx.x >> 5] = acc;
        __syncthreads();
        if (threadIdx.x == 0) {
            T tot = ID;
            for (int i = 0; i < 8; ++i) tot = op(tot, ws[i]);
            partial[(long long)blockIdx.y * ntiles + tile] = tot;
        }
        __syncthreads();
    }
}

extern "C" __global__ void @NAME@_tiles(T* out, const T* in, const T* partial, long long len, long long ntiles) {
    __shared__ T sm[TILE + TILE / 32];
    __shared__ T ws[8];
    const long long r = blockIdx.y;
    for (long long tile = blockIdx.x; tile < ntiles; tile += gridDim.x) {
        const T carry = tile > 0 ? partial[r * ntiles + tile - 1] : ID;
        scan_tile(in + r * len, out + r * len, tile * TILE, len, carry, sm, ws);
    }
}
