"""The names kernels use for ember's op-table rows and Python's operators, and what the kernel
compiler emits for each (``_frontend.py``, ``_calls.py``)."""

from __future__ import annotations

import ast

from . import _intrinsics as I  # noqa: N812

# Op-table rows by the names kernels call them: NumPy's, ember's and math's.
_UNARY = {
    "sqrt", "exp", "expm1", "log", "log1p", "log2", "log10", "sin", "cos", "tan", "asin", "acos",
    "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "abs", "negative", "positive",
    "sign", "square", "reciprocal", "conj", "floor", "ceil", "trunc", "round", "isnan", "isinf",
    "isfinite", "signbit", "logical_not", "bitwise_invert", "real", "imag",
}  # fmt: skip
_BINARY = {
    "add", "subtract", "multiply", "divide", "floor_divide", "remainder", "fmod", "pow",
    "maximum", "minimum", "atan2", "hypot", "copysign", "nextafter", "logaddexp", "gcd", "lcm",
    "equal", "not_equal", "less", "less_equal", "greater", "greater_equal", "logical_and",
    "logical_or", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor",
    "bitwise_left_shift", "bitwise_right_shift",
}  # fmt: skip
_NUMPY_ALIASES = {
    "power": "pow", "absolute": "abs", "fabs": "abs", "arcsin": "asin", "arccos": "acos",
    "arctan": "atan", "arcsinh": "asinh", "arccosh": "acosh", "arctanh": "atanh",
    "arctan2": "atan2", "conjugate": "conj", "invert": "bitwise_invert",
    "bitwise_not": "bitwise_invert", "left_shift": "bitwise_left_shift",
    "right_shift": "bitwise_right_shift", "true_divide": "divide", "mod": "remainder",
    "rint": "round",
}  # fmt: skip
_BOOL_RESULT = {
    "isnan", "isinf", "isfinite", "signbit", "logical_not", "equal", "not_equal", "less",
    "less_equal", "greater", "greater_equal", "logical_and", "logical_or", "logical_xor",
}  # fmt: skip
_FLOAT_RESULT = {
    "sqrt", "exp", "expm1", "log", "log1p", "log2", "log10", "sin", "cos", "tan", "asin", "acos",
    "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "divide", "atan2", "hypot",
    "copysign", "nextafter", "logaddexp", "reciprocal",
}  # fmt: skip
# math's functions that are op-table rows (math.floor/ceil/trunc return int, as Python's).
_MATH = {
    "sqrt": "sqrt", "exp": "exp", "expm1": "expm1", "log1p": "log1p", "log2": "log2",
    "log10": "log10", "sin": "sin", "cos": "cos", "tan": "tan", "asin": "asin", "acos": "acos",
    "atan": "atan", "sinh": "sinh", "cosh": "cosh", "tanh": "tanh", "asinh": "asinh",
    "acosh": "acosh", "atanh": "atanh", "fabs": "abs", "atan2": "atan2", "hypot": "hypot",
    "copysign": "copysign", "isnan": "isnan", "isinf": "isinf", "isfinite": "isfinite",
    "fmod": "fmod", "pow": "pow", "floor": "floor", "ceil": "ceil", "trunc": "trunc",
}  # fmt: skip
# math's functions with no op-table row: C math functions of the same name.
_CMATH = {k: k for k in ("erf", "erfc", "lgamma", "exp2", "cbrt")} | {"gamma": "tgamma"}

_SREG = {
    (I.threadIdx, "x"): "((int)ej::tid_x())", (I.threadIdx, "y"): "((int)ej::tid_y())",
    (I.threadIdx, "z"): "((int)ej::tid_z())", (I.blockIdx, "x"): "((int)ej::bid_x())",
    (I.blockIdx, "y"): "((int)ej::bid_y())", (I.blockIdx, "z"): "((int)ej::bid_z())",
    (I.blockDim, "x"): "((int)ej::bdim_x())", (I.blockDim, "y"): "((int)ej::bdim_y())",
    (I.blockDim, "z"): "((int)ej::bdim_z())", (I.gridDim, "x"): "((int)ej::gdim_x())",
    (I.gridDim, "y"): "((int)ej::gdim_y())", (I.gridDim, "z"): "((int)ej::gdim_z())",
}  # fmt: skip

_BINOPS = {
    ast.Add: "add", ast.Sub: "subtract", ast.Mult: "multiply", ast.Div: "divide",
    ast.FloorDiv: "floor_divide", ast.Mod: "remainder", ast.Pow: "pow",
    ast.LShift: "bitwise_left_shift", ast.RShift: "bitwise_right_shift",
    ast.BitAnd: "bitwise_and", ast.BitOr: "bitwise_or", ast.BitXor: "bitwise_xor",
}  # fmt: skip
_CMPOPS = {
    ast.Lt: ("less", "<"), ast.LtE: ("less_equal", "<="), ast.Gt: ("greater", ">"),
    ast.GtE: ("greater_equal", ">="), ast.Eq: ("equal", "=="), ast.NotEq: ("not_equal", "!="),
}  # fmt: skip


# fastmath=True: float32 rows the hardware approximates (ej::fast_* are __sinf, ... on the GPU).
_FAST = {k: f"ej::fast_{k}" for k in ("sin", "cos", "tan", "exp", "log", "log2", "log10", "divide")}
