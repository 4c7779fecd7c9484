"""The layer rules of DESIGN.md §1, checked on the #include lines of src/ and include/ (a grep
linter, as PyTorch's are): `make lint` runs it; it prints each broken rule and exits 1.

The layers, in the order data flows (each includes only the layers below it):
  src/python        nanobind bindings
  src/core          op front-ends, with include/ember (the public API) beside it
  src/autograd      the tape and every node and formula, written in ember ops
  src/ops           the op table's scalar bodies, shared by the backends (and NVRTC)
  src/backend       backend.hpp (the interface), cpu/ and cuda/, and shared backend code
  src/support       utilities of no layer (the host thread pool)

DESIGN.md §1 lists autograd below the core, but its formulas are written in ember ops, so
autograd calls the core, not the other way round: the core reaches autograd only through the
recording hook it owns (src/core/record.hpp), which autograd implements.

The rules (an #include that breaks one is reported with its file and line):
 1. src/core and include/ember include no CUDA header and no Python header.
 2. src/core includes nothing of src/backend/cpu, src/backend/cuda, src/autograd or src/python;
    of src/backend only backend/backend.hpp (the interface).
 3. include/ember includes only include/ember headers (and system headers): the installed
    package has nothing else.
 4. Only src/backend/cuda includes CUDA headers (cuda*.h, cu*.h, nvrtc*.h, ...) and the CUDA
    backend's own headers (backend/cuda/..., the dlopen loader among them).
 5. Only src/python includes nanobind or Python.h.
 6. src/python includes, of the project, only include/ember (ember/...) and its own python/...
    headers.
 7. src/autograd includes nothing of src/python or src/backend.
 8. src/backend includes nothing of src/core, src/autograd or src/python; backend/cpu includes
    nothing of backend/cuda.
 9. src/ops includes only src/ops and include/ember (its text is also compiled by NVRTC).
10. src/support includes nothing of the project outside src/support.
11. src/core defines no autograd node (a class deriving from Node): nodes are autograd's.

Usage: python3 tools/check_layers.py [ROOT]   (ROOT: the repository, default the current one)
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
NODE_CLASS = re.compile(r"\b(class|struct)\s+\w+[^;{]*:\s*(public\s+)?(autograd::)?Node\b")
CUDA_HEADER = re.compile(
    r"^(cuda[\w.]*\.h|cuda/.*|cu(blas|blasLt|fft|solver|solverDn|rand|sparse|dnn)[\w.]*\.h"
    r"|nvrtc[\w.]*\.h|nvtx[\w.]*|cccl/.*|thrust/.*|cub/.*)$"
)
PYTHON_HEADER = re.compile(r"^(Python\.h|nanobind/.*|pybind11/.*)$")
SOURCES = ("*.cpp", "*.hpp", "*.h", "*.inc", "*.cuh", "*.in")


def under(rel: str, *dirs: str) -> bool:
    return any(rel == d or rel.startswith(d + "/") for d in dirs)


def project(name: str, quoted: bool) -> str | None:
    """The project directory a quoted include names ("core", "backend/cuda", ...), or None."""
    if not quoted:
        return None
    parts = name.split("/")
    if parts[0] == "backend" and len(parts) > 2:
        return "backend/" + parts[1]
    return parts[0] if len(parts) > 1 else None


def check_include(rel: str, name: str, quoted: bool) -> list[str]:
    """The rules `#include name` in file `rel` breaks."""
    broken = []
    where = project(name, quoted)
    cuda_h = bool(CUDA_HEADER.match(name))
    python_h = bool(PYTHON_HEADER.match(name))
    in_core = under(rel, "src/core")
    in_public = under(rel, "include/ember")
    if (in_core or in_public) and (cuda_h or python_h):
        broken.append("1: src/core and include/ember include no CUDA and no Python header")
    if in_core and where in ("backend/cpu", "backend/cuda", "autograd", "python"):
        broken.append("2: src/core includes nothing of backend/cpu, backend/cuda, autograd, python")
    if in_core and name.startswith("backend/") and name != "backend/backend.hpp" and quoted:
        broken.append("2: src/core includes only backend/backend.hpp of src/backend")
    if in_public and quoted and where != "ember":
        broken.append("3: include/ember includes only ember/... headers")
    if not under(rel, "src/backend/cuda") and (cuda_h or where == "backend/cuda"):
        broken.append("4: only src/backend/cuda includes CUDA headers and backend/cuda/...")
    if not under(rel, "src/python") and python_h:
        broken.append("5: only src/python includes nanobind or Python.h")
    if under(rel, "src/python") and quoted and where not in ("ember", "python"):
        broken.append("6: src/python includes only ember/... and python/... of the project")
    if under(rel, "src/autograd") and where in ("python", "backend", "backend/cpu", "backend/cuda"):
        broken.append("7: src/autograd includes nothing of src/python or src/backend")
    if under(rel, "src/backend") and where in ("core", "autograd", "python"):
        broken.append("8: src/backend includes nothing of src/core, src/autograd, src/python")
    if under(rel, "src/backend/cpu") and where == "backend/cuda":
        broken.append("8: src/backend/cpu includes nothing of src/backend/cuda")
    if under(rel, "src/ops") and where not in (None, "ops", "ember"):
        broken.append("9: src/ops includes only ops/... and ember/...")
    if under(rel, "src/support") and where not in (None, "support"):
        broken.append("10: src/support includes only support/...")
    return broken


def check(root: Path) -> list[str]:
    errors = []
    files = []
    for top in ("src", "include"):
        for pattern in SOURCES:
            files.extend((root / top).rglob(pattern))
    for path in sorted(set(files)):
        rel = path.relative_to(root).as_posix()
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError as e:
            errors.append(f"{rel}: cannot read: {e}")
            continue
        for n, line in enumerate(text.splitlines(), 1):
            m = INCLUDE.match(line)
            if m:
                for rule in check_include(rel, m.group(2), m.group(1) == '"'):
                    errors.append(f"{rel}:{n}: rule {rule}: {line.strip()}")
            if under(rel, "src/core") and NODE_CLASS.search(line):
                errors.append(
                    f"{rel}:{n}: rule 11: src/core defines no autograd node: {line.strip()}"
                )
    return errors


def main(argv: list[str]) -> int:
    root = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parent.parent
    errors = check(root)
    for e in errors:
        print(e)
    if errors:
        print(f"check_layers: {len(errors)} line(s) break the layer rules (tools/check_layers.py)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
