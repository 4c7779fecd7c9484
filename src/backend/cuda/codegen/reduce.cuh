// ember reduction policies.
#pragma once

namespace ember::dev {

// The kept and reduced dimensions of a reduction, innermost first: kept dims have an input and
// an output stride, reduced dims an input stride (layout of ember::gpu::ReduceGeometry).
struct ReduceGeometry {
    long long kshape[8], kin[8], kout[8];
    long long rshape[8], rin[8];
};

template <class A>
__device__ inline A lowest_value() {
    if constexpr (std::is_same_v<A, bool>) {
        return false;
    } else if constexpr (is_cplx<A>::value) {
        using R = typename A::value_type;
        return A(-num_limits<R>::infinity(), -num_limits<R>::infinity());
    } else if constexpr (std::is_floating_point_v<A>) {
        return -num_limits<A>::infinity();
    } else {
        return num_limits<A>::lowest();
    }
}
template <class A>
__device__ inline A highest_value() {
    if constexpr (std::is_same_v<A, bool>) {
        return true;
    } else if constexpr (is_cplx<A>::value) {
        using R = typename A::value_type;
        return A(num_limits<R>::infinity(), num_limits<R>::infinity());
    } else if constexpr (std::is_floating_point_v<A>) {
        return num_limits<A>::infinity();
    } else {
        return num_limits<A>::max();
    }
}

// T: the stored input type, A: the accumulator, Out: the stored output type.
template <class T, class A, class Out, class Combine>
struct Fold {
    using acc_t = A;
    __device__ static A load(const T& v, long long) { return convert<A>(v); }
    __device__ static A combine(const A& a, const A& b) { return Combine::apply(a, b); }
    __device__ static Out finish(const A& a) { return convert<Out>(a); }
};
template <class T, class A, class Out>
struct RSum : Fold<T, A, Out, ember::ops::op_add> {
    __device__ static A identity() { return A(0); }
};
template <class T, class A, class Out>
struct RProd : Fold<T, A, Out, ember::ops::op_multiply> {
    __device__ static A identity() { return A(1); }
};
template <class T, class A, class Out>
struct RMax : Fold<T, A, Out, ember::ops::op_maximum> {
    __device__ static A identity() { return lowest_value<A>(); }
};
template <class T, class A, class Out>
struct RMin : Fold<T, A, Out, ember::ops::op_minimum> {
    __device__ static A identity() { return highest_value<A>(); }
};
struct LogicalOr {
    __device__ static bool apply(bool a, bool b) { return a || b; }
};
struct LogicalAnd {
    __device__ static bool apply(bool a, bool b) { return a && b; }
};
template <class T, class A, class Out>
struct RAny : Fold<T, bool, Out, LogicalOr> {
    __device__ static bool identity() { return false; }
};
template <class T, class A, class Out>
struct RAll : Fold<T, bool, Out, LogicalAnd> {
    __device__ static bool identity() { return true; }
};

// argmax/argmin: the first extremum, NaN counting as the extremum (NumPy), so ties and NaNs go
// to the smaller index whatever order partial results meet in.
template <class C>
struct ArgAcc {
    C v;
    long long i;
};
template <class T, class C, bool IsMax>
struct RArg {
    using acc_t = ArgAcc<C>;
    __device__ static acc_t identity() {
        return {IsMax ? lowest_value<C>() : highest_value<C>(), 0x7fffffffffffffffll};
    }
    __device__ static acc_t load(const T& v, long long r) { return {convert<C>(v), r}; }
    __device__ static acc_t combine(const acc_t& a, const acc_t& b) {
        const bool na = ember::ops::isnan_(a.v), nb = ember::ops::isnan_(b.v);
        if (na || nb) return (na && nb) ? (b.i < a.i ? b : a) : (na ? a : b);
        if (IsMax ? ember::ops::lt_(a.v, b.v) : ember::ops::lt_(b.v, a.v)) return b;
        if (IsMax ? ember::ops::lt_(b.v, a.v) : ember::ops::lt_(a.v, b.v)) return a;
        return b.i < a.i ? b : a;
    }
    __device__ static long long finish(const acc_t& a) { return a.i < 0x7fffffffffffffffll ? a.i : 0; }
};

// The second pass: inputs are partial accumulators of P.
template <class P>
struct Partials {
    using acc_t = typename P::acc_t;
    __device__ static acc_t identity() { return P::identity(); }
    __device__ static acc_t load(const acc_t& v, long long) { return v; }
    __device__ static acc_t combine(const acc_t& a, const acc_t& b) { return P::combine(a, b); }
    __device__ static auto finish(const acc_t& a) { return P::finish(a); }
};

}  // namespace ember::dev
