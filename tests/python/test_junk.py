"""Junk arguments for every public callable: only Python exceptions may come back, never a crash.

Every public callable in ``dir(ember)`` and every public method (plus the interesting dunders) of
a few arrays is called, in-process, with random junk drawn with a fixed seed: None, strings, huge
and negative ints, nan, ragged and deeply nested lists, objects whose protocols misbehave, huge
shapes, wrong dtypes, arrays of other dtypes and shapes.  Any ``Exception`` is an acceptable
answer; a crash, a hang, a ``BaseException`` that is not an ``Exception``, or a huge allocation is
not.  The call in flight is written to ``<tmp>/ember_junk_last_call.txt`` before it is made, so a
segfault can be traced to its arguments.

Address space is capped (``RLIMIT_AS``) during these tests, so that a junk size which would be
accepted on a big machine fails with MemoryError instead of exhausting memory.
"""

from __future__ import annotations

import faulthandler
import math
import os
import random
import reprlib
import resource
import tempfile
import warnings

import ember
import numpy as np
import psutil
import pytest
from conftest import cuda_unavailable_reason

SEED = 20240601
CALLS_PER_CALLABLE = 240
LOG_PATH = os.path.join(tempfile.gettempdir(), "ember_junk_last_call.txt")
_repr = reprlib.Repr()
_repr.maxlevel = 4
_repr.maxstring = 40
_repr.maxother = 60


# --------------------------------------------------------------------------------------------
# junk
# --------------------------------------------------------------------------------------------


class RaisingLen:
    def __len__(self):
        raise RuntimeError("len refused")

    def __getitem__(self, i):
        raise RuntimeError("getitem refused")


class LyingLen:
    """Claims 2**62 elements but has three."""

    def __len__(self):
        return 2**62

    def __getitem__(self, i):
        if 0 <= i < 3:
            return 1.0
        raise IndexError(i)


class BadIndex:
    def __index__(self):
        raise ValueError("index refused")

    def __int__(self):
        raise ValueError("int refused")


class HugeIndex:
    def __index__(self):
        return 2**100


class BadFloat:
    def __float__(self):
        raise ZeroDivisionError("float refused")


class BadArrayInterface:
    def __array__(self, dtype=None, copy=None):
        raise RuntimeError("__array__ refused")


class BadDLPack:
    def __dlpack__(self, **kwargs):
        return 5

    def __dlpack_device__(self):
        return (1, 0)


class WrongDLPackDevice:
    def __dlpack__(self, **kwargs):
        raise BufferError("no")

    def __dlpack_device__(self):
        return ("x", None)


class BadEq:
    def __eq__(self, other):
        raise RuntimeError("eq refused")

    __hash__ = object.__hash__


def deep_list(depth):
    v = [1]
    for _ in range(depth):
        v = [v]
    return v


def base_junk():
    return [
        None,
        "",
        "abc",
        "float32",
        "cuda:99",
        0,
        1,
        -1,
        3,
        2**40,
        2**63,
        -(2**63) - 1,
        2**64,
        10**30,
        -(10**30),
        0.5,
        -1.5,
        float("nan"),
        float("inf"),
        float("-inf"),
        1e300,
        True,
        False,
        1j,
        complex("nan+nanj"),
        [],
        [[]],
        [1, [2]],
        [[1, 2], [3]],
        [[1, 2], [3, "x"]],
        [None, 1],
        (2**40, 2**40),
        (2**62, 4),
        (2**32, 2**32, 2**32),
        (-1,),
        (2, -3),
        (1.5,),
        ((1,),),
        (0,),
        (),
        (0, 2**63),
        object(),
        lambda *a: None,
        b"bytes",
        bytearray(3),
        memoryview(b"abcd"),
        {"a": 1},
        {1, 2},
        slice(None, None, 0),
        slice(2**70, None, -1),
        Ellipsis,
        type,
        int,
        float,
        ember.float32,
        ember.bfloat16,
        np.float64,
        np.dtype("V8"),
        np.array([1, 2]),
        np.array(["a"]),
        np.zeros((2, 2), dtype=object),
        np.zeros(3, dtype="V4"),
        np.zeros((2, 3), dtype=np.float32)[:, ::2],
        deep_list(40),
        deep_list(200),
        RaisingLen(),
        LyingLen(),
        BadIndex(),
        HugeIndex(),
        BadFloat(),
        BadArrayInterface(),
        BadDLPack(),
        WrongDLPackDevice(),
        BadEq(),
    ]


def array_junk():
    out = [
        ember.zeros(3),
        ember.ones((2, 2), dtype=ember.int8),
        ember.asarray(1.5),
        ember.zeros((0, 3)),
        ember.asarray([True, False]),
        ember.asarray([1 + 2j, 3]),
        ember.ones(4, dtype=ember.bfloat16),
        ember.arange(12).reshape((3, 4))[::-1, ::2],
        ember.ones((2, 1, 3), dtype=ember.uint64),
    ]
    return out


KWARG_NAMES = [
    "axis",
    "dtype",
    "device",
    "keepdims",
    "copy",
    "shape",
    "k",
    "endpoint",
    "correction",
    "ddof",
    "num",
    "step",
    "fill_value",
    "casting",
    "bogus_kw",
]


SMALL_VALID = [0, 1, 2, -1, (2, 3), (0,), (), 0.5, True, "float32", "cpu"]


def make_calls(rng: random.Random, n: int, pool: list, arrays: list):
    """Random calls; half of them start with a valid array (or a small valid value) so that
    the junk reaches past the first argument check."""
    calls = []
    for _ in range(n):
        nargs = rng.choice([0, 1, 1, 2, 2, 2, 3, 3, 4])
        args = [rng.choice(pool) for _ in range(nargs)]
        if args and rng.random() < 0.5:
            args[0] = rng.choice(arrays)
        if len(args) > 1 and rng.random() < 0.3:
            args[1] = rng.choice(SMALL_VALID + arrays)
        kwargs = {}
        if rng.random() < 0.35:
            for _ in range(rng.choice([1, 1, 2])):
                kwargs[rng.choice(KWARG_NAMES)] = rng.choice(pool)
        calls.append((args, kwargs))
    return calls


# --------------------------------------------------------------------------------------------
# guards: address-space cap, hang watchdog, crash breadcrumbs
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module", autouse=True)
def capped_address_space():
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    capped = False
    if cuda_unavailable_reason() is not None:  # the CUDA driver reserves huge address ranges
        vms = psutil.Process().memory_info().vms
        cap = vms + 4 * 2**30
        if hard == resource.RLIM_INFINITY or cap < hard:
            resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
            capped = True
    else:  # the GPU's memory is capped instead: a junk size must not fill a 141 GB device
        ember.cuda.set_memory_limit(4 * 2**30)
    yield
    if capped:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
    if cuda_unavailable_reason() is None:
        ember.cuda.set_memory_limit(0)
        ember.cuda.empty_cache()


@pytest.fixture(autouse=True)
def _in_scratch_dir(tmp_path, monkeypatch):
    # a junk string may be taken as a file name (save/dump-like methods): keep it out of the repo
    monkeypatch.chdir(tmp_path)


@pytest.fixture(autouse=True)
def watchdog():
    faulthandler.dump_traceback_later(120, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()


@pytest.fixture(scope="module")
def breadcrumbs():
    with open(LOG_PATH, "w") as f:
        yield f


def call_safely(log, label, fn, args, kwargs):
    log.seek(0)
    log.write(f"{label}(*{_repr.repr(args)}, **{_repr.repr(kwargs)})\n")
    log.truncate()
    log.flush()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn(*args, **kwargs)
    except Exception:  # any Python exception is an acceptable answer
        pass
    except BaseException as exc:  # SystemExit, KeyboardInterrupt, GeneratorExit
        pytest.fail(f"{label} raised {type(exc).__name__} (not an Exception): {exc!r}")


def _public_callables():
    names = []
    for name in sorted(dir(ember)):
        if name.startswith("_"):
            continue
        obj = getattr(ember, name, None)
        if callable(obj):
            names.append(name)
    return names


PUBLIC = _public_callables()


def test_namespace_has_public_callables():
    assert len(PUBLIC) > 50, PUBLIC


@pytest.mark.parametrize("name", PUBLIC)
def test_junk_to_function(name, breadcrumbs):
    fn = getattr(ember, name)
    rng = random.Random(f"{SEED}-{name}")
    arrays = array_junk()
    pool = base_junk() + arrays
    for args, kwargs in make_calls(rng, CALLS_PER_CALLABLE, pool, arrays):
        call_safely(breadcrumbs, f"ember.{name}", fn, args, kwargs)


DUNDERS = [
    "__getitem__",
    "__setitem__",
    "__add__",
    "__radd__",
    "__iadd__",
    "__sub__",
    "__isub__",
    "__mul__",
    "__truediv__",
    "__itruediv__",
    "__floordiv__",
    "__mod__",
    "__pow__",
    "__rpow__",
    "__matmul__",
    "__and__",
    "__or__",
    "__xor__",
    "__lshift__",
    "__rshift__",
    "__ilshift__",
    "__eq__",
    "__ne__",
    "__lt__",
    "__ge__",
    "__neg__",
    "__invert__",
    "__abs__",
    "__bool__",
    "__int__",
    "__float__",
    "__complex__",
    "__index__",
    "__len__",
    "__iter__",
    "__contains__",
    "__array__",
    "__array_namespace__",
    "__dlpack__",
    "__dlpack_device__",
    "__format__",
    "__copy__",
    "__deepcopy__",
    "__reduce__",
    "__reduce_ex__",
    "__setstate__",
    "__buffer__",
]

ARRAY_FACTORIES = {
    "f32_2d": lambda: ember.arange(6, dtype=ember.float32).reshape((2, 3)),
    "i8_1d": lambda: ember.asarray([1, -2, 3], dtype=ember.int8),
    "bool_0d": lambda: ember.asarray(True),
    "empty": lambda: ember.zeros((0, 3)),
    "view": lambda: ember.arange(12.0).reshape((3, 4))[::-1, 1::2],
}


def _method_names():
    x = ARRAY_FACTORIES["f32_2d"]()
    names = []
    for name in sorted(set(dir(x))):
        if name.startswith("_") and name not in DUNDERS:
            continue
        try:
            attr = getattr(x, name)
        except Exception:
            continue
        if callable(attr):
            names.append(name)
    return names


METHODS = _method_names()


@pytest.mark.parametrize("array_kind", list(ARRAY_FACTORIES))
@pytest.mark.parametrize("method", METHODS)
def test_junk_to_method(method, array_kind, breadcrumbs):
    rng = random.Random(f"{SEED}-{method}-{array_kind}")
    arrays = array_junk()
    pool = base_junk() + arrays
    for args, kwargs in make_calls(rng, CALLS_PER_CALLABLE // 3, pool, arrays):
        x = ARRAY_FACTORIES[array_kind]()
        try:
            bound = getattr(x, method)
        except Exception:
            continue
        call_safely(breadcrumbs, f"<{array_kind}>.{method}", bound, args, kwargs)
        # the array must still be usable afterwards
        call_safely(breadcrumbs, f"<{array_kind}>.tolist after {method}", x.tolist, [], {})


SIZE_BOMBS = [
    ("zeros", ((2**40, 2**40),), {}),
    ("ones", ((2**62,),), {}),
    ("empty", ((2**63 - 1,),), {}),
    ("full", ((2**31, 2**31, 4), 1.0), {}),
    ("full", ((2**21, 2**21, 2**21), 0), {}),
    ("arange", (0, 1e300, 1e-300), {}),
    ("arange", (2**62,), {}),
    ("arange", (-(2**63), 2**63 - 1), {}),
    ("arange", (0, float("inf")), {}),
    ("arange", (0, float("nan")), {}),
    ("linspace", (0, 1, 2**62), {}),
    ("linspace", (0, float("nan"), 5), {}),
    ("eye", (2**40,), {}),
    ("eye", (3, 2**62), {}),
    ("eye", (3,), {"k": 2**63 - 1}),
    ("eye", (3,), {"k": -(2**63)}),
]


@pytest.mark.parametrize("name,args,kwargs", SIZE_BOMBS, ids=[f"{n}{a}" for n, a, _ in SIZE_BOMBS])
def test_size_bombs(name, args, kwargs, breadcrumbs):
    fn = getattr(ember, name)
    call_safely(breadcrumbs, f"ember.{name}", fn, list(args), kwargs)


METHOD_BOMBS = [
    ("reshape", ((2**40, 2**40),)),
    ("reshape", ((2**62, 4, 0),)),
    ("reshape", ((-1, 0),)),
    ("reshape", ((-1, -1),)),
    ("__getitem__", ((slice(None, None, -(2**63)),),)),
    ("__getitem__", ((slice(-(2**63), 2**63 - 1, 2**62),),)),
    ("__getitem__", ((None,) * 70,)),
    ("__getitem__", (tuple([slice(None)] * 70),)),
    ("astype", ("V8",)),
]


@pytest.mark.parametrize("name,args", METHOD_BOMBS, ids=[f"{n}{a}"[:60] for n, a in METHOD_BOMBS])
def test_method_bombs(name, args, breadcrumbs):
    x = ember.arange(12.0).reshape((3, 4))
    call_safely(breadcrumbs, f"x.{name}", getattr(x, name), list(args), {})
    assert math.isclose(float(ember.sum(x)), 66.0)


def test_broadcast_bombs(breadcrumbs):
    x = ember.ones((1, 1))
    call_safely(breadcrumbs, "broadcast_to", ember.broadcast_to, [x, (2**40, 2**40)], {})
    y = ember.broadcast_to(ember.ones(1), (2**20,))
    z = ember.broadcast_to(ember.ones((1, 1)), (2**20, 1))
    call_safely(breadcrumbs, "add 2**40 elements", ember.add, [y, z], {})


def test_deeply_nested_list(breadcrumbs):
    call_safely(breadcrumbs, "ember.asarray", ember.asarray, [deep_list(10_000)], {})
    call_safely(breadcrumbs, "ember.asarray", ember.asarray, [deep_list(100_000)], {})


def test_self_referential_list(breadcrumbs):
    a = [1]
    a.append(a)
    call_safely(breadcrumbs, "ember.asarray", ember.asarray, [a], {})
