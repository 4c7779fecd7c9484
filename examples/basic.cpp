// ember from C++: build arrays, compute with NumPy semantics, reduce, and read results back.
#include <cstdio>
#include <ember/ember.hpp>

int main() {
    using namespace ember;
    Array x = arange(Scalar(int64_t(0)), Scalar(int64_t(12)), Scalar(int64_t(1)), DType::float32)
                  .reshape({3, 4});
    Array y = x * 2.0 + 1.0;                      // float32 stays float32: scalars are weak
    Array col = sum(y, std::vector<int64_t>{0});  // column sums
    Array centred = y - mean(y, std::vector<int64_t>{1}, /*keepdims=*/true);
    std::vector<float> c = to_vector<float>(col);
    std::printf("column sums:");
    for (float v : c)
        std::printf(" %g", v);
    std::printf("\nmax |centred| = %g on %s, dtype %s\n", max(abs(centred)).item<float>(),
                y.device().str().c_str(), std::string(name(y.dtype())).c_str());
    // 3*0+... : column j sums 2*(j + j+4 + j+8) + 3 = 6j + 27
    for (int j = 0; j < 4; ++j)
        if (c[size_t(j)] != float(6 * j + 27)) return 1;
    return 0;
}
