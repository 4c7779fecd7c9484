"""``da.random`` with ember's generator: the bit-generator and RandomState classes the "ember"
array backend hands to dask.array.random.

Dask spawns one child seed per chunk from a NumPy ``SeedSequence`` (host metadata only), builds
``type(bit_generator)(child_seed)`` inside each task and asks the array library named by the
class's module (``ember``) for ``ember.random.default_rng(bit_generator)``; since these classes
are ember Generators, that is the object itself, and its draws run on its device with ember's
Philox kernels. The device is part of the class (``Generator_cuda_0``, ``RandomState_cpu``...),
because Dask passes the class, not the instance, to its tasks; the classes are made on demand
and pickle by reference (module ``__getattr__``), so tasks carry them to worker processes."""

from __future__ import annotations

import functools

import numpy as np

import ember
from ember.random import Generator as _EmberGenerator

__all__ = ["Generator", "RandomState", "generator_class"]

# The methods that take device=: a draw goes to the class's device unless told otherwise.
_DRAWS = (
    "random",
    "uniform",
    "normal",
    "standard_normal",
    "exponential",
    "standard_exponential",
    "gamma",
    "standard_gamma",
    "beta",
    "integers",
    "poisson",
    "binomial",
    "permutation",
    "choice",
    "random_raw",
)


def _on_device(name):
    base = getattr(_EmberGenerator, name)

    @functools.wraps(base)
    def draw(self, *args, **kwargs):
        if kwargs.get("device") is None:
            kwargs["device"] = self.device
        return base(self, *args, **kwargs)

    return draw


def _seed_sequence(seed, who):
    if isinstance(seed, np.random.SeedSequence):
        return seed
    try:
        return np.random.SeedSequence(seed)
    except (TypeError, ValueError) as e:
        raise type(e)(
            f"{who}: seed must be None, an int, a sequence of ints or a "
            f"numpy.random.SeedSequence, got {seed!r}"
        ) from None


class Generator(_EmberGenerator):
    """An ember Generator seeded from a NumPy ``SeedSequence`` (what Dask spawns per chunk),
    drawing on the class's device (None: ember's default device when drawing)."""

    device = None

    def __init__(self, seed=None):
        self._seed_seq = _seed_sequence(seed, f"ember.dask.{type(self).__name__}")
        words = self._seed_seq.generate_state(4, np.uint64)
        super().__init__([int(w) for w in words])

    def __repr__(self):
        return f"{type(self).__name__}(device={self.device!r}, {super().__repr__()})"

    def __reduce__(self):
        return (type(self), (self._seed_seq,), {"state": self.state})

    def __setstate__(self, d):
        self.state = d["state"]

    def __dask_tokenize__(self):
        return (
            type(self).__name__,
            self._seed_seq.entropy,
            self._seed_seq.spawn_key,
            tuple(sorted(self.state.items())),
        )


for _name in _DRAWS:
    setattr(Generator, _name, _on_device(_name))


class RandomState(Generator):
    """NumPy's legacy ``RandomState`` names (what ``da.random.normal(...)`` and
    ``da.random.RandomState`` call), on ember's generator. The numbers differ from NumPy's
    Mersenne Twister, as CuPy's do."""

    def random_sample(self, size=None, **kwargs):
        return self.random(size=size, **kwargs)

    def randint(self, low, high=None, size=None, dtype="int64", **kwargs):
        return self.integers(low, high, size=size, dtype=dtype, **kwargs)

    def random_integers(self, low, high=None, size=None, **kwargs):
        if high is None:
            low, high = 1, low
        return self.integers(low, high, size=size, endpoint=True, **kwargs)

    def rand(self, *shape, **kwargs):
        return self.random(size=shape, **kwargs)

    def randn(self, *shape, **kwargs):
        return self.standard_normal(size=shape, **kwargs)

    def tomaxint(self, size=None, **kwargs):
        return self.integers(0, np.iinfo(np.int64).max, size=size, **kwargs)


_CLASSES: dict[str, type] = {}
_BASES = {"Generator": Generator, "RandomState": RandomState}


def _class(name):
    cls = _CLASSES.get(name)
    if cls is None:
        kind, _, dev = name.partition("_")
        if kind not in _BASES or not dev:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        device = ember.Device(dev.replace("_", ":"))
        cls = type(
            name,
            (_BASES[kind],),
            {"device": str(device), "__module__": __name__, "__qualname__": name},
        )
        _CLASSES[name] = cls
    return cls


def generator_class(device, legacy=False):
    """The Generator (or, with `legacy`, RandomState) class drawing on `device`."""
    dev = str(ember.Device(str(device))).replace(":", "_")
    return _class(("RandomState_" if legacy else "Generator_") + dev)


def __getattr__(name):  # the per-device classes, for pickle's lookups by name
    if name.startswith(("Generator_", "RandomState_")):
        return _class(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
