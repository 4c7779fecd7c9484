"""ember.frame .str and .dt accessors against pandas 3 (unicode strings, nulls, empty strings)."""

from __future__ import annotations

import ember.frame as fd
import numpy as np
import pandas as pd
import pytest
from test_frame_helpers import same

WORDS = [
    "Hello",
    "  pad me ",
    "",
    None,
    "ÀÉÎ õü",
    "a,b,,c",
    "日本語テキスト",
    "x-1",
    "-42",
    "ABCabc",
    "tab\there\n",
    "endswith!",
]


def _pair(device, words=WORDS):
    p = pd.Series(words, dtype="str")
    return fd.Series(p, device=device), p


def test_len_case_strip(device):
    s, p = _pair(device)
    same(s.str.len(), p.str.len(), check_dtype=True)
    same(s.str.lower(), p.str.lower(), check_dtype=True)
    same(s.str.upper(), p.str.upper(), check_dtype=True)
    same(s.str.strip(), p.str.strip(), check_dtype=True)
    same(s.str.lstrip(), p.str.lstrip(), check_dtype=True)
    same(s.str.rstrip("! "), p.str.rstrip("! "), check_dtype=True)
    s2, p2 = _pair(device, ["a", "bb", "ccc"])
    same(s2.str.len(), p2.str.len(), check_dtype=True)


@pytest.mark.parametrize("pat", ["e", "ll", "", "日本", ",", "zz", "ABC"])
def test_contains_startswith_endswith(device, pat):
    s, p = _pair(device)
    same(s.str.contains(pat, regex=False), p.str.contains(pat, regex=False), check_dtype=True)
    same(s.str.contains(pat), p.str.contains(pat), check_dtype=True)
    same(s.str.startswith(pat), p.str.startswith(pat), check_dtype=True)
    same(s.str.endswith(pat), p.str.endswith(pat), check_dtype=True)
    same(s.str.contains(pat, case=False), p.str.contains(pat, case=False), check_dtype=True)


def test_contains_simple_regex_and_errors(device):
    s, p = _pair(device)
    for pat in ["^H", "!$", "^-42$", "ll|日本", "a\\,b"]:
        same(s.str.contains(pat), p.str.contains(pat), check_dtype=True)
    same(s.str.startswith(("H", "x")), p.str.startswith(("H", "x")), check_dtype=True)
    with pytest.raises(NotImplementedError):
        s.str.contains("[a-z]+\\d")  # classes on non-ASCII text
    with pytest.raises(NotImplementedError):
        s.str.contains("(ab)")
    with pytest.raises(TypeError):
        s.str.startswith(3)
    with pytest.raises(AttributeError):
        _ = fd.Series([1, 2], device=device).str


@pytest.mark.parametrize("bounds", [(0, 2), (1, None), (None, -1), (-3, None), (2, 1), (5, 50)])
def test_slice(device, bounds):
    s, p = _pair(device)
    same(s.str.slice(*bounds), p.str.slice(*bounds), check_dtype=True)
    same(s.str[bounds[0] : bounds[1]], p.str[bounds[0] : bounds[1]], check_dtype=True)


def test_get_replace_cat_zfill_pad_count(device):
    s, p = _pair(device)
    same(s.str.get(0), p.str.get(0), check_dtype=True)
    same(s.str.get(-1), p.str.get(-1), check_dtype=True)
    for a, b in [("l", "L"), (",", ""), ("日本", "ニ"), ("a", "aaa"), ("zz", "y")]:
        same(s.str.replace(a, b, regex=False), p.str.replace(a, b, regex=False), check_dtype=True)
    same(s.str.replace("l", "_", n=1, regex=False), p.str.replace("l", "_", n=1, regex=False))
    same(s.str.cat(s, sep="|"), p.str.cat(p, sep="|"), check_dtype=True)
    same(s.str.cat(s, sep="-", na_rep="?"), p.str.cat(p, sep="-", na_rep="?"), check_dtype=True)
    assert s.str.cat(sep=",") == p.str.cat(sep=",")
    assert s.str.cat() == p.str.cat()
    same(s.str.zfill(5), p.str.zfill(5), check_dtype=True)
    same(s.str.pad(8, fillchar="*"), p.str.pad(8, fillchar="*"), check_dtype=True)
    same(s.str.pad(8, side="right"), p.str.pad(8, side="right"), check_dtype=True)
    same(s.str.count("a"), p.str.count("a"), check_dtype=True)
    for m in ["isdigit", "isalpha", "isupper", "islower"]:
        q, r = _pair(device, ["123", "abc", "ABC", "", None, "aB1"])
        same(getattr(q.str, m)(), getattr(r.str, m)(), check_dtype=True)


@pytest.mark.parametrize("sep,n", [(",", -1), (",", 1), (" ", -1), ("t", 2)])
def test_split_expand(device, sep, n):
    s, p = _pair(device)
    same(s.str.split(sep, n=n, expand=True), p.str.split(sep, n=n, expand=True))
    got = s.str.split(sep, n=n).to_pandas().tolist()
    exp = p.str.split(sep, n=n).tolist()
    assert [g if isinstance(g, list) else None for g in got] == [
        e if isinstance(e, list) else None for e in exp
    ]


def test_string_category_accessor(device):
    p = pd.Series(["ab", "cd", "ab", None], dtype="category")
    s = fd.Series(p, device=device)
    same(s.str.upper(), p.astype("str").str.upper())


def _dt_pair(device, unit="ns"):
    vals = pd.to_datetime(
        [
            "1970-01-01",
            "2000-02-29 13:45:59",
            None,
            "1969-12-31 23:59:59",
            "2024-12-31 06:07:08",
            "1900-03-01 00:00:01",
            "2100-01-01",
        ],
        format="ISO8601",
    )
    p = pd.Series(vals).astype(f"datetime64[{unit}]")
    return fd.Series(p, device=device), p


@pytest.mark.parametrize("unit", ["s", "ms", "us", "ns"])
def test_dt_fields(device, unit):
    s, p = _dt_pair(device, unit)
    assert s.dtype == p.dtype
    for f in [
        "year",
        "month",
        "day",
        "hour",
        "minute",
        "second",
        "day_of_year",
        "quarter",
        "day_of_week",
    ]:
        same(getattr(s.dt, f), getattr(p.dt, f), check_dtype=True)
    for freq in ["D", "h", "15min", "s"]:
        same(s.dt.floor(freq), p.dt.floor(freq), check_dtype=True)
        same(s.dt.ceil(freq), p.dt.ceil(freq), check_dtype=True)
        same(s.dt.round(freq), p.dt.round(freq), check_dtype=True)
    q, r = s.dropna(), p.dropna()
    same(q.dt.year, r.dt.year, check_dtype=True)


def test_dt_arithmetic_and_timedelta(device):
    s, p = _dt_pair(device)
    td = pd.Timedelta(hours=5, minutes=3)
    same(s + td, p + td, check_dtype=True)
    same(s - td, p - td, check_dtype=True)
    d = s - s.shift(1)
    e = p - p.shift(1)
    same(d, e, check_dtype=True)
    same(d.dt.days, e.dt.days)
    same(d.dt.total_seconds(), e.dt.total_seconds(), check_dtype=True)
    same(d.dt.seconds, e.dt.seconds)
    same(s > pd.Timestamp("2000-01-01"), p > pd.Timestamp("2000-01-01"), check_dtype=True)
    same(s > "2000-01-01", p > "2000-01-01", check_dtype=True)
    same(s.sort_values(), p.sort_values(kind="stable"))
    assert s.min() == p.min() and s.max() == p.max()
    with pytest.raises(ValueError):
        s.dt.floor("not-a-freq")
    with pytest.raises(AttributeError):
        _ = fd.Series([1, 2], device=device).dt


def test_groupby_on_datetime_and_dt_keys(device):
    s, p = _dt_pair(device)
    pdf = pd.DataFrame({"t": p, "v": np.arange(len(p))})
    df = fd.from_pandas(pdf, device=device)
    same(df.groupby(df["t"].dt.year)["v"].sum(), pdf.groupby(pdf["t"].dt.year)["v"].sum())
    same(df.groupby("t")["v"].max(), pdf.groupby("t")["v"].max())


def test_parse_numbers_from_strings(device):
    ints = pd.Series([" 12", "-7", "+3", "0", "900000000000000000"], dtype="str")
    same(fd.Series(ints, device=device).astype("int64"), ints.astype("int64"), check_dtype=True)
    same(
        fd.Series(ints[:4], device=device).astype("int16"),
        ints[:4].astype("int16"),
        check_dtype=True,
    )
    fl = pd.Series(
        [
            "1.5",
            "-2.25e3",
            "3",
            ".5",
            "1e-5",
            "nan",
            "-inf",
            "123456.789",
            "7.",
            "1E+2",
            "-0.001",
            "6.02214076e23",
            "2.5e-300",
        ],
        dtype="str",
    )
    got = fd.Series(fl, device=device).astype("float64").to_numpy()
    np.testing.assert_allclose(got, fl.astype("float64").to_numpy(), rtol=1e-15)
    assert fd.Series(fl, device=device).astype("float32").dtype == np.float32
    for bad in (["1", "x2"], ["1.2.3"], ["--1"], ["1e"], [""]):
        with pytest.raises(ValueError):
            fd.Series(bad, device=device).astype("float64" if "." in bad[0] else "int64")
    with pytest.raises(ValueError):
        fd.Series(["-1"], device=device).astype("uint8")
    with pytest.raises(ValueError):
        fd.Series(["300"], device=device).astype("int8")


def test_string_sort_long_common_prefixes(device):
    base = "prefix-shared-by-all-of-them-"
    words = [base + t for t in ["b", "a", "ab", "", "ä", "a\u00e9", "zz", "a"]] + ["", "p", None]
    p = pd.Series(words, dtype="str")
    s = fd.Series(p, device=device)
    same(s.sort_values(), p.sort_values(kind="stable"))
    same(s.sort_values(ascending=False), p.sort_values(ascending=False, kind="stable"))
    same(s.value_counts(), p.value_counts())
    same(s.rank(method="dense"), p.rank(method="dense"))


def test_to_datetime_on_device(device):
    p = pd.Series(
        [
            "2020-01-02",
            "2021-03-04 05:06:07",
            None,
            "1969-12-31T23:59:59.5",
            "2000-02-29 00:00",
            " 1900-03-01 12:00:00.123456 ",
        ],
        dtype="str",
    )
    got = fd.to_datetime(fd.Series(p, device=device))
    exp = pd.to_datetime(p.str.strip(), format="ISO8601")
    same(got, exp, check_dtype=True)
    q = pd.Series(["2020-01-02 00:00:00.123456789", "2020-01-03"], dtype="str")
    same(
        fd.to_datetime(fd.Series(q, device=device)),
        pd.to_datetime(q, format="ISO8601"),
        check_dtype=True,
    )
    bad = pd.Series(
        ["2020-13-02", "2021-02-29", "2020-01-01", "20-01-01", "2020-01-01 25:00"], dtype="str"
    )
    with pytest.raises(ValueError):
        fd.to_datetime(fd.Series(bad, device=device))
    same(
        fd.to_datetime(fd.Series(bad, device=device), errors="coerce"),
        pd.to_datetime(bad, errors="coerce", format="ISO8601"),
        check_dtype=True,
    )
    same(
        fd.to_datetime(fd.Series([0, 86400], device=device), unit="s"),
        pd.to_datetime(pd.Series([0, 86400]), unit="s"),
    )


def test_split_lists_get_len_explode(device):
    words = ["a,b", None, "", "x,,y,z", "q", "日,本"]
    p = pd.Series(words, dtype="str")
    s = fd.Series(p, device=device)
    lst = s.str.split(",")
    exp = p.str.split(",")
    assert lst.to_pandas().tolist()[2:] == exp.tolist()[2:] and lst.to_pandas().tolist()[0] == [
        "a",
        "b",
    ]
    assert pd.isna(lst.to_pandas()[1])
    for i in [0, 1, -1, 5]:
        same(lst.str.get(i), exp.str.get(i))
    same(lst.str.len(), exp.str.len())
    same(lst.explode(), exp.explode())
    same(lst.explode(ignore_index=True), exp.explode(ignore_index=True))
    same(s.str.split(",", n=1).str.get(1), p.str.split(",", n=1).str.get(1))
    assert lst.iloc[[3, 0]].to_pandas().tolist() == exp.iloc[[3, 0]].tolist()
    back = fd.from_arrow(lst.to_arrow(), device=device)
    assert back.to_pandas().tolist()[3] == ["x", "", "y", "z"]
    pdf = pd.DataFrame({"id": range(6), "parts": exp})
    df = fd.DataFrame({"id": list(range(6)), "parts": lst}, device=device)
    same(df.explode("parts"), pdf.explode("parts"))


@pytest.mark.parametrize("unit", ["s", "ms", "us"])
def test_time_scalars_in_other_units(device, unit):
    p = pd.Series(pd.date_range("2024-01-01", periods=5, freq="13h")).astype(f"datetime64[{unit}]")
    s = fd.Series(p, device=device)
    ts = pd.Timestamp("2024-01-02 01:00")
    same(s > ts, p > ts, check_dtype=True)
    same(s == p.iloc[2], p == p.iloc[2], check_dtype=True)
    same(s + pd.Timedelta(minutes=90), p + pd.Timedelta(minutes=90), check_dtype=True)
    same(s - ts, p - ts, check_dtype=True)
    df = fd.DataFrame({"t": fd.date_range("2024-01-01", periods=3, freq="D", device=device)})
    same(df, pd.DataFrame({"t": pd.date_range("2024-01-01", periods=3, freq="D")}))


ASCII = ["abc123", "ABC", "", None, "x y", "a.b", "tab\there", "_under", "123", "end!", "42x"]


@pytest.mark.parametrize(
    "pat",
    [
        r"\d",
        r"\d+",
        r"^\d",
        r"\d$",
        r"^\d+$",
        r"[a-c]",
        r"[^a-z]",
        r"\s",
        r"\W",
        r"a.b",
        r"^.b",
        r"[A-Z][A-Z]",
        r"\w!$",
        r"x|^_",
        r"b\.?",
        r"[0-9][a-z]",
        r"^$",
        r"\.",
        r"^a.*",
        r"[\d_]",
        r"[]a]",
        r"\d+x",
        r"x*y",
    ],
)
def test_contains_regex_subset(device, pat):
    p = pd.Series(ASCII, dtype="str")
    s = fd.Series(p, device=device)
    same(s.str.contains(pat), p.str.contains(pat), check_dtype=True)
    if not any(q in pat for q in "+*?"):  # anchored quantifiers are outside the subset
        same(s.str.match(pat.lstrip("^")), p.str.match(pat.lstrip("^")), check_dtype=True)


def test_contains_regex_errors(device):
    s = fd.Series(ASCII, device=device)
    for pat in ["ab+c", "(x)", "a{2}", r"\bword"]:
        with pytest.raises(NotImplementedError):
            s.str.contains(pat)
    with pytest.raises(ValueError):
        s.str.contains("[abc")


def test_missing_accessor_methods_name_themselves():
    s = fd.Series(["a1", "b2"])
    with pytest.raises(NotImplementedError, match=r"Series\.str\.extract is not implemented"):
        s.str.extract(r"(\d)")
    with pytest.raises(AttributeError):
        s.str.no_such_method  # noqa: B018
    t = fd.Series(pd.to_datetime(["2024-01-01", "2024-02-01"]))
    with pytest.raises(NotImplementedError, match=r"Series\.dt\.tz_localize"):
        t.dt.tz_localize("UTC")
