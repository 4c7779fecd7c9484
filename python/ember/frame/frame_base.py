"""What Series and DataFrame share: operators, head/tail, loc/iloc, the default device."""

from __future__ import annotations

import ember as _em

_ARITH = ["add", "sub", "mul", "truediv", "floordiv", "mod", "pow"]
_CMP = ["eq", "ne", "lt", "le", "gt", "ge"]
_LOGIC = {"and": "and", "or": "or", "xor": "xor"}


def default_device(data=None) -> str:
    """The device a frame object built from ``data`` lands on: that of ``data`` when it is an
    ember array or frame object, or of the first such value of a dict/list/tuple (a DataFrame
    of ember Series stays where they are); else ember's default device (host data)."""
    dev = _data_device(data)
    if dev is None and isinstance(data, dict):
        data = list(data.values())
    if dev is None and isinstance(data, (list, tuple)):
        for v in data[:64]:
            dev = _data_device(v)
            if dev is not None:
                break
    return dev if dev is not None else str(_em.get_default_device())


def _data_device(data):
    if isinstance(data, _em.ndarray):
        return str(data.device)
    dev = getattr(data, "device", None)
    if isinstance(dev, str) and (dev == "cpu" or dev.startswith("cuda")):
        # a frame object's device (ember.frame's, not another library's)
        return str(_em.Device(dev)) if type(data).__module__.startswith("ember") else None
    return None


def _make(op, reflected=False):
    def f(self, other):
        return self._binop(other, op, reflected)

    f.__name__ = f"__{'r' if reflected else ''}{op}__"
    return f


def _named(op, reflected=False):
    def f(self, other, axis=None, fill_value=None):
        if fill_value is not None:
            self = self.fillna(fill_value)
            if hasattr(other, "fillna"):
                other = other.fillna(fill_value)
        return self._binop(other, op, reflected)

    f.__name__ = ("r" if reflected else "") + op
    return f


class UnsupportedError(NotImplementedError, AttributeError):
    """A pandas method ember.frame does not provide (an AttributeError too, so hasattr works)."""


def unsupported(cls_name, name):
    import pandas as pd

    if hasattr(getattr(pd, cls_name), name):
        return UnsupportedError(
            f"ember.frame.{cls_name}.{name} is not implemented (pandas' "
            f"{cls_name}.{name} has no device version here)"
        )
    return AttributeError(f"'{cls_name}' object has no attribute '{name}'")


class FrameBase:
    @property
    def index(self):
        """The row labels (an ember.frame Index)."""
        return self.__dict__.get("_index")

    @index.setter
    def index(self, value):
        # pandas' rule: any labels of the right length (a list, an array, a pandas Index)
        from .index import Index, as_index

        if not isinstance(value, Index):
            old = self.__dict__.get("_index")
            dev = old.device if old is not None else None
            n = len(old) if old is not None else None
            new = as_index(value, dev)
            if n is not None and len(new) != n:
                raise ValueError(
                    f"Length mismatch: Expected axis has {n} elements, new values have "
                    f"{len(new)} elements"
                )
            value = new
        self.__dict__["_index"] = value

    # ---- windows shared by Series and DataFrame (ember/frame/ewm.py) ----------------------------
    def ewm(
        self,
        com=None,
        span=None,
        halflife=None,
        alpha=None,
        min_periods=0,
        adjust=True,
        ignore_na=False,
        times=None,
        method="single",
    ):
        """Exponentially weighted windows (pandas' ``ewm``)."""
        from .ewm import EWM

        return EWM(
            self, com, span, halflife, alpha, min_periods, adjust, ignore_na, 0, times, method
        )

    def expanding(self, min_periods=1, method="single"):
        """Expanding windows (pandas' ``expanding``)."""
        from .ewm import Expanding

        return Expanding(self, min_periods)

    @classmethod
    def _add_operators(cls):
        for op in _ARITH:
            setattr(cls, f"__{op}__", _make(op))
            setattr(cls, f"__r{op}__", _make(op, True))
            setattr(cls, op, _named(op))
            setattr(cls, "r" + op, _named(op, True))
        for op in _CMP:
            setattr(cls, f"__{op}__", _make(op))
            setattr(cls, op, _named(op))
        for op in _LOGIC:
            setattr(cls, f"__{op}__", _make(op))
            setattr(cls, f"__r{op}__", _make(op, True))
        cls.div = cls.truediv
        cls.divide = cls.truediv
        cls.multiply = cls.mul
        cls.subtract = cls.sub
        cls.rdiv = cls.rtruediv
        cls.__hash__ = None

    def head(self, n=5):
        k = len(self)
        return self._slice(0, n if n >= 0 else max(k + n, 0))

    def tail(self, n=5):
        k = len(self)
        if n == 0:
            return self._slice(k, k)
        return self._slice(max(k - n, 0) if n > 0 else -n, k)

    @property
    def iloc(self):
        from .indexing import ILoc

        return ILoc(self)

    @property
    def loc(self):
        from .indexing import Loc

        return Loc(self)

    @property
    def at(self):
        """Label access to one value (``loc`` with scalar labels)."""
        from .indexing import Loc

        return Loc(self)

    @property
    def iat(self):
        """Positional access to one value (``iloc`` with integer positions)."""
        from .indexing import ILoc

        return ILoc(self)

    def sample(self, n=None, frac=None, replace=False, random_state=None, ignore_index=False):
        """Random rows drawn on the device with ember.random (the same seed gives the same rows
        on every device, though not the rows pandas' generator would pick)."""
        total = len(self)
        if n is not None and frac is not None:
            raise ValueError("ember.frame.sample: Please enter a value for `frac` OR `n`, not both")
        k = (1 if frac is None else int(round(frac * total))) if n is None else int(n)
        if k < 0:
            raise ValueError(f"ember.frame.sample: A negative number of rows requested: {k}")
        if k > total and not replace:
            raise ValueError(
                "ember.frame.sample: Cannot take a larger sample than population "
                "when 'replace=False'"
            )
        rng = _em.random.default_rng(random_state)
        if replace:
            idx = rng.integers(0, max(total, 1), size=k, device=self.device)
        else:
            idx = rng.permutation(total, device=self.device)[:k]
        idx = idx.astype(_em.int64)
        out = self._take(idx)
        if ignore_index:
            from .index import RangeIndex

            out.index = RangeIndex(len(out), device=self.device)
        return out

    @property
    def _constructor(self):
        """pandas' ``_constructor`` (what Dask builds results with): this type, on this
        object's device."""
        import functools

        return functools.partial(type(self), device=self.device)

    @property
    def _constructor_sliced(self):
        """pandas' ``_constructor_sliced``: Series, on this object's device."""
        import functools

        from .series import Series

        return functools.partial(Series, device=self.device)

    def take(self, indices, axis=0):
        """Rows at positions ``indices`` (an ember or host int array; negative counts from the
        end), as pandas' ``take`` along the rows."""
        if axis not in (0, "index", "rows"):
            raise ValueError(f"ember.frame.take: axis={axis!r} (only the rows, axis=0)")
        dev = self.device
        idx = _em.asarray(indices, device=dev).astype(_em.int64)
        idx = _em.where(idx < 0, idx + len(self), idx)
        return self._take(idx)

    def __bool__(self):
        raise ValueError(
            f"The truth value of a {type(self).__name__} is ambiguous. "
            "Use a.empty, a.bool(), a.item(), a.any() or a.all()."
        )

    def pipe(self, func, *args, **kwargs):
        return func(self, *args, **kwargs)
