"""Writes python/ember/_core.pyi, the type stub of ember's C++ module, from the signatures the
call wrappers give every nanobind function and method (ember/_calls.py): what IDEs and type
checkers read for the names `ember` re-exports from `_core` (the Python modules are read as
source). tests/python/test_stubs.py checks the committed file is current and valid Python.

    python3 tools/gen_stubs.py           # rewrite python/ember/_core.pyi
    python3 tools/gen_stubs.py --check   # exit 1 when it is out of date
"""

from __future__ import annotations

import inspect
import keyword
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "python" / "ember" / "_core.pyi"
SIMPLE = {"bool", "int", "float", "str", "complex", "bytes", "object", "None"}


def annotation(a) -> str | None:
    """A stub annotation for a signature's annotation text, or None to leave it out."""
    if a is inspect.Parameter.empty or a is inspect.Signature.empty:
        return None
    text = a if isinstance(a, str) else getattr(a, "__name__", str(a))
    text = text.replace("ember._core.", "").replace("ember.", "")
    parts = [p.strip() for p in text.split("|")]
    known = SIMPLE | {"ndarray", "dtype", "Device"}
    if all(p in known for p in parts):
        return " | ".join(parts)
    return None


def signature_text(fn, name: str, method: bool) -> str:
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return ("(self, " if method else "(") + "*args: Any, **kwargs: Any) -> Any"
    out, star_done = [], False
    params = list(sig.parameters.values())
    if method and (not params or params[0].name != "self"):
        out.append("self")
    for i, p in enumerate(params):
        last_positional_only = p.kind == p.POSITIONAL_ONLY and (
            i + 1 == len(params) or params[i + 1].kind != p.POSITIONAL_ONLY
        )
        if p.kind == p.KEYWORD_ONLY and not star_done:
            out.append("*")
            star_done = True
        if p.kind == p.VAR_POSITIONAL:
            star_done = True
            t = annotation(p.annotation)
            out.append(f"*{p.name}: {t or 'Any'}")
            continue
        if p.kind == p.VAR_KEYWORD:
            t = annotation(p.annotation)
            out.append(f"**{p.name}: {t or 'Any'}")
            continue
        t = annotation(p.annotation)
        s = p.name + (f": {t}" if t else "")
        if p.default is not p.empty:
            s += " = ..."
        out.append(s)
        if last_positional_only:
            out.append("/")
    ret = annotation(sig.return_annotation) or "Any"
    return f"({', '.join(out)}) -> {ret}"


def doc_line(obj) -> str:
    d = inspect.getdoc(obj) or ""
    first = d.strip().splitlines()[0] if d.strip() else ""
    first = first.replace("\\", "\\\\").replace('"""', "'''")
    return first


def stub_function(name: str, fn, indent: str = "", method: bool = False) -> list[str]:
    if keyword.iskeyword(name) or not name.isidentifier():
        return []
    lines = [f"{indent}def {name}{signature_text(fn, name, method)}:"]
    d = doc_line(fn)
    lines.append(f'{indent}    """{d}"""' if d else f"{indent}    ...")
    return lines


def stub_class(name: str, cls) -> list[str]:
    base = cls.__bases__[0].__name__ if cls.__bases__ and cls.__bases__[0] is not object else ""
    lines = [f"class {name}({base}):" if base and base != "object" else f"class {name}:"]
    d = doc_line(cls)
    if d:
        lines.append(f'    """{d}"""')
    body = []
    for attr in sorted(vars(cls)):
        if attr in ("__doc__", "__module__", "__dict__", "__weakref__", "__nb_signature__"):
            continue
        if attr.startswith("__") and attr.endswith("__") and attr not in DUNDERS:
            continue
        v = vars(cls)[attr]
        if isinstance(v, property):
            body.append("    @property")
            body.append(f"    def {attr}(self) -> Any: ...")
        elif isinstance(v, (staticmethod, classmethod)):
            body.append(f"    @{type(v).__name__}")
            body.append(f"    def {attr}(*args: Any, **kwargs: Any) -> Any: ...")
        elif callable(v):
            body += stub_function(attr, v, "    ", method=True)
    return lines + (body or ["    ..."])


DUNDERS = {
    "__init__",
    "__len__",
    "__iter__",
    "__getitem__",
    "__setitem__",
    "__array__",
    "__dlpack__",
    "__dlpack_device__",
    "__bool__",
    "__int__",
    "__float__",
    "__complex__",
    "__index__",
    "__eq__",
    "__ne__",
    "__lt__",
    "__le__",
    "__gt__",
    "__ge__",
    "__hash__",
    "__repr__",
    "__str__",
    "__add__",
    "__radd__",
    "__iadd__",
    "__sub__",
    "__rsub__",
    "__isub__",
    "__mul__",
    "__rmul__",
    "__imul__",
    "__truediv__",
    "__rtruediv__",
    "__itruediv__",
    "__floordiv__",
    "__rfloordiv__",
    "__ifloordiv__",
    "__mod__",
    "__rmod__",
    "__imod__",
    "__pow__",
    "__rpow__",
    "__ipow__",
    "__matmul__",
    "__rmatmul__",
    "__imatmul__",
    "__and__",
    "__rand__",
    "__iand__",
    "__or__",
    "__ror__",
    "__ior__",
    "__xor__",
    "__rxor__",
    "__ixor__",
    "__lshift__",
    "__rlshift__",
    "__ilshift__",
    "__rshift__",
    "__rrshift__",
    "__irshift__",
    "__neg__",
    "__pos__",
    "__abs__",
    "__invert__",
}


def generate() -> str:
    import ember  # noqa: F401  (the wrappers are installed by importing the package)
    import nanobind
    from ember import _core

    lines = [
        '"""Type stub of ember._core, generated by tools/gen_stubs.py from the call wrappers\'',
        f'signatures (nanobind {nanobind.__version__}): do not edit."""',
        "",
        "from types import ModuleType",
        "from typing import Any",
        "",
    ]
    names = sorted(n for n in vars(_core) if not (n.startswith("__") and n.endswith("__")))
    classes = [n for n in names if inspect.isclass(getattr(_core, n))]
    # base classes first
    classes.sort(key=lambda n: len(inspect.getmro(getattr(_core, n))))
    for n in classes:
        lines += stub_class(n, getattr(_core, n)) + [""]
    for n in names:
        o = getattr(_core, n)
        if n in classes:
            continue
        if inspect.ismodule(o):
            lines.append(f"{n}: ModuleType")
        elif type(o).__name__ == "dtype":
            lines.append(f"{n}: dtype")
        elif callable(o):
            lines += stub_function(n, o)
        else:
            lines.append(f"{n}: Any")
    return "\n".join(lines) + "\n"


def main() -> int:
    text = generate()
    if "--check" in sys.argv:
        if not OUT.exists() or OUT.read_text() != text:
            print(f"{OUT.relative_to(ROOT)} is out of date: run python3 tools/gen_stubs.py")
            return 1
        return 0
    OUT.write_text(text)
    print(f"wrote {OUT.relative_to(ROOT)} ({text.count(chr(10))} lines)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
