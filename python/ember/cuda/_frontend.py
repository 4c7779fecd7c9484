"""The compiler of ember's Python kernels: a Python function's AST, typed from the types of the
call's arguments, to C++ text that ``_runtime.py``'s headers make CUDA (NVRTC) or host code.

One pass types the locals (each the unification of every value assigned to it, repeated until
nothing changes, as Numba does); a second emits C++: locals declared at the top of the function
with those types, arithmetic through ember's op-table scalar bodies where NumPy's semantics need
them (integer wraparound, floor division, shifts, powers, math functions: ``np.sin(x)`` in a
kernel is ``ember.sin``'s body), arrays as (data, shape, strides) views.
"""

from __future__ import annotations

import ast
import builtins
import inspect
import math
import textwrap

import numpy as np

from . import _intrinsics as I  # noqa: N812
from . import _types as T  # noqa: N812
from ._indexing import ArrayIndexing
from ._names import (  # noqa: F401  (_calls imports some of these from here)
    _BINARY,
    _BINOPS,
    _BOOL_RESULT,
    _CMATH,
    _CMPOPS,
    _FAST,
    _FLOAT_RESULT,
    _MATH,
    _NUMPY_ALIASES,
    _SREG,
    _UNARY,
)


class TypingError(TypeError):
    """A kernel uses a type or construct the compiler cannot handle; the message names the
    Python file, line and construct."""


class UnsupportedError(TypingError):
    """A Python construct kernels do not support."""


def _compute_ctype(t):
    """The C++ type arithmetic on t happens in (float16 in float)."""
    return "float" if t.name == "float16" else t.ctype


class Source:
    """A Python function's parsed source and where it came from."""

    def __init__(self, pyfunc):
        self.func = pyfunc
        self.name = pyfunc.__name__
        generated = getattr(pyfunc, "__ember_source__", None)
        if generated is not None:  # a kernel ember generated (vectorize, reduce, ...)
            text, self.filename = generated
            lines, first = text.splitlines(keepends=True), 1
        else:
            try:
                lines, first = inspect.getsourcelines(pyfunc)
            except (OSError, TypeError) as e:
                raise TypingError(
                    f"ember.cuda.jit: cannot read the source of {pyfunc.__qualname__} ({e}); "
                    "kernels must be defined in a file or a notebook cell"
                ) from None
            self.filename = inspect.getsourcefile(pyfunc) or "<unknown>"
        self.text = textwrap.dedent("".join(lines))
        tree = ast.parse(self.text)
        fn = tree.body[0]
        while isinstance(fn, ast.ClassDef):  # pragma: no cover - methods are not kernels
            fn = fn.body[0]
        if not isinstance(fn, ast.FunctionDef):
            raise TypingError(f"ember.cuda.jit: {pyfunc.__qualname__} is not a def function")
        ast.increment_lineno(tree, first - 1)
        self.tree = fn
        self.params = [a.arg for a in fn.args.args]
        a = fn.args
        if a.vararg or a.kwarg or a.kwonlyargs or a.posonlyargs:
            raise UnsupportedError(
                f"{self.filename}:{fn.lineno}: kernel {self.name}: *args, **kwargs and "
                "keyword-only parameters are not supported"
            )
        self.defaults = pyfunc.__defaults__ or ()
        closure = {}
        if pyfunc.__closure__:
            for name, cell in zip(pyfunc.__code__.co_freevars, pyfunc.__closure__, strict=True):
                try:
                    closure[name] = cell.cell_contents
                except ValueError:
                    pass
        self.closure = closure


_Value = T.Value  # an emitted expression: C++ text and its type


class FunctionCompiler(ArrayIndexing):
    """Types and emits one specialization of a kernel or device function.

    `resolve_device(dispatcher, arg_types)` compiles a device function's specialization and
    returns (C++ name, return type): how calls between jit functions are linked."""

    def __init__(self, source, arg_types, *, kernel, resolve_device, fastmath=False):
        self.src = source
        self.arg_types = list(arg_types)
        self.kernel = kernel
        self.resolve_device = resolve_device
        self.fastmath = fastmath
        self.locals = {}
        self.return_type = None
        self.uses = set()  # what the runtime must provide: "barrier", "warp", "grid_sync", ...
        self.shared = []  # declarations of static shared arrays
        self._tmp = 0
        self._typing = True
        if len(arg_types) != len(source.params):
            raise TypingError(
                f"{self.where(source.tree)}: {source.name} takes {len(source.params)} "
                f"arguments, got {len(arg_types)}"
            )

    # ---- errors -------------------------------------------------------------------------------

    def where(self, node):
        return f"{self.src.filename}:{getattr(node, 'lineno', self.src.tree.lineno)}"

    def fail(self, node, msg, cls=TypingError):
        # Every compile-time problem is a TypingError (a TypeError), as Numba's are.
        if not issubclass(cls, TypingError):
            cls = TypingError
        raise cls(f"{self.where(node)}: in {self.src.name}: {msg}")

    def unsupported(self, node, what):
        self.fail(node, f"{what} is not supported in kernels", UnsupportedError)

    # ---- entry ---------------------------------------------------------------------------------

    def compile(self, cname):
        """(C++ text of the function named `cname`, return type)."""
        for name, t in zip(self.src.params, self.arg_types, strict=True):
            self.locals[name] = t
        # Type the locals: repeat until no variable's type changes.
        for _ in range(20):
            before = dict(self.locals), self.return_type
            self._typing = True
            self._lines = []
            self._indent = 1
            self._block(self.src.tree.body)
            if (dict(self.locals), self.return_type) == before:
                break
        else:
            self.fail(self.src.tree, "the types of the local variables do not settle")
        if self.kernel and self.return_type not in (None, T.NONE):
            self.fail(self.src.tree, "a kernel cannot return a value")
        self._typing = False
        self._lines = []
        self._indent = 1
        self._block(self.src.tree.body)
        ret = self.return_type or T.NONE
        params = []
        for name, t in zip(self.src.params, self.arg_types, strict=True):
            params.append(f"{t.ctype} {self._param(name)}")
        decls = []
        for name, t in self.locals.items():
            if isinstance(t, T.Opaque):
                continue
            init = self._param(name) if name in self.src.params else "{}"
            decls.append(f"    {t.ctype} {self._var(name)} = {init};")
        body = "\n".join(decls + self._lines)
        rtype = "void" if ret == T.NONE else ret.ctype
        head = f"EJ_DEVICE {rtype} {cname}({', '.join(params)})"
        text = head + " {\n" + body + "\n}\n"
        return text, ret

    @staticmethod
    def _var(name):
        return f"v_{name}"

    @staticmethod
    def _param(name):
        return f"p_{name}"

    def _emit(self, line):
        if not self._typing:
            self._lines.append("    " * self._indent + line)

    def _temp(self):
        self._tmp += 1
        return f"t{self._tmp}"

    # ---- statements ------------------------------------------------------------------------------

    def _block(self, stmts):
        for s in stmts:
            self._stmt(s)

    def _stmt(self, s):
        m = getattr(self, "_s_" + type(s).__name__, None)
        if m is None:
            self.unsupported(s, f"the statement '{type(s).__name__}'")
        m(s)

    def _s_Pass(self, s):  # noqa: N802
        pass

    def _s_Expr(self, s):  # noqa: N802
        if isinstance(s.value, ast.Constant) and isinstance(s.value.value, str):
            return  # a docstring
        v = self._expr(s.value)
        if v.type != T.NONE and not isinstance(v.type, T.Opaque):
            self._emit(f"(void)({v.code});")
        elif v.code:
            self._emit(f"{v.code};")

    def _s_Assert(self, s):  # noqa: N802
        pass  # as Numba without debug=True: assertions are not checked in kernels

    def _s_Return(self, s):  # noqa: N802
        v = self._expr(s.value) if s.value is not None else _Value("", T.NONE)
        if v.type == T.NONE:
            if self._typing and self.return_type is None:
                self.return_type = T.NONE
            self._emit("return;")
            return
        if self._typing:
            rt = v.type.strong if isinstance(v.type, T.Scalar) else v.type
            try:
                self.return_type = (
                    rt if self.return_type in (None, T.NONE) else T.unify(self.return_type, rt)
                )
            except TypeError as e:
                self.fail(s, f"the return values have incompatible types: {e}")
            return
        self._emit(f"return {self._cast(v, self.return_type)};")

    def _s_Assign(self, s):  # noqa: N802
        v = self._expr(s.value)
        if len(s.targets) > 1:
            tmp = self._temp()
            if not self._typing and isinstance(v.type, (T.Scalar, T.Array, T.Tuple)):
                self._emit(f"auto {tmp} = {v.code};")
            v = _Value(tmp, v.type)
        for target in s.targets:
            self._assign(target, v, s)

    def _s_AnnAssign(self, s):  # noqa: N802
        if s.value is None:
            return
        self._assign(s.target, self._expr(s.value), s)

    def _assign(self, target, v, node):
        if isinstance(target, ast.Name):
            self._assign_name(target.id, v, node)
        elif isinstance(target, ast.Subscript):
            self._store(target, v)
        elif isinstance(target, (ast.Tuple, ast.List)):
            self._unpack(target, v, node)
        else:
            self.unsupported(node, f"assigning to {type(target).__name__}")

    def _assign_name(self, name, v, node):
        if isinstance(v.type, T.Opaque):
            if self._typing:
                old = self.locals.get(name)
                if old is not None and old != v.type:
                    self.fail(node, f"'{name}' is assigned different kinds of objects")
                self.locals[name] = v.type
            return
        if v.type == T.NONE:
            self.fail(node, f"'{name}' is assigned a value of no type (None)")
        if self._typing:
            try:
                self.locals[name] = T.unify(self.locals.get(name), v.type)
            except TypeError as e:
                self.fail(node, f"variable '{name}': {e}")
            return
        self._emit(f"{self._var(name)} = {self._cast(v, self.locals[name])};")

    def _unpack(self, target, v, node):
        items = target.elts
        if isinstance(v.type, T.Tuple):
            if len(v.type.items) != len(items):
                self.fail(node, f"cannot unpack {len(v.type.items)} values into {len(items)}")
            tmp = self._temp()
            if not self._typing:
                self._emit(f"auto {tmp} = {v.code};")
            for k, (t, it) in enumerate(zip(v.type.items, items, strict=True)):
                self._assign(it, _Value(f"{tmp}[{k}]", t), node)
            return
        self.fail(node, f"cannot unpack a value of type {v.type!r}")

    def _s_AugAssign(self, s):  # noqa: N802
        op = _BINOPS.get(type(s.op))
        if op is None:
            self.unsupported(s, f"the operator {type(s.op).__name__}")
        if isinstance(s.target, ast.Name):
            cur = self._load_name(s.target.id, s.target)
            self._assign_name(s.target.id, self._binop(op, cur, self._expr(s.value), s), s)
            return
        if isinstance(s.target, ast.Subscript):
            ref = self._subscript(s.target, want_ref=True)
            if not isinstance(ref.type, T.Scalar):
                self.unsupported(s, "augmented assignment to an array slice")
            r = self._temp()
            if not self._typing:
                self._emit(f"{{ auto& {r} = {ref.code};")
            res = self._binop(op, _Value(r, ref.type), self._expr(s.value), s)
            if not self._typing:
                self._emit(f"  {r} = {self._cast(res, ref.type)}; }}")
            return
        self.unsupported(s, f"augmented assignment to {type(s.target).__name__}")

    def _s_If(self, s):  # noqa: N802
        c = self._truth(self._expr(s.test), s.test)
        self._emit(f"if ({c}) {{")
        self._indent += 1
        self._block(s.body)
        self._indent -= 1
        if s.orelse:
            self._emit("} else {")
            self._indent += 1
            self._block(s.orelse)
            self._indent -= 1
        self._emit("}")

    def _s_While(self, s):  # noqa: N802
        if s.orelse:
            self.unsupported(s, "while ... else")
        self._emit("while (true) {")
        self._indent += 1
        c = self._truth(self._expr(s.test), s.test)
        self._emit(f"if (!({c})) break;")
        self._block(s.body)
        self._indent -= 1
        self._emit("}")

    def _s_Break(self, s):  # noqa: N802
        self._emit("break;")

    def _s_Continue(self, s):  # noqa: N802
        self._emit("continue;")

    def _s_For(self, s):  # noqa: N802
        if s.orelse:
            self.unsupported(s, "for ... else")
        it = s.iter
        if not (
            isinstance(it, ast.Call)
            and self._static(it.func) in (builtins.range, np.arange)
            and not it.keywords
            and 1 <= len(it.args) <= 3
        ):
            self.unsupported(s, "a for loop over anything but range(...)")
        if not isinstance(s.target, ast.Name):
            self.unsupported(s, "a for loop target that is not a name")
        args = [self._expr(a) for a in it.args]
        for a, node in zip(args, it.args, strict=True):
            if not isinstance(a.type, T.Scalar) or a.type.kind not in "biu":
                self.fail(node, f"range() takes integers, got {a.type!r}")
        t = T.INT64
        for a in args:
            t = T.promote(t, a.type.strong) if a.type.kind != "b" else t
        if t.kind == "u" and t.name != "uint64":
            t = T.INT64
        start, stop, step = ("0", args[0].code, "1") if len(args) == 1 else (
            args[0].code, args[1].code, args[2].code if len(args) == 3 else "1"
        )  # fmt: skip
        name = s.target.id
        if self._typing:
            self._assign_name(name, _Value("", t), s)
        c = self._temp()
        cty = t.ctype
        if len(args) == 3 and not (
            isinstance(it.args[2], ast.Constant)
            or (
                isinstance(it.args[2], ast.UnaryOp) and isinstance(it.args[2].operand, ast.Constant)
            )
        ):
            st = self._temp()
            self._emit(f"{{ const {cty} {st} = ({cty})({step});")
            cond = f"({st} > 0 ? {c} < {c}_end : {c} > {c}_end)"
            step = st
        else:
            self._emit("{")
            stepv = eval(compile(ast.Expression(it.args[2]), "", "eval")) if len(args) == 3 else 1
            if stepv == 0:
                self.fail(s, "range() step must not be zero", ValueError)
            cond = f"{c} < {c}_end" if stepv > 0 else f"{c} > {c}_end"
        self._emit(
            f"for ({cty} {c} = ({cty})({start}), {c}_end = ({cty})({stop}); {cond}; "
            f"{c} += {step}) {{"
        )
        self._indent += 1
        lt = self.locals.get(name, t)
        self._emit(f"{self._var(name)} = ({lt.ctype})({c});")
        self._block(s.body)
        self._indent -= 1
        self._emit("}}")

    # ---- expressions -----------------------------------------------------------------------------

    def _expr(self, e):
        m = getattr(self, "_e_" + type(e).__name__, None)
        if m is None:
            self.unsupported(e, f"the expression '{type(e).__name__}'")
        return m(e)

    def _e_Constant(self, e):  # noqa: N802
        v = e.value
        if v is None:
            return _Value("", T.NONE)
        t = T.literal(v)
        if t is None:
            self.unsupported(e, f"the constant {v!r}")
        return _Value(self._const(v, t), t)

    def _const(self, v, t):
        if t.kind == "b":
            return "true" if v else "false"
        if t.kind in "iu":
            if t.name == "uint64" or v >= 2**63:
                return f"{int(v)}ull"
            return f"{int(v)}ll" if not -(2**31) <= v < 2**31 else str(int(v))
        if t.kind == "f":
            f = float(v)
            if math.isnan(f):
                return "ej::nan<double>()"
            if math.isinf(f):
                return "ej::inf<double>()" if f > 0 else "(-ej::inf<double>())"
            return repr(f) if "e" in repr(f) or "." in repr(f) else repr(f) + ".0"
        c = complex(v)
        re, im = self._const(c.real, T.FLOAT64), self._const(c.imag, T.FLOAT64)
        return f"ej::complex<double>({re}, {im})"

    def _e_Name(self, e):  # noqa: N802
        return self._load_name(e.id, e)

    def _load_name(self, name, node):
        if name in self.locals:
            t = self.locals[name]
            if isinstance(t, T.Opaque):
                return _Value("", t)
            return _Value(self._var(name), t)
        obj = self._global(name, node)
        return self._object(obj, node, name)

    def _global(self, name, node):
        if name in self.src.closure:
            return self.src.closure[name]
        g = self.src.func.__globals__
        if name in g:
            return g[name]
        if hasattr(builtins, name):
            return getattr(builtins, name)
        self.fail(node, f"name '{name}' is not defined", NameError)

    def _object(self, obj, node, what):
        """A compile-time Python object used in a kernel."""
        t = T.literal(obj) if isinstance(obj, (bool, int, float, complex)) else None
        if t is not None:
            return _Value(self._const(obj, t), t)
        if isinstance(obj, np.generic) and obj.dtype.kind in "biufc":
            t = T.Scalar(obj.dtype.name)
            return _Value(f"({t.ctype})({self._const(obj.item(), T.literal(obj.item()))})", t)
        return _Value("", T.Opaque(obj))

    def _static(self, e):
        """The compile-time object an expression names (a module, function, intrinsic), else
        None."""
        if isinstance(e, ast.Name):
            if e.id in self.locals:
                t = self.locals[e.id]
                return t.obj if isinstance(t, T.Opaque) else None
            try:
                return self._global(e.id, e)
            except NameError:
                return None
        if isinstance(e, ast.Attribute):
            base = self._static(e.value)
            if base is None or isinstance(base, I.Dim3):
                return None
            return getattr(base, e.attr, None)
        return None

    def _e_Attribute(self, e):  # noqa: N802
        base_obj = self._static(e.value)
        if isinstance(base_obj, I.Dim3):
            code = _SREG.get((base_obj, e.attr))
            if code is None:
                self.fail(e, f"{base_obj.name} has no attribute '{e.attr}'", AttributeError)
            return _Value(code, T.INT32)
        if base_obj is not None and not isinstance(base_obj, (int, float, bool, complex)):
            obj = getattr(base_obj, e.attr, _MISSING)
            if obj is _MISSING:
                self.fail(e, f"{getattr(base_obj, '__name__', base_obj)!s} has no attribute "
                          f"'{e.attr}'", AttributeError)  # fmt: skip
            if obj is I.laneid:
                return _Value("ej::lane_id()", T.INT32)
            if obj is I.warpsize:
                return _Value("32", T.INT32)
            return self._object(obj, e, e.attr)
        v = self._expr(e.value)
        t = v.type
        if isinstance(t, T.Array):
            if e.attr == "shape":
                return _Value(f"{v.code}.shape_tuple()", T.Tuple([T.INT64] * t.ndim))
            if e.attr == "strides":
                it = np.dtype(t.dtype).itemsize
                return _Value(f"{v.code}.byte_strides({it})", T.Tuple([T.INT64] * t.ndim))
            if e.attr == "size":
                return _Value(f"{v.code}.size()", T.INT64)
            if e.attr == "ndim":
                return _Value(str(t.ndim), T.Scalar("int64", weak=True))
            if e.attr == "dtype":
                return _Value("", T.Opaque(np.dtype(t.dtype)))
            if e.attr == "T" and t.ndim == 2:
                return _Value(f"{v.code}.transposed()", t)
            self.fail(e, f"arrays in kernels have no attribute '{e.attr}'", AttributeError)
        if isinstance(t, T.Scalar):
            if e.attr in ("real", "imag"):
                if t.kind == "c":
                    rt = T.Scalar("float32" if t.name == "complex64" else "float64")
                    return _Value(f"({v.code}).{e.attr}()", rt)
                return _Value(v.code if e.attr == "real" else f"({t.ctype})0", t.strong)
        self.fail(e, f"a {t!r} has no attribute '{e.attr}'", AttributeError)

    def _e_Tuple(self, e):  # noqa: N802
        vals = [self._expr(x) for x in e.elts]
        for v, x in zip(vals, e.elts, strict=True):
            if not isinstance(v.type, T.Scalar):
                self.fail(x, f"tuples in kernels hold scalars, got {v.type!r}")
        t = T.Tuple([v.type.strong for v in vals])
        return _Value(f"{t.ctype}{{{{{', '.join(v.code for v in vals)}}}}}", t)

    _e_List = _e_Tuple

    def _e_IfExp(self, e):  # noqa: N802
        c = self._truth(self._expr(e.test), e.test)
        a, b = self._expr(e.body), self._expr(e.orelse)
        try:
            t = T.unify(a.type, b.type)
        except TypeError as err:
            self.fail(e, f"the branches of a conditional expression: {err}")
        if isinstance(a.type, T.Scalar) and a.type.weak and b.type.weak:
            t = T.promote(a.type, b.type)
        return _Value(f"(({c}) ? {self._cast(a, t)} : {self._cast(b, t)})", t)

    def _e_UnaryOp(self, e):  # noqa: N802
        v = self._expr(e.operand)
        if isinstance(e.op, ast.Not):
            return _Value(f"(!({self._truth(v, e)}))", T.BOOL)
        self._need_scalar(v, e)
        if isinstance(e.op, ast.UAdd):
            return _Value(f"(+{v.code})" if v.type.kind != "b" else f"(long long)({v.code})",
                          v.type if v.type.kind != "b" else T.INT64)  # fmt: skip
        if isinstance(e.op, ast.USub):
            if v.type.kind == "b":
                self.fail(e, "the - operator is not supported for booleans")
            if v.type.weak:
                return _Value(f"(-{v.code})", v.type)
            return self._call_op("negative", [v], e)
        if isinstance(e.op, ast.Invert):
            return self._call_op("bitwise_invert", [v], e)
        self.unsupported(e, f"the operator {type(e.op).__name__}")

    def _e_BinOp(self, e):  # noqa: N802
        op = _BINOPS.get(type(e.op))
        if op is None:
            self.unsupported(e, f"the operator {type(e.op).__name__}")
        return self._binop(op, self._expr(e.left), self._expr(e.right), e)

    def _binop(self, op, a, b, node):
        self._need_scalar(a, node)
        self._need_scalar(b, node)
        return self._call_op(op, [a, b], node)

    def _e_BoolOp(self, e):  # noqa: N802
        sym = " && " if isinstance(e.op, ast.And) else " || "
        parts = [self._truth(self._expr(v), v) for v in e.values]
        return _Value("(" + sym.join(f"({p})" for p in parts) + ")", T.BOOL)

    def _e_Compare(self, e):  # noqa: N802
        left = self._expr(e.left)
        parts = []
        for op, right_node in zip(e.ops, e.comparators, strict=True):
            right = self._expr(right_node)
            if isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)):
                self.unsupported(e, f"the comparison '{type(op).__name__}'")
            name = _CMPOPS[type(op)][0]
            parts.append(self._call_op(name, [left, right], e).code)
            left = right
        code = parts[0] if len(parts) == 1 else "(" + " && ".join(parts) + ")"
        return _Value(code, T.BOOL)

    def _e_Subscript(self, e):  # noqa: N802
        return self._subscript(e, want_ref=False)

    def _e_Call(self, e):  # noqa: N802
        from . import _calls

        return _calls.call(self, e)

    # ---- helpers -------------------------------------------------------------------------------

    def _need_scalar(self, v, node):
        if not isinstance(v.type, T.Scalar):
            what = "an array" if isinstance(v.type, T.Array) else repr(v.type)
            self.fail(node, f"expected a number, got {what} (array arithmetic is not supported "
                      "inside kernels: index the array)")  # fmt: skip

    def _truth(self, v, node):
        if isinstance(v.type, T.Scalar):
            if v.type.kind == "b":
                return v.code
            if v.type.kind == "c":
                return f"(({v.code}) != {v.type.ctype}(0))"
            return f"(({_compute_ctype(v.type)})({v.code}) != 0)"
        self.fail(node, f"the truth value of a {v.type!r} is not defined in kernels")

    def _cast(self, v, t):
        """v converted to type t (C++ text)."""
        if isinstance(t, T.Scalar):
            if isinstance(v.type, T.Scalar) and v.type.name == t.name and not v.type.weak:
                return v.code
            if t.kind == "c":
                return f"ej::to_complex<{t.ctype}>({v.code})"
            if isinstance(v.type, T.Scalar) and v.type.kind == "c":
                return f"({t.ctype})(({v.code}).real())"
            return f"({t.ctype})({v.code})"
        return v.code

    def _call_op(self, name, args, node):
        """An op-table row applied to scalars: NumPy's result type; ember's scalar body."""
        for a in args:
            self._need_scalar(a, node)
        t = args[0].type
        for a in args[1:]:
            t = T.promote(t, a.type)
        t = t.strong if not all(a.type.weak for a in args) else t
        compute = t
        if name in _FLOAT_RESULT:
            compute = T.float_of(t.strong)
        if name in ("floor", "ceil", "trunc", "round", "sign") and t.kind == "b":
            compute = T.Scalar("int8")
        if name in ("floor_divide", "remainder", "pow") and t.kind == "b":
            compute = T.Scalar("int8")
        if (
            name in ("bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_invert")
            and t.kind in "fc"
        ):
            self.fail(node, f"{name} needs integers or booleans, got {t!r}")
        if (
            name in ("bitwise_left_shift", "bitwise_right_shift", "gcd", "lcm")
            and t.kind not in "iu"
        ):
            self.fail(node, f"{name} needs integers, got {t!r}")
        if name in ("floor", "ceil", "trunc", "round") and t.kind == "c":
            self.fail(node, f"{name} is not defined for complex numbers")
        if name in ("real", "imag", "abs") and compute.kind == "c":
            result = T.Scalar("float32" if compute.name == "complex64" else "float64")
        elif name in _BOOL_RESULT:
            result = T.BOOL
        else:
            result = compute
        if compute.weak:
            compute = compute.strong
        cc = _compute_ctype(compute)
        simple = {"add": "+", "subtract": "-", "multiply": "*", "divide": "/"}
        cmp = {"less": "<", "less_equal": "<=", "greater": ">", "greater_equal": ">=",
               "equal": "==", "not_equal": "!="}  # fmt: skip
        conv = [self._cast(a, compute) if compute.name != "float16" else f"(float)({a.code})"
                for a in args]  # fmt: skip
        if name in simple and compute.kind in "fc":
            code = f"({conv[0]} {simple[name]} {conv[1]})"
        elif name in cmp and compute.kind in "biuf":
            code = f"({conv[0]} {cmp[name]} {conv[1]})"
        elif name in ("bitwise_and", "bitwise_or", "bitwise_xor"):
            sym = {"bitwise_and": "&", "bitwise_or": "|", "bitwise_xor": "^"}[name]
            code = f"({cc})({conv[0]} {sym} {conv[1]})"
        else:
            if self.fastmath and compute.name == "float32" and name in _FAST:
                code = f"{_FAST[name]}({', '.join(conv)})"
            else:
                code = f"ember::ops::op_{name}::apply({', '.join(conv)})"
        if result.name == "float16" and name not in _BOOL_RESULT:
            code = f"ej::half({code})"
        if all(a.type.weak for a in args) and isinstance(result, T.Scalar):
            result = T.Scalar(result.name, weak=True)
        return _Value(code, result)


_MISSING = object()
