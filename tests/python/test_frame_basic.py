"""ember.frame: construction, conversions, dtypes, nulls, arithmetic, selection (vs pandas)."""

from __future__ import annotations

import ember
import ember.frame as fd
import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from test_frame_helpers import same


def _pdf():
    return pd.DataFrame(
        {
            "i": pd.array([1, 2, None, 4, 5], dtype="Int64"),
            "f": [1.5, np.nan, 3.0, -4.0, 0.0],
            "s": pd.array(["a", "bb", None, "dé", ""], dtype="str"),
            "b": [True, False, True, True, False],
            "u8": np.array([1, 2, 3, 250, 0], dtype=np.uint8),
        }
    )


def test_dict_construction_and_dtypes(device):
    df = fd.DataFrame(
        {"a": [1, 2, 3], "b": [1.5, 2.5, np.nan], "c": ["x", "y", None]}, device=device
    )
    assert df.shape == (3, 3)
    assert df.device == str(ember.Device(device))
    assert list(df.columns) == ["a", "b", "c"]
    assert df["a"].dtype == np.int64 and df["b"].dtype == np.float64
    assert df["c"].dtype == "str"
    exp = pd.DataFrame({"a": [1, 2, 3], "b": [1.5, 2.5, np.nan], "c": ["x", "y", None]})
    same(df, exp, check_dtype=True)
    assert isinstance(df["a"].values, ember.ndarray)
    assert str(df["a"].values.device) == str(ember.Device(device))


@pytest.mark.parametrize(
    "dtype",
    [
        "int8",
        "int16",
        "int32",
        "int64",
        "uint8",
        "uint16",
        "uint32",
        "uint64",
        "float32",
        "float64",
        "bool",
    ],
)
def test_numpy_dtypes_roundtrip(device, dtype):
    rng = np.random.default_rng(0)
    a = (
        (rng.integers(0, 100, 7) % 2 == 0)
        if dtype == "bool"
        else rng.integers(0, 100, 7).astype(dtype)
    )
    s = fd.Series(a, name="x", device=device)
    assert s.dtype == np.dtype(dtype)
    same(s, pd.Series(a, name="x"), check_dtype=True)
    assert s.to_arrow().equals(pa.array(a))


def test_from_pandas_to_pandas_nullable(device):
    pdf = _pdf()
    df = fd.from_pandas(pdf, device=device)
    back = df.to_pandas()
    pd.testing.assert_frame_equal(back, pdf)
    assert back["i"].isna().tolist() == [False, False, True, False, False]
    assert back["i"].iloc[2] is pd.NA


def test_arrow_roundtrip_with_nulls_and_offsets(device):
    tbl = pa.table(
        {
            "x": pa.array([1, None, 3, None, 5], pa.int32()),
            "s": pa.array(["α", None, "ccc", "", "e"]),
            "b": pa.array([True, None, False, True, None]),
            "t": pa.array([0, 86400, None, 5, 6], pa.timestamp("s")),
        }
    )
    part = tbl.slice(1, 4)  # non-zero Arrow offsets
    df = fd.from_arrow(part, device=device)
    assert len(df) == 4
    out = df.to_arrow()
    for name in ["x", "b", "t"]:
        assert out.column(name).to_pylist() == part.column(name).to_pylist()
    assert out.column("s").to_pylist() == part.column("s").to_pylist()
    s = fd.from_arrow(pa.chunked_array([[1, 2], [None, 4]]), device=device)
    assert s.isna().tolist() == [False, False, True, False]


def test_category_roundtrip(device):
    p = pd.Series(pd.Categorical(["b", "a", None, "b"], categories=["b", "a", "c"]))
    s = fd.Series(p, device=device)
    assert isinstance(s.dtype, pd.CategoricalDtype)
    same(s, p, check_dtype=True)
    assert s.cat.codes.tolist() == [0, 1, -1, 0]
    assert (s == "a").tolist() == [False, True, False, False]
    same(s.astype("str"), p.astype("str"))
    c = fd.Series(["x", "y", "x", None], device=device).astype("category")
    same(c, pd.Series(["x", "y", "x", None]).astype("category"))


def test_isna_fillna_dropna(device):
    pdf = _pdf()
    df = fd.from_pandas(pdf, device=device)
    same(df.isna(), pdf.isna(), check_dtype=True)
    same(df.notna(), pdf.notna(), check_dtype=True)
    same(df["i"].fillna(0), pdf["i"].fillna(0))
    same(df["f"].fillna(-1.0), pdf["f"].fillna(-1.0), check_dtype=True)
    same(df["s"].fillna("?"), pdf["s"].fillna("?"), check_dtype=True)
    same(df.dropna(), pdf.dropna())
    same(df.dropna(subset=["f"]), pdf.dropna(subset=["f"]))
    same(df.dropna(how="all"), pdf.dropna(how="all"))
    same(df.dropna(thresh=5), pdf.dropna(thresh=5))
    same(df.fillna({"f": 9.0}), pdf.fillna({"f": 9.0}))
    same(df["f"].ffill(), pdf["f"].ffill())
    same(df["i"].bfill(), pdf["i"].bfill())
    assert df["i"].count() == 4 and df["s"].count() == 4


def test_nullable_int_semantics(device):
    s = fd.Series(pd.array([1, None, 3], dtype="Int64"), device=device)
    p = pd.Series([1, None, 3], dtype="Int64")
    same(s + 1, p + 1, check_dtype=True)
    same(s * s, p * p, check_dtype=True)
    same(s > 1, p > 1, check_dtype=True)  # pd.NA propagates through comparisons
    assert s.sum() == 4 and s.mean() == 2.0 and s.max() == 3
    assert (s + fd.NA).isna().all()


def test_arithmetic_and_comparisons(device):
    rng = np.random.default_rng(1)
    a = rng.normal(size=9)
    b = rng.integers(-5, 5, 9)
    pdf = pd.DataFrame({"a": a, "b": b})
    df = fd.DataFrame(pdf, device=device)
    for op in ["add", "sub", "mul", "truediv"]:
        same(getattr(df["a"], op)(df["b"]), getattr(pdf["a"], op)(pdf["b"]), check_dtype=True)
        same(getattr(df, op)(2), getattr(pdf, op)(2), check_dtype=True)
    same(df["b"] // 3, pdf["b"] // 3, check_dtype=True)
    same(df["b"] % 3, pdf["b"] % 3, check_dtype=True)
    same(2 - df["a"], 2 - pdf["a"], check_dtype=True)
    same(df["a"] ** 2, pdf["a"] ** 2, check_dtype=True)
    same(-df["b"], -pdf["b"], check_dtype=True)
    same(abs(df["b"]), abs(pdf["b"]), check_dtype=True)
    for op in ["eq", "ne", "lt", "le", "gt", "ge"]:
        same(getattr(df["a"], op)(0.1), getattr(pdf["a"], op)(0.1), check_dtype=True)
        same(getattr(df["b"], op)(df["a"]), getattr(pdf["b"], op)(pdf["a"]), check_dtype=True)
    m = (df["a"] > 0) & ~(df["b"] == 1) | (df["b"] < -3)
    pm = (pdf["a"] > 0) & ~(pdf["b"] == 1) | (pdf["b"] < -3)
    same(m, pm, check_dtype=True)
    same(df + df, pdf + pdf, check_dtype=True)


def test_string_comparisons(device):
    p = pd.Series(["b", "a", None, "ab", "é"], dtype="str")
    s = fd.Series(p, device=device)
    for op in ["eq", "ne", "lt", "le", "gt", "ge"]:
        same(getattr(s, op)("ab"), getattr(p, op)("ab"), check_dtype=True)
    q = pd.Series(["b", "b", "x", "a", "é"], dtype="str")
    same(s == fd.Series(q, device=device), p == q, check_dtype=True)
    same(s + "!", p + "!", check_dtype=True)


def test_filtering_loc_iloc_head_tail(device):
    pdf = _pdf()
    df = fd.from_pandas(pdf, device=device)
    same(df[df["f"] > 0], pdf[pdf["f"] > 0])
    same(df[df["i"] > 1], pdf[pdf["i"] > 1].astype({"b": bool}))
    same(df.head(2), pdf.head(2))
    same(df.tail(2), pdf.tail(2))
    same(df.head(-2), pdf.head(-2))
    same(df.tail(0), pdf.tail(0))
    same(df.iloc[1:4], pdf.iloc[1:4])
    same(df.iloc[[4, 0, -1]], pdf.iloc[[4, 0, -1]])
    same(df.iloc[::2], pdf.iloc[::2])
    same(df.iloc[1:3, [0, 2]], pdf.iloc[1:3, [0, 2]])
    assert df.iloc[1, 1] is not None and np.isnan(df.iloc[1, 1])
    assert df["s"].iloc[1] == "bb"
    same(df.loc[df["b"], ["i", "s"]], pdf.loc[pdf["b"], ["i", "s"]])
    same(df.loc[1:3, "f"], pdf.loc[1:3, "f"])
    same(df.loc[[3, 1]], pdf.loc[[3, 1]])
    assert df.loc[3, "s"] == "dé"
    with pytest.raises(KeyError):
        df.loc[[7]]
    with pytest.raises(IndexError):
        df.iloc[9]
    with pytest.raises(KeyError):
        df["nope"]
    same(df[["s", "i"]], pdf[["s", "i"]])
    same(df["f"][1:3], pdf["f"][1:3])
    same(df["f"][::-2], pdf["f"][::-2])
    assert df["s"][3] == pdf["s"][3]
    same(df.f, pdf.f)


def test_set_reset_index_rename_assign(device):
    pdf = pd.DataFrame({"k": ["x", "y", "z"], "v": [3, 1, 2]})
    df = fd.DataFrame(pdf, device=device)
    same(df.set_index("k"), pdf.set_index("k"))
    same(df.set_index("k").reset_index(), pdf.set_index("k").reset_index())
    assert df.set_index("k").loc["y", "v"] == 1
    same(df.set_index("k").loc[["z", "x"]], pdf.set_index("k").loc[["z", "x"]])
    same(df[df["v"] > 1].reset_index(), pdf[pdf["v"] > 1].reset_index())
    same(df[df["v"] > 1].reset_index(drop=True), pdf[pdf["v"] > 1].reset_index(drop=True))
    same(df.rename(columns={"v": "w"}), pdf.rename(columns={"v": "w"}))
    same(df.rename(columns=str.upper), pdf.rename(columns=str.upper))
    same(df.assign(w=df["v"] * 2), pdf.assign(w=pdf["v"] * 2))
    same(df.drop(columns=["v"]), pdf.drop(columns=["v"]))
    df2 = df.copy()
    df2["z"] = 5
    df2["v2"] = df2["v"] + 1
    pdf2 = pdf.copy()
    pdf2["z"] = 5
    pdf2["v2"] = pdf2["v"] + 1
    same(df2, pdf2)


def test_astype(device):
    pdf = pd.DataFrame({"a": [1, -20, 300], "f": [1.7, -2.2, np.nan], "b": [True, False, True]})
    df = fd.DataFrame(pdf, device=device)
    same(df["a"].astype("float32"), pdf["a"].astype("float32"), check_dtype=True)
    same(df["a"].astype(str), pdf["a"].astype(str), check_dtype=True)
    same(df["b"].astype(str), pdf["b"].astype(str), check_dtype=True)
    same(df["b"].astype("int8"), pdf["b"].astype("int8"), check_dtype=True)
    g = pd.Series([1.0, -2.0, np.nan])
    same(fd.Series(g, device=device).astype("Int64"), g.astype("Int64"))
    same(df.astype({"a": "int16"}), pdf.astype({"a": "int16"}), check_dtype=True)
    with pytest.raises(TypeError):
        df["a"].astype("not-a-dtype")
    with pytest.raises(KeyError):
        df.astype({"zz": "int8"})


def test_repr_info_shape_empty(device):
    pdf = _pdf()
    df = fd.from_pandas(pdf, device=device)
    assert repr(df) == repr(pdf)
    assert repr(df["f"]) == repr(pdf["f"])
    import io

    buf = io.StringIO()
    df.info(buf=buf)
    assert "5 non-null" in buf.getvalue() and "4 non-null" in buf.getvalue()
    e = fd.DataFrame({"a": []}, device=device)
    assert e.shape == (0, 1) and e.empty
    one = fd.DataFrame({"a": [7]}, device=device)
    same(one, pd.DataFrame({"a": [7]}))
    assert fd.DataFrame(device=device).shape == (0, 0)


def test_device_move_and_2d_construction(device):
    a = np.arange(12, dtype=np.float64).reshape(4, 3)
    df = fd.DataFrame(ember.asarray(a, device=device), columns=["x", "y", "z"])
    assert df.device == str(ember.Device(device))
    same(df, pd.DataFrame(a, columns=["x", "y", "z"]), check_dtype=True)
    moved = df.to("cpu")
    assert moved.device == "cpu"
    np.testing.assert_array_equal(ember.asnumpy(df.values), a)


def test_errors(device):
    with pytest.raises(ValueError):
        fd.DataFrame({"a": [1, 2], "b": [1]}, device=device)
    s = fd.Series([1, 2], device=device)
    with pytest.raises(ValueError):
        bool(s)
    with pytest.raises(TypeError):
        fd.from_pandas([1, 2])
    with pytest.raises(TypeError):
        s + fd.Series(["a", "b"], device=device)


def test_unsupported_methods_name_pandas(device):
    df = fd.DataFrame({"a": [1, 2]}, device=device)
    with pytest.raises(NotImplementedError, match="DataFrame.swaplevel"):
        df.swaplevel()
    with pytest.raises(NotImplementedError, match="Series.to_period"):
        df["a"].to_period()
    assert not hasattr(df, "swaplevel") and not hasattr(df["a"], "nonexistent_thing")
    with pytest.raises(AttributeError):
        _ = df.nonexistent_thing


def test_index_alignment(device):
    a = pd.Series([1.0, 2.0, 3.0], index=[3, 1, 2])
    b = pd.Series([10.0, 20.0, 40.0], index=[1, 2, 4])
    sa, sb = fd.Series(a, device=device), fd.Series(b, device=device)
    same(sa + sb, a + b)
    same(sa * sb, a * b)
    s = pd.Series(["x", "y"], index=["k", "j"], dtype="str")
    t = pd.Series(["1", "2"], index=["j", "z"], dtype="str")
    same(fd.Series(s, device=device) + fd.Series(t, device=device), s + t)
    same(fd.DataFrame({"a": sa, "b": sb}), pd.DataFrame({"a": a, "b": b}))
    same(fd.DataFrame({"a": sa}, index=[2, 3, 9]), pd.DataFrame({"a": a}, index=[2, 3, 9]))
    pdf = pd.DataFrame({"v": [1, 2, 3]}, index=[1, 2, 3])
    df = fd.from_pandas(pdf, device=device)
    df["w"] = sb
    pdf["w"] = b
    same(df, pdf)
    dup = fd.Series([1.0, 2.0], index=[1, 1], device=device)
    with pytest.raises(ValueError, match="duplicate"):
        df["z"] = dup


def test_frame_alignment(device):
    a = pd.DataFrame({"x": [1.0, 2.0, 3.0], "y": [4.0, 5.0, 6.0]}, index=[0, 1, 2])
    b = pd.DataFrame({"y": [10.0, 20.0], "z": [1.0, 2.0]}, index=[2, 5])
    da, db = fd.from_pandas(a, device=device), fd.from_pandas(b, device=device)
    same(da + db, a + b)
    same(da - db.reset_index(drop=True), a - b.reset_index(drop=True))
    same(da * da, a * a)
