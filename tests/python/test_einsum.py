"""ember.einsum against numpy.einsum: explicit and implicit outputs, ellipsis, repeated labels,
chains of operands, integer dtypes, errors; on both devices."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from _helpers import em, to_ember, to_numpy

CASES = [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("ij,jk", [(3, 4), (4, 5)]),
    ("ii->i", [(4, 4)]),
    ("ii", [(4, 4)]),
    ("ij->ji", [(2, 3)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("i,i", [(5,), (5,)]),
    ("i,j->ij", [(3,), (4,)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (4, 5)]),
    ("ijk,kj->i", [(2, 3, 4), (4, 3)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("iij->j", [(3, 3, 2)]),
    ("ij->", [(3, 4)]),
    ("i...->...", [(3, 4, 5)]),
    ("ab,ab->a", [(3, 4), (3, 4)]),
    ("ij,ij->ij", [(2, 1), (2, 3)]),
    ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]),
    ("ij,kl->ijkl", [(2, 0), (3, 1)]),
]


@pytest.mark.parametrize("sub,shapes", CASES, ids=[c[0] for c in CASES])
def test_einsum_matches_numpy(device, sub, shapes):
    rng = np.random.default_rng(len(sub))
    arrs = [rng.standard_normal(s) for s in shapes]
    want = np.einsum(sub, *arrs)
    got = to_numpy(ember.einsum(sub, *[to_ember(a, device) for a in arrs]))
    assert got.shape == np.shape(want)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_einsum_integers_and_float32(device):
    a = np.arange(12, dtype=np.int32).reshape(3, 4)
    got = ember.einsum("ij,kj->ik", to_ember(a, device), to_ember(a, device))
    assert np.array_equal(to_numpy(got), np.einsum("ij,kj->ik", a, a))
    f = a.astype(np.float32)
    got = ember.einsum("ij->j", to_ember(f, device))
    assert got.dtype == ember.float32
    np.testing.assert_allclose(to_numpy(got), f.sum(0))


def test_einsum_errors(device):
    x = ember.ones((3, 4), device=device)
    with pytest.raises(ValueError, match="operand subscripts"):
        ember.einsum("ij,jk", x)
    with pytest.raises(ValueError, match="name 3 dims"):
        ember.einsum("ijk", x)
    with pytest.raises(ValueError, match="not in any operand"):
        ember.einsum("ij->iz", x)
    with pytest.raises(ValueError, match="do not broadcast"):
        ember.einsum("ij,ij->i", x, ember.ones((3, 5), device=device))
    with pytest.raises(ValueError, match="invalid"):
        ember.einsum("i1", x)
    with pytest.raises(TypeError):
        ember.einsum(3, x)


RNG = np.random.default_rng(23)


def test_einsum_path(device):
    m1, m2, m3 = (RNG.standard_normal(s) for s in [(8, 2), (2, 9), (9, 3)])
    got = ember.einsum_path("ij,jk,kl->il", em(m1, device), em(m2, device), em(m3, device))
    assert got == np.einsum_path("ij,jk,kl->il", m1, m2, m3)
