// The reduction policies of the reduction table (include/ember/reducetable.hpp), written once for
// all backends: reduce_<name><T, A, Out> gives identity(), load(), combine() and finish() for input
// storage type T, accumulator A and output storage type Out. The CPU loops instantiate them with
// the host compiler; the CUDA backend hands this same text to NVRTC after scalar.hpp (whose bodies
// are the combine steps, so a reduction folds exactly as its elementwise op computes).
//
// Every combine is used both serially and in fixed-order trees of partial results, so a policy's
// combine must be associative for the values it sees (up to floating rounding), and its identity
// must be neutral. The accumulator of a value row is a dtype's storage type and its finish a plain
// conversion (the CPU stores accumulators and casts them with its cast table). NaN: max/min
// propagate it through op_maximum/op_minimum; argmax/argmin treat it as the extremum, the first
// one winning.
#pragma once

#ifndef EMBER_DEVICE_PRELUDE
#include "ops/convert.hpp"
#include "ops/scalar.hpp"
#endif

namespace ember::ops {

#ifdef EMBER_DEVICE_PRELUDE
using ember::dev::convert;
#endif

// The smallest and largest values of an accumulator type (infinities for floating types, and
// for both parts of complex ones): the identities of max and min.
template <class A>
EMBER_HD inline A lowest_value() {
    if constexpr (is_bool_v<A>) {
        return false;
    } else if constexpr (is_complex_v<A>) {
        using R = real_t<A>;
        return A(-limits<R>::infinity(), -limits<R>::infinity());
    } else if constexpr (is_float_v<A>) {
        return -limits<A>::infinity();
    } else {
        return limits<A>::lowest();
    }
}
template <class A>
EMBER_HD inline A highest_value() {
    if constexpr (is_bool_v<A>) {
        return true;
    } else if constexpr (is_complex_v<A>) {
        using R = real_t<A>;
        return A(limits<R>::infinity(), limits<R>::infinity());
    } else if constexpr (is_float_v<A>) {
        return limits<A>::infinity();
    } else {
        return limits<A>::max();
    }
}

// A fold of values converted to the accumulator with an elementwise op's body. `extremum` tells
// the CPU backend that combine is a NaN-propagating max (1) or min (-1), which it vectorizes.
template <class T, class A, class Out, class Combine, int Extremum = 0>
struct reduce_fold {
    using in_t = T;
    using acc_t = A;
    static constexpr int extremum = Extremum;
    EMBER_HD static A load(const T& v, long long) { return convert<A>(v); }
    EMBER_HD static A combine(const A& a, const A& b) { return Combine::apply(a, b); }
    EMBER_HD static Out finish(const A& a) { return convert<Out>(a); }
};

template <class T, class A, class Out>
struct reduce_sum : reduce_fold<T, A, Out, op_add> {
    EMBER_HD static A identity() { return A(0); }
};
template <class T, class A, class Out>
struct reduce_prod : reduce_fold<T, A, Out, op_multiply> {
    EMBER_HD static A identity() { return A(1); }
};
template <class T, class A, class Out>
struct reduce_max : reduce_fold<T, A, Out, op_maximum, 1> {
    EMBER_HD static A identity() { return lowest_value<A>(); }
};
template <class T, class A, class Out>
struct reduce_min : reduce_fold<T, A, Out, op_minimum, -1> {
    EMBER_HD static A identity() { return highest_value<A>(); }
};
// any/all accumulate in bool whatever A is.
template <class T, class A, class Out>
struct reduce_any : reduce_fold<T, bool, Out, op_logical_or> {
    EMBER_HD static bool identity() { return false; }
};
template <class T, class A, class Out>
struct reduce_all : reduce_fold<T, bool, Out, op_logical_and> {
    EMBER_HD static bool identity() { return true; }
};

// argmax/argmin: the value (in compute type C) and its position. The first extremum wins, NaN
// counting as the extremum (NumPy), so ties and NaNs go to the smaller index whatever order
// partial results meet in; finish gives the position (0 for an untouched identity). The same
// rule as a left-to-right scan (the CPU's loop): stops(v) ends the scan at v, better(v, best)
// says a later v replaces the best so far.
template <class C>
struct ArgAcc {
    C v;
    long long i;
};
template <class T, class C, bool IsMax>
struct reduce_arg {
    using in_t = T;
    using value_t = C;
    using acc_t = ArgAcc<C>;
    static constexpr int extremum = 0;
    EMBER_HD static bool stops(const C& v) { return isnan_(v); }
    EMBER_HD static bool better(const C& v, const C& best) {
        return IsMax ? lt_(best, v) : lt_(v, best);
    }
    EMBER_HD static acc_t identity() {
        return {IsMax ? lowest_value<C>() : highest_value<C>(), 0x7fffffffffffffffll};
    }
    EMBER_HD static acc_t load(const T& v, long long r) { return {convert<C>(v), r}; }
    EMBER_HD static acc_t combine(const acc_t& a, const acc_t& b) {
        const bool na = stops(a.v), nb = stops(b.v);
        if (na || nb) return (na && nb) ? (b.i < a.i ? b : a) : (na ? a : b);
        if (better(b.v, a.v)) return b;
        if (better(a.v, b.v)) return a;
        return b.i < a.i ? b : a;
    }
    EMBER_HD static long long finish(const acc_t& a) {
        return a.i < 0x7fffffffffffffffll ? a.i : 0;
    }
};
template <class T, class C, class Out>
struct reduce_argmax : reduce_arg<T, C, true> {};
template <class T, class C, class Out>
struct reduce_argmin : reduce_arg<T, C, false> {};

// A second pass over partial accumulators of P (one per segment of a split reduced extent).
template <class P>
struct reduce_partials {
    using in_t = typename P::acc_t;
    using acc_t = typename P::acc_t;
    static constexpr int extremum = 0;
    EMBER_HD static acc_t identity() { return P::identity(); }
    EMBER_HD static acc_t load(const acc_t& v, long long) { return v; }
    EMBER_HD static acc_t combine(const acc_t& a, const acc_t& b) { return P::combine(a, b); }
    EMBER_HD static auto finish(const acc_t& a) { return P::finish(a); }
};

}  // namespace ember::ops
