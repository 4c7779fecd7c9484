"""ember.frame I/O round trips (CSV, Parquet, JSON lines, Arrow) against pandas."""

from __future__ import annotations

import ember
import ember.frame as fd
import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from test_frame_helpers import same


def _pdf():
    return pd.DataFrame(
        {
            "id": np.arange(6, dtype=np.int64),
            "x": [1.5, np.nan, -2.25, 0.0, 1e10, 3.0],
            "name": pd.array(["ann", "bé", None, "", "dave, jr", "eve"], dtype="str"),
            "flag": [True, False, True, True, False, False],
            "when": pd.to_datetime(
                [
                    "2020-01-01",
                    "2020-01-02 03:04:05",
                    None,
                    "1999-12-31",
                    "2024-02-29",
                    "2021-06-01",
                ],
                format="ISO8601",
            ),
        }
    )


def test_csv_roundtrip(device, tmp_path):
    pdf = _pdf()
    path = tmp_path / "t.csv"
    pdf.to_csv(path, index=False)
    df = fd.read_csv(path, device=device, parse_dates=["when"])
    assert df.device == str(ember.Device(device))
    exp = pd.read_csv(path, parse_dates=["when"])
    same(df[["id", "x", "name", "flag"]], exp[["id", "x", "name", "flag"]])
    got_when = df["when"].to_pandas()
    assert got_when.astype("datetime64[ns]").equals(exp["when"].astype("datetime64[ns]"))
    out = tmp_path / "u.csv"
    df.to_csv(out, index=False)
    same(fd.read_csv(out, device=device, parse_dates=["when"])[["id", "name"]], exp[["id", "name"]])


def test_csv_options(device, tmp_path):
    path = tmp_path / "o.csv"
    path.write_text("a;b;c\n1;x;2.5\n-;y;3.5\n4;missing;-\n")
    kw = dict(sep=";", na_values=["-", "missing"])
    same(fd.read_csv(path, device=device, **kw), pd.read_csv(path, **kw))
    same(
        fd.read_csv(path, device=device, usecols=["a", "c"], **kw),
        pd.read_csv(path, usecols=["a", "c"], **kw),
    )
    same(
        fd.read_csv(path, device=device, dtype={"c": "float32"}, **kw),
        pd.read_csv(path, dtype={"c": "float32"}, **kw),
        check_dtype=False,
    )
    assert fd.read_csv(path, device=device, dtype={"c": "float32"}, **kw)["c"].dtype == np.float32
    p2 = tmp_path / "nh.csv"
    p2.write_text("1,2\n3,4\n")
    same(fd.read_csv(p2, header=None, device=device), pd.read_csv(p2, header=None))
    same(fd.read_csv(p2, names=["p", "q"], device=device), pd.read_csv(p2, names=["p", "q"]))
    with pytest.raises(ValueError):
        fd.read_csv(p2, sep="::", device=device)


def test_parquet_roundtrip(device, tmp_path):
    pdf = _pdf()
    path = tmp_path / "t.parquet"
    pdf.to_parquet(path)
    df = fd.read_parquet(path, device=device)
    same(df, pd.read_parquet(path))
    same(
        fd.read_parquet(path, columns=["id", "name"], device=device),
        pd.read_parquet(path, columns=["id", "name"]),
    )
    filt = [("id", ">", 2)]
    same(fd.read_parquet(path, filters=filt, device=device), pd.read_parquet(path, filters=filt))
    out = tmp_path / "u.parquet"
    df.to_parquet(out)
    same(fd.read_parquet(out, device=device), pdf)
    pd.testing.assert_frame_equal(pd.read_parquet(out), pdf, check_dtype=False)
    ix = df.set_index("name")
    ix.to_parquet(tmp_path / "ix.parquet")
    back = pd.read_parquet(tmp_path / "ix.parquet")
    assert back.index.name == "name" and back.index.tolist()[:2] == ["ann", "bé"]
    assert pq.read_table(out).num_rows == 6
    nullable = pd.DataFrame({"i": pd.array([1, None, 3], dtype="Int64")})
    nullable.to_parquet(tmp_path / "n.parquet")
    same(fd.read_parquet(tmp_path / "n.parquet", device=device), nullable, check_dtype=True)


def test_json_lines_and_arrow(device, tmp_path):
    pdf = pd.DataFrame({"a": [1, 2, 3], "b": ["x", None, "z"]})
    path = tmp_path / "t.jsonl"
    pdf.to_json(path, orient="records", lines=True)
    same(fd.read_json(path, lines=True, device=device), pd.read_json(path, lines=True))
    df = fd.from_pandas(pdf, device=device)
    text = df.to_json(orient="records", lines=True)
    assert text == pdf.to_json(orient="records", lines=True)
    t = df.to_arrow()
    same(fd.from_arrow(t, device=device), pdf)


def test_bench_runs_small(device, tmp_path):
    from ember.frame import bench

    res = bench.run(rows=3000, device=device, keys=50, dim_rows=200, path=str(tmp_path))
    assert set(res["cases"]) == {
        "groupby_sum_mean",
        "merge_inner",
        "sort_two_keys",
        "query_filter",
        "read_parquet",
    }
    for r in res["cases"].values():
        assert r["ember_s"] > 0 and r["pandas_s"] > 0
