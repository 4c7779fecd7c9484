"""Mixed precision (PyTorch's ``torch.amp``): ``ember.autocast(device_type, dtype)`` and
``ember.amp.GradScaler``.

Inside ``with ember.autocast("cuda", dtype=ember.bfloat16):`` (or ``"cpu"``, or float16), each
``ember.nn.functional`` op follows its cast policy, declared where the op is defined
(``@cast_policy(LOW)`` / ``@cast_policy(FLOAT32)``) and listed in ``CAST_POLICY``: the matrix
ops (``linear``, ``bilinear``, the convolutions, attention) and ``ember.amp.matmul`` take their
float32 arguments in the region's 16-bit dtype; the numerically sensitive ones (softmax,
log_softmax, the norms, the losses) take 16-bit float arguments in float32. float64 and
non-float arguments are left alone, as are arrays on another device type than the region's.
Float32 leaf arrays that require grad (parameters) are cast once per region (a cache keyed by
the array, emptied when the outermost region ends); the casts are differentiable, so gradients
reach the float32 parameters in float32. Outside a region the policy costs one global check.

``a @ b`` on arrays is not autocast (it is the array's operator, not an nn op): write
``ember.amp.matmul(a, b)`` or ``F.linear`` in a region.

``GradScaler`` scales the loss so float16 gradients do not underflow, unscales them before the
step, skips the step when any gradient is inf or NaN, and adapts the scale (PyTorch's defaults:
2^16, x2 after 2000 clean steps, x0.5 on overflow). The inf/NaN check costs one device→host
synchronization per step, whatever the number of parameters.
"""

from __future__ import annotations

import functools
import math
import threading

from . import _core

__all__ = [
    "CAST_POLICY",
    "FLOAT32",
    "GradScaler",
    "LOW",
    "autocast",
    "cast_policy",
    "get_autocast_dtype",
    "is_autocast_enabled",
    "matmul",
]

LOW = "low"  # float32 arguments in the region's dtype (float16 or bfloat16)
FLOAT32 = "float32"  # 16-bit float arguments in float32
CAST_POLICY: dict[str, str] = {}  # op name -> LOW or FLOAT32, filled by @cast_policy

_state = threading.local()
_open_regions = 0  # regions open in any thread: zero makes every policy a pass-through
_lock = threading.Lock()
_SIXTEEN = ("float16", "bfloat16")


def _stack():
    stack = getattr(_state, "stack", None)
    if stack is None:
        stack = _state.stack = []
    return stack


class autocast:  # noqa: N801 (PyTorch's spelling)
    """A region where ember.nn's matrix ops run in `dtype` (default float16 on "cuda",
    bfloat16 on "cpu") and its sensitive ops in float32. Nests (the innermost region of a device
    type decides; ``enabled=False`` turns autocast off inside); also a decorator."""

    def __init__(self, device_type="cuda", dtype=None, enabled=True, cache_enabled=True):
        if device_type not in ("cuda", "cpu"):
            raise ValueError(
                f"ember.autocast: device_type must be 'cuda' or 'cpu', got {device_type!r}"
            )
        if dtype is None:
            dtype = _core.float16 if device_type == "cuda" else _core.bfloat16
        try:
            dtype = _core.dtype(dtype)
        except Exception:
            raise TypeError(f"ember.autocast: dtype must be a dtype, got {dtype!r}") from None
        if dtype.name not in _SIXTEEN:
            raise ValueError(f"ember.autocast: dtype must be float16 or bfloat16, got {dtype}")
        self.device_type, self.fast_dtype = device_type, dtype
        self.enabled, self.cache_enabled = bool(enabled), bool(cache_enabled)

    def __enter__(self):
        global _open_regions
        stack = _stack()
        cache = None
        if self.cache_enabled:  # nested regions share the outermost region's cache
            cache = stack[-1][3] if stack and stack[-1][3] is not None else {}
        stack.append((self.device_type, self.fast_dtype, self.enabled, cache))
        with _lock:
            _open_regions += 1
        return self

    def __exit__(self, *exc):
        global _open_regions
        stack = _stack()
        stack.pop()
        with _lock:
            _open_regions -= 1
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapped(*args, **kwargs):
            with autocast(self.device_type, self.fast_dtype, self.enabled, self.cache_enabled):
                return fn(*args, **kwargs)

        return wrapped


def is_autocast_enabled(device_type="cuda"):
    """Whether an enabled autocast region for `device_type` is in effect on this thread."""
    for kind, _, on, _ in reversed(_stack()):
        if kind == device_type:
            return on
    return False


def get_autocast_dtype(device_type="cuda"):
    """The low-precision dtype of the innermost region of `device_type` (or the default)."""
    for kind, dtype, _, _ in reversed(_stack()):
        if kind == device_type:
            return dtype
    return _core.float16 if device_type == "cuda" else _core.bfloat16


def _region_of(a):
    """(dtype, cache) of the innermost region covering `a`'s device type, or None."""
    kind = a.device.type
    for dt, dtype, on, cache in reversed(_stack()):
        if dt == kind:
            return (dtype, cache) if on else None
    return None


def _cast(a, policy):
    if not isinstance(a, _core.ndarray):
        return a
    name = a.dtype.name
    if policy == LOW:
        if name != "float32":
            return a
        region = _region_of(a)
        if region is None:
            return a
        dtype, cache = region
        if cache is not None and a.is_leaf and a.requires_grad:
            hit = cache.get(id(a))
            if hit is not None and hit[0] is a:
                return hit[1]
            cast = a.astype(dtype)
            cache[id(a)] = (a, cast)
            return cast
        return a.astype(dtype)
    if name in _SIXTEEN and _region_of(a) is not None:
        return a.astype(_core.float32)
    return a


def cast_policy(policy):
    """Declares an op's autocast policy (LOW or FLOAT32): the decorated function sees its array
    arguments cast accordingly inside a region, and is called unchanged outside one."""
    if policy not in (LOW, FLOAT32):
        raise ValueError(f"ember.amp.cast_policy: policy must be LOW or FLOAT32, got {policy!r}")

    def decorate(fn):
        @functools.wraps(fn)
        def op(*args, **kwargs):
            if not _open_regions or not _stack():
                return fn(*args, **kwargs)
            args = [_cast(a, policy) for a in args]
            kwargs = {k: _cast(v, policy) for k, v in kwargs.items()}
            return fn(*args, **kwargs)

        op.cast_policy = policy
        CAST_POLICY[fn.__name__] = policy
        return op

    return decorate


@cast_policy(LOW)
def matmul(a, b):
    """``a @ b`` under the autocast policy (in the region's dtype inside a region)."""
    return _core.matmul(a, b)


class GradScaler:
    """PyTorch's gradient scaler: ``scaler.scale(loss).backward(); scaler.step(optimizer);
    scaler.update()``."""

    def __init__(
        self,
        device="cuda",
        init_scale=2.0**16,
        growth_factor=2.0,
        backoff_factor=0.5,
        growth_interval=2000,
        enabled=True,
    ):
        who = "ember.amp.GradScaler"
        if not growth_factor > 1:
            raise ValueError(f"{who}: growth_factor must be > 1, got {growth_factor!r}")
        if not 0 < backoff_factor < 1:
            raise ValueError(f"{who}: backoff_factor must be in (0, 1), got {backoff_factor!r}")
        if not (isinstance(growth_interval, int) and growth_interval > 0):
            raise ValueError(
                f"{who}: growth_interval must be a positive int, got {growth_interval!r}"
            )
        if not (math.isfinite(init_scale) and init_scale > 0):
            raise ValueError(f"{who}: init_scale must be positive and finite, got {init_scale!r}")
        self.device = device
        self._scale = float(init_scale)
        self._growth_factor, self._backoff_factor = float(growth_factor), float(backoff_factor)
        self._growth_interval, self._enabled = int(growth_interval), bool(enabled)
        self._growth_tracker = 0
        self._per_optimizer = {}

    def is_enabled(self):
        return self._enabled

    def get_scale(self):
        return self._scale if self._enabled else 1.0

    def get_growth_factor(self):
        return self._growth_factor

    def get_backoff_factor(self):
        return self._backoff_factor

    def get_growth_interval(self):
        return self._growth_interval

    def scale(self, outputs):
        """`outputs` (an array, or nested lists/tuples of them) times the scale."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, _core.ndarray):
            return outputs * self._scale
        if isinstance(outputs, (list, tuple)):
            return type(outputs)(self.scale(o) for o in outputs)
        raise TypeError(
            f"ember.amp.GradScaler.scale: outputs must be an array or a list/tuple of arrays, "
            f"got {type(outputs).__name__}"
        )

    def unscale_(self, optimizer):
        """Divides the optimizer's gradients by the scale (once per step) and records whether
        any of them is inf or NaN (one synchronization for all of them)."""
        if not self._enabled:
            return
        state = self._per_optimizer.setdefault(id(optimizer), {"unscaled": False, "inf": False})
        if state["unscaled"]:
            raise RuntimeError(
                "ember.amp.GradScaler.unscale_: already called on this optimizer since the "
                "last update()"
            )
        from ._joining import concatenate
        from .autograd import no_grad

        inv = 1.0 / self._scale
        probes = []
        with no_grad():
            for group in optimizer.param_groups:
                for p in group["params"]:
                    g = getattr(p, "grad", None)
                    if g is None:
                        continue
                    g *= inv
                    # 0 * x is NaN exactly where x is inf or NaN: the sum carries any of them
                    probes.append(_core.sum(g * 0).astype(_core.float32).reshape((1,)))
            found = False
            by_device = {}
            for s in probes:
                by_device.setdefault(str(s.device), []).append(s)
            for group in by_device.values():
                total = _core.sum(concatenate(group))
                found = found or not math.isfinite(float(total))
        state.update(unscaled=True, inf=found)

    def step(self, optimizer, *args, **kwargs):
        """``optimizer.step()`` unless a gradient was inf or NaN (then skipped, returning None)."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        state = self._per_optimizer.get(id(optimizer))
        if state is None or not state["unscaled"]:
            self.unscale_(optimizer)
            state = self._per_optimizer[id(optimizer)]
        if state["inf"]:
            return None
        return optimizer.step(*args, **kwargs)

    def update(self, new_scale=None):
        """Adapts the scale: x backoff_factor after a step that found inf/NaN, x growth_factor
        after growth_interval clean steps in a row; or sets `new_scale`."""
        if not self._enabled:
            return
        found = any(s["inf"] for s in self._per_optimizer.values())
        if new_scale is not None:
            self._scale = float(new_scale)
        elif found:
            self._scale *= self._backoff_factor
            self._growth_tracker = 0
        elif self._per_optimizer:
            self._growth_tracker += 1
            if self._growth_tracker == self._growth_interval:
                self._scale *= self._growth_factor
                self._growth_tracker = 0
        self._per_optimizer.clear()

    def state_dict(self):
        if not self._enabled:
            return {}
        return {
            "scale": self._scale,
            "growth_factor": self._growth_factor,
            "backoff_factor": self._backoff_factor,
            "growth_interval": self._growth_interval,
            "_growth_tracker": self._growth_tracker,
        }

    def load_state_dict(self, state):
        if not state:
            raise RuntimeError("ember.amp.GradScaler.load_state_dict: the state is empty")
        self._scale = float(state["scale"])
        self._growth_factor = float(state["growth_factor"])
        self._backoff_factor = float(state["backoff_factor"])
        self._growth_interval = int(state["growth_interval"])
        self._growth_tracker = int(state["_growth_tracker"])
