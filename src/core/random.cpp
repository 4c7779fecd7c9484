// The random Generator front-end: parameter and dtype checks, output allocation, counter
// reservation; the draws themselves are the backends' random family (src/ops/random.hpp).
#include "ember/random.hpp"

#include <atomic>
#include <cmath>
#include <string>

#include "backend/backend.hpp"
#include "ember/error.hpp"

namespace ember::random {

namespace {

std::string num(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return buf;
}

void require(bool ok, const char* who, const std::string& what) {
    if (!ok) throw ValueError(std::string(who) + ": " + what);
}

std::atomic<uint64_t> draws_made{0};

}  // namespace

uint64_t draw_count() { return draws_made.load(std::memory_order_relaxed); }

uint64_t key_from_seed(uint64_t seed) {
    uint64_t z = seed + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

Generator::Generator(uint64_t seed) : key_(key_from_seed(seed)), pos_(0) {}

Array Generator::draw(const char* who, int dist, double a, double b, int64_t low, uint64_t range,
                      const Shape& shape, DType dtype, Device device) {
    const auto d = rng::Dist(dist);
    const Kind k = kind(dtype);
    if (d == rng::Dist::bits) {
        if (dtype != DType::uint32 && dtype != DType::uint64)
            throw TypeError(std::string(who) + ": dtype must be uint32 or uint64, got " +
                            std::string(name(dtype)));
    } else if (rng::is_packed(d) || d == rng::Dist::gamma || d == rng::Dist::beta) {
        if (k != Kind::floating)
            throw TypeError(std::string(who) + ": dtype must be a real floating dtype, got " +
                            std::string(name(dtype)));
    } else if (k != Kind::signed_int && k != Kind::unsigned_int && dtype != DType::bool_) {
        throw TypeError(std::string(who) + ": dtype must be an integer dtype, got " +
                        std::string(name(dtype)));
    }
    Array out = Array::empty(shape, dtype, device);
    const int64_t n = out.size();
    rng::Params p;
    p.dist = d;
    p.key = {uint32_t(key_), uint32_t(key_ >> 32)};
    p.a = a;
    p.b = b;
    p.low = low;
    p.range = range;
    p.bits = dtype == DType::float16 ? 11 : dtype == DType::bfloat16 ? 8 : 24;
    const uint64_t per = rng::is_packed(d) ? uint64_t(rng::per_block(int(itemsize(dtype)))) : 1;
    const uint64_t used = (uint64_t(n) + per - 1) / per;
    p.pos = pos_.fetch_add(used, std::memory_order_relaxed);
    draws_made.fetch_add(1, std::memory_order_relaxed);
    if (n > 0) backend::of(device, who).random(p, out.data(), dtype, n, device.index);
    return out;
}

Array Generator::bits(const Shape& shape, DType dtype, Device device) {
    return draw("ember.random.Generator.bits", int(rng::Dist::bits), 0, 0, 0, 0, shape, dtype,
                device);
}

Array Generator::uniform(double low, double high, const Shape& shape, DType dtype, Device device) {
    const char* who = "ember.random.Generator.uniform";
    require(std::isfinite(low) && std::isfinite(high), who,
            "low and high must be finite, got " + num(low) + " and " + num(high));
    return draw(who, int(rng::Dist::uniform), low, high, 0, 0, shape, dtype, device);
}

Array Generator::normal(double loc, double scale, const Shape& shape, DType dtype, Device device) {
    const char* who = "ember.random.Generator.normal";
    require(scale >= 0, who, "scale must be non-negative, got " + num(scale));
    return draw(who, int(rng::Dist::normal), loc, scale, 0, 0, shape, dtype, device);
}

Array Generator::exponential(double scale, const Shape& shape, DType dtype, Device device) {
    const char* who = "ember.random.Generator.exponential";
    require(scale >= 0, who, "scale must be non-negative, got " + num(scale));
    return draw(who, int(rng::Dist::exponential), scale, 0, 0, 0, shape, dtype, device);
}

Array Generator::integers(int64_t low, uint64_t range, const Shape& shape, DType dtype,
                          Device device) {
    return draw("ember.random.Generator.integers", int(rng::Dist::integers), 0, 0, low, range,
                shape, dtype, device);
}

Array Generator::gamma(double shape_k, double scale, const Shape& shape, DType dtype,
                       Device device) {
    const char* who = "ember.random.Generator.gamma";
    require(shape_k >= 0, who, "shape must be non-negative, got " + num(shape_k));
    require(scale >= 0, who, "scale must be non-negative, got " + num(scale));
    return draw(who, int(rng::Dist::gamma), shape_k, scale, 0, 0, shape, dtype, device);
}

Array Generator::beta(double a, double b, const Shape& shape, DType dtype, Device device) {
    const char* who = "ember.random.Generator.beta";
    require(a > 0 && b > 0, who, "a and b must be positive, got " + num(a) + " and " + num(b));
    return draw(who, int(rng::Dist::beta), a, b, 0, 0, shape, dtype, device);
}

Array Generator::poisson(double lam, const Shape& shape, DType dtype, Device device) {
    const char* who = "ember.random.Generator.poisson";
    require(lam >= 0 && lam < 9.2e18, who,
            "lam must be non-negative and below 9.2e18, got " + num(lam));
    return draw(who, int(rng::Dist::poisson), lam, 0, 0, 0, shape, dtype, device);
}

Array Generator::binomial(int64_t n, double p, const Shape& shape, DType dtype, Device device) {
    const char* who = "ember.random.Generator.binomial";
    require(n >= 0, who, "n must be non-negative, got " + std::to_string(n));
    require(p >= 0 && p <= 1, who, "p must be in [0, 1], got " + num(p));
    return draw(who, int(rng::Dist::binomial), p, 0, n, 0, shape, dtype, device);
}

}  // namespace ember::random
