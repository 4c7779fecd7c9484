"""Array indexing in kernels: elements (``a[i, j]``, negative indices wrapped as Python's),
views (``a[i]`` of a 2-d array, slices ``a[lo:hi:step]``), stores, and tuple indexing; a mixin of
``_frontend.FunctionCompiler``."""

from __future__ import annotations

import ast

from . import _types as T  # noqa: N812


class ArrayIndexing:
    # ---- arrays --------------------------------------------------------------------------------

    def _index_items(self, e):
        sl = e.slice
        return list(sl.elts) if isinstance(sl, ast.Tuple) else [sl]

    def _subscript(self, e, want_ref):
        base = self._expr(e.value)
        bt = base.type
        if isinstance(bt, T.Tuple):
            k = self._static_int(e.slice)
            if k is None:
                if all(t == bt.items[0] for t in bt.items):
                    i = self._expr(e.slice)
                    return T.Value(f"{base.code}[{i.code}]", bt.items[0])
                self.fail(e, "tuples of mixed types take constant indices")
            if not -len(bt.items) <= k < len(bt.items):
                self.fail(e, f"tuple index {k} out of range", IndexError)
            k %= len(bt.items)
            return T.Value(f"{base.code}[{k}]", bt.items[k])
        if not isinstance(bt, T.Array):
            self.fail(e, f"a {bt!r} cannot be indexed")
        items = self._index_items(e)
        if len(items) > bt.ndim:
            self.fail(e, f"too many indices for a {bt.ndim}-d array: {len(items)}", IndexError)
        ints, slices = [], []
        for k, it in enumerate(items):
            if isinstance(it, ast.Slice):
                parts = []
                for p in (it.lower, it.upper, it.step):
                    if p is None:
                        parts.append(None)
                    else:
                        v = self._expr(p)
                        if not isinstance(v.type, T.Scalar) or v.type.kind not in "biu":
                            self.fail(p, f"slice bounds must be integers, got {v.type!r}")
                        parts.append(f"(long long)({v.code})")
                slices.append((k, parts))
            else:
                v = self._expr(it)
                if isinstance(v.type, T.Tuple):
                    self.fail(it, "index arrays with a tuple written out: a[i, j]")
                if not isinstance(v.type, T.Scalar) or v.type.kind not in "biu":
                    self.fail(it, f"array indices must be integers, got {v.type!r}", IndexError)
                ints.append((k, v))
        if not slices and len(ints) == bt.ndim:
            idx = ", ".join(
                f"ej::wrap((long long)({v.code}), {base.code}.shape[{k}])"
                if v.type.kind == "i" else f"(long long)({v.code})"
                for k, v in ints
            )  # fmt: skip
            return T.Value(f"{base.code}.at({idx})", bt.elem)
        if want_ref:
            self.unsupported(e, "storing into an array slice")
        # A view: integer indices drop their dimension; slices and missing ones keep theirs.
        n_out = bt.ndim - len(ints)
        b = self._temp()
        lines = [f"auto& {b} = {base.code};", f"ej::Array<{bt.elem.ctype}, {n_out}> r;",
                 f"r.data = {b}.data;"]  # fmt: skip
        spec = {k: v for k, v in ints}
        sls = dict(slices)
        out = 0
        for k in range(bt.ndim):
            if k in spec:
                lines.append(f"r.data += ej::wrap((long long)({spec[k].code}), {b}.shape[{k}]) "
                             f"* {b}.strides[{k}];")  # fmt: skip
            elif k in sls:
                lo, hi, st = sls[k]
                lines.append(
                    f"{{ long long s0, n; const long long st = {st or '1'}; "
                    f"ej::slice({b}.shape[{k}], {lo or '0'}, {'true' if lo else 'false'}, "
                    f"{hi or '0'}, {'true' if hi else 'false'}, st, s0, n); "
                    f"r.data += s0 * {b}.strides[{k}]; r.shape[{out}] = n; "
                    f"r.strides[{out}] = {b}.strides[{k}] * st; }}"
                )
                out += 1
            else:
                lines.append(
                    f"r.shape[{out}] = {b}.shape[{k}]; r.strides[{out}] = {b}.strides[{k}];"
                )
                out += 1
        lines.append("return r;")
        t = T.Array(bt.dtype, n_out)
        return T.Value("[&]() { " + " ".join(lines) + " }()", t)

    def _store(self, target, v):
        ref = self._subscript(target, want_ref=True)
        if not isinstance(ref.type, T.Scalar):
            self.unsupported(target, "storing into an array slice")
        self._need_scalar(v, target)
        self._emit(f"{ref.code} = {self._cast(v, ref.type)};")

    def _static_int(self, e):
        if isinstance(e, ast.Constant) and isinstance(e.value, int):
            return e.value
        if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub):
            k = self._static_int(e.operand)
            return None if k is None else -k
        return None
