// The fused optimizer step: one launch updates up to @PACK@ tensors (optim_step.cpp's pack), block
// b one chunk of @CHUNK@ elements of tensor t (start[t] <= b < start[t + 1]), with the per-element
// math of src/ops/optim.hpp. Pasted by src/backend/cuda/optim_step.cpp after its includes; @NAME@
// is the kernel's name, @T@ the parameters' storage type and @C@ the type they are updated in.

struct Pack {
    void* p[@PACK@];
    void* g[@PACK@];
    void* s[3][@PACK@];
    long long n[@PACK@];
    const float* step[@PACK@];  // the step counts (f_device_step), else null
    int start[@PACK@ + 1];
    int count;
};

// Block b updates chunk b - start[t] of tensor t (start[t] <= b < start[t + 1]).
extern "C" __global__ void @NAME@(const Pack pk, const ember::optim::Hyper h) {
    using namespace ember::dev;
    typedef @T@ T;
    typedef @C@ C;
    const int b = blockIdx.x;
    int lo = 0, hi = pk.count - 1;
    while (lo < hi) {
        const int mid = (lo + hi + 1) / 2;
        if (pk.start[mid] <= b) lo = mid; else hi = mid - 1;
    }
    T* p = static_cast<T*>(pk.p[lo]);
    const T* g = static_cast<const T*>(pk.g[lo]);
    T* s0 = static_cast<T*>(pk.s[0][lo]);
    T* s1 = static_cast<T*>(pk.s[1][lo]);
    T* s2 = static_cast<T*>(pk.s[2][lo]);
    const long long begin = (long long)(b - pk.start[lo]) * @CHUNK@;
    const long long end = begin + @CHUNK@ < pk.n[lo] ? begin + @CHUNK@ : pk.n[lo];
    ember::optim::Hyper hs = h;
    if (h.flags & ember::optim::f_device_step) ember::optim::at_step(hs, double(*pk.step[lo]));
    for (long long i = begin + threadIdx.x; i < end; i += blockDim.x) {
        C pv = convert<C>(p[i]);
        C a = s0 ? convert<C>(s0[i]) : C(0);
        C c = s1 ? convert<C>(s1[i]) : C(0);
        C e = s2 ? convert<C>(s2[i]) : C(0);
        ember::optim::update<C>(hs, pv, convert<C>(g[i]), a, c, e);
        p[i] = convert<T>(pv);
        if (s0) s0[i] = convert<T>(a);
        if (s1) s1[i] = convert<T>(c);
        if (s2) s2[i] = convert<T>(e);
    }
}
