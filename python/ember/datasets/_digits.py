"""load_digits: the UCI optical-recognition handwritten digits, from the package's data folder."""

from __future__ import annotations

import functools
import numbers

import numpy as _np

from .._array import asarray

_FILE = "digits.csv.gz"
_N_SAMPLES, _N_FEATURES = 1797, 64


@functools.cache
def _table():
    import gzip  # here: importlib.resources and gzip cost ~15 ms of `import ember`
    from importlib import resources

    data = resources.files(__package__).joinpath("data", _FILE)
    with data.open("rb") as raw, gzip.open(raw) as f:
        table = _np.loadtxt(f, delimiter=",", dtype=_np.int64)
    # a damaged installation should fail loudly rather than train on garbage
    if (
        table.shape != (_N_SAMPLES, _N_FEATURES + 1)
        or table[:, :-1].min() < 0
        or table[:, :-1].max() > 16
        or not _np.array_equal(_np.unique(table[:, -1]), _np.arange(10))
    ):
        raise RuntimeError(f"ember.datasets.load_digits: the data file {data} is damaged")
    table.setflags(write=False)
    return table


def load_digits(*, n_class=10, device="cpu"):
    """The 8x8 handwritten digits: returns ``(X, y)``.

    ``X`` is float32 of shape ``(n, 64)``: each row an 8x8 image flattened row by row, pixel
    values 0..16 (``X.reshape(-1, 8, 8)`` gives the images). ``y`` is int64 of shape ``(n,)``,
    the digit 0..9. With all 10 classes ``n`` is 1,797; `n_class` keeps the digits
    ``0 .. n_class-1`` only. The arrays are new copies on `device` (the CPU by default).

    The data are the test set of the UCI "Optical Recognition of Handwritten Digits" dataset
    (E. Alpaydin and C. Kaynak, 1998), CC BY 4.0: see ``ember/datasets/data/README.md``.
    """
    who = "ember.datasets.load_digits"
    if isinstance(n_class, bool) or not isinstance(n_class, (numbers.Integral, _np.integer)):
        raise TypeError(f"{who}: n_class must be an int from 1 to 10, got {n_class!r}")
    if not 1 <= n_class <= 10:
        raise ValueError(f"{who}: n_class must be an int from 1 to 10, got {n_class}")
    table = _table()
    if n_class < 10:
        table = table[table[:, -1] < n_class]
    x = _np.ascontiguousarray(table[:, :-1], dtype=_np.float32)
    y = _np.ascontiguousarray(table[:, -1], dtype=_np.int64)
    return asarray(x, device=device, copy=True), asarray(y, device=device, copy=True)
