"""matmul / @ and the matmul family against NumPy: dtypes, 1-D and batched broadcast operands,
transposed, strided and reversed views, empty sizes, errors; on both devices."""

from __future__ import annotations

import ember
import numpy as np
import pytest
from _helpers import ALL_DTYPES, BF16, np_dtype, to_ember, to_numpy

SHAPES = [
    ((5,), (5,)),
    ((5,), (5, 3)),
    ((4, 5), (5,)),
    ((4, 5), (5, 3)),
    ((2, 4, 5), (5, 3)),
    ((2, 1, 4, 5), (3, 5, 6)),
    ((1, 7), (7, 1)),
    ((0, 5), (5, 3)),
    ((4, 0), (0, 3)),
    ((4, 5), (5, 0)),
    ((33, 17), (17, 65)),
]


def sample(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    if dtype == "bool":
        return rng.random(shape) < 0.5
    t = np_dtype(dtype)
    if t.kind in "iu":
        return rng.integers(-3 if t.kind == "i" else 0, 4, shape).astype(t)
    a = rng.standard_normal(shape)
    if t.kind == "c":
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(t)


def reference(a, b, dtype):
    if dtype in ("float16", "bfloat16"):
        return np.matmul(a.astype(np.float32), b.astype(np.float32))
    return np.matmul(a, b)


def check(got, want, dtype, k):
    got = to_numpy(got)
    assert got.shape == want.shape
    if dtype in ("bool",) or np_dtype(dtype).kind in "iu":
        assert got.dtype == want.dtype and np.array_equal(got, want)
        return
    tol = {"float16": 2e-2, "bfloat16": 1e-1, "float32": 1e-4, "complex64": 1e-4}.get(dtype, 1e-10)
    np.testing.assert_allclose(
        got.astype(np.complex128 if np.iscomplexobj(want) else np.float64),
        want,
        rtol=tol,
        atol=tol * max(1, k) ** 0.5,
    )


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("sa,sb", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_matmul_matches_numpy(device, dtype, sa, sb):
    a, b = sample(sa, dtype, 1), sample(sb, dtype, 2)
    got = to_ember(a, device) @ to_ember(b, device)
    assert str(got.dtype) == dtype and got.device == ember.Device(device)
    check(got, reference(a, b, dtype), dtype, sa[-1])


# Each view: base shapes of A and B, and the same view of each, giving (6, 8, 10) @ (6, 10, 7).
VIEWS = {
    "transposed": ((6, 10, 8), (6, 7, 10), lambda t: t.swapaxes(-1, -2)),
    "strided": ((6, 16, 20), (6, 20, 14), lambda t: t[:, ::2, ::2]),
    "reversed": ((6, 8, 10), (6, 10, 7), lambda t: t[::-1, ::-1, ::-1]),
    "batch_transposed": ((8, 6, 10), (10, 6, 7), lambda t: t.swapaxes(0, 1)),
    "column_slice": ((6, 8, 12), (6, 10, 9), lambda t: t[..., 1:-1]),
}


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "int32", "float16"])
@pytest.mark.parametrize("view", list(VIEWS))
def test_matmul_of_views(device, dtype, view):
    sa, sb, pick = VIEWS[view]
    a, b = sample(sa, dtype, 3), sample(sb, dtype, 4)
    if view == "batch_transposed":
        b = b.swapaxes(0, 1).copy()  # only A is the batch-transposed view
        na, nb = pick(a), b
        xa, xb = pick(to_ember(a, device)), to_ember(b, device)
    else:
        na, nb = pick(a), pick(b)
        xa, xb = pick(to_ember(a, device)), pick(to_ember(b, device))
    if view == "column_slice":
        nb, xb = nb[:, :, :7], xb[:, :, :7]
    assert na.shape == (6, 8, 10) and nb.shape == (6, 10, 7)
    check(ember.matmul(xa, xb), reference(na, nb, dtype), dtype, 10)


def test_mixed_dtypes_promote(device):
    a, b = sample((3, 4), "int32"), sample((4, 2), "float32")
    got = ember.matmul(to_ember(a, device), to_ember(b, device))
    assert str(got.dtype) == str(np.matmul(a, b).dtype)
    check(got, np.matmul(a, b), str(np.matmul(a, b).dtype), 4)


def test_matmul_errors(device):
    x = ember.ones((3, 4), device=device)
    with pytest.raises(ValueError, match="mismatch in its core dimension"):
        x @ ember.ones((3, 4), device=device)
    with pytest.raises(ValueError, match="enough dimensions"):
        ember.matmul(ember.asarray(2.0, device=device), x)
    with pytest.raises(ValueError, match="scalar"):
        x @ 2
    with pytest.raises(ValueError, match="broadcast"):
        ember.ones((2, 3, 4), device=device) @ ember.ones((3, 4, 5), device=device)


def test_matmul_across_devices_is_an_error():
    if not ember.cuda.is_available():
        pytest.skip("one device only")
    with pytest.raises(ValueError, match="different devices"):
        ember.ones((2, 2), device="cpu") @ ember.ones((2, 2), device="cuda")


def test_matmul_with_numpy_operand_on_the_left_or_right(device):
    # A NumPy array is a host array: with a CPU operand it works, with a GPU one it is the
    # cross-device error (DESIGN.md section 6: no hidden copies), as for every binary op.
    a = np.arange(6.0).reshape(2, 3)
    x = ember.ones((3, 2), device=device)
    if device == "cpu":
        np.testing.assert_array_equal(to_numpy(ember.matmul(a, x)), a @ np.ones((3, 2)))
        np.testing.assert_array_equal(to_numpy(ember.matmul(x.T, a.T)), np.ones((2, 3)) @ a.T)
    else:
        for f in (lambda: ember.matmul(a, x), lambda: ember.add(a[:, :2], x[:2])):
            with pytest.raises(ValueError, match="different devices"):
                f()


def test_precision_switch():
    assert ember.get_matmul_precision() == "highest"
    ember.set_matmul_precision("high")
    try:
        assert ember.get_matmul_precision() == "high"
    finally:
        ember.set_matmul_precision("highest")
    with pytest.raises(ValueError, match="highest"):
        ember.set_matmul_precision("medium")


# ---- the family -------------------------------------------------------------------------------


def test_dot_inner_outer_vdot(device):
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((4, 5))
    c, d = rng.standard_normal((2, 3, 4)), rng.standard_normal((6, 4, 5))
    e = lambda v: to_ember(v, device)  # noqa: E731
    np.testing.assert_allclose(to_numpy(ember.dot(e(a), e(b))), np.dot(a, b))
    np.testing.assert_allclose(to_numpy(ember.dot(e(c), e(d))), np.dot(c, d))
    np.testing.assert_allclose(to_numpy(ember.dot(e(a), 2.0)), np.dot(a, 2.0))
    np.testing.assert_allclose(to_numpy(ember.inner(e(a), e(c))), np.inner(a, c))
    np.testing.assert_allclose(to_numpy(ember.outer(e(a), e(b))), np.outer(a, b))
    z = rng.standard_normal(6) + 1j * rng.standard_normal(6)
    w = rng.standard_normal(6) + 1j * rng.standard_normal(6)
    np.testing.assert_allclose(to_numpy(ember.vdot(e(z), e(w))), np.vdot(z, w))
    with pytest.raises(ValueError, match="different lengths"):
        ember.vdot(e(z), e(w[:3]))


@pytest.mark.parametrize(
    "sa,sb,axes",
    [
        ((3, 4, 5), (4, 5, 2), 2),
        ((3, 4), (4, 2), 1),
        ((2, 3), (4,), 0),
        ((3, 4, 5), (5, 3, 2), ([0, 2], [1, 0])),
    ],
)
def test_tensordot(device, sa, sb, axes):
    rng = np.random.default_rng(6)
    a, b = rng.standard_normal(sa), rng.standard_normal(sb)
    got = ember.tensordot(to_ember(a, device), to_ember(b, device), axes=axes)
    np.testing.assert_allclose(to_numpy(got), np.tensordot(a, b, axes=axes), rtol=1e-12)


def test_tensordot_errors(device):
    x = ember.ones((3, 4), device=device)
    with pytest.raises(ValueError, match="differ in length"):
        ember.tensordot(x, x, axes=([0], [0, 1]))
    with pytest.raises(ValueError, match="shape mismatch"):
        ember.tensordot(x, x, axes=([0], [1]))
    with pytest.raises(ValueError, match="out of range"):
        ember.tensordot(x, x, axes=3)


def test_vecdot_trace_diagonal_kron(device):
    rng = np.random.default_rng(7)
    a = rng.standard_normal((2, 3, 4)) + 1j * rng.standard_normal((2, 3, 4))
    b = rng.standard_normal((3, 4))
    e = lambda v: to_ember(v, device)  # noqa: E731
    np.testing.assert_allclose(
        to_numpy(ember.vecdot(e(a), e(b))), np.sum(np.conj(a) * b, axis=-1), rtol=1e-12
    )
    m = rng.standard_normal((4, 5, 6))
    for off in (-2, 0, 3, 9):
        np.testing.assert_allclose(to_numpy(ember.diagonal(e(m), off)), np.diagonal(m, off))
        np.testing.assert_allclose(
            to_numpy(ember.diagonal(e(m), off, 1, 2)), np.diagonal(m, off, 1, 2)
        )
        np.testing.assert_allclose(to_numpy(ember.trace(e(m), off)), np.trace(m, off))
        np.testing.assert_allclose(
            to_numpy(ember.linalg.trace(e(m), offset=off)), np.trace(m, off, axis1=-2, axis2=-1)
        )
    k1, k2 = rng.integers(0, 5, (2, 3)), rng.integers(0, 5, (3, 2, 2))
    assert np.array_equal(to_numpy(ember.kron(e(k1), e(k2))), np.kron(k1, k2))
    with pytest.raises(ValueError, match="same"):
        ember.diagonal(e(m), 0, 1, 1)


def test_bfloat16_matmul_values(device):
    a, b = sample((8, 9), "bfloat16"), sample((9, 3), "bfloat16")
    got = to_ember(a, device) @ to_ember(b, device)
    assert got.dtype == ember.bfloat16
    want = (a.astype(np.float32) @ b.astype(np.float32)).astype(BF16).astype(np.float32)
    np.testing.assert_allclose(to_numpy(got).astype(np.float32), want, rtol=2e-2, atol=2e-2)
