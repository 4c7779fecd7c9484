// Per-thread record of the floating-point flags the CPU loops raised (include/ember/fp_status.hpp).
#include "ember/fp_status.hpp"

#include <atomic>

namespace ember {

namespace {
thread_local FpStatus pending;
// Process-wide (a relaxed load per op, where a thread-local would cost a TLS lookup in a shared
// library); it switches the test off for measurements, NumPy's modes live in Python.
std::atomic<unsigned> check_mask{fp_divide_by_zero | fp_overflow | fp_underflow | fp_invalid};
}  // namespace

FpStatus take_fp_status() {
    FpStatus s = pending;
    pending = FpStatus{};
    return s;
}

bool fp_status_pending() { return pending.flags != 0; }

void clear_fp_status() { pending = FpStatus{}; }

unsigned fp_check() { return check_mask.load(std::memory_order_relaxed); }

void set_fp_check(unsigned mask) {
    check_mask.store(mask & (fp_divide_by_zero | fp_overflow | fp_underflow | fp_invalid),
                     std::memory_order_relaxed);
}

namespace detail {
void add_fp_status(unsigned flags, const char* op) {
    if (!flags) return;
    if (!pending.flags) pending.op = op;
    pending.flags |= flags;
}
}  // namespace detail

}  // namespace ember
