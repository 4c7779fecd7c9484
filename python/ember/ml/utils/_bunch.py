"""``Bunch`` (scikit-learn's ``sklearn.utils.Bunch``): a dict whose keys are also attributes."""

from __future__ import annotations

__all__ = ["Bunch"]


class Bunch(dict):
    """A dict whose keys can be read and set as attributes (``b.key`` is ``b['key']``)."""

    def __init__(self, **kwargs):
        super().__init__(kwargs)

    def __setattr__(self, key, value):
        self[key] = value

    def __getattr__(self, key):
        try:
            return self[key]
        except KeyError:
            raise AttributeError(key) from None

    def __dir__(self):
        return list(self.keys())

    def __getstate__(self):
        return dict(self)

    def __setstate__(self, state):
        self.update(state)
