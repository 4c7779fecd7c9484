"""ElementwiseKernel: an elementwise CUDA kernel generated from a C++ snippet (CuPy's API), over
broadcast strided operands."""

import math

import numpy as np

from .. import _core
from ._args import (
    _CTYPES,
    _add_param,
    _check_arg_kinds,
    _check_names,
    _check_texts,
    _checked_args,
    _device_of,
    _elem_strides,
    _is_array,
    _options,
    _parse_params,
    _require_cuda,
    _resolve_types,
    _void,
)
from ._launch import _block_grid, _collapse, _header, _launch_generated

_c = _core._cuda


class ElementwiseKernel:
    """An elementwise kernel from a C++ snippet, with CuPy's semantics.

    ``ElementwiseKernel('T x, T y', 'T z', 'z = (x - y) * (x - y)', 'squared_diff')``: inputs
    broadcast together; outputs are allocated unless passed after the inputs; single-letter types
    are placeholders resolved from the arguments' dtypes (one letter, one type); ``raw``
    parameters are whole arrays indexed as ``x[j]``; ``i`` is the index of the element and
    ``_ind.size()`` the number of elements. Non-array arguments pass as scalars of their
    parameter's type.
    """

    def __init__(
        self,
        in_params,
        out_params,
        operation,
        name="kernel",
        reduce_dims=True,
        preamble="",
        no_return=False,
        return_tuple=False,
        loop_prep="",
        after_loop="",
        options=(),
    ):
        who = _check_texts(
            "ember.ElementwiseKernel",
            name,
            operation=operation,
            preamble=preamble,
            loop_prep=loop_prep,
            after_loop=after_loop,
        )
        self.in_params = _parse_params(in_params, who)
        self.out_params = _parse_params(out_params, who)
        _check_names(self.in_params, self.out_params, who)
        self.operation = operation
        self.name = name
        self.reduce_dims = bool(reduce_dims)
        self.preamble = preamble
        self.no_return = bool(no_return)
        self.return_tuple = bool(return_tuple)
        self.loop_prep = loop_prep
        self.after_loop = after_loop
        self.options = _options(options, who)
        self.nin = len(self.in_params)
        self.nout = len(self.out_params)
        self.nargs = self.nin + self.nout
        self._who = who

    def _plan(self, args, size=None):
        who = self._who
        params, given, types = _checked_args(self, args)
        arrays = [a for a in given if _is_array(a)]
        dev = _device_of(arrays, who)
        # The iteration shape: the broadcast of the non-raw array arguments (outputs included).
        shapes = [
            tuple(a.shape) for p, a in zip(params, given, strict=True) if _is_array(a) and not p.raw
        ]
        if size is not None:
            if shapes:
                raise ValueError(f"{who}: size= is only for calls without non-raw array arguments")
            if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 0:
                raise ValueError(f"{who}: size must be an int >= 0, got {size!r}")
            shape = (int(size),)
        elif shapes:
            try:
                shape = tuple(np.broadcast_shapes(*shapes))
            except ValueError:
                raise ValueError(
                    f"{who}: arguments cannot be broadcast together: {shapes}"
                ) from None
        else:
            raise ValueError(f"{who}: without non-raw array arguments, size= must be given")
        for p, a in zip(self.out_params, given[self.nin :], strict=True):
            if a is not None and not p.raw and tuple(a.shape) != shape:
                raise ValueError(
                    f"{who}: output {p.name!r} has shape {tuple(a.shape)}, the arguments "
                    f"broadcast to {shape}"
                )
        for p, a in zip(params, given, strict=True):
            if p.raw and p.dtype is not None and a is not None and a.dtype.name != p.dtype:
                raise TypeError(f"{who}: raw argument {p.name!r} is {a.dtype.name}, not {p.dtype}")
        outs = []
        for p, a in zip(self.out_params, given[self.nin :], strict=True):
            if a is None:
                t = p.dtype or types[p.placeholder]
                if dev is None:
                    _require_cuda(who)
                    dev = _core.Device("cuda", _c.current_device())
                a = _core.empty(shape, dtype=t, device=dev)
            outs.append(a)
        if dev is None:
            dev = _core.Device("cuda", _c.current_device()) if _c.is_available() else None
        given[self.nin :] = outs
        return types, given, outs, shape, dev

    def _generate(self, types, given, shape, with_values=True):
        """(source, kernel arguments) for one call."""
        params = self.in_params + self.out_params
        n = math.prod(shape)
        elem = [(p, a) for p, a in zip(params, given, strict=True) if _is_array(a) and not p.raw]
        strides = [_elem_strides(a, shape) for _, a in elem]
        cshape, cstrides = _collapse(list(shape), strides, self.reduce_dims)
        contiguous = len(cshape) <= 1 and all(s == [] or s == [1] for s in cstrides)
        nd = len(cshape)
        sig, loads, stores, kargs = [], [], [], []
        slot = {id(p): k for k, (p, _) in enumerate(elem)}
        complex_names = []
        for idx, (p, a) in enumerate(zip(params, given, strict=True)):
            is_out = idx >= self.nin
            vt = p.ctype
            st = _add_param(p, a, is_out, types, self._who, with_values, sig, kargs, complex_names)
            if st is not None:
                off = "i" if contiguous else f"_o{slot[id(p)]}"
                if is_out:
                    if st == _CTYPES.get(types.get(p.ctype, p.dtype)):
                        loads.append(f"        {vt}& {p.name} = _p_{p.name}[{off}];\n")
                    else:
                        loads.append(
                            f"        {vt} {p.name} = static_cast<{vt}>(_p_{p.name}[{off}]);\n"
                        )
                        stores.append(
                            f"        _p_{p.name}[{off}] = static_cast<{st}>({p.name});\n"
                        )
                else:
                    loads.append(
                        f"        const {vt} {p.name} = static_cast<{vt}>(_p_{p.name}[{off}]);\n"
                    )
        sig.append("const long long _n")
        kargs.append(np.int64(n))
        src = _header(types, complex_names)
        if not contiguous:
            src += (
                f"struct _ember_geom {{\n    long long shape[{nd}];\n"
                f"    long long strides[{len(elem)}][{nd}];\n}};\n"
            )
            sig.append("const _ember_geom _g")
            kargs.append(_void(cshape + [s for st in cstrides for s in st]))
        src += "\n" + self.preamble + "\n\n"
        src += f'extern "C" __global__ void {self.name}({", ".join(sig)}) {{\n'
        src += "    const _ember_index _ind{_n};\n"
        src += "    (void)_ind;\n"
        if self.loop_prep:
            src += "    " + self.loop_prep + "\n"
        src += (
            "    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < _n;\n"
            "         i += (long long)blockDim.x * gridDim.x) {\n"
        )
        if not contiguous:
            src += "        long long _r = i, _c;\n"
            src += "".join(f"        long long _o{k} = 0;\n" for k in range(len(elem)))
            for d in reversed(range(nd)):
                src += f"        _c = _r % _g.shape[{d}];\n        _r /= _g.shape[{d}];\n"
                src += "".join(
                    f"        _o{k} += _c * _g.strides[{k}][{d}];\n" for k in range(len(elem))
                )
        src += "".join(loads)
        src += "        {\n" + self.operation + "\n        ;}\n"
        src += "".join(stores)
        src += "    }\n"
        if self.after_loop:
            src += "    " + self.after_loop + "\n"
        src += "}\n"
        return src, kargs, n

    def _source(self, *args, size=None):
        """The CUDA source one call with these arguments compiles (works without a GPU: the
        arguments may be CPU arrays; only their dtypes and shapes are used)."""
        types, given, _, shape, _ = self._plan_meta(args, size)
        return self._generate(types, given, shape, with_values=False)[0]

    def _launch_args(self, *args, size=None):
        """(source, kernel arguments) of a call, without launching (CPU arrays are fine)."""
        types, given, _, shape, _ = self._plan_meta(args, size)
        return self._generate(types, given, shape)[:2]

    def _plan_meta(self, args, size):
        # Like _plan, but CPU arrays are fine and outputs are not allocated.
        params, given, types = _checked_args(self, args)
        shapes = [
            tuple(a.shape) for p, a in zip(params, given, strict=True) if _is_array(a) and not p.raw
        ]
        shape = (int(size),) if size is not None else tuple(np.broadcast_shapes(*shapes))
        for k, p in enumerate(self.out_params):
            if given[self.nin + k] is None:
                given[self.nin + k] = _core.empty(
                    shape, dtype=p.dtype or types[p.placeholder], device="cpu"
                )
        return types, given, None, shape, None

    def _resolve(self, *args):
        """{placeholder: dtype name} for a call with these arguments (no GPU needed)."""
        who = self._who
        params = self.in_params + self.out_params
        given = list(args) + [None] * (self.nargs - len(args))
        _check_arg_kinds(params, given, self.nin, who)
        return _resolve_types(params, given, who)

    def __call__(self, *args, size=None, block_size=256, stream=None):
        types, given, outs, shape, dev = self._plan(args, size)
        if isinstance(block_size, bool) or not isinstance(block_size, int) or block_size < 1:
            raise ValueError(f"{self._who}: block_size must be an int >= 1, got {block_size!r}")
        if dev is None:
            _require_cuda(self._who)
        n = math.prod(shape)
        if n > 0:
            src, kargs, _ = self._generate(types, given, shape)
            grid, block = _block_grid(n, block_size, dev.index)
            _launch_generated(src, self.name, self.options, dev.index, grid, block, kargs, stream)
        if self.no_return:
            return None
        if self.nout == 1 and not self.return_tuple:
            return outs[0]
        return tuple(outs)

    def __repr__(self):
        return f"<ember.ElementwiseKernel {self.name!r}>"
