"""ember.random: NumPy's ``Generator`` API on a counter-based generator (Philox4x32-10).

The same seed, shape and dtype give the same numbers on the CPU and on the GPU: raw bits,
integers and uniform floats bit for bit, normal, exponential, gamma and the others up to the
last bit of the device's math functions. Each call reserves its own range of the generator's
counters, so the numbers do not depend on how many threads or which device drew them.

``size=None`` gives a 0-d array (as CuPy does), not a Python scalar. Parameters of ``uniform``,
``normal`` and ``exponential`` may be arrays (broadcast against ``size``); those of ``gamma``,
``beta``, ``poisson`` and ``binomial`` are scalars.
"""

from __future__ import annotations

import numbers
import os

import numpy as _np

from . import _core
from ._array import asarray as _asarray
from ._array import asnumpy as _asnumpy
from ._core import any as _any
from ._core import ndarray as _ndarray
from ._core import take as _take

_R = _core._random
_U64 = 1 << 64

__all__ = [
    "Generator",
    "default_rng",
    "seed",
    "rand",
    "randn",
    "randint",
    "random",
    "normal",
    "uniform",
    "standard_normal",
    "exponential",
    "integers",
    "permutation",
    "shuffle",
    "choice",
]


def _key(seed, who):
    if seed is None:
        return _R.key_from_seed(int.from_bytes(os.urandom(8), "little"))
    if isinstance(seed, Generator):
        return seed._g.key
    if isinstance(seed, (numbers.Integral, _np.integer)):
        words = [seed]
    else:
        try:
            words = list(seed)
        except TypeError:
            raise TypeError(
                f"{who}: seed must be an int or a sequence of ints, got {seed!r}"
            ) from None
    key = 0
    for w in words:
        if not isinstance(w, numbers.Integral) or isinstance(w, bool):
            raise TypeError(f"{who}: seed must be an int or a sequence of ints, got {seed!r}")
        w = int(w)
        if w < 0:
            raise ValueError(f"{who}: seed must be non-negative, got {seed!r}")
        # every 64-bit word of every entry changes the key
        while True:
            key = _R.key_from_seed(key ^ (w % _U64))
            w >>= 64
            if not w:
                break
    return key


def _shape(size, who):
    if size is None:
        return ()
    if isinstance(size, numbers.Integral):
        return (int(size),)
    try:
        if isinstance(size, (str, bytes)):
            raise TypeError
        return tuple(int(s) for s in size)
    except (TypeError, ValueError):
        raise TypeError(
            f"{who}: size must be None, an int or a tuple of ints, got {size!r}"
        ) from None


def _is_scalar(v):
    return isinstance(v, (numbers.Number, _np.number)) and not isinstance(v, bool)


def _real(v, who, name):
    if not _is_scalar(v):
        raise TypeError(f"{who}: {name} must be a real number, got {type(v).__name__}")
    v = float(v)
    if v != v:
        raise ValueError(f"{who}: {name} must not be nan")
    return v


class Generator:
    """A random generator: ``ember.random.default_rng(seed)``; NumPy's methods, plus ``dtype``
    and ``device`` keywords on all of them."""

    def __init__(self, seed=None):
        self._g = _R.Generator(_key(seed, "ember.random.Generator"), 0)

    def __repr__(self):
        return f"Generator(Philox4x32-10, key={self._g.key:#018x}, position={self._g.position})"

    # The state is the key and the counter position; restoring it repeats the draws.
    @property
    def state(self):
        return {"bit_generator": "Philox4x32-10", "key": self._g.key, "position": self._g.position}

    @state.setter
    def state(self, s):
        self._g = _R.Generator(int(s["key"]), int(s["position"]))

    def __getstate__(self):  # pickles (and deep-copies) by its state, as NumPy's generators
        return self.state

    def __setstate__(self, s):
        self.state = s

    def spawn(self, n):
        """``n`` independent generators (keys derived from this one's key and the index)."""
        return [Generator([self._g.key, self._g.position, i]) for i in range(int(n))]

    # -- floats ---------------------------------------------------------------------------------

    def random(self, size=None, dtype="float64", out=None, *, device=None):
        """Uniform floats in [0, 1)."""
        r = self._g.uniform(0.0, 1.0, _shape(size, "ember.random.Generator.random"), dtype, device)
        return _into(out, r)

    def uniform(self, low=0.0, high=1.0, size=None, *, dtype=None, device=None):
        """Uniform floats in [low, high)."""
        who = "ember.random.Generator.uniform"
        if _is_scalar(low) and _is_scalar(high):
            return self._g.uniform(
                _real(low, who, "low"), _real(high, who, "high"), _shape(size, who), dtype, device
            )
        low, high, shape, device = _params(who, size, device, low, high)
        u = self._g.uniform(0.0, 1.0, shape, dtype, device)
        return low + (high - low) * u

    def normal(self, loc=0.0, scale=1.0, size=None, *, dtype=None, device=None):
        who = "ember.random.Generator.normal"
        if _is_scalar(loc) and _is_scalar(scale):
            return self._g.normal(
                _real(loc, who, "loc"), _real(scale, who, "scale"), _shape(size, who), dtype, device
            )
        loc, scale, shape, device = _params(who, size, device, loc, scale)
        _non_negative(scale, who, "scale")
        z = self._g.normal(0.0, 1.0, shape, dtype, device)
        return loc + scale * z

    def standard_normal(self, size=None, dtype="float64", out=None, *, device=None):
        shape = _shape(size, "ember.random.Generator.standard_normal")
        return _into(out, self._g.normal(0.0, 1.0, shape, dtype, device))

    def exponential(self, scale=1.0, size=None, *, dtype=None, device=None):
        who = "ember.random.Generator.exponential"
        if _is_scalar(scale):
            return self._g.exponential(_real(scale, who, "scale"), _shape(size, who), dtype, device)
        scale, shape, device = _params(who, size, device, scale)
        _non_negative(scale, who, "scale")
        return scale * self._g.exponential(1.0, shape, dtype, device)

    def standard_exponential(self, size=None, dtype="float64", *, device=None):
        shape = _shape(size, "ember.random.Generator.standard_exponential")
        return self._g.exponential(1.0, shape, dtype, device)

    def gamma(self, shape, scale=1.0, size=None, *, dtype=None, device=None):
        who = "ember.random.Generator.gamma"
        k, s = _real(shape, who, "shape"), _real(scale, who, "scale")
        return self._g.gamma(k, s, _shape(size, who), dtype, device)

    def standard_gamma(self, shape, size=None, dtype="float64", *, device=None):
        who = "ember.random.Generator.standard_gamma"
        return self._g.gamma(_real(shape, who, "shape"), 1.0, _shape(size, who), dtype, device)

    def beta(self, a, b, size=None, *, dtype=None, device=None):
        who = "ember.random.Generator.beta"
        a, b = _real(a, who, "a"), _real(b, who, "b")
        return self._g.beta(a, b, _shape(size, who), dtype, device)

    # -- integers -------------------------------------------------------------------------------

    def integers(self, low, high=None, size=None, dtype="int64", endpoint=False, *, device=None):
        """Integers in [low, high) (or [low, high] with ``endpoint=True``) without bias."""
        who = "ember.random.Generator.integers"
        if high is None:
            low, high = 0, low
        for name, v in (("low", low), ("high", high)):
            if not isinstance(v, (numbers.Integral, _np.integer)) or isinstance(v, bool):
                raise TypeError(f"{who}: {name} must be an int, got {type(v).__name__}")
        low, high = int(low), int(high) + (1 if endpoint else 0)
        if high <= low:
            raise ValueError(f"{who}: low >= high (low={low}, high={high - bool(endpoint)})")
        info = _int_bounds(dtype, who)
        if low < info[0] or high - 1 > info[1]:
            raise ValueError(
                f"{who}: [{low}, {high}) is out of bounds for dtype {_np.dtype(_npname(dtype))}"
            )
        low64 = low - _U64 if low >= 1 << 63 else low
        return self._g.integers(low64, (high - low) % _U64, _shape(size, who), dtype, device)

    def poisson(self, lam=1.0, size=None, *, dtype="int64", device=None):
        who = "ember.random.Generator.poisson"
        return self._g.poisson(_real(lam, who, "lam"), _shape(size, who), dtype, device)

    def binomial(self, n, p, size=None, *, dtype="int64", device=None):
        who = "ember.random.Generator.binomial"
        if not isinstance(n, (numbers.Integral, _np.integer)):
            raise TypeError(f"{who}: n must be an int, got {type(n).__name__}")
        return self._g.binomial(int(n), _real(p, who, "p"), _shape(size, who), dtype, device)

    # -- permutations and sampling ---------------------------------------------------------
    # The order comes from sorting 64-bit keys drawn on the CPU (NumPy's sort, on the host), so
    # it is the same for every device; the result is then moved to the device and the elements
    # gathered there. Sampling with weights inverts their CDF on the host.

    def _order(self, n):
        keys = _np.asarray(_asnumpy(self._g.bits((n,), "uint64", "cpu")))
        return _np.argsort(keys, kind="stable")

    def permutation(self, x, axis=0, *, device=None):
        """A permuted range (``x`` an int) or a permuted copy of ``x`` along ``axis``."""
        if isinstance(x, (numbers.Integral, _np.integer)):
            n = int(x)
            if n < 0:
                raise ValueError(f"ember.random.Generator.permutation: n must be >= 0, got {n}")
            return _asarray(self._order(n).astype(_np.int64), device=device)
        x = x if isinstance(x, _ndarray) else _asarray(x, device=device)
        if x.ndim == 0:
            raise ValueError("ember.random.Generator.permutation: x must be an int or at least 1-d")
        ax = axis % x.ndim
        order = _asarray(self._order(x.shape[ax]).astype(_np.int64), device=x.device)
        return _take(x, order, axis=ax)

    def shuffle(self, x, axis=0):
        """Permutes ``x`` in place along ``axis``."""
        x[...] = self.permutation(x, axis)

    def choice(self, a, size=None, replace=True, p=None, axis=0, shuffle=True, *, device=None):
        """Samples from ``a`` (an int n: range(n)); uniform, or with probabilities ``p``. Samples
        without replacement always come in random order (``shuffle`` is accepted for NumPy's
        signature)."""
        who = "ember.random.Generator.choice"
        if isinstance(a, (numbers.Integral, _np.integer)):
            n = int(a)
            if n <= 0:
                raise ValueError(f"{who}: a must be a positive int or a non-empty array, got {n}")
            pop = None
        else:
            pop = a if isinstance(a, _ndarray) else _asarray(a, device=device)
            if pop.ndim == 0:
                raise ValueError(f"{who}: a must be 1-dimensional or an integer")
            n = pop.shape[axis]
        dev = device if pop is None else pop.device
        shape = _shape(size, who)
        k = int(_np.prod(shape)) if shape else 1
        if p is not None:
            w = _np.asarray(p, dtype=_np.float64).ravel()
            if w.shape != (n,):
                raise ValueError(f"{who}: p must have the same size as a ({n}), got {w.size}")
            if (w < 0).any() or not _np.isfinite(w).all():
                raise ValueError(f"{who}: probabilities must be finite and non-negative")
            if abs(w.sum() - 1) > 1e-8:
                raise ValueError(f"{who}: probabilities do not sum to 1 (sum {w.sum()!r})")
        if not replace and k > n:
            raise ValueError(
                f"{who}: cannot take a larger sample ({k}) than the population ({n}) "
                "without replacement"
            )
        if replace and p is None:
            idx = self.integers(0, n, shape, device="cpu")
            idx = _np.asarray(_asnumpy(idx)).ravel()
        elif replace:
            u = _np.asarray(_asnumpy(self._g.uniform(0.0, 1.0, (k,), "float64", "cpu")))
            cdf = _np.cumsum(w)
            cdf /= cdf[-1]
            idx = _np.minimum(_np.searchsorted(cdf, u, side="right"), n - 1)
        elif p is None:
            idx = self._order(n)[:k]
        else:
            # Weighted sampling without replacement: the k largest of u^(1/w) (Efraimidis-
            # Spirakis), ordered by their keys.
            keys = _np.full(n, -_np.inf)
            draws = _np.asarray(_asnumpy(self._g.uniform(0.0, 1.0, (n,), "float64", "cpu")))
            pos = w > 0
            if pos.sum() < k:
                raise ValueError(f"{who}: fewer non-zero probabilities than the sample size")
            keys[pos] = _np.log(draws[pos]) / w[pos]
            idx = _np.argsort(-keys, kind="stable")[:k]
        idx = idx.astype(_np.int64).reshape(shape)
        if pop is None:
            return _asarray(idx, device=dev)
        return _take(pop, _asarray(idx, device=dev), axis=axis)

    def random_raw(self, size=None, dtype="uint64", *, device=None):
        """The generator's raw words (uint32 or uint64)."""
        return self._g.bits(_shape(size, "ember.random.Generator.random_raw"), dtype, device)


def _npname(dtype):
    return getattr(dtype, "name", dtype) if not isinstance(dtype, type) else dtype


def _int_bounds(dtype, who):
    name = str(_npname(dtype))
    if name in ("bool", "bool_", "<class 'bool'>"):
        return (0, 1)
    try:
        info = _np.iinfo(_np.dtype(name if not isinstance(dtype, type) else dtype))
    except (TypeError, ValueError):
        raise TypeError(f"{who}: dtype must be an integer dtype, got {dtype!r}") from None
    return (int(info.min), int(info.max))


def _params(who, size, device, *params):
    """Array-valued parameters: as ember arrays on one device, with the broadcast shape."""
    arrays = [_asarray(p, device=device) for p in params]
    dev = device if device is not None else arrays[0].device
    arrays = [a if a.device == dev else _asarray(a, device=dev) for a in arrays]
    shape = _np.broadcast_shapes(*(a.shape for a in arrays))
    if size is not None:
        want = _shape(size, who)
        if _np.broadcast_shapes(want, shape) != want:
            raise ValueError(f"{who}: size {want} does not fit the parameters' shape {shape}")
        shape = want
    return (*arrays, shape, dev)


def _non_negative(x, who, name):
    if bool(_any(x < 0)):
        raise ValueError(f"{who}: {name} must be non-negative")


def _into(out, r):
    if out is None:
        return r
    out[...] = r
    return out


def default_rng(seed=None):
    """A new Generator seeded with ``seed`` (None: fresh entropy from the OS)."""
    return seed if isinstance(seed, Generator) else Generator(seed)


# -- the legacy module-level functions, on one global generator --------------------------------

_global = Generator()


def seed(seed=None):
    """Reseeds the generator behind the module-level functions."""
    global _global
    _global = Generator(seed)


def rand(*shape, dtype="float64", device=None):
    return _global.random(shape or None, dtype, device=device)


def randn(*shape, dtype="float64", device=None):
    return _global.standard_normal(shape or None, dtype, device=device)


def randint(low, high=None, size=None, dtype="int64", *, device=None):
    return _global.integers(low, high, size, dtype, device=device)


def random(size=None, dtype="float64", *, device=None):
    return _global.random(size, dtype, device=device)


def normal(loc=0.0, scale=1.0, size=None, *, dtype=None, device=None):
    return _global.normal(loc, scale, size, dtype=dtype, device=device)


def uniform(low=0.0, high=1.0, size=None, *, dtype=None, device=None):
    return _global.uniform(low, high, size, dtype=dtype, device=device)


def standard_normal(size=None, dtype="float64", *, device=None):
    return _global.standard_normal(size, dtype, device=device)


def exponential(scale=1.0, size=None, *, dtype=None, device=None):
    return _global.exponential(scale, size, dtype=dtype, device=device)


def integers(low, high=None, size=None, dtype="int64", endpoint=False, *, device=None):
    return _global.integers(low, high, size, dtype, endpoint, device=device)


def permutation(x, *, device=None):
    return _global.permutation(x, device=device)


def shuffle(x):
    _global.shuffle(x)


def choice(a, size=None, replace=True, p=None, *, device=None):
    return _global.choice(a, size, replace, p, device=device)
