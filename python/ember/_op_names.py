"""NumPy's names for ember's elementwise ops, where the two differ: one table for the module's
aliases (ember.power, ember.arcsin, ...) and for messages that name NumPy's ufuncs."""

# ember's (Array API) name -> NumPy's ufunc name
NUMPY_NAMES = {
    "pow": "power",
    "abs": "absolute",
    "asin": "arcsin",
    "acos": "arccos",
    "atan": "arctan",
    "asinh": "arcsinh",
    "acosh": "arccosh",
    "atanh": "arctanh",
    "atan2": "arctan2",
    "conj": "conjugate",
    "bitwise_invert": "invert",
    "bitwise_left_shift": "left_shift",
    "bitwise_right_shift": "right_shift",
}

# NumPy's further spellings of the same functions (aliases of its ufuncs, not their names)
EXTRA_ALIASES = {"bitwise_not": "bitwise_invert", "true_divide": "divide", "mod": "remainder"}
