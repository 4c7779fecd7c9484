"""ReductionKernel: a reduction CUDA kernel generated from C++ snippets (CuPy's API): one block
folds each output in a fixed order, so results are the same run to run."""

import math
import operator

import numpy as np

from .. import _core
from ._args import (
    _CTYPES,
    _add_param,
    _check_names,
    _check_texts,
    _checked_args,
    _device_of,
    _dtype_name,
    _elem_strides,
    _is_array,
    _options,
    _parse_params,
    _require_cuda,
    _void,
)
from ._launch import _collapse, _header, _launch_generated, _reduction_grid


def _normalize_axis(axis, ndim, who):
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    out = []
    for a in axes:
        if isinstance(a, bool) or not isinstance(a, (int, np.integer)):
            raise TypeError(f"{who}: axis must be an int or a tuple of ints, got {axis!r}")
        a = operator.index(a)
        if not -ndim <= a < ndim:
            raise _core.AxisError(f"{who}: axis {a} is out of bounds for {ndim} dimensions")
        a %= ndim
        if a in out:
            raise ValueError(f"{who}: duplicate axis {a} in {axis!r}")
        out.append(a)
    return tuple(sorted(out))


class ReductionKernel:
    """A reduction kernel from C++ snippets, with CuPy's semantics.

    ``ReductionKernel('T x', 'T y', 'x * x', 'a + b', 'y = sqrt(a)', '0', 'l2norm')`` maps each
    element with `map_expr`, folds with `reduce_expr` (of ``a`` and ``b``, in ``_type_reduce``),
    starting from `identity`, and writes the output with `post_map_expr` (``a`` is the folded
    value). Called with ``axis=`` (None: all) and ``keepdims=``. One block folds each output in a
    fixed order, so results are the same run to run.
    """

    def __init__(
        self,
        in_params,
        out_params,
        map_expr,
        reduce_expr,
        post_map_expr,
        identity,
        name="reduce_kernel",
        reduce_type=None,
        reduce_dims=True,
        preamble="",
        options=(),
    ):
        who = _check_texts(
            "ember.ReductionKernel",
            name,
            map_expr=map_expr,
            reduce_expr=reduce_expr,
            post_map_expr=post_map_expr,
            preamble=preamble,
        )
        if identity is not None and not isinstance(identity, str):
            identity = str(identity)
        self.in_params = _parse_params(in_params, who)
        self.out_params = _parse_params(out_params, who)
        if not self.out_params:
            raise ValueError(f"{who}: needs an output parameter")
        if any(p.raw for p in self.out_params):
            raise ValueError(f"{who}: output parameters cannot be raw")
        _check_names(self.in_params, self.out_params, who)
        if reduce_type is None:
            reduce_type = self.out_params[0].ctype
        elif not isinstance(reduce_type, str):
            name_ = _dtype_name(reduce_type)
            if name_ is None:
                raise TypeError(f"{who}: bad reduce_type {reduce_type!r}")
            reduce_type = _CTYPES[name_]
        elif reduce_type in _CTYPES:
            reduce_type = _CTYPES[reduce_type]
        self.reduce_type = reduce_type
        self.map_expr = map_expr
        self.reduce_expr = reduce_expr
        self.post_map_expr = post_map_expr
        self.identity = identity
        self.name = name
        self.reduce_dims = bool(reduce_dims)
        self.preamble = preamble
        self.options = _options(options, who)
        self.nin = len(self.in_params)
        self.nout = len(self.out_params)
        self.nargs = self.nin + self.nout
        self._who = who

    def _prepare(self, args, out, axis, keepdims, allocate):
        who = self._who
        if out is not None:
            if len(args) != self.nin:
                raise TypeError(f"{who}: out= given with the outputs among the arguments")
            args = tuple(args) + ((out,) if self.nout == 1 else tuple(out))
        _, given, types = _checked_args(self, args)
        if len(self.reduce_type) == 1 and self.reduce_type not in types:
            raise TypeError(f"{who}: cannot determine the reduce type {self.reduce_type}")
        ins = [
            (p, a)
            for p, a in zip(self.in_params, given, strict=False)
            if _is_array(a) and not p.raw
        ]
        if not ins:
            raise ValueError(f"{who}: needs at least one non-raw array input")
        try:
            shape = tuple(np.broadcast_shapes(*[tuple(a.shape) for _, a in ins]))
        except ValueError:
            raise ValueError(
                f"{who}: arguments cannot be broadcast together: {[a.shape for _, a in ins]}"
            ) from None
        axes = _normalize_axis(axis, len(shape), who)
        kept = [d for d in range(len(shape)) if d not in axes]
        out_shape = (
            tuple(1 if d in axes else shape[d] for d in range(len(shape)))
            if keepdims
            else (tuple(shape[d] for d in kept))
        )
        dev = _device_of([a for a in given if _is_array(a)], who) if allocate else None
        for k, p in enumerate(self.out_params):
            a = given[self.nin + k]
            if a is None:
                t = p.dtype or types[p.placeholder]
                a = _core.empty(out_shape, dtype=t, device=dev if allocate else "cpu")
                given[self.nin + k] = a
            elif tuple(a.shape) != out_shape:
                raise ValueError(
                    f"{who}: output {p.name!r} has shape {tuple(a.shape)}, expected {out_shape}"
                )
        nred = math.prod(shape[d] for d in axes)
        nout = math.prod(shape[d] for d in kept)
        if nred == 0 and nout > 0 and self.identity is None:
            raise ValueError(f"{who}: zero-size reduction without an identity")
        return types, given, shape, axes, kept, nred, nout, dev

    def _generate(self, types, given, shape, axes, kept, nred, with_values=True):
        params = self.in_params + self.out_params
        ins = [
            (p, a)
            for p, a in zip(self.in_params, given, strict=False)
            if _is_array(a) and not p.raw
        ]
        outs = given[self.nin :]
        # Kept dims: strides of the inputs and of the outputs; reduced dims: of the inputs.
        in_strides = [_elem_strides(a, shape) for _, a in ins]
        out_strides = []
        for o in outs:
            st = [s // o.itemsize for s in o.strides]
            if o.ndim == len(shape):  # keepdims
                st = [st[d] for d in kept]
            out_strides.append(st)
        kshape, kstr = _collapse(
            [shape[d] for d in kept],
            [[s[d] for d in kept] for s in in_strides] + out_strides,
            self.reduce_dims,
        )
        rshape, rstr = _collapse(
            [shape[d] for d in axes], [[s[d] for d in axes] for s in in_strides], self.reduce_dims
        )
        if not kshape:
            kshape, kstr = [1], [[0] for _ in kstr]
        if not rshape:
            rshape, rstr = [1], [[0] for _ in rstr]
        nk, nr, nops = len(kshape), len(rshape), len(ins)
        block = 256 if nred >= 256 else max(32, 1 << max(0, (nred - 1).bit_length()))
        slot = {id(p): k for k, (p, _) in enumerate(ins)}
        sig, loads, kargs, names = [], [], [], []
        for idx, (p, a) in enumerate(zip(params, given, strict=True)):
            is_out = idx >= self.nin
            vt = p.ctype
            st = _add_param(p, a, is_out, types, self._who, with_values, sig, kargs, names)
            if st is not None and not is_out:
                loads.append(
                    f"                const {vt} {p.name} = "
                    f"static_cast<{vt}>(_p_{p.name}[_o{slot[id(p)]}]);\n"
                )
        sig += ["const long long _nout", "const long long _nred", "const _ember_rgeom _g"]
        nout = math.prod(shape[d] for d in kept)
        kargs += [
            np.int64(nout),
            np.int64(nred),
            _void(
                kshape + [s for st in kstr for s in st] + rshape + [s for st in rstr for s in st]
            ),
        ]
        src = _header(types, names)
        src += (
            f"struct _ember_rgeom {{\n    long long kshape[{nk}];\n"
            f"    long long kstrides[{nops + self.nout}][{nk}];\n"
            f"    long long rshape[{nr}];\n    long long rstrides[{max(nops, 1)}][{nr}];\n}};\n"
        )
        src += f"typedef {self.reduce_type} _type_reduce;\n"
        src += "\n" + self.preamble + "\n\n"
        src += f"#define _EMBER_REDUCE(a, b) ({self.reduce_expr})\n"
        src += f"#define _EMBER_POST_MAP(a) ({self.post_map_expr})\n"
        has_id = self.identity is not None
        src += f'extern "C" __global__ void {self.name}({", ".join(sig)}) {{\n'
        src += f"    __shared__ alignas(16) unsigned char _sbuf[{block} * sizeof(_type_reduce)];\n"
        src += "    _type_reduce* _sdata = reinterpret_cast<_type_reduce*>(_sbuf);\n"
        if not has_id:
            src += f"    __shared__ bool _svalid[{block}];\n"
        src += "    const unsigned _tid = threadIdx.x;\n"
        src += "    for (long long _out = blockIdx.x; _out < _nout; _out += gridDim.x) {\n"
        src += "        long long _r = _out, _c;\n"
        src += "".join(f"        long long _k{k} = 0;\n" for k in range(nops + self.nout))
        for d in reversed(range(nk)):
            src += f"        _c = _r % _g.kshape[{d}];\n        _r /= _g.kshape[{d}];\n"
            src += "".join(
                f"        _k{k} += _c * _g.kstrides[{k}][{d}];\n" for k in range(nops + self.nout)
            )
        if has_id:
            src += f"        _type_reduce _s = static_cast<_type_reduce>({self.identity});\n"
        else:
            src += "        _type_reduce _s;\n        bool _v = false;\n"
        src += f"        for (long long _j = _tid; _j < _nred; _j += {block}) {{\n"
        src += "            long long _q = _j, _e;\n"
        src += "".join(f"            long long _o{k} = _k{k};\n" for k in range(nops))
        for d in reversed(range(nr)):
            src += f"            _e = _q % _g.rshape[{d}];\n            _q /= _g.rshape[{d}];\n"
            src += "".join(
                f"            _o{k} += _e * _g.rstrides[{k}][{d}];\n" for k in range(nops)
            )
        src += "            {\n" + "".join(loads)
        src += (
            f"                const _type_reduce _m = static_cast<_type_reduce>({self.map_expr});\n"
        )
        if has_id:
            src += "                _s = _EMBER_REDUCE(_s, _m);\n"
        else:
            src += "                if (_v) _s = _EMBER_REDUCE(_s, _m);\n"
            src += "                else { _s = _m; _v = true; }\n"
        src += "            }\n        }\n"
        src += "        _sdata[_tid] = _s;\n"
        if not has_id:
            src += "        _svalid[_tid] = _v;\n"
        src += "        __syncthreads();\n"
        src += f"        for (unsigned _w = {block // 2}; _w > 0; _w >>= 1) {{\n"
        if has_id:
            src += (
                "            if (_tid < _w)\n"
                "                _sdata[_tid] = _EMBER_REDUCE(_sdata[_tid], _sdata[_tid + _w]);\n"
            )
        else:
            src += (
                "            if (_tid < _w && _svalid[_tid + _w]) {\n"
                "                if (_svalid[_tid]) _sdata[_tid] = "
                "_EMBER_REDUCE(_sdata[_tid], _sdata[_tid + _w]);\n"
                "                else { _sdata[_tid] = _sdata[_tid + _w]; _svalid[_tid] = true; }\n"
                "            }\n"
            )
        src += "            __syncthreads();\n        }\n"
        src += "        if (_tid == 0) {\n"
        out_slots = {}
        for k, p in enumerate(self.out_params):
            o = outs[k]
            st = _CTYPES[o.dtype.name]
            out_slots[p.name] = k
            if st == _CTYPES.get(types.get(p.ctype, p.dtype)):
                src += f"            {p.ctype}& {p.name} = _p_{p.name}[_k{nops + k}];\n"
            else:
                src += (
                    f"            {p.ctype} {p.name} = "
                    f"static_cast<{p.ctype}>(_p_{p.name}[_k{nops + k}]);\n"
                )
        src += "            const _type_reduce _a = _sdata[0];\n"
        src += "            _EMBER_POST_MAP(_a);\n"
        for k, p in enumerate(self.out_params):
            st = _CTYPES[outs[k].dtype.name]
            if st != _CTYPES.get(types.get(p.ctype, p.dtype)):
                src += f"            _p_{p.name}[_k{nops + k}] = static_cast<{st}>({p.name});\n"
        src += "        }\n        __syncthreads();\n    }\n}\n"
        return src, kargs, block, nout

    def _source(self, *args, out=None, axis=None, keepdims=False):
        """The CUDA source a call with these arguments compiles (no GPU needed: CPU arrays are
        fine, only dtypes and shapes are used)."""
        types, given, shape, axes, kept, nred, _, _ = self._prepare(
            args, out, axis, keepdims, allocate=False
        )
        return self._generate(types, given, shape, axes, kept, nred, with_values=False)[0]

    def _launch_args(self, *args, out=None, axis=None, keepdims=False):
        """(source, kernel arguments) of a call, without launching (CPU arrays are fine)."""
        types, given, shape, axes, kept, nred, _, _ = self._prepare(
            args, out, axis, keepdims, allocate=False
        )
        return self._generate(types, given, shape, axes, kept, nred)[:2]

    def __call__(self, *args, out=None, axis=None, keepdims=False, stream=None):
        types, given, shape, axes, kept, nred, nout, dev = self._prepare(
            args, out, axis, keepdims, allocate=True
        )
        if dev is None:
            _require_cuda(self._who)
        outs = given[self.nin :]
        if nout > 0:
            src, kargs, block, _ = self._generate(types, given, shape, axes, kept, nred)
            grid = _reduction_grid(nout, dev.index)
            _launch_generated(src, self.name, self.options, dev.index, grid, block, kargs, stream)
        return outs[0] if self.nout == 1 else tuple(outs)

    def __repr__(self):
        return f"<ember.ReductionKernel {self.name!r}>"
