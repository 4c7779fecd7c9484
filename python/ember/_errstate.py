"""Floating-point error handling: NumPy's errstate, seterr, geterr, seterrcall and geterrcall.

ember shares NumPy's state rather than keeping a second one: ``ember.errstate`` *is*
``numpy.errstate``, so ``with np.errstate(divide="ignore"):`` silences ember's ops too, in code
that mixes both libraries as in code written for one (``import ember as np``). The defaults are
NumPy's: divide, over and invalid warn, under is ignored.

The CPU backend's elementwise loops test the processor's floating-point flags after each chunk
of work and hand what an op raised to `_report`, which acts as NumPy does: a RuntimeWarning
("invalid value encountered in log"), a FloatingPointError, the seterrcall function, a printed
line or a log object's ``write``. CUDA ops do not report (CuPy does not either): a GPU kernel has
no flags to read without a cost on every op.
"""

from __future__ import annotations

import warnings

import numpy as _np

from . import _core
from ._op_names import NUMPY_NAMES as _NUMPY_NAMES

__all__ = ["errstate", "geterr", "geterrcall", "seterr", "seterrcall"]

errstate = _np.errstate
seterr = _np.seterr
geterr = _np.geterr
seterrcall = _np.seterrcall
geterrcall = _np.geterrcall


# NumPy's order of handling, with its NPY_FPE_* bits
_FLAGS = (
    (1, "divide", "divide by zero"),
    (2, "over", "overflow"),
    (4, "under", "underflow"),
    (8, "invalid", "invalid value"),
)


def _report(flags, op):
    """Called by ember's CPU ops that raised floating-point `flags` (NPY_FPE_* bits)."""
    modes = _np.geterr()
    name = _NUMPY_NAMES.get(op, op)
    for bit, key, what in _FLAGS:
        if not flags & bit:
            continue
        mode = modes[key]
        if mode == "ignore":
            continue
        message = f"{what} encountered in {name}"
        if mode == "warn":
            warnings.warn(message, RuntimeWarning, stacklevel=2)
        elif mode == "raise":
            raise FloatingPointError(message)
        elif mode == "print":
            print(f"Warning: {message}")
        else:  # "call" or "log"
            target = _np.geterrcall()
            if target is None:
                raise NameError(
                    f"python callback specified for {what} (in {name}) but no function found."
                )
            if mode == "call":
                target(what, flags)
            else:
                target.write(f"Warning: {message}\n")


_core._set_fp_handler(_report)
