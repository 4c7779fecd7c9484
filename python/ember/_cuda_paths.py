"""Where ember finds CUDA's libraries and CCCL's headers: NVIDIA's ``cuda-pathfinder`` (installed
by ``pip install ember[cuda]`` with the NVIDIA wheels it finds), which searches NVIDIA's wheels in
site-packages, conda, ``CUDA_PATH``/``CUDA_HOME`` and the system, in that order. The C++ loader
(src/backend/cuda/loader.cpp) asks :func:`find` once per name, the first time it needs the
library, and falls back to sonames and ``/usr/local/cuda`` when it answers "". Nothing here runs
at ``import ember``: cuda-pathfinder is imported on the first CUDA load.

``EMBER_CUDA_PATHFINDER=0`` turns the search off (sonames and /usr/local/cuda only).
"""

from __future__ import annotations

import os

from . import _core

# cuda-pathfinder's names of what ember loads (its SUPPORTED_LIBNAMES / SUPPORTED_HEADERS_CTK).
LIBRARIES = ("nvrtc", "cublas", "cufft", "cusolver")
HEADERS = ("cccl",)


def find(kind: str, name: str) -> str:
    """The path of library `name` (`kind` "lib": a file to dlopen) or of the header directory
    `name` (`kind` "include"), or "" when cuda-pathfinder is absent or finds nothing."""
    if os.environ.get("EMBER_CUDA_PATHFINDER", "1") == "0":
        return ""
    try:
        import cuda.pathfinder as pf
    except ImportError:
        return ""
    try:
        if kind == "lib":
            # Loads the library and its dependencies (cuSOLVER needs cuBLAS, nvJitLink...) from
            # the same place; ember's dlopen of abs_path then returns that handle.
            return pf.load_nvidia_dynamic_lib(name).abs_path or ""
        if kind == "include":
            return pf.find_nvidia_header_directory(name) or ""
    except Exception:  # not found, or an unsupported name: ember's own search follows
        return ""
    return ""


_core._cuda._set_path_finder(find)
# The kernels the package ships (CMake's EMBER_SHIP_ARCHS): read on the first kernel load.
_core._cuda.set_kernel_pack_dir(
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "_shipped")
)
