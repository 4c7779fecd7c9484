"""ember.nn.Parameter: an ndarray subclass that a Module registers as one of its parameters."""

from __future__ import annotations

from .. import _core
from .._array import asarray
from .._core import ndarray
from ._grad_mode import detach


class Parameter(ndarray):
    """An array that is a module parameter: assigning one to a ``Module`` attribute registers it
    in ``parameters()``. It is a real ``ember.ndarray`` (every op accepts it; ops return plain
    arrays). ``Parameter(data, requires_grad=True)`` shares `data`'s memory as a fresh leaf
    (``data.detach()``), requiring gradients unless `requires_grad` is False. ``Parameter()`` is
    an empty float32 parameter.
    """

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = _core.empty((0,), dtype=_core.float32)
        elif not isinstance(data, ndarray):
            data = asarray(data)
        self = _core._wrap_as(cls, detach(data))
        if requires_grad:
            self.requires_grad_(True)
        return self

    def __init__(self, data=None, requires_grad=True):
        pass  # all set up in __new__ (ndarray itself has no Python constructor)

    def __repr__(self):
        return "Parameter containing:\n" + ndarray.__repr__(self)

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = Parameter(detach(self).copy(), self.requires_grad)
        memo[id(self)] = result
        return result

    def __reduce_ex__(self, protocol):
        raise TypeError(
            "ember.nn.Parameter cannot be pickled; save a state_dict with ember.save instead"
        )
