"""Every ``module.name`` that ember's Python reads through an imported ember module exists.

Code that only a GPU (or another machine) reaches is not run by the CPU test suite, so a
misspelled or missing attribute of an ember module there (``_core.empty_like`` when the core has
``empty``) would first fail on the GPU. This check parses each file of python/ember, follows the
names bound to ember modules (``from .. import _core``, ``import ember as em``, module-level
aliases such as ``_k = _core._kernels``; in functions too) and reports each attribute chain that
walks through modules and reaches a name the imported module lacks. It imports ember (the built
core), so `make lint` runs it after the build. Prints each miss as file:line and exits 1.
"""

from __future__ import annotations

import ast
import importlib
import pathlib
import sys
import types

ROOT = pathlib.Path(__file__).resolve().parent.parent / "python" / "ember"


def _module_name(f: pathlib.Path) -> tuple[str, str]:
    parts = f.relative_to(ROOT.parent).with_suffix("").parts
    if parts[-1] == "__init__":
        mod = ".".join(parts[:-1])
        return mod, mod
    mod = ".".join(parts)
    return mod, mod.rsplit(".", 1)[0]


def _resolve(dotted: str):
    """The object a dotted ember path names (modules imported on the way), or None."""
    parts = dotted.split(".")
    try:
        obj = importlib.import_module(parts[0])
        for p in parts[1:]:
            obj = (
                getattr(obj, p)
                if hasattr(obj, p)
                else importlib.import_module(f"{obj.__name__}.{p}")
            )
    except Exception:  # noqa: BLE001 (an optional dependency: not checked)
        return None
    return obj


def _bindings(tree: ast.Module, pkg: str) -> dict[str, str]:
    """Local name -> dotted ember module path, from the file's imports and module aliases."""
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] == "ember":
                    names[a.asname or "ember"] = a.name if a.asname else "ember"
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg.split(".")
                base = base[: len(base) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            if mod.split(".")[0] != "ember":
                continue
            for a in node.names:
                if isinstance(_resolve(f"{mod}.{a.name}"), types.ModuleType):
                    names[a.asname or a.name] = f"{mod}.{a.name}"
    for node in tree.body:  # module-level aliases of submodules: _k = _core._kernels
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            t, v, chain = node.targets[0], node.value, []
            while isinstance(v, ast.Attribute):
                chain.append(v.attr)
                v = v.value
            if isinstance(t, ast.Name) and isinstance(v, ast.Name) and v.id in names and chain:
                path = names[v.id] + "." + ".".join(reversed(chain))
                if isinstance(_resolve(path), types.ModuleType):
                    names[t.id] = path
    return names


def check_file(f: pathlib.Path) -> list[str]:
    mod, pkg = _module_name(f)
    tree = ast.parse(f.read_text(), str(f))
    names = _bindings(tree, pkg)
    misses, seen = [], set()
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load)):
            continue
        chain, v = [], node
        while isinstance(v, ast.Attribute):
            chain.append(v.attr)
            v = v.value
        if not (isinstance(v, ast.Name) and v.id in names):
            continue
        obj, path = _resolve(names[v.id]), v.id
        for a in reversed(chain):
            if not isinstance(obj, types.ModuleType):
                break  # only attributes of modules are checked
            if not hasattr(obj, a) and _resolve(f"{obj.__name__}.{a}") is None:
                if (node.lineno, path, a) not in seen:
                    seen.add((node.lineno, path, a))
                    rel = f.relative_to(ROOT.parent.parent)
                    misses.append(f"{rel}:{node.lineno}: {path}.{a} ({obj.__name__} has no {a!r})")
                break
            obj = getattr(obj, a) if hasattr(obj, a) else _resolve(f"{obj.__name__}.{a}")
            path += "." + a
    return misses


def main() -> int:
    misses = [m for f in sorted(ROOT.rglob("*.py")) for m in check_file(f)]
    for m in misses:
        print(m)
    n = len(list(ROOT.rglob("*.py")))
    print(f"module attributes: {len(misses)} missing in {n} files" if misses else
          f"module attributes: every ember module attribute read in {n} files exists")  # fmt: skip
    return 1 if misses else 0


if __name__ == "__main__":
    sys.exit(main())
