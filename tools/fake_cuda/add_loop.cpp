// ember::add(x, x) on a 1-element "cuda" array, N times (after a warm-up): the C++ host path of
// the smallest op, for callgrind under the fake driver (tools/host_profile.sh).
#include <cstdio>
#include <cstdlib>

#include "ember/ember.hpp"

using namespace ember;

int main(int argc, char** argv) {
    const int n = argc > 1 ? std::atoi(argv[1]) : 20000;
    const Array x = full({1}, Scalar(1.0), DType::float32, Device(DeviceType::cuda, 0));
    for (int i = 0; i < 2000; ++i)
        Array y = add(x, x);
    for (int i = 0; i < n; ++i)
        Array y = add(x, x);
    std::printf("%d calls of ember::add on %s\n", n, x.device().str().c_str());
    return 0;
}
