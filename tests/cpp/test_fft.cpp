// Tests of the CPU side of the backends' fft family through the public C++ API: the error when no
// host FFT is registered, the contiguous, cropped or padded rows and the scale a registered one is
// given, and the 1-point transform done without it.
#include <gtest/gtest.h>

#include <complex>
#include <ember/ember.hpp>
#include <ember/fft.hpp>
#include <string>
#include <vector>

using namespace ember;

namespace {

// Restores the host FFT registered before the test.
struct HostFftScope {
    explicit HostFftScope(HostFft fn) : prev(set_host_fft(fn)) {}
    ~HostFftScope() { set_host_fft(prev); }
    HostFft prev;
};

HostFftCall seen;
std::vector<double> seen_rows;

// Records the call and its (double precision) input rows; writes k + 10 * row as output term k.
void recording_fft(const HostFftCall& c) {
    seen = c;
    const int64_t in_len = c.kind == FftKind::c2r ? c.n / 2 + 1 : c.n;
    const int64_t out_len = c.kind == FftKind::r2c ? c.n / 2 + 1 : c.n;
    const double* in = static_cast<const double*>(c.in);
    seen_rows.assign(in, in + c.batch * in_len * (c.kind == FftKind::r2c ? 1 : 2));
    for (int64_t r = 0; r < c.batch; ++r)
        for (int64_t k = 0; k < out_len; ++k) {
            const double v = double(k + 10 * r);
            if (c.kind == FftKind::c2r)
                static_cast<double*>(c.out)[r * out_len + k] = v;
            else
                static_cast<std::complex<double>*>(c.out)[r * out_len + k] = v;
        }
}

}  // namespace

TEST(Fft, CpuWithoutHostFftRaisesNamingTheFunction) {
    HostFftScope scope(nullptr);
    const Array x = zeros({2, 4}, DType::complex64, cpu);
    try {
        fft_last_axis(x, FftKind::c2c, 4, false);
        FAIL() << "expected an error";
    } catch (const Error& e) {
        const std::string m = e.what();
        EXPECT_NE(m.find("ember::fft_last_axis"), std::string::npos) << m;
        EXPECT_NE(m.find("set_host_fft"), std::string::npos) << m;
    }
}

TEST(Fft, CpuHostFftGetsContiguousPaddedRows) {
    HostFftScope scope(&recording_fft);
    // a transposed (non-contiguous) 2 x 3 view, padded to n = 4
    const Array x = from_vector<double>({0, 3, 1, 4, 2, 5}, {3, 2}, cpu).transpose();
    const Array y = fft_last_axis(x, FftKind::r2c, 4, false);
    EXPECT_EQ(seen.kind, FftKind::r2c);
    EXPECT_TRUE(seen.dbl);
    EXPECT_FALSE(seen.inverse);
    EXPECT_EQ(seen.n, 4);
    EXPECT_EQ(seen.batch, 2);
    EXPECT_EQ(seen_rows, (std::vector<double>{0, 1, 2, 0, 3, 4, 5, 0}));
    EXPECT_EQ(y.shape(), (Shape{2, 3}));
    EXPECT_EQ(y.dtype(), DType::complex128);
    const auto v = to_vector<std::complex<double>>(y);
    EXPECT_EQ(v[4], std::complex<double>(11.0));
}

TEST(Fft, CpuC2rDropsTheImaginaryPartsOfRealTerms) {
    HostFftScope scope(&recording_fft);
    using C = std::complex<double>;
    const Array x = from_vector<C>({C(1, 7), C(2, 3), C(4, 9)}, {1, 3}, cpu);
    fft_last_axis(x, FftKind::c2r, 4, true);
    EXPECT_EQ(seen.kind, FftKind::c2r);
    EXPECT_TRUE(seen.inverse);
    // (n = 4: the zero and Nyquist terms are real)
    EXPECT_EQ(seen_rows, (std::vector<double>{1, 0, 2, 3, 4, 0}));
}

TEST(Fft, CpuHostFftGetsTheScale) {
    HostFftScope scope(&recording_fft);
    const Array x = zeros({2, 4}, DType::complex128, cpu);
    fft_last_axis(x, FftKind::c2c, 4, true, 0.25);
    EXPECT_EQ(seen.scale, 0.25);
    fft_last_axis(x, FftKind::c2c, 4, false);
    EXPECT_EQ(seen.scale, 1.0);
}

TEST(Fft, OnePointTransformIsScaledWithoutTheHostFft) {
    HostFftScope scope(nullptr);
    using C = std::complex<double>;
    const Array x = from_vector<C>({C(1, -2), C(3, 4)}, {2, 1}, cpu);
    const auto v = to_vector<C>(fft_last_axis(x, FftKind::c2c, 1, false, 0.5));
    EXPECT_EQ(v, (std::vector<C>{C(0.5, -1), C(1.5, 2)}));
    const auto r = to_vector<double>(fft_last_axis(x, FftKind::c2r, 1, true, 2.0));
    EXPECT_EQ(r, (std::vector<double>{2, 6}));
}
