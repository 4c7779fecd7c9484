"""pytest configuration for the ember Python tests: the device fixture and shared helpers."""

from __future__ import annotations

import os
import sys
import warnings

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import ember
from _helpers import assert_close  # noqa: F401  (re-exported for convenience)


def cuda_unavailable_reason() -> str | None:
    """None when a CUDA device can be used, otherwise why not."""
    cuda = getattr(ember, "cuda", None)
    if cuda is None:
        return "ember.cuda does not exist"
    is_available = getattr(cuda, "is_available", None)
    if is_available is None:
        return "ember.cuda.is_available does not exist"
    try:
        ok = bool(is_available())
    except Exception as exc:  # a broken probe must not break the CPU run
        return f"ember.cuda.is_available() raised {type(exc).__name__}: {exc}"
    if not ok:
        why = getattr(cuda, "unavailable_reason", None)
        if callable(why):
            try:
                return str(why())
            except Exception:
                pass
        elif isinstance(why, str):
            return why
        return "ember.cuda.is_available() is False"
    return None


@pytest.fixture(params=["cpu", "cuda"])
def device(request):
    """Every test taking ``device`` runs on the CPU, and on CUDA when a GPU is usable."""
    if request.param == "cuda":
        reason = cuda_unavailable_reason()
        if reason is not None:
            pytest.skip(f"no CUDA device: {reason}")
    return request.param


@pytest.fixture(autouse=True)
def _quiet_numpy():
    # The NumPy oracle legitimately divides by zero, overflows, takes log(0), ...
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


@pytest.fixture(autouse=True)
def _restore_print_options():
    # ember.set_printoptions is NumPy's (the junk test calls it with anything)
    before = np.get_printoptions()
    yield
    if np.get_printoptions() != before:
        np.set_printoptions(**before)


@pytest.fixture(autouse=True)
def _restore_default_device():
    # a test (or the junk test) that changes the default device must not leak it
    get = getattr(ember, "get_default_device", None)
    try:
        before = get() if get is not None else None
    except Exception:
        before = None
    yield
    if before is not None:
        try:
            if get() != before:
                ember.set_default_device(before)
        except Exception:
            pass


SHARD_CHUNK = 64


def pytest_addoption(parser):
    parser.addoption(
        "--shard",
        default=None,
        metavar="I/N",
        help="run only shard I of N (0 <= I < N): consecutive chunks of "
        f"{SHARD_CHUNK} tests dealt round-robin, so neighbouring parametrizations (which "
        "share compiled kernels) stay in one process; tools/gpu_tests.py runs the shards",
    )


def _parse_shard(text):
    try:
        i, n = (int(v) for v in text.split("/"))
    except ValueError:
        raise pytest.UsageError(f"--shard: expected I/N, got {text!r}") from None
    if not (n >= 1 and 0 <= i < n):
        raise pytest.UsageError(f"--shard: expected 0 <= I < N, got {text!r}")
    return i, n


def pytest_collection_modifyitems(config, items):
    text = config.getoption("--shard")
    if text is None:
        return
    i, n = _parse_shard(text)
    keep, drop = [], []
    for k, item in enumerate(items):
        (keep if (k // SHARD_CHUNK) % n == i else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
    items[:] = keep


def pytest_terminal_summary(terminalreporter):
    """On a GPU, where the suite's time went in the kernel cache (compiles are most of it)."""
    if cuda_unavailable_reason() is None:
        s = ember.cuda.kernel_cache_stats()
        terminalreporter.write_line(
            "ember kernel cache: {compiles} compiles ({compile_ms:.0f} ms in NVRTC), "
            "{disk_hits} disk hits, {memory_hits} memory hits".format(**s)
        )
