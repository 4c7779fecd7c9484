// Random numbers: a counter-based generator (Philox4x32-10) that gives the same numbers on every
// device for the same seed, shape and dtype (src/ops/random.hpp has the counter layout).
#pragma once

#include <atomic>
#include <cstdint>

#include "ember/array.hpp"
#include "ember/device.hpp"
#include "ember/dtype.hpp"
#include "ember/shape.hpp"

namespace ember::random {

// How many draws every generator of the process has made so far (ember.compile's CUDA graphs
// refuse a step that draws random numbers: a replay would repeat the captured draw).
uint64_t draw_count();

// A generator is a 64-bit key (from the seed) and a position in its counter space. Drawing is
// safe from several threads: each call reserves its range of counters atomically.
class Generator {
public:
    explicit Generator(uint64_t seed = 0);
    Generator(uint64_t key, uint64_t position) : key_(key), pos_(position) {}
    Generator(const Generator& o) : key_(o.key_), pos_(o.position()) {}
    Generator& operator=(const Generator& o) {
        key_ = o.key_;
        pos_.store(o.position());
        return *this;
    }

    uint64_t key() const { return key_; }
    uint64_t position() const { return pos_.load(std::memory_order_relaxed); }
    void set_position(uint64_t p) { pos_.store(p, std::memory_order_relaxed); }

    // Raw words: uint32 or uint64.
    Array bits(const Shape& shape, DType dtype = DType::uint64, Device device = default_device());
    // [low, high) uniform; normal(loc, scale); scale * Exp(1). Floating dtypes.
    Array uniform(double low, double high, const Shape& shape, DType dtype = DType::float64,
                  Device device = default_device());
    Array normal(double loc, double scale, const Shape& shape, DType dtype = DType::float64,
                 Device device = default_device());
    Array exponential(double scale, const Shape& shape, DType dtype = DType::float64,
                      Device device = default_device());
    // Integers in [low, low + range) (range 0 means 2^64), stored in an integer dtype or bool.
    Array integers(int64_t low, uint64_t range, const Shape& shape, DType dtype = DType::int64,
                   Device device = default_device());
    Array gamma(double shape_k, double scale, const Shape& shape, DType dtype = DType::float64,
                Device device = default_device());
    Array beta(double a, double b, const Shape& shape, DType dtype = DType::float64,
               Device device = default_device());
    Array poisson(double lam, const Shape& shape, DType dtype = DType::int64,
                  Device device = default_device());
    Array binomial(int64_t n, double p, const Shape& shape, DType dtype = DType::int64,
                   Device device = default_device());

private:
    Array draw(const char* who, int dist, double a, double b, int64_t low, uint64_t range,
               const Shape& shape, DType dtype, Device device);

    uint64_t key_;
    std::atomic<uint64_t> pos_;
};

// The key a seed gives (splitmix64 of the seed).
uint64_t key_from_seed(uint64_t seed);

}  // namespace ember::random
