"""``ember.utils.data``: the same objects as :mod:`ember.data`, under PyTorch's import path
(``from ember.utils.data import DataLoader, Dataset``)."""

from ..data import *  # noqa: F403
from ..data import __all__  # noqa: F401
