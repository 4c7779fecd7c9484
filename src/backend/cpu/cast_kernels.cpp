// The 15x15 table of strided conversion loops used by copies and by buffered map/reduce.
#include <utility>

#include "backend/cpu/cpu.hpp"
#include "ops/convert.hpp"

namespace ember::host {

namespace {

template <class From, class To>
EMBER_CPU_CLONES void cast_loop(const char* src, int64_t ss, char* dst, int64_t ds, int64_t n) {
    if (ss == sizeof(From) && ds == sizeof(To)) {
        const From* __restrict s = reinterpret_cast<const From*>(src);
        To* __restrict d = reinterpret_cast<To*>(dst);
        for (int64_t i = 0; i < n; ++i)
            d[i] = convert<To>(s[i]);
        return;
    }
    for (int64_t i = 0; i < n; ++i, src += ss, dst += ds)
        *reinterpret_cast<To*>(dst) = convert<To>(*reinterpret_cast<const From*>(src));
}

template <size_t F, size_t... T>
void register_row(std::index_sequence<T...>) {
    ((cast_table[F][T] = &cast_loop<host_t<DType(F)>, host_t<DType(T)>>), ...);
}

template <size_t... F>
void register_rows(std::index_sequence<F...>) {
    (register_row<F>(std::make_index_sequence<num_dtypes>{}), ...);
}

}  // namespace

void register_cast_kernels() { register_rows(std::make_index_sequence<num_dtypes>{}); }

}  // namespace ember::host
