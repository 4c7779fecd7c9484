"""Calls inside kernels: intrinsics (``cuda.grid``, ``cuda.shared.array``, ``cuda.atomic.*``,
warp functions), Python builtins, ``math`` functions, NumPy's and ember's ufuncs on scalars,
dtype casts and device functions. ``call(compiler, node)`` returns the emitted value."""

from __future__ import annotations

import ast
import builtins
import math

import numpy as np

from . import _intrinsics as I  # noqa: N812
from . import _types as T  # noqa: N812
from ._frontend import _BINARY, _CMATH, _MATH, _NUMPY_ALIASES, _UNARY, _Value


class _GridGroup:
    """What ``cuda.cg.this_grid()`` returns inside a kernel."""


GRID = _GridGroup()

_ATOMIC_2 = {
    "add": "add", "sub": "sub", "max": "max", "min": "min", "nanmax": "nanmax",
    "nanmin": "nanmin", "and_": "and", "or_": "or", "xor": "xor", "exch": "exch", "inc": "inc",
    "dec": "dec",
}  # fmt: skip


def call(c, e):
    if e.keywords and not _takes_keywords(c, e):
        c.unsupported(e, "keyword arguments in this call")
    f = e.func
    # Methods: grid.sync(), z.conjugate()
    if isinstance(f, ast.Attribute):
        obj = c._static(f.value)
        if obj is GRID:
            if f.attr == "sync" and not e.args:
                c.uses.add("grid_sync")
                return _Value("ej::grid_sync()", T.NONE)
            c.fail(e, f"the grid group has no method '{f.attr}'", AttributeError)
        if obj is None:
            base = c._expr(f.value)
            if isinstance(base.type, T.Opaque) and base.type.obj is GRID:
                if f.attr == "sync":
                    c.uses.add("grid_sync")
                    return _Value("ej::grid_sync()", T.NONE)
                c.fail(e, f"the grid group has no method '{f.attr}'", AttributeError)
            if isinstance(base.type, T.Scalar) and f.attr == "conjugate" and not e.args:
                return c._call_op("conj", [base], e)
            c.fail(e, f"a {base.type!r} has no method '{f.attr}' in kernels", AttributeError)
    callee = c._static(f)
    if callee is None:
        v = c._expr(f)
        if isinstance(v.type, T.Opaque):
            callee = v.type.obj
        else:
            c.fail(e, f"a {v.type!r} is not callable")
    name = getattr(callee, "name", None) if isinstance(callee, I.Intrinsic) else None
    if name is not None:
        return _intrinsic(c, e, callee, name)
    if callee is GRID.__class__:
        c.fail(e, "use cuda.cg.this_grid()")
    from ._jit import Dispatcher

    if isinstance(callee, Dispatcher):
        return _device_call(c, e, callee)
    if callee in _BUILTINS:
        return _BUILTINS[callee](c, e)
    if isinstance(callee, type) and issubclass(callee, np.generic) or _is_dtype_obj(callee):
        return _cast(c, e, T.dtype_name(callee))
    if getattr(callee, "__module__", None) == "math" or callee in vars(math).values():
        return _math(c, e, callee)
    op = _ufunc_name(callee)
    if op is not None:
        return _ufunc(c, e, op)
    c.unsupported(e, f"calling {getattr(callee, '__qualname__', callee)!r}")


def _takes_keywords(c, e):
    callee = c._static(e.func)
    return callee in (I.shared.array, I.local.array) or callee is builtins.print


def _is_dtype_obj(obj):
    if isinstance(obj, np.dtype):
        return True
    mod = type(obj).__module__ or ""
    return (mod.startswith("ember") or mod.startswith("numba")) and T.dtype_name(obj) is not None


def _args(c, e, n=None, lo=None, hi=None, what=""):
    k = len(e.args)
    if n is not None and k != n:
        c.fail(e, f"{what} takes {n} argument{'s' if n != 1 else ''}, got {k}")
    if lo is not None and not lo <= k <= hi:
        c.fail(e, f"{what} takes {lo} to {hi} arguments, got {k}")
    return [c._expr(a) for a in e.args]


# ---- intrinsics ------------------------------------------------------------------------------


def _intrinsic(c, e, obj, name):
    if obj is I.grid or obj is I.gridsize:
        (n,) = _const_args(c, e, 1, name)
        if n not in (1, 2, 3):
            c.fail(e, f"cuda.{name}(ndim) takes 1, 2 or 3, got {n}")
        fn = "grid" if obj is I.grid else "gridsize"
        if n == 1:
            return _Value(f"ej::{fn}1()", T.INT64)
        return _Value(f"ej::{fn}{n}()", T.Tuple([T.INT64] * n))
    if obj is I.syncthreads:
        _args(c, e, 0, what=name)
        c.uses.add("barrier")
        return _Value("ej::syncthreads()", T.NONE)
    if obj in (I.syncthreads_count, I.syncthreads_and, I.syncthreads_or):
        (p,) = _args(c, e, 1, what=name)
        c.uses.add("barrier")
        return _Value(f"ej::{name}({c._truth(p, e)})", T.INT32)
    if obj is I.syncwarp:
        args = _args(c, e, lo=0, hi=1, what=name)
        c.uses.add("warp")
        mask = args[0].code if args else "0xffffffffu"
        return _Value(f"ej::syncwarp((unsigned)({mask}))", T.NONE)
    if obj in (I.threadfence, I.threadfence_block, I.threadfence_system):
        _args(c, e, 0, what=name)
        return _Value(f"ej::{name}()", T.NONE)
    if obj is I.activemask or obj is I.lanemask_lt:
        _args(c, e, 0, what=name)
        c.uses.add("warp")
        return _Value(f"ej::{name}()", T.Scalar("uint32"))
    if obj in (I.shfl_sync, I.shfl_up_sync, I.shfl_down_sync, I.shfl_xor_sync):
        mask, v, k = _args(c, e, 3, what=name)
        c._need_scalar(v, e)
        c.uses.add("warp")
        t = v.type.strong
        return _Value(f"ej::{name}((unsigned)({mask.code}), {c._cast(v, t)}, (int)({k.code}))", t)
    if obj is I.ballot_sync:
        mask, p = _args(c, e, 2, what=name)
        c.uses.add("warp")
        return _Value(f"ej::ballot_sync((unsigned)({mask.code}), {c._truth(p, e)})",
                      T.Scalar("uint32"))  # fmt: skip
    if obj is I.all_sync or obj is I.any_sync:
        mask, p = _args(c, e, 2, what=name)
        c.uses.add("warp")
        return _Value(f"ej::{name}((unsigned)({mask.code}), {c._truth(p, e)})", T.INT32)
    if obj is I.fma:
        a, b, d = _args(c, e, 3, what=name)
        t = T.promote(T.promote(a.type, b.type), d.type).strong
        t = T.float_of(t)
        return _Value(f"ej::fma({c._cast(a, t)}, {c._cast(b, t)}, {c._cast(d, t)})", t)
    if obj is I.shared.array or obj is I.local.array:
        return _array_decl(c, e, shared=obj is I.shared.array)
    if obj is I.const.array_like:
        return _const_array(c, e)
    if obj is I.cg.this_grid:
        _args(c, e, 0, what=name)
        c.uses.add("grid_sync")
        return _Value("", T.Opaque(GRID))
    short = name.split(".", 1)[1] if name.startswith("atomic.") else None
    if short is not None:
        return _atomic(c, e, short)
    c.unsupported(e, f"cuda.{name}")


def _const_args(c, e, n, what):
    out = []
    if len(e.args) != n:
        c.fail(e, f"cuda.{what} takes {n} argument(s)")
    for a in e.args:
        v = _static_value(c, a)
        if not isinstance(v, int):
            c.fail(a, f"cuda.{what}: the argument must be a constant integer")
        out.append(v)
    return out


def _static_value(c, node):
    """A compile-time constant (a literal, a global number or tuple of numbers), else None."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, (ast.Tuple, ast.List)):
        vals = [_static_value(c, x) for x in node.elts]
        return None if any(v is None for v in vals) else tuple(vals)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        v = _static_value(c, node.operand)
        return -v if isinstance(v, (int, float)) else None
    if isinstance(node, ast.BinOp):
        a, b = _static_value(c, node.left), _static_value(c, node.right)
        if isinstance(a, int) and isinstance(b, int):
            ops = {ast.Add: a + b, ast.Sub: a - b, ast.Mult: a * b}
            if type(node.op) in ops:
                return ops[type(node.op)]
            if isinstance(node.op, ast.FloorDiv) and b:
                return a // b
        return None
    obj = c._static(node)
    if isinstance(obj, (int, float, bool, tuple)) and not isinstance(obj, np.ndarray):
        return obj
    return None


def _array_decl(c, e, shared):
    kw = {k.arg: k.value for k in e.keywords}
    nodes = list(e.args) + [kw.pop("shape", None), kw.pop("dtype", None)]
    nodes = [n for n in nodes if n is not None]
    what = "shared.array" if shared else "local.array"
    if kw or len(nodes) != 2:
        c.fail(e, f"cuda.{what} takes (shape, dtype)")
    shape = _static_value(c, nodes[0])
    if isinstance(shape, int):
        shape = (shape,)
    if not isinstance(shape, tuple) or not all(isinstance(s, int) and s >= 0 for s in shape):
        c.fail(e, f"cuda.{what}: the shape must be a constant int or tuple of ints")
    dt = c._static(nodes[1])
    if dt is None:
        v = c._expr(nodes[1])
        dt = v.type.obj if isinstance(v.type, T.Opaque) else None
    name = T.dtype_name(dt) if dt is not None else None
    if name is None:
        c.fail(e, f"cuda.{what}: unsupported dtype {dt!r}")
    t = T.Scalar(name)
    arr = c._temp()
    if shared and (shape == (0,) or 0 in shape):
        c.uses.add("dynamic_shared")
        return _Value(f"ej::dynamic_shared<{t.ctype}>()", T.Array(name, 1))
    size = math.prod(shape)
    if size == 0:
        c.fail(e, f"cuda.{what}: an empty array")
    if not c._typing:
        if shared:
            c.uses.add("shared")
            c._emit(f"EJ_SHARED({t.ctype}, {arr}, {size});")
        else:
            c._emit(f"{t.ctype} {arr}[{size}];")
    strides = [math.prod(shape[k + 1 :]) for k in range(len(shape))]
    return _Value(
        f"ej::make_array<{t.ctype}, {len(shape)}>({arr}, "
        f"{{{', '.join(f'{s}ll' for s in shape)}}}, {{{', '.join(f'{s}ll' for s in strides)}}})",
        T.Array(name, len(shape)),
    )


def _const_array(c, e):
    if len(e.args) != 1:
        c.fail(e, "cuda.const.array_like takes one array")
    obj = c._static(e.args[0])
    if not isinstance(obj, np.ndarray):
        c.fail(e, "cuda.const.array_like needs a NumPy array known when the kernel compiles "
               "(a global or closure variable)")  # fmt: skip
    name = T.dtype_name(obj.dtype)
    if name is None or obj.dtype.kind == "c" or name == "float16":
        c.fail(e, f"cuda.const.array_like: unsupported dtype {obj.dtype}")
    a = np.ascontiguousarray(obj)
    t = T.Scalar(name)
    sym = f"c_{id(obj):x}"
    vals = ", ".join(c._const(v, T.literal(v)) for v in a.ravel().tolist()) or "0"
    decl = f"EJ_CONSTANT {t.ctype} {sym}[{max(a.size, 1)}] = {{{vals}}};"
    if decl not in c.shared:
        c.shared.append(decl)
    shape = a.shape or (1,)
    strides = [math.prod(shape[k + 1 :]) for k in range(len(shape))]
    return _Value(
        f"ej::make_array<{t.ctype}, {len(shape)}>(const_cast<{t.ctype}*>({sym}), "
        f"{{{', '.join(f'{s}ll' for s in shape)}}}, {{{', '.join(f'{s}ll' for s in strides)}}})",
        T.Array(name, len(shape)),
    )


def _atomic(c, e, op):
    if op in ("cas", "compare_and_swap"):
        if op == "cas":
            ary, idx, old, val = (
                e.args if len(e.args) == 4 else c.fail(e, "atomic.cas(ary, idx, old, val)")
            )
        else:
            if len(e.args) != 3:
                c.fail(e, "atomic.compare_and_swap(ary, old, val)")
            ary, old, val = e.args
            idx = ast.Constant(0)
        ref = _atomic_ref(c, e, ary, idx)
        t = ref.type
        if t.kind not in "iu":
            c.fail(e, f"atomic.{op} needs an integer array, got {t!r}")
        o, v = c._expr(old), c._expr(val)
        return _Value(f"ej::atomic_cas(&{ref.code}, {c._cast(o, t)}, {c._cast(v, t)})", t)
    if len(e.args) != 3:
        c.fail(e, f"cuda.atomic.{op} takes (array, index, value)")
    ary, idx, val = e.args
    ref = _atomic_ref(c, e, ary, idx)
    t = ref.type
    v = c._expr(val)
    c._need_scalar(v, e)
    if t.kind in "cb" or t.name == "float16" and op not in ("add", "max", "min"):
        c.fail(e, f"atomic.{op} is not supported for {t!r} arrays")
    if op in ("and_", "or_", "xor", "inc", "dec") and t.kind not in "iu":
        c.fail(e, f"atomic.{op} needs an integer array, got {t!r}")
    if op in ("nanmax", "nanmin") and t.kind != "f":
        op = op[3:]
    return _Value(f"ej::atomic_{_ATOMIC_2[op]}(&{ref.code}, {c._cast(v, t)})", t)


def _atomic_ref(c, e, ary, idx):
    a = c._expr(ary)
    if not isinstance(a.type, T.Array):
        c.fail(e, f"atomics take an array, got {a.type!r}")
    sub = ast.Subscript(value=ary, slice=idx, ctx=ast.Load())
    ast.copy_location(sub, e)
    ref = c._subscript(sub, want_ref=True)
    if not isinstance(ref.type, T.Scalar):
        c.fail(e, "atomics take one element: index every dimension")
    return ref


# ---- device functions ------------------------------------------------------------------------


def _device_call(c, e, disp):
    if not disp.device:
        c.fail(e, f"{disp.__name__} is a kernel: kernels are launched, not called; use "
               "@cuda.jit(device=True) for functions called from kernels")  # fmt: skip
    args = [c._expr(a) for a in e.args]
    types = []
    for v, node in zip(args, e.args, strict=True):
        if isinstance(v.type, T.Opaque) or v.type == T.NONE:
            c.fail(node, f"cannot pass {v.type!r} to a device function")
        types.append(v.type.strong if isinstance(v.type, T.Scalar) else v.type)
    cname, ret = c.resolve_device(disp, types, e)
    code = f"{cname}({', '.join(c._cast(v, t) for v, t in zip(args, types, strict=True))})"
    return _Value(code, ret)


# ---- builtins, math, ufuncs, casts -----------------------------------------------------------


def _len(c, e):
    (a,) = _args(c, e, 1, what="len")
    if isinstance(a.type, T.Array):
        return _Value(f"{a.code}.shape[0]", T.INT64)
    if isinstance(a.type, T.Tuple):
        return _Value(str(len(a.type.items)), T.Scalar("int64", weak=True))
    c.fail(e, f"len() of a {a.type!r}")


def _minmax(c, e, which):
    args = _args(c, e, what=which)
    if len(args) == 1 and isinstance(args[0].type, T.Tuple):
        tup = args[0]
        args = [_Value(f"{tup.code}[{k}]", t) for k, t in enumerate(tup.type.items)]
    if len(args) < 2:
        c.fail(e, f"{which}() takes two or more numbers inside kernels")
    v = args[0]
    for w in args[1:]:
        t = T.promote(v.type, w.type)
        if all(a.type.weak for a in (v, w)):
            pass
        cmp = "<" if which == "min" else ">"
        a, b = c._cast(v, t.strong), c._cast(w, t.strong)
        # Python's min/max: the first of equal values; NaN compares false (kept as Python does).
        v = _Value(f"ej::py_{which}({a}, {b})", t)
        del cmp, a, b
    return v


def _abs(c, e):
    (a,) = _args(c, e, 1, what="abs")
    return c._call_op("abs", [a], e)


def _round(c, e):
    args = _args(c, e, lo=1, hi=2, what="round")
    x = args[0]
    c._need_scalar(x, e)
    if len(args) == 1:
        if x.type.kind in "iub":
            return _Value(c._cast(x, T.INT64), T.INT64)
        r = c._call_op("round", [x], e)
        return _Value(f"(long long)({r.code})", T.INT64)
    nd = _static_value(c, e.args[1])
    if not isinstance(nd, int):
        c.fail(e, "round(x, ndigits): ndigits must be a constant integer")
    t = T.float_of(x.type.strong)
    s = c._const(10.0**nd, T.FLOAT64)
    return _Value(f"(({t.ctype})(ember::ops::op_round::apply<{t.ctype}>(({t.ctype})({x.code}) * "
                  f"({t.ctype}){s}) / ({t.ctype}){s}))", t)  # fmt: skip


def _int(c, e):
    (a,) = _args(c, e, 1, what="int")
    c._need_scalar(a, e)
    if a.type.kind == "c":
        c.fail(e, "int() of a complex number")
    return _Value(c._cast(a, T.INT64) if a.type.kind != "f" else f"(long long)({a.code})", T.INT64)


def _float(c, e):
    (a,) = _args(c, e, 1, what="float")
    c._need_scalar(a, e)
    return _Value(c._cast(a, T.FLOAT64), T.FLOAT64)


def _bool(c, e):
    (a,) = _args(c, e, 1, what="bool")
    return _Value(c._truth(a, e), T.BOOL)


def _complex(c, e):
    args = _args(c, e, lo=1, hi=2, what="complex")
    t = T.Scalar("complex128")
    if len(args) == 1:
        return _Value(c._cast(args[0], t), t)
    re, im = (c._cast(a, T.FLOAT64) for a in args)
    return _Value(f"ej::complex<double>({re}, {im})", t)


def _print(c, e):
    vals = []
    for a in e.args:
        if isinstance(a, ast.Constant) and isinstance(a.value, str):
            vals.append(("s", a.value))
            continue
        v = c._expr(a)
        c._need_scalar(v, a)
        vals.append(("v", v))
    fmt, args = [], []
    for kind, v in vals:
        if kind == "s":
            fmt.append(v.replace("%", "%%").replace("\\", "\\\\").replace('"', '\\"'))
        elif v.type.kind == "b":
            fmt.append("%s")
            args.append(f'(({v.code}) ? "True" : "False")')
        elif v.type.kind in "iu":
            fmt.append("%lld" if v.type.kind == "i" else "%llu")
            args.append(
                f"({'long long' if v.type.kind == 'i' else 'unsigned long long'})({v.code})"
            )
        elif v.type.kind == "f":
            fmt.append("%g")
            args.append(f"(double)({v.code})")
        else:
            fmt.append("(%g%+gj)")
            args.append(f"(double)(({v.code}).real()), (double)(({v.code}).imag())")
    text = " ".join(fmt).replace("\n", "\\n")
    call = f'printf("{text}\\n"' + "".join(", " + a for a in args) + ")"
    return _Value(call, T.NONE)


def _range_outside(c, e):
    c.unsupported(e, "range() outside a for loop")


_BUILTINS = {
    builtins.len: _len,
    builtins.min: lambda c, e: _minmax(c, e, "min"),
    builtins.max: lambda c, e: _minmax(c, e, "max"),
    builtins.abs: _abs,
    builtins.round: _round,
    builtins.int: _int,
    builtins.float: _float,
    builtins.bool: _bool,
    builtins.complex: _complex,
    builtins.print: _print,
    builtins.range: _range_outside,
}


def _cast(c, e, name):
    if name is None:
        c.fail(e, "unsupported dtype in a cast")
    (a,) = _args(c, e, 1, what=name)
    c._need_scalar(a, e)
    t = T.Scalar(name)
    if a.type.kind == "c" and t.kind != "c":
        c.fail(e, f"cannot cast a complex number to {name}")
    return _Value(c._cast(a, t), t)


def _math(c, e, fn):
    name = getattr(fn, "__name__", "")
    args = _args(c, e, what=f"math.{name}")
    for a in args:
        c._need_scalar(a, e)
        if a.type.kind == "c":
            c.fail(e, f"math.{name} takes real numbers; use cmath or numpy for complex")
    if name in ("floor", "ceil", "trunc"):
        (a,) = args
        if a.type.kind in "iub":
            return _Value(c._cast(a, T.INT64), T.INT64)
        r = c._call_op(name, [a], e)
        return _Value(f"(long long)({r.code})", T.INT64)
    if name in ("isnan", "isinf", "isfinite"):
        return c._call_op(name, args, e)
    if name == "log" and len(args) == 2:
        x, b = (_float_arg(c, a) for a in args)
        return c._call_op("divide", [c._call_op("log", [x], e), c._call_op("log", [b], e)], e)
    if name == "log":
        return c._call_op("log", [_float_arg(c, args[0])], e)
    if name in ("degrees", "radians"):
        (a,) = args
        x = _float_arg(c, a)
        k = "57.29577951308232" if name == "degrees" else "0.017453292519943295"
        return _Value(f"({x.type.ctype})({x.code} * {k})", x.type)
    if name in _MATH:
        args = [_float_arg(c, a) if _MATH[name] not in ("abs",) else a for a in args]
        if name == "fabs":
            args = [_float_arg(c, a) for a in args]
        return c._call_op(_MATH[name], args, e)
    if name in _CMATH:
        (a,) = args
        x = _float_arg(c, a)
        return _Value(f"ej::{_CMATH[name]}({x.code})", x.type)
    c.unsupported(e, f"math.{name}")


def _float_arg(c, a):
    """Python's math functions compute in float64 for integers (and keep float32)."""
    if a.type.kind in "iub":
        return _Value(c._cast(a, T.FLOAT64), T.FLOAT64)
    if a.type.weak:
        return _Value(a.code, T.FLOAT64)
    return a


def _ufunc_name(obj):
    """The op-table row a NumPy ufunc or an ember function is, or None."""
    name = None
    if isinstance(obj, np.ufunc):
        name = obj.__name__
    elif (getattr(obj, "__module__", "") or "").startswith("ember"):
        name = getattr(obj, "__name__", None)
    if name is None:
        return None
    name = _NUMPY_ALIASES.get(name, name)
    return name if name in _UNARY or name in _BINARY else None


def _ufunc(c, e, op):
    n = 1 if op in _UNARY else 2
    args = _args(c, e, n, what=op)
    return c._call_op(op, args, e)
