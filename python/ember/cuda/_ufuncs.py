"""``ember.vectorize``, ``ember.guvectorize`` and ``ember.cuda.reduce``: Numba's ufunc builders on
ember's kernel compiler. The scalar (or core-array) Python function becomes a device function;
a kernel generated around it (Python source, compiled like any other ``cuda.jit`` kernel) maps
it over the broadcast inputs, on the GPU for GPU arrays and on the host for CPU arrays.
"""

from __future__ import annotations

import re
import sys

import numpy as np

from .. import _core
from . import _types as T  # noqa: N812
from ._jit import Dispatcher, _parse_sig

__all__ = ["guvectorize", "reduce", "vectorize"]


def _cuda():
    """The ember.cuda module (what generated kernels call `cuda`)."""
    return sys.modules[__name__.rpartition(".")[0]]


def _function(name, text, env):
    """A Python function from generated source, which the kernel compiler can read back."""
    filename = f"<ember.cuda generated {name}>"
    ns = {}
    exec(compile(text, filename, "exec"), env, ns)
    f = ns[name]
    f.__ember_source__ = (text, filename)
    return f


def _target(target, who):
    if target not in ("cuda", "cpu", "parallel"):
        raise ValueError(f"{who}: target must be 'cuda', 'cpu' or 'parallel', got {target!r}")
    return target


def _device_of(arrays, target):
    for a in arrays:
        if isinstance(a, _core.ndarray):
            return a.device
    if target == "cuda" and _core._cuda.is_available():
        return _core.Device("cuda", _core._cuda.current_device())
    return _core.Device("cpu")


def _as_ember(x, device):
    from .._array import asarray

    return asarray(x, device=device)


class _ElementwiseKernels:
    """The generated elementwise kernel of each input count and ndim, around one device
    function."""

    def __init__(self, scalar):
        self.scalar = scalar
        self.kernels = {}

    def kernel(self, nin, ndim):
        k = self.kernels.get((nin, ndim))
        if k is None:
            ins = [f"a{i}" for i in range(nin)]
            lines = [f"def ufunc_kernel({', '.join(ins)}, out):"]
            lines.append("    i = cuda.grid(1)")
            lines.append("    n = out.size")
            lines.append("    while i < n:")
            idx = []
            lines.append("        r = i")
            for d in reversed(range(ndim)):
                lines.append(f"        j{d} = r % out.shape[{d}]")
                lines.append(f"        r = r // out.shape[{d}]")
            idx = ", ".join(f"j{d}" for d in range(ndim)) or "0"
            call = ", ".join(f"{a}[{idx}]" for a in ins)
            lines.append(f"        out[{idx}] = f({call})")
            lines.append("        i += cuda.gridsize(1)")
            fn = _function(
                "ufunc_kernel", "\n".join(lines) + "\n", {"cuda": _cuda(), "f": self.scalar}
            )
            k = Dispatcher(fn)
            self.kernels[(nin, ndim)] = k
        return k


class UFunc:
    """What ``ember.vectorize`` returns: call it on arrays (ember, NumPy, lists) or scalars;
    broadcasting as NumPy's ufuncs; ``out=`` accepted."""

    def __init__(self, pyfunc, sigs, target):
        self.py_func = pyfunc
        self.__name__ = pyfunc.__name__
        self.__doc__ = pyfunc.__doc__
        self.target = target
        self._device = Dispatcher(pyfunc, device=True)
        self._kernels = _ElementwiseKernels(self._device)
        self._sigs = []
        for s in sigs or ():
            types, ret = _parse_sig(s)
            if any(not isinstance(t, T.Scalar) for t in types) or ret is None:
                raise TypeError(f"ember.vectorize: {s!r} is not a scalar signature")
            self._sigs.append(([t.name for t in types], ret))
        nargs = len(self._device._src().params)
        self.nin = nargs
        self.nout = 1

    def _out_dtype(self, in_dtypes):
        if self._sigs:
            for ins, ret in self._sigs:
                if all(np.can_cast(d, t, "safe") for d, t in zip(in_dtypes, ins, strict=True)):
                    return ins, ret
            raise TypeError(
                f"ember.vectorize {self.__name__}: no signature matches the input dtypes "
                f"{[str(d) for d in in_dtypes]}"
            )
        _, _, ret, _, _ = self._device._device_spec(tuple(T.Scalar(d) for d in in_dtypes), None)
        if not isinstance(ret, T.Scalar):
            raise TypeError(f"ember.vectorize {self.__name__}: the function must return a number")
        return list(in_dtypes), ret.name

    def __call__(self, *args, out=None):
        if len(args) != self.nin:
            raise TypeError(f"{self.__name__}() takes {self.nin} arguments, got {len(args)}")
        device = _device_of(list(args) + [out], self.target)
        arrs = [_as_ember(a, device) for a in args]
        ins, ret = self._out_dtype([a.dtype.name for a in arrs])
        arrs = [a.astype(t, copy=False) for a, t in zip(arrs, ins, strict=True)]
        from .._manipulation import broadcast_arrays

        b = broadcast_arrays(*arrs) if arrs else []
        shape = b[0].shape if b else ()
        scalar_result = all(a.ndim == 0 for a in arrs)
        if out is None:
            res = _core.empty(shape or (1,), dtype=ret, device=device)
        else:
            res = out if shape else out.reshape((1,))
        views = [x if x.ndim else x.reshape((1,)) for x in b]
        n = max(1, int(np.prod(shape or (1,))))
        k = self._kernels.kernel(self.nin, max(len(shape), 1))
        blocks = min((n + 255) // 256, 4096)
        k[blocks, 256](*views, res)
        if scalar_result and out is None:
            return res.reshape(())
        return res


def vectorize(signatures=None, target="cpu", identity=None, nopython=True, cache=False, **kws):
    """Numba's ``@vectorize``: makes an ember ufunc from a scalar Python function, compiled with
    ember's kernel compiler: ``@ember.vectorize(['float32(float32, float32)'], target='cuda')``
    or ``@ember.vectorize`` (types from the arguments). The result runs on the GPU for GPU
    arrays (and for any input with target='cuda' when a GPU is there), else on the host."""
    if callable(signatures) and not isinstance(signatures, (str, list, tuple)):
        return UFunc(signatures, None, "cpu")
    if isinstance(signatures, str):
        signatures = [signatures]
    _target(target, "ember.vectorize")

    def wrap(f):
        return UFunc(f, signatures, target)

    return wrap


# ---- guvectorize ---------------------------------------------------------------------------------

_LAYOUT = re.compile(
    r"^\s*(\([^()]*\)(\s*,\s*\([^()]*\))*)\s*->\s*(\([^()]*\)(\s*,\s*\([^()]*\))*)\s*$"
)


def _parse_layout(layout):
    m = _LAYOUT.match(layout)
    if not m:
        raise ValueError(f"ember.guvectorize: cannot parse the layout {layout!r}")

    def groups(s):
        return [
            tuple(x.strip() for x in g.split(",") if x.strip())
            for g in re.findall(r"\(([^()]*)\)", s)
        ]

    return groups(m.group(1)), groups(m.group(3))


class GUFunc:
    """What ``ember.guvectorize`` returns: ``f(*inputs)`` allocates the outputs (or takes them
    as trailing arguments) and runs the core function over the loop dimensions."""

    def __init__(self, pyfunc, sigs, layout, target):
        self.py_func = pyfunc
        self.__name__ = pyfunc.__name__
        self.__doc__ = pyfunc.__doc__
        self.target = target
        self.ins, self.outs = _parse_layout(layout)
        self._sigs = [_parse_sig(s)[0] for s in (sigs or ())]
        self._device = Dispatcher(pyfunc, device=True)
        n = len(self._device._src().params)
        if n != len(self.ins) + len(self.outs):
            raise TypeError(
                f"ember.guvectorize {self.__name__}: the layout has {len(self.ins)} inputs and "
                f"{len(self.outs)} outputs, the function {n} parameters"
            )
        self._kernels = {}

    def _kernel(self, nargs, one_element):
        """The loop kernel: element i of the loop dimensions of every argument; an argument
        with no core dimensions goes as a 1-element view where its signature says array."""
        k = self._kernels.get(one_element)
        if k is None:
            names = [f"a{i}" for i in range(nargs)]
            items = [
                f"{a}[i:i + 1]" if one else f"{a}[i]"
                for a, one in zip(names, one_element, strict=True)
            ]
            text = (
                f"def gufunc_kernel({', '.join(names)}):\n"
                "    i = cuda.grid(1)\n"
                f"    while i < a{nargs - 1}.shape[0]:\n"
                f"        f({', '.join(items)})\n"
                "        i += cuda.gridsize(1)\n"
            )
            fn = _function("gufunc_kernel", text, {"cuda": _cuda(), "f": self._device})
            k = self._kernels[nargs] = Dispatcher(fn)
        return k

    def __call__(self, *args):
        nin, nout = len(self.ins), len(self.outs)
        if len(args) not in (nin, nin + nout):
            raise TypeError(
                f"{self.__name__}() takes {nin} or {nin + nout} arguments, got {len(args)}"
            )
        device = _device_of(args, self.target)
        ins = [_as_ember(a, device) for a in args[:nin]]
        sig_used = None
        if self._sigs:
            for sig in self._sigs:
                want = [t.dtype if isinstance(t, T.Array) else t.name for t in sig[:nin]]
                if all(
                    np.can_cast(a.dtype.name, w, "safe") for a, w in zip(ins, want, strict=True)
                ):
                    ins = [a.astype(w, copy=False) for a, w in zip(ins, want, strict=True)]
                    out_dt = [t.dtype if isinstance(t, T.Array) else t.name for t in sig[nin:]]
                    sig_used = sig
                    break
            else:
                raise TypeError(f"{self.__name__}: no signature matches the input dtypes")
        else:
            out_dt = [np.result_type(*[a.dtype.name for a in ins]).name] * nout
        sizes = {}
        loop_shapes = []
        for a, core in zip(ins, self.ins, strict=True):
            if a.ndim < len(core):
                raise ValueError(f"{self.__name__}: an input has fewer dimensions than {core}")
            cs = a.shape[a.ndim - len(core) :] if core else ()
            for name, s in zip(core, cs, strict=True):
                if sizes.setdefault(name, s) != s:
                    raise ValueError(f"{self.__name__}: dimension {name} is {sizes[name]} and {s}")
            loop_shapes.append(a.shape[: a.ndim - len(core)])
        loop = tuple(np.broadcast_shapes(*loop_shapes)) if loop_shapes else ()
        broadcast_to = _core.broadcast_to

        views = []
        for a, core in zip(ins, self.ins, strict=True):
            cs = a.shape[a.ndim - len(core) :] if core else ()
            v = broadcast_to(a, loop + cs)
            views.append(v.reshape((-1,) + cs) if loop else v.reshape((1,) + cs))
        outs = list(args[nin:])
        if not outs:
            for core, dt in zip(self.outs, out_dt, strict=True):
                try:
                    cs = tuple(sizes[n] for n in core)
                except KeyError as e:
                    raise ValueError(
                        f"{self.__name__}: output dimension {e} is not known from the inputs"
                    ) from None
                outs.append(_core.empty(loop + cs, dtype=dt, device=device))
        out_views = []
        for o, core in zip(outs, self.outs, strict=True):
            cs = o.shape[o.ndim - len(core) :] if core else ()
            out_views.append(o.reshape((-1,) + cs) if loop else o.reshape((1,) + cs))
        n = max(1, int(np.prod(loop or (1,))))
        cores = self.ins + self.outs
        one = tuple(
            not core and sig_used is not None and isinstance(sig_used[j], T.Array)
            for j, core in enumerate(cores)
        )
        k = self._kernel(nin + nout, one)
        k[min((n + 127) // 128, 4096), 128](*views, *out_views)
        if len(args) == nin + nout:
            return None
        return outs[0] if nout == 1 else tuple(outs)


def guvectorize(signatures, layout, target="cpu", identity=None, nopython=True, cache=False, **kws):
    """Numba's ``@guvectorize``: a generalized ufunc from a function on core arrays, e.g.
    ``@ember.guvectorize(['void(float64[:], float64[:], float64[:])'], '(n),(n)->(n)',
    target='cuda')``. Outputs are the trailing parameters, filled in place."""
    _target(target, "ember.guvectorize")
    if isinstance(signatures, str):
        signatures = [signatures]

    def wrap(f):
        return GUFunc(f, signatures, layout, target)

    return wrap


# ---- cuda.reduce ---------------------------------------------------------------------------------


class Reduce:
    """Numba's ``cuda.reduce``: ``r = cuda.reduce(binop)``; ``r(array, init=0)`` folds a 1-d array
    with the binary function (in a tree: it must be associative and commutative)."""

    def __init__(self, binop):
        self.__name__ = getattr(binop, "__name__", "reduce")
        self._op = binop if isinstance(binop, Dispatcher) else Dispatcher(binop, device=True)
        text = (
            "def reduce_kernel(a, partial, init, has_init):\n"
            "    sm = cuda.shared.array(256, dtype)\n"
            "    tid = cuda.threadIdx.x\n"
            "    i = cuda.blockIdx.x * 512 + tid\n"
            "    n = a.shape[0]\n"
            "    have = False\n"
            "    acc = init\n"
            "    if i < n:\n"
            "        acc = a[i]\n"
            "        have = True\n"
            "        if i + 256 < n:\n"
            "            acc = f(acc, a[i + 256])\n"
            "    sm[tid] = acc\n"
            "    cnt = cuda.syncthreads_count(have)\n"
            "    s = 128\n"
            "    while s > 0:\n"
            "        if tid < s and tid + s < cnt:\n"
            "            sm[tid] = f(sm[tid], sm[tid + s])\n"
            "        cuda.syncthreads()\n"
            "        s //= 2\n"
            "    if tid == 0:\n"
            "        r = sm[0]\n"
            "        if has_init and cuda.blockIdx.x == 0:\n"
            "            r = f(r, init)\n"
            "        partial[cuda.blockIdx.x] = r\n"
        )
        self._text = text
        self._kernels = {}

    def _kernel(self, dtype):
        k = self._kernels.get(dtype)
        if k is None:
            env = {"cuda": _cuda(), "f": self._op, "dtype": np.dtype(dtype)}
            fn = _function("reduce_kernel", self._text, env)
            k = self._kernels[dtype] = Dispatcher(fn)
        return k

    def __call__(self, arr, size=None, res=None, init=0, stream=0):
        from .._array import asarray, asnumpy

        a = (
            arr
            if isinstance(arr, _core.ndarray)
            else asarray(arr, device=_device_of([arr], "cuda"))
        )
        if a.ndim != 1:
            a = a.reshape((-1,))
        if size is not None:
            a = a[:size]
        dt = a.dtype.name
        if a.shape[0] == 0:
            return np.dtype(dt).type(init)
        has_init = init is not None  # the initial value takes part, as in Numba
        init_v = np.dtype(dt).type(init if init is not None else 0)
        while True:
            n = a.shape[0]
            blocks = (n + 511) // 512
            partial = _core.empty((blocks,), dtype=dt, device=a.device)
            self._kernel(dt)[blocks, 256](a, partial, init_v, bool(has_init))
            has_init = False
            a = partial
            if blocks == 1:
                break
        if res is not None:
            res[0] = a[0]
            return None
        return asnumpy(a)[0]


def reduce(binop):
    """``@cuda.reduce`` / ``cuda.reduce(binop)``: a reduction of 1-d arrays with `binop`."""
    return Reduce(binop)
