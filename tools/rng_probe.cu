// On the GPU machine: where the time of a float32 standard-normal draw goes. Variants of one
// grid-stride kernel (Philox4x32-10 block -> 4 floats -> float4 store), each timed with events.
// nvcc -O3 -arch=sm_90 --fmad=false tools/rng_probe.cu -o /tmp/rng_probe && /tmp/rng_probe
#include <cstdio>
#include <cuda_runtime.h>

struct B { unsigned v[4]; };
__device__ __forceinline__ B philox(B c, unsigned k0, unsigned k1) {
#pragma unroll
    for (int r = 0; r < 10; ++r) {
        if (r) { k0 += 0x9E3779B9u; k1 += 0xBB67AE85u; }
        unsigned long long p0 = 0xD2511F53ull * c.v[0], p1 = 0xCD9E8D57ull * c.v[2];
        B n = {{unsigned(p1 >> 32) ^ c.v[1] ^ k0, unsigned(p1), unsigned(p0 >> 32) ^ c.v[3] ^ k1, unsigned(p0)}};
        c = n;
    }
    return c;
}
template <int V>
__global__ void k(float4* out, unsigned long long blocks, unsigned long long pos, unsigned k0, unsigned k1) {
    const unsigned long long step = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < blocks; i += step) {
        float f[4];
        if (V == 0) { for (int j = 0; j < 4; ++j) f[j] = float(i) * 0.5f + j; }
        else {
            unsigned long long b = pos + i;
            B r = philox({{unsigned(b), unsigned(b >> 32), 0u, 0u}}, k0, k1);
            for (int j = 0; j < 4; ++j) f[j] = float(r.v[j] >> 8) * (1.0f / 16777216.0f);
            for (int j = 0; j < 4 && V > 1; j += 2) {
                float u1 = f[j], u2 = f[j + 1], rr, s, c;
                if (V == 2) { rr = sqrtf(-2.f * logf(1.f - u1)); float t = 6.2831853f * u2; s = sinf(t); c = cosf(t); }
                if (V == 3) { rr = sqrtf(-2.f * logf(1.f - u1)); sincospif(2.f * u2, &s, &c); }
                if (V == 4) { rr = sqrtf(-2.f * __logf(1.f - u1)); __sincosf(6.2831853f * u2 - 3.14159265f, &s, &c); }
                if (V == 5) { rr = sqrtf(-2.f * logf(1.f - u1)); s = c = 1.f; }
                if (V == 6) { rr = 1.f; sincospif(2.f * u2, &s, &c); }
                if (V == 7) { rr = sqrtf(-2.f * log1pf(-u1)); sincospif(2.f * u2, &s, &c); }
                f[j] = rr * c; f[j + 1] = rr * s;
            }
        }
        out[i] = make_float4(f[0], f[1], f[2], f[3]);
    }
}
template <int V>
float run(float4* out, unsigned long long blocks, int grid, int block) {
    cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
    float best = 1e30f;
    for (int rep = 0; rep < 12; ++rep) {
        cudaEventRecord(a);
        k<V><<<grid, block>>>(out, blocks, 7, 0x1234u, 0x5678u);
        cudaEventRecord(b); cudaEventSynchronize(b);
        float ms; cudaEventElapsedTime(&ms, a, b); if (rep > 1 && ms < best) best = ms;
    }
    return best * 1000.f;
}
int main() {
    const unsigned long long n = 1ull << 28, blocks = n / 4;
    float4* out; cudaMalloc(&out, n * 4);
    int sms; cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    const char* names[] = {"store only", "philox uniform", "precise sin/cos", "sincospif", "fast __logf/__sincosf",
                           "log+sqrt only", "sincospif only", "log1pf+sincospif"};
    for (int g : {sms * 4, sms * 8, sms * 16, sms * 32}) {
        float t[8] = {run<0>(out, blocks, g, 256), run<1>(out, blocks, g, 256), run<2>(out, blocks, g, 256), run<3>(out, blocks, g, 256),
                      run<4>(out, blocks, g, 256), run<5>(out, blocks, g, 256), run<6>(out, blocks, g, 256), run<7>(out, blocks, g, 256)};
        for (int v = 0; v < 8; ++v) printf("grid %5d  %-24s %8.1f us  %6.0f GB/s\n", g, names[v], t[v], n * 4 / (t[v] * 1e3));
    }
    printf("%s\n", cudaGetErrorString(cudaGetLastError()));
}
