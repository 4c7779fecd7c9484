// Floating-point exception flags raised by the CPU backend's elementwise loops (NumPy's errstate).
#pragma once

namespace ember {

// The flags, with NumPy's NPY_FPE_* values (a Python errstate handler gets the same integers).
enum FpFlag : unsigned {
    fp_divide_by_zero = 1,
    fp_overflow = 2,
    fp_underflow = 4,
    fp_invalid = 8,
};

// What the CPU loops of this thread raised since the last take: the flags, and the op table
// name of the first op that raised any (nullptr when none).
struct FpStatus {
    unsigned flags = 0;
    const char* op = nullptr;
};

// Takes (and clears) this thread's pending flags.
FpStatus take_fp_status();
// Whether this thread has pending flags: cheap, tested after every op by the bindings.
bool fp_status_pending();
// Drops this thread's pending flags.
void clear_fp_status();

// Which flags the CPU loops test (all four by default; 0 turns the test off; process-wide).
// CUDA loops never test: NumPy's floating-point error reporting is a CPU feature in ember.
unsigned fp_check();
void set_fp_check(unsigned mask);

namespace detail {
// Called by the CPU backend with the flags one op raised.
void add_fp_status(unsigned flags, const char* op);
}  // namespace detail

}  // namespace ember
