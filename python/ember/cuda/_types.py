"""Types of ember's Python kernels (``ember.cuda.jit``): scalars, arrays, tuples, and the
promotion rules between them (NumPy 2's, with NEP 50's weak Python literals, as ember's arrays).
"""

from __future__ import annotations

import numpy as np

# dtype name -> C++ type in generated code (the same on the host and the device; float16 and
# bfloat16 hold their bits and compute in float, as ember's op table does).
CTYPES = {
    "bool": "bool",
    "int8": "signed char",
    "int16": "short",
    "int32": "int",
    "int64": "long long",
    "uint8": "unsigned char",
    "uint16": "unsigned short",
    "uint32": "unsigned int",
    "uint64": "unsigned long long",
    "float16": "ej::half",
    "float32": "float",
    "float64": "double",
    "complex64": "ej::complex<float>",
    "complex128": "ej::complex<double>",
}
KINDS = {n: np.dtype(n).kind for n in CTYPES}


class Type:
    """A type of a value in a kernel."""

    __slots__ = ()

    def key(self):
        raise NotImplementedError

    def __eq__(self, other):
        return isinstance(other, Type) and self.key() == other.key()

    def __hash__(self):
        return hash(self.key())


class Scalar(Type):
    """A scalar of a NumPy dtype; `weak`: a Python literal whose dtype yields to the other
    operand's (NEP 50)."""

    __slots__ = ("name", "weak")

    def __init__(self, name, weak=False):
        self.name = name
        self.weak = weak

    def key(self):
        return ("s", self.name, self.weak)

    @property
    def kind(self):
        return KINDS[self.name]

    @property
    def ctype(self):
        return CTYPES[self.name]

    @property
    def strong(self):
        return Scalar(self.name) if self.weak else self

    def __repr__(self):
        return self.name + (" (literal)" if self.weak else "")


class Array(Type):
    """An array argument or view: element dtype, number of dimensions; elements addressed with
    shape and strides in elements (any layout)."""

    __slots__ = ("dtype", "ndim")

    def __init__(self, dtype, ndim):
        self.dtype = dtype
        self.ndim = ndim

    def key(self):
        return ("a", self.dtype, self.ndim)

    @property
    def elem(self):
        return Scalar(self.dtype)

    @property
    def ctype(self):
        return f"ej::Array<{CTYPES[self.dtype]}, {self.ndim}>"

    def __repr__(self):
        return f"array({self.dtype}, {self.ndim}d)"


class Tuple(Type):
    """A tuple of values (all of one scalar type in generated code: indices, shapes, grid())."""

    __slots__ = ("items",)

    def __init__(self, items):
        self.items = tuple(items)

    def key(self):
        return ("t", tuple(t.key() for t in self.items))

    @property
    def ctype(self):
        elem = self.items[0] if self.items else INT64
        for t in self.items[1:]:
            elem = promote(elem, t)
        return f"ej::Tuple<{elem.strong.ctype}, {len(self.items)}>"

    def __repr__(self):
        return "tuple(" + ", ".join(map(repr, self.items)) + ")"


class NoneType(Type):
    __slots__ = ()

    def key(self):
        return ("none",)

    ctype = "void"

    def __repr__(self):
        return "none"


class Opaque(Type):
    """A compile-time object: a module, an intrinsic, a device function, a dtype."""

    __slots__ = ("obj",)

    def __init__(self, obj):
        self.obj = obj

    def key(self):
        return ("o", id(self.obj))

    def __repr__(self):
        return f"<{self.obj!r}>"


class Value:
    """An emitted expression: C++ text and its type."""

    __slots__ = ("code", "type")

    def __init__(self, code, typ):
        self.code = code
        self.type = typ


BOOL = Scalar("bool")
INT32 = Scalar("int32")
INT64 = Scalar("int64")
UINT64 = Scalar("uint64")
FLOAT32 = Scalar("float32")
FLOAT64 = Scalar("float64")
NONE = NoneType()


def dtype_name(obj):
    """The dtype name of a dtype spelled as NumPy, ember, Numba or a string; None if it is none."""
    if isinstance(obj, str):
        s = obj
    elif isinstance(obj, type) and issubclass(obj, np.generic):
        s = np.dtype(obj).name
    elif any(obj is t for t in (bool, int, float, complex)):
        return {bool: "bool", int: "int64", float: "float64", complex: "complex128"}[obj]
    elif isinstance(obj, np.dtype):
        s = obj.name
    else:
        s = getattr(obj, "name", None) or str(obj)
    s = {"float": "float64", "int": "int64", "complex": "complex128", "bool_": "bool"}.get(s, s)
    return s if s in CTYPES else None


def of_value(v):
    """The type of a Python or NumPy scalar value passed to a kernel (strong: it is a value)."""
    if isinstance(v, (bool, np.bool_)):
        return BOOL
    if isinstance(v, np.generic):
        return Scalar(v.dtype.name)
    if isinstance(v, int):
        return INT64 if -(2**63) <= v < 2**63 else UINT64
    if isinstance(v, float):
        return FLOAT64
    if isinstance(v, complex):
        return Scalar("complex128")
    return None


def literal(v):
    """The type of a literal in kernel source (weak)."""
    if isinstance(v, bool):
        return BOOL
    if isinstance(v, int):
        return Scalar("int64", weak=True)
    if isinstance(v, float):
        return Scalar("float64", weak=True)
    if isinstance(v, complex):
        return Scalar("complex128", weak=True)
    return None


_RANK = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}


def promote(a, b):
    """The result type of arithmetic on scalars a and b (NumPy 2 with NEP 50)."""
    if not isinstance(a, Scalar) or not isinstance(b, Scalar):
        raise TypeError(f"cannot combine {a!r} and {b!r}")
    if a.weak and b.weak:
        name = a.name if _RANK[a.kind] >= _RANK[b.kind] else b.name
        return Scalar(name, weak=True)
    if a.weak or b.weak:
        strong, weak = (b, a) if a.weak else (a, b)
        if _RANK[weak.kind] <= _RANK[strong.kind] and not (weak.kind == "i" and strong.kind == "b"):
            return strong
        if weak.kind == "i":  # bool with a Python int
            return INT64
        if weak.kind == "f":  # integers or bool with a Python float
            return FLOAT64 if strong.kind in "biu" else strong
        # a Python complex
        if strong.kind == "f":
            return Scalar("complex64" if strong.name in ("float16", "float32") else "complex128")
        return Scalar("complex128")
    return Scalar(np.promote_types(a.name, b.name).name)


def unify(a, b):
    """The type of a variable assigned values of types a and b (Numba's unification: the
    promotion of both, literals strong)."""
    if a is None:
        return b.strong if isinstance(b, Scalar) else b
    if b is None or a == b:
        return a
    if isinstance(a, Scalar) and isinstance(b, Scalar):
        return promote(a.strong, b.strong)
    if isinstance(a, Tuple) and isinstance(b, Tuple) and len(a.items) == len(b.items):
        return Tuple(unify(x, y) for x, y in zip(a.items, b.items, strict=True))
    raise TypeError(f"a variable cannot hold both {a!r} and {b!r}")


def float_of(t):
    """The floating type true division and math functions give for scalar type t."""
    if t.kind in "fc":
        return t
    return FLOAT64
