// The floating-point flags of CPU loops, handed to ember's errstate (python/ember/_errstate.py).
#include "python/common.hpp"

namespace ember::python {

namespace {
// The Python handler(flags, op_name); kept for the life of the process (never released, so
// nothing runs at interpreter teardown).
PyObject* fp_handler = nullptr;
}  // namespace

void report_fp_status() {
    const FpStatus s = take_fp_status();
    if (!s.flags || !fp_handler) return;
    nb::handle handler(fp_handler);
    handler(s.flags, s.op ? s.op : "");
}

void bind_fp_status(nb::module_& m) {
    m.def(
        "_set_fp_handler",
        [](nb::handle f) {
            PyObject* old = fp_handler;
            fp_handler = f.is_none() ? nullptr : f.inc_ref().ptr();
            Py_XDECREF(old);
        },
        nb::arg("handler").none(),
        "Sets the function called as handler(flags, op) after an op whose CPU loops raised "
        "floating-point flags (NumPy's NPY_FPE_* bits).");
    m.def(
        "_fp_check",
        [](std::optional<unsigned> mask) {
            const unsigned old = fp_check();
            if (mask) set_fp_check(*mask);
            return old;
        },
        nb::arg("mask").none() = nb::none(),
        "The flags the CPU loops test, process-wide (the previous mask; sets a new one if given).");
}

}  // namespace ember::python
