"""ember.ndimage filters against scipy.ndimage: every mode, origins, dtypes, odd shapes, output=."""

from __future__ import annotations

import ember
import ember.ndimage as end
import numpy as np
import pytest
from scipy import ndimage as snd

MODES = [
    "reflect",
    "constant",
    "nearest",
    "mirror",
    "wrap",
    "grid-mirror",
    "grid-constant",
    "grid-wrap",
]
DTYPES = [np.float64, np.float32, np.int32, np.uint8, np.int16]


def _data(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.random(shape) * 40 - (0 if np.dtype(dtype).kind == "u" else 10)
    return x.astype(dtype)


def _tol(dtype):
    return {np.float64: 1e-10, np.float32: 2e-5}.get(dtype, 0)


def check(got, want, tol=0.0, int_slack=0):
    got = ember.asnumpy(got)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape, (got.shape, want.shape)
    if want.dtype.kind in "iub":
        diff = np.abs(got.astype(np.int64) - want.astype(np.int64))
        assert diff.max(initial=0) <= int_slack, diff.max()
    else:
        scale = max(1.0, float(np.max(np.abs(want), initial=0)))
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * scale)


def both(fname, x, *args, device, tol=0.0, int_slack=0, **kw):
    """Call ember.ndimage.<fname> and scipy.ndimage.<fname> and compare (or compare errors)."""
    try:
        want = getattr(snd, fname)(x, *args, **kw)
    except Exception as exc:  # ember must raise the same type
        with pytest.raises(type(exc)):
            getattr(end, fname)(ember.asarray(x, device=device), *args, **kw)
        return
    got = getattr(end, fname)(ember.asarray(x, device=device), *args, **kw)
    assert got.device == ember.asarray(x, device=device).device
    check(got, want, tol, int_slack)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_correlate_convolve_1d(device, mode, dtype):
    x = _data((6, 7), dtype)
    for w in ([1.0, -2.0, 0.5, 3.0], [0.25, 0.5, 0.25], [2.0]):
        for origin in (-1, 0, 1):
            for axis in (0, -1):
                kw = dict(axis=axis, mode=mode, cval=2.5, origin=origin)
                both("correlate1d", x, w, device=device, tol=_tol(dtype), **kw)
                both("convolve1d", x, w, device=device, tol=_tol(dtype), **kw)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_correlate_convolve_nd(device, mode, dtype):
    x = _data((5, 6), dtype, 1)
    w = np.random.default_rng(3).random((3, 4)) - 0.3
    for origin in (0, -1, (1, 0)):
        both("correlate", x, w, device=device, tol=_tol(dtype), mode=mode, cval=1.5, origin=origin)
        both("convolve", x, w, device=device, tol=_tol(dtype), mode=mode, cval=1.5, origin=origin)


def test_correlate_shapes(device):
    rng = np.random.default_rng(2)
    # 1-D, 3-D, size-1 axes, kernel bigger than the input, non-contiguous input
    cases = [
        (rng.random(5), rng.random(9)),
        (rng.random((3, 4, 5)), rng.random((2, 3, 2))),
        (rng.random((1, 6)), rng.random((3, 3))),
        (rng.random((2, 3)), rng.random((5, 7))),
    ]
    for x, w in cases:
        for mode in MODES:
            both("correlate", x, w, device=device, tol=1e-10, mode=mode)
            both("convolve", x, w, device=device, tol=1e-10, mode=mode)
    base = rng.random((8, 10))
    xe = ember.asarray(base, device=device)[::2, 1::3]
    check(
        end.correlate(xe, np.ones((3, 2))), snd.correlate(base[::2, 1::3], np.ones((3, 2))), 1e-12
    )
    check(end.gaussian_filter(xe.T, 1.3), snd.gaussian_filter(base[::2, 1::3].T, 1.3), 1e-12)
    # axes= selects the filtered axes
    x3 = rng.random((4, 5, 6))
    both("correlate", x3, rng.random((3, 2)), device=device, tol=1e-12, axes=(2, 0))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_gaussian(device, mode, dtype):
    x = _data((7, 6), dtype, 4)
    slack = 1 if np.dtype(dtype).kind in "iu" else 0
    for order in (0, 1, 2, (0, 3)):
        both(
            "gaussian_filter",
            x,
            (1.5, 0.7),
            device=device,
            tol=_tol(dtype) * 10,
            int_slack=slack,
            order=order,
            mode=mode,
            cval=2.0,
        )
    both(
        "gaussian_filter1d",
        x,
        2.0,
        device=device,
        tol=_tol(dtype) * 10,
        int_slack=slack,
        axis=0,
        mode=mode,
    )
    both(
        "gaussian_filter1d",
        x,
        1.0,
        device=device,
        tol=_tol(dtype) * 10,
        int_slack=slack,
        radius=5,
        mode=mode,
    )
    both(
        "gaussian_filter",
        x,
        3.0,
        device=device,
        tol=_tol(dtype) * 10,
        int_slack=slack,
        truncate=2.0,
        mode=mode,
    )


def test_gaussian_options(device):
    rng = np.random.default_rng(5)
    x = rng.random((5, 6, 4))
    both("gaussian_filter", x, [1.0, 0.0, 2.0], device=device, tol=1e-10)
    both("gaussian_filter", x, 1.2, device=device, tol=1e-10, axes=(0, 2), mode=["wrap", "nearest"])
    both("gaussian_filter", x, 1.0, device=device, tol=1e-10, radius=[1, 2, 3])
    both("gaussian_filter", x, 1.0, device=device, tol=1e-6, output=np.float32)
    both("gaussian_filter", x * 100, 1.0, device=device, output=np.int16, int_slack=1)
    out = ember.zeros((5, 6, 4), dtype=ember.float64, device=device)
    res = end.gaussian_filter(ember.asarray(x, device=device), 1.0, output=out)
    assert res is out
    check(out, snd.gaussian_filter(x, 1.0), 1e-10)
    with pytest.raises(RuntimeError):
        end.gaussian_filter(ember.asarray(x, device=device), [1.0, 2.0])
    with pytest.raises(RuntimeError):
        end.gaussian_filter(ember.asarray(x, device=device), 1.0, mode="bogus")
    with pytest.raises(RuntimeError):
        end.gaussian_filter(ember.asarray(x, device=device), 1.0, output=ember.zeros((2, 2)))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_uniform(device, mode, dtype):
    x = _data((7, 9), dtype, 6)
    for origin in (0, -1, 1):
        both(
            "uniform_filter",
            x,
            (3, 4),
            device=device,
            tol=_tol(dtype),
            mode=mode,
            cval=3.0,
            origin=origin,
        )
        both(
            "uniform_filter1d",
            x,
            11,
            device=device,
            tol=_tol(dtype),
            axis=1,
            mode=mode,
            origin=origin,
        )
        both(
            "uniform_filter1d",
            x,
            2,
            device=device,
            tol=_tol(dtype),
            axis=0,
            mode=mode,
            origin=origin,
        )


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", DTYPES + [np.bool_])
def test_min_max(device, mode, dtype):
    x = _data((6, 7), dtype, 7) if dtype is not np.bool_ else _data((6, 7), np.float64, 7) > 10
    fp = np.array([[1, 0, 1], [0, 1, 1]], bool)
    for origin in (0, -1, 1):
        for f in ("minimum_filter", "maximum_filter"):
            both(f, x, device=device, size=3, mode=mode, cval=2.0, origin=origin)
            both(f, x, device=device, size=(2, 4), mode=mode, cval=2.0, origin=origin)
            both(f, x, device=device, footprint=fp, mode=mode, cval=2.0, origin=origin)
        for f in ("minimum_filter1d", "maximum_filter1d"):
            both(f, x, 4, device=device, axis=0, mode=mode, cval=2.0, origin=origin)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_median_rank_percentile(device, mode, dtype):
    x = _data((6, 7), dtype, 8)
    fp = np.array([[1, 0, 1], [0, 1, 1], [1, 1, 0]], bool)
    for origin in (0, -1, (1, 0)):
        both("median_filter", x, device=device, size=3, mode=mode, cval=2.0, origin=origin)
        both("median_filter", x, device=device, size=(2, 4), mode=mode, origin=origin)
        both("median_filter", x, device=device, footprint=fp, mode=mode, cval=2.0, origin=origin)
    both("rank_filter", x, 2, device=device, size=3, mode=mode)
    both("rank_filter", x, -1, device=device, size=(2, 3), mode=mode)
    both("rank_filter", x, 0, device=device, footprint=fp, mode=mode)
    both("percentile_filter", x, 30, device=device, size=3, mode=mode)
    both("percentile_filter", x, -20, device=device, footprint=fp, mode=mode)


def test_rank_shapes_and_errors(device):
    rng = np.random.default_rng(9)
    for x in (rng.random(7), rng.random((3, 4, 5)), rng.random((1, 5)), rng.random((2, 2))):
        both("median_filter", x, device=device, size=5)
        both("minimum_filter", x, device=device, size=4, mode="wrap")
        both("maximum_filter", x, device=device, size=6, mode="mirror")
    x3 = rng.random((4, 5, 6))
    both("median_filter", x3, device=device, size=3, axes=(0, 2))
    both("minimum_filter", x3, device=device, footprint=np.eye(3, dtype=bool), axes=(1, 2))
    xe = ember.asarray(x3, device=device)
    with pytest.raises(ValueError):
        end.median_filter(xe, footprint=np.zeros((3, 3, 3), bool))
    with pytest.raises(RuntimeError):
        end.rank_filter(xe, 30, size=3)
    with pytest.raises(ValueError):
        end.minimum_filter(xe, size=3, origin=2)
    with pytest.raises(RuntimeError):
        end.median_filter(xe)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32, np.uint8])
def test_derivatives(device, mode, dtype):
    x = _data((6, 7), dtype, 10)
    tol = _tol(dtype) * 10
    slack = 1 if np.dtype(dtype).kind in "iu" else 0
    for axis in (0, 1):
        both("sobel", x, axis, device=device, tol=tol, mode=mode)
        both("prewitt", x, axis, device=device, tol=tol, mode=mode)
    both("laplace", x, device=device, tol=tol, mode=mode)
    both("gaussian_laplace", x, 1.1, device=device, tol=tol, int_slack=slack, mode=mode)
    both("gaussian_gradient_magnitude", x, 0.9, device=device, tol=tol, int_slack=slack, mode=mode)


def test_derivatives_3d_and_output(device):
    rng = np.random.default_rng(11)
    x = rng.random((4, 5, 3))
    both("sobel", x, 2, device=device, tol=1e-12)
    both("laplace", x, device=device, tol=1e-12, axes=(0, 1))
    both("gaussian_laplace", x, [1.0, 2.0], device=device, tol=1e-12, axes=(2, 0))
    both("sobel", x * 50, 1, device=device, output=np.int32)


def test_complex_and_bool(device):
    rng = np.random.default_rng(12)
    z = rng.random((5, 6)) + 1j * rng.random((5, 6))
    both("correlate1d", z, [1.0, 2.0, -1.0], device=device, tol=1e-12)
    both("convolve", z, np.ones((2, 3)), device=device, tol=1e-12, mode="wrap")
    both("correlate1d", rng.random((4, 5)), [1.0, 1j], device=device, tol=1e-12)
    b = rng.random((6, 5)) > 0.5
    both("maximum_filter", b, device=device, size=3)
    both("median_filter", b, device=device, size=3)


def test_empty_and_unit(device):
    for x in (np.zeros((0, 5)), np.zeros((3, 0)), np.arange(6.0).reshape(2, 3)):
        both("gaussian_filter", x, 1.0, device=device, tol=1e-12)
        both("median_filter", x, device=device, size=3)
        both("uniform_filter", x, device=device, tol=1e-12)
        both("maximum_filter", x, device=device, size=1)
        both("correlate", x, np.ones((1, 1)), device=device, tol=1e-12)


def test_rank_sort_path_and_chunks(device, monkeypatch):
    from ember.ndimage import _rank

    rng = np.random.default_rng(13)
    x = rng.random((11, 10))
    # more taps than the selection network takes: the stacked sort path
    both("median_filter", x, device=device, size=9)
    both("percentile_filter", x, 70, device=device, size=(9, 8), mode="wrap")
    # a tiny chunk bound forces many chunks along the longest axis
    monkeypatch.setattr(_rank, "_CHUNK_ELEMS", 64)
    both("median_filter", x, device=device, size=3, mode="constant", cval=0.5)
    both("median_filter", x, device=device, size=9)
    both("median_filter", x.T, device=device, size=(2, 5), origin=(0, 1))


def test_integer_cval_casts(device):
    x = np.array([[5, 1, 7], [3, 9, 2]], np.uint8)
    for cval in (-1, -3.7, 300, 2.5):
        for f in ("minimum_filter", "maximum_filter"):
            both(f, x, 3, device=device, mode="constant", cval=cval)
            both(f + "1d", x, 3, device=device, mode="constant", cval=cval)
        both("median_filter", x, device=device, footprint=np.eye(3), mode="constant", cval=cval)


def test_rank_1d_footprint_with_holes(device):
    # SciPy's 1-D rank fast path ignores holes in the footprint (a SciPy defect since 1.15);
    # ember follows SciPy's general n-D rank filter, checked here through a 1 x n view
    x = np.array([5.0, 1, 7, 3, 9, 2, 8])
    for fp in ([1, 0, 1, 1], [0, 1, 1, 1, 0], [1, 0, 1]):
        for mode in ("reflect", "constant", "wrap"):
            got = end.median_filter(ember.asarray(x, device=device), footprint=fp, mode=mode)
            want = snd.median_filter(x[None], footprint=[fp], mode=mode)[0]
            check(got, want)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fused_taps_equal_the_per_tap_passes(device, dtype, monkeypatch):
    """GPU filters sum their taps in one ember.fuse kernel (the CPU too with FUSE_ON_CPU): the
    same operations in the same order as the per-tap passes, so the same bits, and SciPy's
    values (symmetric, antisymmetric and plain weights; every mode)."""
    from ember.ndimage import _filters

    x = np.random.default_rng(7).standard_normal((37, 29)).astype(dtype)
    xe = ember.asarray(x, device=device)
    cases = [
        ("gaussian_filter", (2.0,), {"mode": "reflect"}),
        ("gaussian_filter", (1.5,), {"order": 1, "mode": "wrap"}),
        ("correlate1d", ([1.0, -2.0, 0.5, 3.0],), {"axis": 0, "mode": "constant", "cval": 2}),
        ("sobel", (), {"mode": "nearest"}),
        ("convolve1d", ([0.25, 0.5, 0.25],), {"mode": "mirror"}),
    ]
    for name, args, kw in cases:
        monkeypatch.setattr(_filters, "FUSE_ON_CPU", False)
        plain = getattr(end, name)(xe, *args, **kw) if device == "cpu" else None
        monkeypatch.setattr(_filters, "FUSE_ON_CPU", True)
        fused = getattr(end, name)(xe, *args, **kw)
        if plain is not None:
            assert np.array_equal(ember.asnumpy(plain), ember.asnumpy(fused)), name
        want = getattr(snd, name)(x, *args, **kw)
        np.testing.assert_allclose(
            ember.asnumpy(fused),
            want,
            rtol=1e-5 if dtype == np.float32 else 1e-12,
            atol=1e-5 if dtype == np.float32 else 1e-12,
        )
    assert _filters._FUSED  # and each really ran as one kernel, not eagerly:
    assert all(t.eager is None for f in _filters._FUSED.values() for t in f._traces.values())


@pytest.mark.parametrize("dtype", [np.float32, np.int16])
def test_fused_selection_network_equals_the_passes(device, dtype, monkeypatch):
    """GPU rank filters run their selection network as one ember.fuse kernel (the CPU too with
    FUSE_ON_CPU): the same minimum/maximum operations, so the same values (NaN included), and
    SciPy's for finite inputs."""
    from ember.ndimage import _rank

    rng = np.random.default_rng(8)
    x = (rng.standard_normal((23, 31)) * 50).astype(dtype)
    xe = ember.asarray(x, device=device)
    cases = [
        ("median_filter", {"size": 5}),
        ("median_filter", {"size": 3, "mode": "wrap"}),
        ("rank_filter", {"rank": 2, "size": (3, 4)}),
        ("percentile_filter", {"percentile": 30, "size": 4, "mode": "constant", "cval": 1}),
    ]
    for name, kw in cases:
        monkeypatch.setattr(_rank, "FUSE_ON_CPU", True)
        fused = ember.asnumpy(getattr(end, name)(xe, **kw))
        np.testing.assert_array_equal(fused, getattr(snd, name)(x, **kw), err_msg=name)
    if dtype == np.float32:
        xn = x.copy()
        xn[4, 5] = np.nan
        monkeypatch.setattr(_rank, "FUSE_ON_CPU", False)
        plain = ember.asnumpy(end.median_filter(ember.asarray(xn, device="cpu"), size=5))
        monkeypatch.setattr(_rank, "FUSE_ON_CPU", True)
        fused = ember.asnumpy(end.median_filter(ember.asarray(xn, device=device), size=5))
        np.testing.assert_array_equal(fused, plain)
    assert all(t.eager is None for f in _rank._FUSED.values() for t in f._traces.values())
