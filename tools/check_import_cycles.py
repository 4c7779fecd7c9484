"""Fails when the modules of python/ember import each other in a circle at import time.

Reads every ``.py`` file under the package with ``ast`` (nothing is imported), takes the import
statements that run when the module loads (module level, including ``if``/``try`` blocks and
class bodies; not function bodies, which run later), and draws an edge from the module to each
module of the package it names: ``from . import x`` names the submodule ``x`` when there is one,
else the package's ``__init__``; ``from .m import y`` names ``m`` (and ``m.y`` when that is a
submodule); ``import ember.m`` and ``from ember import ...`` the same, spelled absolutely. Parent
packages a submodule import loads implicitly are not edges: they are already being imported.

    python tools/check_import_cycles.py [PACKAGE_DIR]   # default: python/ember

Prints each circle (a strongly connected component of the graph, or a module importing itself)
and exits 1 when there is one. With ``--back-imports`` it also lists, and fails on, the imports
inside functions that reach the package's own ``__init__`` (``import ember`` or ``from . import
name`` of a name the package defines, rather than of a module): they hide a dependency from the
graph.
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

DEFAULT = Path(__file__).resolve().parent.parent / "python" / "ember"


def _modules(root: Path) -> dict[str, Path | None]:
    """Dotted module name -> file, for the package at `root` (a package is its __init__).
    Compiled modules have no Python source: they are named by their files when built in place,
    and by their package's ``from . import name`` otherwise; they import nothing of ours."""
    pkg = root.name
    out: dict[str, Path | None] = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join([pkg, *parts])] = path
    for path in sorted([*root.rglob("*.so"), *root.rglob("*.pyd")]):
        parts = [*path.relative_to(root).parent.parts, path.name.split(".")[0]]
        out.setdefault(".".join([pkg, *parts]), None)
    for name, path in list(out.items()):
        if path is None or path.name != "__init__.py":
            continue
        for node in ast.parse(path.read_text(), str(path)).body:
            if isinstance(node, ast.ImportFrom) and node.level == 1 and not node.module:
                for alias in node.names:
                    out.setdefault(f"{name}.{alias.name}", None)
    return out


def _load_time_imports(tree: ast.Module):
    """The import statements executed when the module is imported."""
    stack = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            continue
        else:
            stack.extend(n for n in ast.iter_child_nodes(node) if isinstance(n, ast.stmt))


def _targets(node, name: str, path: Path, modules: dict[str, Path | None]) -> set[str]:
    """The modules of the package that one import statement of module `name` loads."""
    pkg_root = next(iter(modules)).split(".")[0]
    here = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.name.split(".")[0] == pkg_root and alias.name in modules:
                out.add(alias.name)
        return out
    if node.level:  # relative to the module's package
        base = here.split(".")
        base = base[: len(base) - (node.level - 1)]
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = node.module or ""
    if target.split(".")[0] != pkg_root:
        return out
    for alias in node.names:
        sub = f"{target}.{alias.name}"
        if sub in modules:
            out.add(sub)  # a submodule (its package is already being imported)
        elif target in modules:
            out.add(target)  # a name the module defines
    return out


def _edges(name: str, path: Path | None, modules: dict[str, Path | None]) -> set[str]:
    if path is None:
        return set()
    out = set()
    for node in _load_time_imports(ast.parse(path.read_text(), str(path))):
        out |= _targets(node, name, path, modules)
    return out


def back_imports(root: Path = DEFAULT) -> list[str]:
    """Imports inside functions that reach the package's own ``__init__`` (``import ember``,
    ``from . import name`` of a name it defines): the way around an import order that a module
    imported at the top would break. Each as ``path:line: statement``."""
    modules = _modules(root)
    pkg = root.name
    out = []
    for name, path in modules.items():
        if path is None:
            continue
        tree = ast.parse(path.read_text(), str(path))
        at_load = {id(n) for n in _load_time_imports(tree)}
        for node in ast.walk(tree):
            if not isinstance(node, ast.Import | ast.ImportFrom) or id(node) in at_load:
                continue
            if pkg in _targets(node, name, path, modules):
                where = path.relative_to(root.parent)
                out.append(f"{where}:{node.lineno}: {ast.unparse(node)}")
    return sorted(out)


def graph(root: Path = DEFAULT) -> dict[str, set[str]]:
    modules = _modules(root)
    return {name: _edges(name, path, modules) for name, path in modules.items()}


def cycles(g: dict[str, set[str]]) -> list[list[str]]:
    """The circles of `g`: its strongly connected components of more than one module, and the
    modules that import themselves (Tarjan's algorithm, iterative)."""
    index, low, on_stack, stack, out = {}, {}, set(), [], []
    counter = 0
    for start in sorted(g):
        if start in index:
            continue
        work = [(start, iter(sorted(g[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in g:
                    continue
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(g[w]))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1 or v in g[v]:
                    out.append(sorted(comp))
    return sorted(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("package", nargs="?", type=Path, default=DEFAULT)
    ap.add_argument(
        "--back-imports",
        action="store_true",
        help="also fail on imports inside functions that reach the package's __init__",
    )
    args = ap.parse_args(argv)
    g = graph(args.package.resolve())
    found = cycles(g)
    for comp in found:
        members = set(comp)
        links = [f"{a} -> {b}" for a in comp for b in sorted(g[a]) if b in members]
        print(f"import cycle among {len(comp)} module(s): {', '.join(comp)}")
        for link in links:
            print(f"    {link}")
    back = back_imports(args.package.resolve()) if args.back_imports else []
    for line in back:
        print(f"back-import: {line}")
    if found or back:
        return 1
    print(f"no import cycles among the {len(g)} modules of {args.package.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
