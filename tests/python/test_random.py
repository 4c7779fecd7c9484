"""ember.random: the Philox4x32-10 stream (known answers), reproducibility, the same numbers on
both devices, parameter checks, and each distribution's moments and goodness of fit."""

from __future__ import annotations

import math
import pathlib
import re

import ember
import numpy as np
import pytest
from conftest import cuda_unavailable_reason

stats = pytest.importorskip("scipy.stats")

N = 200_000
P_MIN = 1e-4  # goodness-of-fit tests fail below this p-value (seeded, so never by chance)


def rng(seed=1234):
    return ember.random.default_rng(seed)


def host(x):
    return np.asarray(ember.asnumpy(x))


# ---- the bit stream ---------------------------------------------------------------------------


def test_philox_known_answer():
    # Random123's published vector: counter (0, 0, 0, 0), key (0, 0); block 0 of key 0
    g = ember.random.Generator()
    g.state = {"key": 0, "position": 0}
    got = host(g.random_raw(4, dtype="uint32", device="cpu"))
    assert [int(v) for v in got] == [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]
    # uint64 words pair the 32-bit words high-first; the next call starts at the next block
    g.state = {"key": 0, "position": 0}
    w = host(g.random_raw(2, dtype="uint64", device="cpu"))
    assert int(w[0]) == 0x6627E8D5E169C58D and int(w[1]) == 0xBC57AC4C9B00DBD8
    assert g.state["position"] == 1


def test_same_seed_same_numbers_and_state_restores(device):
    a = host(rng(7).random(1000, device=device))
    b = host(rng(7).random(1000, device=device))
    c = host(rng(8).random(1000, device=device))
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    g = rng(7)
    s = g.state
    first = host(g.normal(size=(10, 3), device=device))
    g.state = s
    assert np.array_equal(first, host(g.normal(size=(10, 3), device=device)))
    # consecutive calls do not repeat each other
    assert not np.array_equal(host(g.random(16, device=device)), host(g.random(16, device=device)))


@pytest.mark.parametrize("seed", [0, 2**64 - 1, 2**64, 2**200 + 5, [1, 2, 3]])
def test_seeds_of_any_size(seed):
    a = host(rng(seed).integers(0, 2**62, 8, device="cpu"))
    assert np.array_equal(a, host(rng(seed).integers(0, 2**62, 8, device="cpu")))


def test_bad_seeds_and_sizes():
    with pytest.raises(ValueError, match="non-negative"):
        rng(-1)
    with pytest.raises(TypeError, match="seed"):
        rng(1.5)
    with pytest.raises(TypeError, match="size"):
        rng().random(size="x")
    with pytest.raises(ValueError):
        rng().random(size=(-1,))


def test_unseeded_generators_differ():
    a = host(ember.random.default_rng().random(8, device="cpu"))
    assert not np.array_equal(a, host(ember.random.default_rng().random(8, device="cpu")))


GPU = cuda_unavailable_reason()


@pytest.mark.skipif(GPU is not None, reason=f"no CUDA device: {GPU}")
@pytest.mark.parametrize(
    "draw,exact",
    [
        (lambda g, d: g.random_raw(1001, dtype="uint32", device=d), True),
        (lambda g, d: g.random_raw(1001, dtype="uint64", device=d), True),
        (lambda g, d: g.random(1001, dtype="float32", device=d), True),
        (lambda g, d: g.random(1001, device=d), True),
        (lambda g, d: g.uniform(-2, 3, (7, 11), dtype="float16", device=d), True),
        (lambda g, d: g.integers(-5, 17, 1001, dtype="int8", device=d), True),
        (lambda g, d: g.integers(0, 2**64, 1001, dtype="uint64", device=d), True),
        (lambda g, d: g.integers(0, 2, 1001, dtype="bool", device=d), True),
        (lambda g, d: g.poisson(3.0, 1001, device=d), False),
        (lambda g, d: g.poisson(1e4, 1001, device=d), False),
        (lambda g, d: g.binomial(10**6, 0.3, 1001, device=d), False),
        (lambda g, d: g.normal(1, 2, 1001, dtype="float32", device=d), False),
        (lambda g, d: g.normal(1, 2, 1001, device=d), False),
        (lambda g, d: g.normal(1, 2, 1001, dtype="float16", device=d), False),
        (lambda g, d: g.exponential(2.0, 1001, dtype="bfloat16", device=d), False),
        (lambda g, d: g.gamma(0.5, 2.0, 1001, device=d), False),
        (lambda g, d: g.beta(2.0, 5.0, 1001, dtype="float32", device=d), False),
    ],
)
def test_the_gpu_draws_the_cpu_numbers(draw, exact):
    a = host(draw(rng(99), "cpu"))
    b = host(draw(rng(99), "cuda"))
    assert a.dtype == b.dtype and a.shape == b.shape
    if exact or a.dtype.kind in "iub":
        # counts from rejection loops agree wherever the math functions do: nearly everywhere
        agree = np.mean(a == b)
        assert agree == 1.0 if exact else agree > 0.99, agree
    else:
        np.testing.assert_allclose(a.astype(np.float64), b.astype(np.float64), rtol=1e-5, atol=1e-6)


# ---- dtypes, shapes, parameters ---------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_float_dtypes_and_range(device, dtype):
    x = rng().random((3, 5, 7), dtype=dtype, device=device)
    assert x.shape == (3, 5, 7) and str(x.dtype) == dtype and x.device == ember.Device(device)
    a = host(x).astype(np.float64)
    assert a.min() >= 0 and a.max() < 1
    u = host(rng().uniform(-3, -1, 5000, dtype=dtype, device=device)).astype(np.float64)
    assert u.min() >= -3 and u.max() <= -1


@pytest.mark.parametrize("size", [None, 0, 1, 3, 4, 5, (0, 3), (2, 3, 4)])
def test_sizes(device, size):
    x = rng().normal(size=size, dtype="float32", device=device)
    want = () if size is None else ((size,) if isinstance(size, int) else size)
    assert x.shape == want
    assert host(rng().integers(5, size=size, device=device)).shape == want


@pytest.mark.parametrize(
    "dtype,low,high",
    [
        ("int8", -128, 128),
        ("uint8", 0, 256),
        ("int16", -3, 4),
        ("int32", -(2**31), 2**31),
        ("uint32", 0, 2**32),
        ("int64", -(2**63), 2**63),
        ("uint64", 2**63, 2**64),
        ("bool", 0, 2),
    ],
)
def test_integers_cover_the_range(device, dtype, low, high):
    a = host(rng().integers(low, high, 20000, dtype=dtype, device=device))
    assert a.dtype == np.dtype(dtype)
    vals = a.astype(object)
    assert min(vals) >= low and max(vals) < high
    if high - low <= 256:
        assert len(set(vals)) == high - low  # every value appears


def test_integers_endpoint_and_one_argument(device):
    a = host(rng().integers(3, 5, 4000, endpoint=True, device=device))
    assert set(a.tolist()) == {3, 4, 5}
    b = host(rng().integers(4, size=4000, device=device))
    assert set(b.tolist()) == {0, 1, 2, 3}


def test_parameter_errors():
    g = rng()
    with pytest.raises(ValueError, match="low >= high"):
        g.integers(5, 5)
    with pytest.raises(ValueError, match="out of bounds"):
        g.integers(0, 300, dtype="uint8")
    with pytest.raises(TypeError, match="integer dtype"):
        g.integers(0, 3, dtype="float32")
    with pytest.raises(TypeError, match="floating"):
        g.random(3, dtype="int32")
    with pytest.raises(ValueError, match="scale"):
        g.normal(0, -1)
    with pytest.raises(ValueError, match="nan"):
        g.normal(float("nan"))
    with pytest.raises(ValueError, match="shape"):
        g.gamma(-1.0)
    with pytest.raises(ValueError, match="p must be"):
        g.binomial(3, 1.5)
    with pytest.raises(ValueError, match="lam"):
        g.poisson(-2.0)
    with pytest.raises(ValueError, match="a and b"):
        g.beta(0.0, 1.0)
    with pytest.raises(TypeError, match="uint32 or uint64"):
        g.random_raw(3, dtype="int64")


def test_array_parameters_broadcast(device):
    loc = ember.asarray([0.0, 100.0, -100.0], device=device)
    x = rng().normal(loc, 1.0, size=(20000, 3), device=device)
    m = host(x).mean(axis=0)
    np.testing.assert_allclose(m, [0, 100, -100], atol=0.05)
    u = host(rng().uniform(ember.asarray([0.0, 10.0], device=device), 11.0, device=device))
    assert u.shape == (2,) and 0 <= u[0] < 11 and 10 <= u[1] < 11
    with pytest.raises(ValueError, match="scale"):
        rng().normal(0.0, ember.asarray([1.0, -1.0], device=device))


def test_out_argument(device):
    out = ember.empty((4, 4), dtype=ember.float32, device=device)
    r = rng().random((4, 4), dtype="float32", out=out, device=device)
    assert r is out
    assert np.array_equal(host(out), host(rng().random((4, 4), dtype="float32", device=device)))


# ---- distributions: moments and goodness of fit -----------------------------------------------


def _ks(sample, cdf):
    assert stats.kstest(sample, cdf).pvalue > P_MIN


def _chi2_discrete(sample, pmf, lo, hi):
    """Chi-square of counts on [lo, hi] (tails pooled) against the pmf."""
    ks = np.arange(lo, hi + 1)
    expected = pmf(ks) * len(sample)
    observed = np.array([np.sum(sample == k) for k in ks], dtype=float)
    observed[0] += np.sum(sample < lo)
    observed[-1] += np.sum(sample > hi)
    expected[0] += pmf(np.arange(0, lo)).sum() * len(sample) if lo > 0 else 0
    expected[-1] = len(sample) - expected[:-1].sum()
    assert stats.chisquare(observed, expected).pvalue > P_MIN


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_uniform_and_normal_fit(device, dtype):
    g = rng()
    u = host(g.random(N, dtype=dtype, device=device)).astype(np.float64)
    _ks(u, stats.uniform.cdf)
    z = host(g.standard_normal(N, dtype=dtype, device=device)).astype(np.float64)
    assert abs(z.mean()) < 0.02 and abs(z.std() - 1) < 0.02
    _ks(z, stats.norm.cdf)
    n = host(g.normal(3.0, 0.5, N, dtype=dtype, device=device)).astype(np.float64)
    _ks(n, stats.norm(3.0, 0.5).cdf)


# ---- normals: the ziggurat of src/ops/random.hpp ----------------------------------------------

N_TAIL = 4_000_000
# The tables, generated by tools/gen_ziggurat.py, are included by random.hpp.
HEADER = pathlib.Path(__file__).resolve().parents[2] / "src" / "ops" / "ziggurat_tables.hpp"


def _zig_layers(width):
    """(k, w) of the header's table of that width: a word is taken at once when word < k[i]."""
    text = HEADER.read_text()
    body = re.search(rf"zig_layers{width}\[256\] = \{{(.*?)\}};", text, re.S).group(1)
    pairs = re.findall(r"\{(0x[0-9a-f]+)u(?:ll)?, ([-+.e0-9]+)f?\}", body)
    assert len(pairs) == 256
    real = np.float32 if width == 32 else np.float64
    return (
        np.array([int(k, 16) for k, _ in pairs], dtype=np.uint64),
        np.array([float(w) for _, w in pairs], dtype=real),
    )


@pytest.mark.skipif(not HEADER.exists(), reason="needs the source tree")
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_normal_words_follow_the_documented_layout(dtype):
    # value i is word i of the packed stream: bits 0-7 the layer, bit 8 the sign, the top 23
    # (float32) or 53 (float64) bits the uniform; words taken at once give exactly this value
    wide = dtype == "float64"
    g = ember.random.Generator()
    g.state = {"key": 77, "position": 5}
    z = host(g.standard_normal(20000, dtype=dtype, device="cpu"))
    g.state = {"key": 77, "position": 5}
    w = host(g.random_raw(20000, dtype="uint64" if wide else "uint32", device="cpu"))
    w = w.astype(np.uint64)
    k, scale = _zig_layers(64 if wide else 32)
    layer = (w & np.uint64(255)).astype(np.intp)
    fast = w < k[layer]
    x = (w >> np.uint64(11 if wide else 9)).astype(scale.dtype) * scale[layer]
    x = np.where((w & np.uint64(256)) != 0, -x, x)
    assert 0.98 < fast.mean() < 0.99
    assert np.array_equal(z[fast], x[fast])
    assert np.all(np.isfinite(z)) and not np.array_equal(z[~fast], x[~fast])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_normal_tails(device, dtype):
    z = host(rng(2024).standard_normal(N_TAIL, dtype=dtype, device=device)).astype(np.float64)
    a = np.abs(z)
    # fractions beyond 2, 3, 4 and the ziggurat's base edge r, within 5 binomial sigmas
    for t in (2.0, 3.0, 3.6541528853610088, 4.0):
        p = 2 * stats.norm.sf(t)
        got = np.count_nonzero(a > t)
        assert abs(got - N_TAIL * p) < 5 * math.sqrt(N_TAIL * p * (1 - p)) + 1, (t, got)
    assert abs(np.mean(z < 0) - 0.5) < 5 * 0.5 / math.sqrt(N_TAIL)
    # the whole law, and the shape of the tail beyond 3 (drawn mostly by the slow paths)
    _ks(z, stats.norm.cdf)
    tail = a[a > 3.0]
    sf3 = stats.norm.sf(3.0)
    _ks(tail, lambda t: 1 - stats.norm.sf(t) / sf3)
    # counts in 1000 bins of equal probability: defects within single layers show here
    edges = stats.norm.ppf(np.linspace(0, 1, 1001)[1:-1])
    counts = np.bincount(np.searchsorted(edges, z), minlength=1000)
    assert stats.chisquare(counts).pvalue > P_MIN


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_normals(device, dtype):
    x = rng(5).normal(3.0, 0.5, 100_000, dtype=dtype, device=device)
    assert str(x.dtype) == dtype and x.device == ember.Device(device)
    h = host(x)
    # the float32 normals of the same counters, rounded
    want = host(rng(5).normal(3.0, 0.5, 100_000, dtype="float32", device=device)).astype(h.dtype)
    assert np.array_equal(h.view(np.uint16), want.view(np.uint16))
    v = h.astype(np.float64)
    assert np.all(np.isfinite(v))
    assert abs(v.mean() - 3) < 0.01 and abs(v.std() - 0.5) < 0.01
    z = host(rng(6).standard_normal(N, dtype=dtype, device=device)).astype(np.float64)
    assert abs(z.mean()) < 0.02 and abs(z.std() - 1) < 0.02
    assert 2.5 < np.abs(z).max() < 7


def test_exponential_fit(device):
    e = host(rng().exponential(2.0, N, device=device))
    assert abs(e.mean() - 2) < 0.03 and e.min() >= 0
    _ks(e, stats.expon(scale=2.0).cdf)


@pytest.mark.parametrize("k", [0.3, 1.0, 4.5, 200.0])
def test_gamma_fit(device, k):
    x = host(rng().gamma(k, 1.5, N, device=device))
    assert abs(x.mean() / (1.5 * k) - 1) < 0.02
    _ks(x, stats.gamma(k, scale=1.5).cdf)


@pytest.mark.parametrize("a,b", [(0.5, 0.5), (2.0, 5.0), (30.0, 3.0)])
def test_beta_fit(device, a, b):
    x = host(rng().beta(a, b, N, device=device))
    assert 0 <= x.min() and x.max() <= 1
    _ks(x, stats.beta(a, b).cdf)


@pytest.mark.parametrize("lam", [0.5, 7.0, 45.0, 5000.0])
def test_poisson_fit(device, lam):
    x = host(rng().poisson(lam, N, device=device))
    assert x.dtype == np.int64
    assert abs(x.mean() / lam - 1) < 0.02 and abs(x.var() / lam - 1) < 0.05
    sd = math.sqrt(lam)
    lo, hi = max(0, int(lam - 4 * sd)), int(lam + 4 * sd) + 1
    _chi2_discrete(x, stats.poisson(lam).pmf, lo, hi)


@pytest.mark.parametrize("n,p", [(1, 0.3), (12, 0.5), (40, 0.9), (1000, 0.25), (10**7, 1e-3)])
def test_binomial_fit(device, n, p):
    x = host(rng().binomial(n, p, N, device=device))
    assert x.min() >= 0 and x.max() <= n
    mean, var = n * p, n * p * (1 - p)
    assert abs(x.mean() - mean) < 5 * math.sqrt(var / N) + 1e-9
    sd = math.sqrt(var)
    lo, hi = max(0, int(mean - 4 * sd)), min(n, int(mean + 4 * sd) + 1)
    _chi2_discrete(x, stats.binom(n, p).pmf, lo, hi)


def test_binomial_and_poisson_edges(device):
    g = rng()
    assert np.all(host(g.binomial(0, 0.5, 10, device=device)) == 0)
    assert np.all(host(g.binomial(7, 1.0, 10, device=device)) == 7)
    assert np.all(host(g.binomial(7, 0.0, 10, device=device)) == 0)
    assert np.all(host(g.poisson(0.0, 10, device=device)) == 0)


def test_integers_fit(device):
    x = host(rng().integers(0, 10, N, device=device))
    counts = np.bincount(x, minlength=10)
    assert stats.chisquare(counts).pvalue > P_MIN


# ---- the legacy module functions ---------------------------------------------------------------


def test_legacy_functions(device):
    ember.random.seed(5)
    a = host(ember.random.rand(3, 4, device=device))
    ember.random.seed(5)
    assert np.array_equal(a, host(ember.random.rand(3, 4, device=device)))
    assert host(ember.random.randn(2, 2, device=device)).shape == (2, 2)
    r = host(ember.random.randint(2, 6, size=1000, device=device))
    assert r.min() >= 2 and r.max() <= 5
    assert host(ember.random.random((2,), device=device)).shape == (2,)
    assert host(ember.random.normal(1, 2, (3,), device=device)).shape == (3,)
    assert host(ember.random.uniform(1, 2, (3,), device=device)).min() >= 1


# ---- permutations and sampling ------------------------------------------------------------------


def test_permutation_of_n_and_of_an_array(device):
    g = rng()
    p = host(g.permutation(1000, device=device))
    assert sorted(p.tolist()) == list(range(1000)) and not np.array_equal(p, np.arange(1000))
    a = np.arange(24).reshape(4, 6)
    for axis in (0, 1, -1):
        q = host(rng(3).permutation(ember.asarray(a, device=device), axis=axis))
        assert np.array_equal(np.sort(q, axis=axis), a)
    assert host(g.permutation(0, device=device)).shape == (0,)
    with pytest.raises(ValueError, match="at least 1-d"):
        g.permutation(ember.asarray(3.0, device=device))


def test_permutations_are_uniform():
    # every ordering of 4 items about equally often
    g = rng(11)
    counts = {}
    for _ in range(4800):
        key = tuple(host(g.permutation(4, device="cpu")).tolist())
        counts[key] = counts.get(key, 0) + 1
    assert len(counts) == 24
    assert stats.chisquare(list(counts.values())).pvalue > P_MIN


def test_shuffle_in_place(device):
    x = ember.asarray(np.arange(50.0), device=device)
    rng().shuffle(x)
    v = host(x)
    assert sorted(v.tolist()) == list(range(50)) and not np.array_equal(v, np.arange(50.0))


def test_choice(device):
    g = rng()
    c = host(g.choice(7, 20000, device=device))
    assert stats.chisquare(np.bincount(c, minlength=7)).pvalue > P_MIN
    w = [0.5, 0.0, 0.2, 0.3]
    c = host(g.choice(4, 20000, p=w, device=device))
    counts = np.bincount(c, minlength=4)
    assert counts[1] == 0
    assert stats.chisquare(counts[[0, 2, 3]], 20000 * np.array([0.5, 0.2, 0.3])).pvalue > P_MIN
    u = host(g.choice(10, 10, replace=False, device=device))
    assert sorted(u.tolist()) == list(range(10))
    u = host(g.choice(5, 3, replace=False, p=[0.1, 0.2, 0.3, 0.4, 0.0], device=device))
    assert len(set(u.tolist())) == 3 and 4 not in u
    pop = ember.asarray([[1, 2], [3, 4], [5, 6]], device=device)
    rows = host(g.choice(pop, 5))
    assert rows.shape == (5, 2) and all(r.tolist() in ([1, 2], [3, 4], [5, 6]) for r in rows)
    with pytest.raises(ValueError, match="larger sample"):
        g.choice(3, 4, replace=False)
    with pytest.raises(ValueError, match="sum to 1"):
        g.choice(3, p=[0.5, 0.5, 0.5])
    with pytest.raises(ValueError, match="same size"):
        g.choice(3, p=[0.5, 0.5])


@pytest.mark.skipif(GPU is not None, reason=f"no CUDA device: {GPU}")
def test_permutation_and_choice_are_the_same_on_both_devices():
    a = host(rng(4).permutation(777, device="cpu"))
    b = host(rng(4).permutation(777, device="cuda"))
    assert np.array_equal(a, b)
    w = [1 / 9] * 9
    a = host(rng(4).choice(9, 100, p=w, device="cpu"))
    b = host(rng(4).choice(9, 100, p=w, device="cuda"))
    assert np.array_equal(a, b)


def test_generators_pickle_and_copy_by_state(device):
    import copy
    import pickle

    g = ember.random.default_rng(5)
    g.random(3, device=device)
    copies = [pickle.loads(pickle.dumps(g)), copy.deepcopy(g)]
    assert all(h.state == g.state for h in copies)
    want = ember.asnumpy(g.random(4, device=device))
    for h in copies:
        np.testing.assert_array_equal(ember.asnumpy(h.random(4, device=device)), want)
