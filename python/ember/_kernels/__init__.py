"""Custom CUDA kernels written as CUDA C++ strings, with CuPy's API: RawKernel, RawModule,
ElementwiseKernel and ReductionKernel.

The source is compiled by NVRTC for the device's architecture and cached like ember's own
kernels (in memory and in the on-disk cache). Without a CUDA device the objects can be built,
but compiling or launching raises a ValueError saying a CUDA device is required.

Modules: ``_raw`` (RawModule and RawKernel: compile, load, launch), ``_args`` (parameter lists,
the argument checks and the packing of kernel arguments shared by the generated kernels),
``_launch`` (the generated source's header, launch geometry from the C++ core, the launch),
``_elementwise`` (ElementwiseKernel), ``_reduction`` (ReductionKernel).
"""

from ._elementwise import ElementwiseKernel
from ._raw import RawKernel, RawModule
from ._reduction import ReductionKernel

__all__ = ["ElementwiseKernel", "RawKernel", "RawModule", "ReductionKernel"]
