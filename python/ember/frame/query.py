"""query/eval: a pandas expression parsed with Python's ast and run as column operations."""

from __future__ import annotations

import ast
import re
import sys

_BIN = {
    ast.Add: "add",
    ast.Sub: "sub",
    ast.Mult: "mul",
    ast.Div: "truediv",
    ast.FloorDiv: "floordiv",
    ast.Mod: "mod",
    ast.Pow: "pow",
    ast.BitAnd: "and",
    ast.BitOr: "or",
    ast.BitXor: "xor",
}
_CMP = {ast.Eq: "eq", ast.NotEq: "ne", ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge"}


def _caller_locals(depth):
    frame = sys._getframe(depth + 1)
    local_dict = dict(frame.f_globals)
    local_dict.update(frame.f_locals)
    return local_dict


def _prepare(expr):
    """(source with backtick names and @locals renamed, {renamed: column name})."""
    names = {}

    def tick(m):
        key = f"__col{len(names)}"
        names[key] = m.group(1)
        return key

    src = re.sub(r"`([^`]*)`", tick, expr)
    src = re.sub(r"@([A-Za-z_][A-Za-z0-9_]*)", r"__local_\1", src)
    return src, names


def evaluate(df, expr, local_dict=None, depth=2):
    if not isinstance(expr, str) or not expr.strip():
        raise ValueError("ember.frame.query: expr must be a non-empty string")
    if local_dict is None:
        local_dict = _caller_locals(depth)
    src, names = _prepare(expr)
    try:
        tree = ast.parse(src.strip(), mode="eval")
    except SyntaxError as exc:
        raise ValueError(f"ember.frame.query: invalid expression {expr!r}: {exc.msg}") from None
    return _Eval(df, names, local_dict, expr).visit(tree.body)


def eval_frame(df, expr, inplace=False, local_dict=None, depth=2):
    """``DataFrame.eval``: an expression (its value), or assignments ``name = expression`` (one
    a line) that add or replace columns in a copy (or in place), each evaluated with the same
    column operations as ``query``."""
    if not isinstance(expr, str) or not expr.strip():
        raise ValueError("ember.frame.eval: expr cannot be an empty string")
    if local_dict is None:
        local_dict = _caller_locals(depth)
    src, names = _prepare(expr)
    try:
        tree = ast.parse("\n".join(line.strip() for line in src.strip().splitlines()))
    except SyntaxError as exc:
        raise ValueError(f"ember.frame.eval: invalid expression {expr!r}: {exc.msg}") from None
    body = tree.body
    assigns = [isinstance(st, ast.Assign) for st in body]
    if not any(assigns):
        if len(body) != 1:
            raise ValueError("ember.frame.eval: only one expression (or assignments, one a line)")
        if inplace:
            raise ValueError("Cannot operate inplace if there is no assignment")
        return evaluate(df, expr, local_dict)
    if not all(assigns):
        raise ValueError(
            "Multi-line expressions are only valid if all expressions contain an assignment"
        )
    out = df if inplace else df.copy()
    for st in body:
        if len(st.targets) != 1 or not isinstance(st.targets[0], ast.Name):
            raise ValueError(f"ember.frame.eval: cannot assign to {ast.unparse(st.targets[0])!r}")
        target = st.targets[0].id
        target = names.get(target, target)
        out[target] = _Eval(out, names, local_dict, expr).visit(st.value)
    return None if inplace else out


class _Eval(ast.NodeVisitor):
    def __init__(self, df, names, local_dict, expr):
        self.df, self.names, self.locals, self.expr = df, names, local_dict, expr

    def generic_visit(self, node):
        raise ValueError(
            f"ember.frame.query: unsupported syntax {type(node).__name__} in {self.expr!r}"
        )

    def visit_Name(self, node):
        n = node.id
        if n in self.names:
            return self.df[self.names[n]]
        if n.startswith("__local_"):
            key = n[len("__local_") :]
            if key not in self.locals:
                raise NameError(f"ember.frame.query: local variable '{key}' is not defined")
            return self.locals[key]
        if n in self.df._data:
            return self.df[n]
        if n in ("True", "False", "None"):
            return {"True": True, "False": False, "None": None}[n]
        raise NameError(f"ember.frame.query: name '{n}' is not defined")

    def visit_Constant(self, node):
        return node.value

    def visit_List(self, node):
        return [self.visit(e) for e in node.elts]

    visit_Tuple = visit_List

    def visit_Attribute(self, node):
        return getattr(self.visit(node.value), node.attr)

    def visit_Call(self, node):
        fn = self.visit(node.func)
        return fn(
            *[self.visit(a) for a in node.args],
            **{k.arg: self.visit(k.value) for k in node.keywords},
        )

    def visit_UnaryOp(self, node):
        v = self.visit(node.operand)
        if isinstance(node.op, (ast.Not, ast.Invert)):
            return ~v if hasattr(v, "_col") else (not v)
        if isinstance(node.op, ast.USub):
            return -v
        if isinstance(node.op, ast.UAdd):
            return v
        return self.generic_visit(node)

    def visit_BinOp(self, node):
        op = _BIN.get(type(node.op))
        if op is None:
            return self.generic_visit(node)
        a, b = self.visit(node.left), self.visit(node.right)
        if hasattr(a, "_binop"):
            return a._binop(b, op)
        if hasattr(b, "_binop"):
            return b._binop(a, op, True)
        import operator

        return getattr(operator, op if op not in ("and", "or") else op + "_")(a, b)

    def visit_BoolOp(self, node):
        vals = [self.visit(v) for v in node.values]
        out = vals[0]
        for v in vals[1:]:
            out = (out & v) if isinstance(node.op, ast.And) else (out | v)
        return out

    def visit_Compare(self, node):
        left = self.visit(node.left)
        out = None
        for op, right_node in zip(node.ops, node.comparators, strict=False):
            right = self.visit(right_node)
            if isinstance(op, (ast.In, ast.NotIn)):
                vals = right if isinstance(right, (list, tuple)) else [right]
                r = left.isin(vals)
                r = ~r if isinstance(op, ast.NotIn) else r
            else:
                name = _CMP.get(type(op))
                if name is None:
                    return self.generic_visit(node)
                if hasattr(left, "_binop"):
                    r = left._binop(right, name)
                else:
                    from .ops import _SWAP

                    r = right._binop(left, _SWAP[name])
            out = r if out is None else out & r
            left = right
        return out
