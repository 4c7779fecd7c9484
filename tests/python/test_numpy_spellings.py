"""NumPy spellings beyond the Array API standard: ``x.T`` reverses every axis of an N-d array
(the standard defines .T for 2-d only), and ``einsum`` takes NumPy's ``optimize=`` (contracting
in the order of NumPy's path), ``dtype=``, ``casting=``, ``order=`` and ``out=``."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from _helpers import to_ember, to_numpy


@pytest.mark.parametrize("shape", [(), (4,), (2, 3), (2, 3, 4), (2, 1, 3, 5)])
def test_T_reverses_all_axes(device, shape):
    a = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    x = to_ember(a, device)
    t = x.T
    assert t.shape == a.T.shape
    np.testing.assert_array_equal(to_numpy(t), a.T)
    if len(shape) == 3:
        t[1, 2, 0] = -1.0  # a view, as NumPy's
        assert float(x[0, 2, 1]) == -1.0


EINSUMS = [
    ("ij,jk,kl->il", [(3, 4), (4, 5), (5, 2)]),
    ("ij,jk,kl", [(3, 4), (4, 5), (5, 2)]),
    ("bij,bjk,bkl->bl", [(2, 3, 4), (2, 4, 5), (2, 5, 3)]),
    ("i,i,i->", [(6,), (6,), (6,)]),
    ("ab,cd,bc,de->ae", [(2, 3), (4, 5), (3, 4), (5, 2)]),
    ("...ij,...jk,k->...i", [(2, 3, 4), (2, 4, 5), (5,)]),
    ("ii,ij,jk->k", [(3, 3), (3, 4), (4, 2)]),
    ("ij,jk->ik", [(3, 4), (4, 5)]),
]


@pytest.mark.parametrize("optimize", [False, True, "greedy", "optimal"])
@pytest.mark.parametrize("case", range(len(EINSUMS)))
def test_einsum_optimize(device, case, optimize):
    subscripts, shapes = EINSUMS[case]
    rng = np.random.default_rng(case)
    arrays = [rng.standard_normal(s) for s in shapes]
    want = np.einsum(subscripts, *arrays, optimize=optimize)
    got = ember.einsum(subscripts, *(to_ember(a, device) for a in arrays), optimize=optimize)
    np.testing.assert_allclose(to_numpy(got), want, rtol=1e-10, atol=1e-12)


def test_einsum_explicit_path(device):
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s) for s in [(3, 4), (4, 5), (5, 2)]]
    path, _ = np.einsum_path("ij,jk,kl->il", *arrays, optimize="optimal")
    got = ember.einsum("ij,jk,kl->il", *(to_ember(a, device) for a in arrays), optimize=path)
    np.testing.assert_allclose(to_numpy(got), np.einsum("ij,jk,kl->il", *arrays), rtol=1e-12)
    with pytest.raises(ValueError, match="ember.einsum: invalid contraction"):
        ember.einsum(
            "ij,jk,kl->il", *(to_ember(a, device) for a in arrays), optimize=["einsum_path", (0, 7)]
        )


def test_einsum_dtype_casting_out(device):
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    x = to_ember(a, device)
    got = ember.einsum("ij->j", x, dtype=ember.float64)
    assert got.dtype == ember.float64
    np.testing.assert_array_equal(to_numpy(got), np.einsum("ij->j", a, dtype=np.float64))
    with pytest.raises(TypeError, match="ember.einsum: cannot cast"):
        ember.einsum("ij->j", x, dtype=ember.int32)
    got = ember.einsum("ij->j", x, dtype=ember.int32, casting="unsafe")
    assert got.dtype == ember.int32
    out = ember.zeros(3, dtype=ember.float32, device=device)
    assert ember.einsum("ij->j", x, out=out, order="C") is out
    np.testing.assert_array_equal(to_numpy(out), a.sum(0))
    with pytest.raises(ValueError, match="ember.einsum: out has shape"):
        ember.einsum("ij->j", x, out=ember.zeros(2, device=device))
