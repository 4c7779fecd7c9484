"""ember.frame's resample (time bins as device group codes) and ewm/expanding windows against
pandas, on both devices."""

from __future__ import annotations

import ember.frame as fd
import numpy as np
import pandas as pd
import pytest
from test_frame_helpers import same


def _times(n=60, seed=0, unit="us", nat=False):
    rng = np.random.default_rng(seed)
    start = np.datetime64("2021-03-05T07:13:00", "s").astype(f"datetime64[{unit}]")
    step = np.timedelta64(1, "s").astype(f"timedelta64[{unit}]")
    t = start + np.sort(rng.integers(0, 30 * 86_400, n)) * step
    if nat:
        t[[4, 17]] = np.datetime64("NaT")
    return pd.DatetimeIndex(t)


def _pdf(n=60, seed=0, nat=False):
    rng = np.random.default_rng(seed)
    v = rng.standard_normal(n)
    v[[2, 9]] = np.nan
    i = pd.array(rng.integers(-5, 9, n), dtype="Int64")
    i[[3, 30]] = pd.NA
    return pd.DataFrame(
        {"v": v, "i": i, "k": rng.integers(0, 4, n)}, index=_times(n, seed, nat=nat)
    )


RULES = ["s", "7min", "h", "5h", "D", "2D", "3D", "W", "2W", "W-WED", "ME", "MS", "QE", "YS"]


@pytest.mark.parametrize("rule", RULES)
def test_resample_reductions(device, rule):
    p = _pdf()
    d = fd.from_pandas(p, device=device)
    if rule == "s":  # one bin a second: keep the frame short
        p, d = p.iloc[:5], d.iloc[:5]
    r, pr = d.resample(rule), p.resample(rule)
    for how in ["sum", "mean", "min", "max", "count", "first", "last", "median", "std"]:
        same(getattr(r, how)(), getattr(pr, how)())
    same(r.size(), pr.size())
    same(r["v"].sum(), pr["v"].sum())
    same(r.v.mean(), pr.v.mean())


@pytest.mark.parametrize("closed", ["left", "right"])
@pytest.mark.parametrize("label", ["left", "right"])
@pytest.mark.parametrize("rule", ["5h", "D", "3D", "W"])
def test_resample_closed_label(device, closed, label, rule):
    p = _pdf(seed=1)
    p.index = p.index.floor("h")  # timestamps on the bin edges
    d = fd.from_pandas(p, device=device)
    got = d.resample(rule, closed=closed, label=label).sum()
    same(got, p.resample(rule, closed=closed, label=label).sum())


@pytest.mark.parametrize(
    "origin,offset",
    [
        ("start_day", None),
        ("start", None),
        ("epoch", None),
        ("start_day", "2h"),
        (pd.Timestamp("2021-01-01 00:30"), None),
    ],
)
def test_resample_origin_offset(device, origin, offset):
    p = _pdf(seed=2)
    d = fd.from_pandas(p, device=device)
    got = d.resample("7h", origin=origin, offset=offset).mean()
    same(got, p.resample("7h", origin=origin, offset=offset).mean())


def test_resample_on_column_agg_nat_and_freq(device):
    p = _pdf(seed=3, nat=True)
    d = fd.from_pandas(p, device=device)
    same(d.resample("D").sum(), p.resample("D").sum())  # NaT rows are left out
    q = p.reset_index(names="t")
    e = fd.from_pandas(q, device=device)
    same(e.resample("2D", on="t").sum(), q.resample("2D", on="t").sum())
    same(e.resample("D", on="t").agg(["sum", "mean"]), q.resample("D", on="t").agg(["sum", "mean"]))
    same(
        e.resample("D", on="t").agg({"v": "max", "i": "count"}),
        q.resample("D", on="t").agg({"v": "max", "i": "count"}),
    )
    same(d["v"].resample("12h").mean(), p["v"].resample("12h").mean())
    same(d.resample("D").ohlc(), p[["v", "i", "k"]].astype("float64").resample("D").ohlc())
    # the result's index is a DatetimeIndex with pandas' freq (none when NaT rows were dropped)
    for frame in (p, _pdf(seed=3)):
        got = fd.from_pandas(frame, device=device).resample("D").sum().to_pandas()
        exp = frame.resample("D").sum()
        assert got.index.freq == exp.index.freq
        pd.testing.assert_frame_equal(got[["v"]], exp[["v"]])


def test_resample_empty_and_errors(device):
    p = _pdf().iloc[:0]
    d = fd.from_pandas(p, device=device)
    same(d.resample("D").sum(), p.resample("D").sum())
    with pytest.raises(TypeError):
        fd.DataFrame({"a": [1, 2]}, device=device).resample("D")
    with pytest.raises(KeyError):
        fd.from_pandas(_pdf(), device=device).resample("D", on="nope")


# ---- ewm / expanding ---------------------------------------------------------------------------
def _series(nan=True, n=50, seed=4):
    rng = np.random.default_rng(seed)
    v = rng.standard_normal(n) * 3 + 10
    if nan:
        v[[0, 5, 6, 7, 20, 49]] = np.nan
    return pd.Series(v, name="x")


@pytest.mark.parametrize(
    "spec", [{"span": 3}, {"com": 0.5}, {"alpha": 0.3}, {"halflife": 2.5}, {"alpha": 1.0}]
)
@pytest.mark.parametrize("adjust", [True, False])
@pytest.mark.parametrize("ignore_na", [False, True])
def test_ewm_against_pandas(device, spec, adjust, ignore_na):
    p = _series()
    s = fd.from_pandas(p, device=device)
    kw = dict(spec, adjust=adjust, ignore_na=ignore_na)
    same(s.ewm(**kw).mean(), p.ewm(**kw).mean())
    same(s.ewm(**kw, min_periods=4).mean(), p.ewm(**kw, min_periods=4).mean())
    same(s.ewm(**kw).var(), p.ewm(**kw).var())
    same(s.ewm(**kw).std(), p.ewm(**kw).std())
    same(s.ewm(**kw).var(bias=True), p.ewm(**kw).var(bias=True))
    if adjust:
        same(s.ewm(**kw).sum(), p.ewm(**kw).sum())
    else:
        with pytest.raises(NotImplementedError, match="adjust=False"):
            s.ewm(**kw).sum()


def test_ewm_frame_ints_and_errors(device):
    p = pd.DataFrame({"a": [1, 2, 3, 4, 5], "b": [1.0, np.nan, 2.0, 8.0, 1.0]})
    d = fd.from_pandas(p, device=device)
    same(d.ewm(span=2).mean(), p.ewm(span=2).mean())
    same(d.ewm(alpha=0.5, adjust=False).std(), p.ewm(alpha=0.5, adjust=False).std())
    with pytest.raises(ValueError, match="mutually exclusive"):
        d.ewm(span=2, alpha=0.5)
    with pytest.raises(ValueError, match="Must pass one of"):
        d.ewm()
    with pytest.raises(ValueError, match="alpha must satisfy"):
        d.ewm(alpha=1.5)
    with pytest.raises(ValueError, match="span must satisfy"):
        d.ewm(span=0.5)
    e = fd.from_pandas(p.iloc[:0], device=device)
    same(e.ewm(span=2).mean(), p.iloc[:0].ewm(span=2).mean())


@pytest.mark.parametrize("how", ["sum", "mean", "min", "max", "std", "var", "count"])
@pytest.mark.parametrize("min_periods", [1, 3, 0])
def test_expanding(device, how, min_periods):
    p = _series()
    s = fd.from_pandas(p, device=device)
    same(getattr(s.expanding(min_periods), how)(), getattr(p.expanding(min_periods), how)())
    q = pd.DataFrame({"a": [1, 5, 2, 8, 3], "b": [np.nan, 1.0, np.nan, 4.0, 2.0]})
    d = fd.from_pandas(q, device=device)
    same(getattr(d.expanding(min_periods), how)(), getattr(q.expanding(min_periods), how)())
