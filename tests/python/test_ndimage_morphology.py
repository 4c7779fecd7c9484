"""ember.ndimage morphology, labelling, measurements and the distance transform against SciPy."""

from __future__ import annotations

import ember
import ember.ndimage as end
import numpy as np
import pytest
from scipy import ndimage as snd

SHAPES = [(9,), (7, 8), (4, 5, 6), (1, 6), (6, 1)]


def arr(x, device):
    return ember.asarray(x, device=device)


def same(got, want):
    got = ember.asnumpy(got) if isinstance(got, ember.ndarray) else np.asarray(got)
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype or want.dtype == object, (got.dtype, want.dtype)
    np.testing.assert_allclose(
        got.astype(np.float64), want.astype(np.float64), rtol=1e-10, atol=1e-12, equal_nan=True
    )


@pytest.mark.parametrize("shape", SHAPES)
def test_binary_morphology(device, shape):
    rng = np.random.default_rng(len(shape) * 7 + shape[0])
    x = rng.random(shape) > 0.45
    nd = len(shape)
    for conn in sorted({1, nd}):
        st = snd.generate_binary_structure(nd, conn)
        same(end.generate_binary_structure(nd, conn), st)
        for it in (1, 2, 0):
            for bv in (0, 1):
                for f in ("binary_erosion", "binary_dilation", "binary_opening", "binary_closing"):
                    got = getattr(end, f)(arr(x, device), st, iterations=it, border_value=bv)
                    same(got, getattr(snd, f)(x, st, iterations=it, border_value=bv))
        m = rng.random(shape) > 0.3
        same(
            end.binary_erosion(arr(x, device), st, 2, mask=arr(m, device)),
            snd.binary_erosion(x, st, 2, mask=m),
        )
        same(
            end.binary_dilation(arr(x, device), st, -1, mask=arr(m, device)),
            snd.binary_dilation(x, st, -1, mask=m),
        )
    # even-sized and asymmetric structures with origins
    st2 = np.zeros([2] * nd, bool)
    st2.flat[0] = st2.flat[-1] = True
    for origin in (0, -1):
        for f in ("binary_erosion", "binary_dilation", "binary_opening", "binary_closing"):
            same(
                getattr(end, f)(arr(x, device), st2, origin=origin),
                getattr(snd, f)(x, st2, origin=origin),
            )
    same(end.binary_fill_holes(arr(x, device)), snd.binary_fill_holes(x))
    # integer input, output dtype
    xi = (rng.random(shape) * 3).astype(np.int32)
    same(
        end.binary_dilation(arr(xi, device), output=np.int32),
        snd.binary_dilation(xi, output=np.int32),
    )


def test_morphology_extras(device):
    st = snd.generate_binary_structure(2, 1)
    same(end.iterate_structure(st, 3), snd.iterate_structure(st, 3))
    x = np.zeros((9, 9), bool)
    x[2:7, 2:7] = True
    x[4, 4] = False
    same(end.binary_fill_holes(arr(x, device)), snd.binary_fill_holes(x))
    same(end.binary_erosion(arr(x, device), axes=(1,)), snd.binary_erosion(x, axes=(1,)))
    same(end.binary_dilation(arr(x, device), iterations=3), snd.binary_dilation(x, iterations=3))
    out = ember.zeros((9, 9), dtype=ember.bool, device=device)
    assert end.binary_closing(arr(x, device), output=out) is out
    same(out, snd.binary_closing(x))
    with pytest.raises(RuntimeError):
        end.binary_erosion(arr(x, device), np.ones((3, 3, 3), bool))
    with pytest.raises(TypeError):
        end.binary_erosion(arr(x.astype(np.complex64), device))


@pytest.mark.parametrize("shape", SHAPES + [(30, 31)])
def test_label_and_measurements(device, shape):
    rng = np.random.default_rng(shape[0] + 3)
    x = rng.random(shape) > 0.5
    nd = len(shape)
    for conn in sorted({1, nd}):
        st = snd.generate_binary_structure(nd, conn)
        lab, num = end.label(arr(x, device), st)
        lab2, num2 = snd.label(x, st)
        assert num == num2
        same(lab, lab2)
        assert lab.device == arr(x, device).device
        assert end.find_objects(lab) == snd.find_objects(lab2)
        assert end.find_objects(lab, max_label=num2 + 2) == snd.find_objects(
            lab2, max_label=num2 + 2
        )
        v = rng.random(shape) * 10 - 3
        idx = list(range(0, num2 + 2))
        for f in ("sum_labels", "mean", "minimum", "maximum", "variance", "standard_deviation"):
            same(getattr(end, f)(arr(v, device), lab, idx), getattr(snd, f)(v, lab2, idx))
            same(getattr(end, f)(arr(v, device), lab, 1), getattr(snd, f)(v, lab2, 1))
            same(getattr(end, f)(arr(v, device), lab), getattr(snd, f)(v, lab2))
            same(getattr(end, f)(arr(v, device)), getattr(snd, f)(v))
        assert np.allclose(
            end.center_of_mass(arr(v, device), lab, idx[1:]),
            snd.center_of_mass(v, lab2, idx[1:]),
            equal_nan=True,
        )
        assert np.allclose(
            end.center_of_mass(arr(v, device)), snd.center_of_mass(v), equal_nan=True
        )
        assert np.allclose(
            end.center_of_mass(arr(v, device), lab, 2),
            snd.center_of_mass(v, lab2, 2),
            equal_nan=True,
        )


def test_label_options(device):
    x = np.array([[1, 1, 0, 0, 1], [0, 1, 0, 1, 1], [1, 0, 0, 0, 0], [1, 0, 1, 1, 0]], np.int16)
    lab, num = end.label(arr(x, device))
    lab2, num2 = snd.label(x)
    assert num == num2
    same(lab, lab2)
    out = ember.zeros(x.shape, dtype=ember.int64, device=device)
    assert end.label(arr(x, device), output=out) == num2
    same(out, lab2.astype(np.int64))
    # a spiral: a long path in few pixels needs many propagation steps
    s = np.zeros((15, 15), bool)
    s[0, :] = s[:, -1] = s[-1, :] = s[2:, 0] = s[2, :-2] = s[2:-2, -3] = s[-3, 2:-2] = True
    lab, num = end.label(arr(s, device))
    lab2, num2 = snd.label(s)
    assert num == num2
    same(lab, lab2)
    with pytest.raises(ValueError):
        end.label(arr(x, device), np.ones((2, 2)))
    with pytest.raises(TypeError):
        end.find_objects(arr(x.astype(np.float64), device))


@pytest.mark.parametrize("shape", SHAPES + [(20, 17)])
def test_distance_transform_edt(device, shape):
    rng = np.random.default_rng(shape[0])
    nd = len(shape)
    for density in (0.8, 0.97):
        y = rng.random(shape) < density
        y.flat[0] = False
        for sampling in (None, [1.5] * nd, list(np.linspace(0.5, 2.0, nd))):
            d, ind = end.distance_transform_edt(
                arr(y, device), sampling=sampling, return_indices=True
            )
            d2, ind2 = snd.distance_transform_edt(y, sampling=sampling, return_indices=True)
            same(d, d2)
            ind = ember.asnumpy(ind)
            assert ind.shape == ind2.shape and ind.dtype == ind2.dtype
            # ties may resolve differently: the features are background at exactly the distance
            assert not y[tuple(ind)].any()
            s = np.array(sampling or [1.0] * nd).reshape((-1,) + (1,) * nd)
            dd = np.sqrt((((ind - np.indices(shape)) * s) ** 2).sum(0))
            np.testing.assert_allclose(dd, d2, rtol=1e-12, atol=1e-12)
    only = end.distance_transform_edt(arr(y, device), return_distances=False, return_indices=True)
    assert only.shape == (nd,) + shape
    dist = ember.zeros(shape, dtype=ember.float64, device=device)
    assert end.distance_transform_edt(arr(y, device), distances=dist) is None
    same(dist, snd.distance_transform_edt(y))
    with pytest.raises(RuntimeError):
        end.distance_transform_edt(arr(y, device), return_distances=False)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32, np.uint8])
def test_grey_morphology(device, dtype):
    rng = np.random.default_rng(21)
    x = (rng.random((7, 8)) * 50).astype(dtype)
    fp = np.array([[1, 0, 1], [1, 1, 0]], bool)
    st = rng.random((2, 3)) * 3
    fns = (
        "grey_erosion",
        "grey_dilation",
        "grey_opening",
        "grey_closing",
        "morphological_gradient",
    )
    for f in fns:
        cases = [dict(size=3), dict(size=(2, 4), mode="wrap")]
        cases.append(dict(footprint=fp, mode="constant", cval=5.0))
        if np.dtype(dtype).kind == "f":
            # non-flat structures: SciPy mixes double and integer arithmetic across the taps
            # of integer inputs; compared on floating inputs only
            cases += [
                dict(structure=st, mode="nearest"),
                dict(footprint=fp, structure=st, origin=(0, -1)),
            ]
        for kw in cases:
            want = getattr(snd, f)(x, **kw)
            got = ember.asnumpy(getattr(end, f)(arr(x, device), **kw))
            assert got.dtype == want.dtype, (f, kw, got.dtype, want.dtype)
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 if dtype != np.uint8 else 0)
    with pytest.raises(ValueError):
        end.grey_erosion(arr(x, device))


def test_edt_without_background(device):
    # SciPy's result then is the distance to the point (-1, 0, ..., 0); ember follows it
    for shape, sampling in (((5,), None), ((3, 4), None), ((2, 3, 2), [1, 2, 3])):
        y = np.ones(shape)
        d, ind = end.distance_transform_edt(arr(y, device), sampling, return_indices=True)
        d2, ind2 = snd.distance_transform_edt(y, sampling, return_indices=True)
        same(d, d2)
        same(ind, ind2)


def test_more_measurements_and_morphology(device):
    rng = np.random.default_rng(31)
    x = rng.random((7, 8))  # no ties: positions are unambiguous
    lab2, n = snd.label(rng.random((7, 8)) > 0.4)
    lab = arr(lab2, device)
    idx = list(range(1, n + 1))

    def norm(v):
        if isinstance(v, ember.ndarray):
            return np.round(ember.asnumpy(v).astype(np.float64), 12).tolist()
        if isinstance(v, (list, tuple)):
            return [norm(u) for u in v]
        if isinstance(v, np.ndarray):
            return np.round(v.astype(np.float64), 12).tolist()
        return round(float(v), 12)

    for f in ("minimum_position", "maximum_position", "extrema", "median"):
        for args in ((idx,), (2,), ()):
            got = getattr(end, f)(arr(x, device), lab, *args)
            assert norm(got) == norm(getattr(snd, f)(x, lab2, *args)), (f, args)
        assert norm(getattr(end, f)(arr(x, device))) == norm(getattr(snd, f)(x))
    b = rng.random((8, 9)) > 0.5
    m = b | (rng.random((8, 9)) > 0.5)
    same(
        end.binary_propagation(arr(b, device), mask=arr(m, device)),
        snd.binary_propagation(b, mask=m),
    )
    s1 = np.array([[0, 1, 0], [1, 1, 1], [0, 1, 0]], bool)
    same(end.binary_hit_or_miss(arr(b, device), s1), snd.binary_hit_or_miss(b, s1))
    same(
        end.binary_hit_or_miss(arr(b, device), s1, ~s1, origin1=(0, 1)),
        snd.binary_hit_or_miss(b, s1, ~s1, origin1=(0, 1)),
    )
    for f in ("white_tophat", "black_tophat", "morphological_laplace"):
        for xx in (x, (x * 20).astype(np.int32)):
            same(getattr(end, f)(arr(xx, device), size=3), getattr(snd, f)(xx, size=3))


@pytest.mark.parametrize("shape", [(6, 7), (5,), (4, 5, 3)])
def test_fourier_filters(device, shape):
    rng = np.random.default_rng(len(shape))
    x = rng.random(shape)
    inputs = [
        (np.fft.fftn(x), -1),
        (np.fft.rfft(x, axis=-1), shape[-1]),
        (x.astype(np.float32), -1),
        (np.fft.fftn(x).astype(np.complex64), -1),
    ]
    for name, p in (("fourier_gaussian", 1.3), ("fourier_uniform", 2.5), ("fourier_shift", 0.7)):
        for inp, n in inputs:
            want = getattr(snd, name)(inp, p, n=n)
            got = ember.asnumpy(getattr(end, name)(arr(inp, device), p, n=n))
            assert got.dtype == want.dtype
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_non_contiguous_inputs(device):
    rng = np.random.default_rng(41)
    base = rng.random((12, 14)) > 0.4
    view_np = base[::2, ::-1]
    view = arr(base, device)[::2, ::-1]
    same(end.binary_erosion(view), snd.binary_erosion(view_np))
    same(end.binary_closing(view.T), snd.binary_closing(view_np.T))
    lab, num = end.label(view)
    lab2, num2 = snd.label(view_np)
    assert num == num2
    same(lab, lab2)
    same(end.distance_transform_edt(view.T), snd.distance_transform_edt(view_np.T))
    lab16, num16 = end.label(view, output=np.int16)
    assert ember.asnumpy(lab16).dtype == np.int16 and num16 == num2


def test_label_errors(device):
    x = arr(np.ones((3, 3)), device)
    with pytest.raises(AssertionError):
        end.label(x, [[0, 1, 0], [0, 1, 1], [0, 0, 0]])
    with pytest.raises(RuntimeError):
        end.label(x, np.ones((3, 3, 3)))
    with pytest.raises(TypeError):
        end.label(arr(np.zeros((2, 2), complex), device))


@pytest.mark.parametrize("shape", [(9,), (7, 8), (4, 5, 6), (1, 6)])
def test_distance_transform_cdt(device, shape):
    rng = np.random.default_rng(shape[0] + 50)
    y = rng.random(shape) < 0.85
    y.flat[0] = False
    nd = len(shape)
    metrics = ["chessboard", "taxicab", snd.generate_binary_structure(nd, 1)]
    if nd == 2:
        metrics.append(np.eye(3, dtype=bool))  # diagonal steps only: some never reach
    for metric in metrics:
        d, ind = end.distance_transform_cdt(arr(y, device), metric, return_indices=True)
        d2, ind2 = snd.distance_transform_cdt(y, metric, return_indices=True)
        same(d, d2)
        ind = ember.asnumpy(ind)
        assert ind.dtype == ind2.dtype
        reached = d2 >= 0
        assert not y[tuple(ind)][reached].any()
        np.testing.assert_array_equal(ind[:, ~reached], ind2[:, ~reached])
    same(
        end.distance_transform_cdt(arr(np.ones(shape), device)),
        snd.distance_transform_cdt(np.ones(shape)),
    )
    with pytest.raises(ValueError):
        end.distance_transform_cdt(arr(y, device), "bogus")


def test_histogram(device):
    rng = np.random.default_rng(61)
    x = rng.random((7, 8))
    lab2, n = snd.label(rng.random((7, 8)) > 0.4)
    xe, lab = arr(x, device), arr(lab2, device)
    same(end.histogram(xe, 0.1, 0.9, 5), snd.histogram(x, 0.1, 0.9, 5))
    same(end.histogram(xe, 0, 1, 4, lab), snd.histogram(x, 0, 1, 4, lab2))
    same(end.histogram(xe, 0.2, 0.8, 3, lab, 2), snd.histogram(x, 0.2, 0.8, 3, lab2, 2))
    got = end.histogram(xe, 0.2, 0.8, 3, lab, list(range(1, n + 2)))
    want = snd.histogram(x, 0.2, 0.8, 3, lab2, list(range(1, n + 2)))
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert (g is None) == (w is None)
        if w is not None:
            same(g, w)
    edge = np.array([0.0, 0.25, 0.5, 1.0, 1.0, 1.2, -0.1])
    same(end.histogram(arr(edge, device), 0, 1, 4), snd.histogram(edge, 0, 1, 4))


def test_value_indices_and_labeled_comprehension(device):
    rng = np.random.default_rng(71)
    a = rng.integers(0, 4, size=(5, 6))
    got = end.value_indices(arr(a, device))
    want = snd.value_indices(a)
    assert list(got) == list(want)
    for key in want:
        assert len(got[key]) == len(want[key])
        for g, w in zip(got[key], want[key], strict=True):
            np.testing.assert_array_equal(ember.asnumpy(g), w)
    assert list(end.value_indices(arr(a, device), ignore_value=0)) == [1, 2, 3]
    with pytest.raises(ValueError):
        end.value_indices(arr(np.ones(3), device))
    x = rng.random((5, 6))
    xe, ae = arr(x, device), arr(a, device)
    same(
        end.labeled_comprehension(xe, ae, [1, 2, 7], ember.mean, float, -1.0),
        snd.labeled_comprehension(x, a, [1, 2, 7], np.mean, float, -1.0),
    )
    assert np.isclose(
        end.labeled_comprehension(xe, ae, 3, ember.max, float, 0.0),
        snd.labeled_comprehension(x, a, 3, np.max, float, 0.0),
    )
    assert np.isclose(
        float(end.labeled_comprehension(xe, ae, None, ember.sum, float, 0.0)),
        snd.labeled_comprehension(x, a, None, np.sum, float, 0.0),
    )
    same(
        end.labeled_comprehension(
            xe, ae, [1, 2], lambda v, p: p.sum(), np.int64, -1, pass_positions=True
        ),
        snd.labeled_comprehension(
            x, a, [1, 2], lambda v, p: p.sum(), np.int64, -1, pass_positions=True
        ),
    )


def test_distance_transform_bf(device):
    rng = np.random.default_rng(81)
    y = rng.random((7, 8)) < 0.8
    y[0, 0] = False
    for metric in ("euclidean", "taxicab", "chessboard"):
        for sampling in (None, [1, 2]):
            d, ind = end.distance_transform_bf(
                arr(y, device), metric, sampling, return_indices=True
            )
            d2, ind2 = snd.distance_transform_bf(y, metric, sampling, return_indices=True)
            same(d, d2)
            ind = ember.asnumpy(ind)
            assert ind.dtype == ind2.dtype
            assert not y[tuple(ind)].any()
    with pytest.raises(RuntimeError):
        end.distance_transform_bf(arr(y, device), "bogus")
