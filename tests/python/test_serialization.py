"""ember.save / ember.load (the safetensors format): round trips of every dtype, 0-d, empty and
strided arrays, nested dicts; interoperability with the safetensors package; malformed files."""

from __future__ import annotations

import json
import math
import struct

import ember
import numpy as np
import pytest
from _helpers import ALL_DTYPES, np_dtype, to_ember, to_numpy

SAVABLE = [d for d in ALL_DTYPES if d != "complex128"]


def sample(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    a = np.asarray(rng.standard_normal(shape) * 50)
    if dtype == "bool":
        return np.asarray(a > 0)
    if dtype.startswith("complex"):
        return np.asarray(a + 1j * rng.standard_normal(shape)).astype(np_dtype(dtype))
    return a.astype(np_dtype(dtype))


def same(got, want):
    got = to_numpy(got)
    assert got.shape == want.shape
    assert got.dtype == want.dtype
    assert got.tobytes() == np.ascontiguousarray(want).tobytes()


def raw_file(path, header, data=b"", *, length=None, pad=True):
    """Writes a safetensors file by hand (for malformed-file tests)."""
    text = header if isinstance(header, bytes) else json.dumps(header).encode()
    if pad:
        text += b" " * (-len(text) % 8)
    n = len(text) if length is None else length
    path.write_bytes(struct.pack("<Q", n) + text + data)
    return path


# ---------------------------------------------------------------------------------------------
# round trips
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", SAVABLE)
def test_round_trip_every_dtype(device, tmp_path, dtype):
    arrays = {
        "matrix": sample((3, 5), dtype),
        "scalar": sample((), dtype, 1),
        "empty": sample((0, 4), dtype, 2),
        "vector": sample((7,), dtype, 3),
    }
    path = tmp_path / "a.safetensors"
    ember.save({k: to_ember(v, device) for k, v in arrays.items()}, path)
    got = ember.load(path, device=device)
    assert list(got) == list(arrays)
    for k, v in arrays.items():
        assert got[k].device == ember.Device(device)
        same(got[k], v)


def test_strided_views_and_numpy_leaves(tmp_path):
    base = np.arange(60, dtype=np.float32).reshape(6, 10)
    x = ember.asarray(base)
    obj = {"t": x.T, "step": x[::2, 1::3], "np": base[:, ::-1], "rev": ember.asarray(base)[::-1]}
    ember.save(obj, tmp_path / "v.st")
    got = ember.load(tmp_path / "v.st", device="cpu")
    same(got["t"], base.T)
    same(got["step"], base[::2, 1::3])
    same(got["np"], base[:, ::-1])
    same(got["rev"], base[::-1])


def test_nested_dicts_rebuilt_in_order(tmp_path):
    w = ember.ones((2, 3))
    obj = {
        "encoder": {"layer": {"weight": w, "bias": ember.zeros(3)}, "scale": ember.asarray(2.0)},
        "head": {"weight": ember.arange(4)},
        "empty": {},
        "top": ember.asarray([True, False]),
    }
    ember.save(obj, tmp_path / "n.st")
    got = ember.load(tmp_path / "n.st")
    assert list(got) == ["encoder", "head", "empty", "top"]
    assert list(got["encoder"]) == ["layer", "scale"]
    assert list(got["encoder"]["layer"]) == ["weight", "bias"]
    assert got["empty"] == {}
    same(got["encoder"]["layer"]["weight"], np.ones((2, 3)))
    same(got["head"]["weight"], np.arange(4))
    same(got["top"], np.array([True, False]))


def test_flat_dotted_keys_round_trip_exactly(tmp_path):
    obj = {"a.b": ember.ones(2), "a.c.d": ember.zeros(1), "x": ember.arange(3)}
    ember.save(obj, tmp_path / "f.st")
    got = ember.load(tmp_path / "f.st")
    assert list(got) == ["a.b", "a.c.d", "x"]
    same(got["a.c.d"], np.zeros(1))


def test_single_array_and_empty_dict(tmp_path):
    ember.save(ember.arange(5, dtype=ember.int16), tmp_path / "one.st")
    got = ember.load(tmp_path / "one.st")
    assert isinstance(got, ember.ndarray)
    same(got, np.arange(5, dtype=np.int16))
    ember.save({}, tmp_path / "none.st")
    assert ember.load(tmp_path / "none.st") == {}


def test_data_is_aligned_and_header_padded(tmp_path):
    obj = {"u8": ember.ones(3, dtype=ember.uint8), "f64": ember.ones(5), "i32": ember.ones(1)}
    obj["i32"] = ember.ones(1, dtype=ember.int32)
    ember.save(obj, tmp_path / "al.st")
    blob = (tmp_path / "al.st").read_bytes()
    n = struct.unpack("<Q", blob[:8])[0]
    assert n % 8 == 0
    header = json.loads(blob[8 : 8 + n])
    for name, size in (("u8", 1), ("f64", 8), ("i32", 4)):
        assert header[name]["data_offsets"][0] % size == 0


def test_user_metadata(tmp_path):
    ember.save({"x": ember.ones(1)}, tmp_path / "m.st", metadata={"format": "pt", "note": "hi"})
    blob = (tmp_path / "m.st").read_bytes()
    n = struct.unpack("<Q", blob[:8])[0]
    meta = json.loads(blob[8 : 8 + n])["__metadata__"]
    assert meta["format"] == "pt" and meta["note"] == "hi"
    same(ember.load(tmp_path / "m.st")["x"], np.ones(1))


def test_load_default_device(tmp_path):
    ember.save({"x": ember.ones(2)}, tmp_path / "d.st")
    with ember.device("cpu"):
        assert ember.load(tmp_path / "d.st")["x"].device == ember.Device("cpu")


# ---------------------------------------------------------------------------------------------
# bad input to save
# ---------------------------------------------------------------------------------------------


def test_save_rejects_bad_objects(tmp_path):
    p = tmp_path / "bad.st"
    with pytest.raises(TypeError, match="ember.save.*complex128"):
        ember.save({"c": ember.ones(2, dtype=ember.complex128)}, p)
    with pytest.raises(TypeError, match="ember.save.*'a.b'.*set.*no pickle"):
        ember.save({"a": {"b": {1, 2}}}, p)
    with pytest.raises(TypeError, match="ember.save.*keys must be strings, numbers"):
        ember.save({(1, 2): ember.ones(1)}, p)
    with pytest.raises(TypeError, match="ember.save: obj must be"):
        ember.save(3, p)
    with pytest.raises(TypeError, match="ember.save.*'f'.*function"):
        ember.save({"f": lambda e: e}, p)
    with pytest.raises(ValueError, match="ember.save.*'a.b'"):
        ember.save({"a": {"b": ember.ones(1)}, "a.b": ember.ones(1)}, p)
    with pytest.raises(ValueError, match="reserved"):
        ember.save({"__metadata__": ember.ones(1)}, p)
    with pytest.raises(TypeError, match="metadata"):
        ember.save({"x": ember.ones(1)}, p, metadata={"k": 1})
    with pytest.raises(TypeError, match="dtype object"):
        ember.save({"x": np.array([object()])}, p)
    assert not p.exists()  # nothing is written when the input is bad


def test_bad_save_leaves_existing_file(tmp_path):
    p = tmp_path / "keep.st"
    ember.save({"x": ember.ones(3)}, p)
    before = p.read_bytes()
    with pytest.raises(TypeError):
        ember.save({"x": ember.ones(3), "y": object()}, p)
    assert p.read_bytes() == before


# ---------------------------------------------------------------------------------------------
# malformed files: every one raises ValueError naming the file
# ---------------------------------------------------------------------------------------------


def entry(dtype, shape, begin, end):
    return {"dtype": dtype, "shape": shape, "data_offsets": [begin, end]}


def good_header():
    return {"a": entry("F32", [2], 0, 8), "b": entry("U8", [3], 8, 11)}


MALFORMED = {
    "too short": lambda p: p.write_bytes(b"\x01\x00\x00"),
    "header length huge": lambda p: raw_file(p, good_header(), b"\0" * 11, length=1 << 62),
    "header length over the cap": lambda p: raw_file(
        p, good_header(), b"\0" * 11, length=200_000_000
    ),
    "header longer than file": lambda p: raw_file(p, good_header(), b"", length=5000),
    "truncated data": lambda p: raw_file(p, good_header(), b"\0" * 10),
    "trailing bytes": lambda p: raw_file(p, good_header(), b"\0" * 12),
    "bad json": lambda p: raw_file(p, b'{"a": {"dtype": "F32",', b""),
    "not an object": lambda p: raw_file(p, b"{}[1, 2]", b""),
    "json list": lambda p: raw_file(p, b"[1, 2, 3]", b""),
    "not utf-8": lambda p: raw_file(p, b'{"\xff": 1}', b""),
    "duplicate key": lambda p: raw_file(
        p,
        b'{"a": {"dtype": "U8", "shape": [1], "data_offsets": [0, 1]}, '
        b'"a": {"dtype": "U8", "shape": [1], "data_offsets": [1, 2]}}',
        b"\0\0",
    ),
    "nan constant": lambda p: raw_file(
        p, b'{"a": {"dtype": "U8", "shape": [NaN], "data_offsets": [0, 1]}}', b"\0"
    ),
    "unknown dtype": lambda p: raw_file(p, {"a": entry("F31", [2], 0, 8)}, b"\0" * 8),
    "fp8 dtype": lambda p: raw_file(p, {"a": entry("F8_E4M3", [2], 0, 2)}, b"\0" * 2),
    "dtype not a string": lambda p: raw_file(p, {"a": entry(7, [2], 0, 8)}, b"\0" * 8),
    "negative dim": lambda p: raw_file(p, {"a": entry("U8", [-1], 0, 0)}, b""),
    "float dim": lambda p: raw_file(p, {"a": entry("U8", [1.0], 0, 1)}, b"\0"),
    "bool dim": lambda p: raw_file(p, {"a": entry("U8", [True], 0, 1)}, b"\0"),
    "shape not a list": lambda p: raw_file(p, {"a": entry("U8", 3, 0, 3)}, b"\0" * 3),
    "too many dims": lambda p: raw_file(p, {"a": entry("U8", [1] * 65, 0, 1)}, b"\0"),
    "byte count mismatch": lambda p: raw_file(p, {"a": entry("F32", [3], 0, 8)}, b"\0" * 8),
    "offsets out of range": lambda p: raw_file(p, {"a": entry("F32", [2], 8, 16)}, b"\0" * 8),
    "offsets reversed": lambda p: raw_file(p, {"a": entry("U8", [0], 4, 2)}, b"\0" * 4),
    "negative offset": lambda p: raw_file(p, {"a": entry("U8", [2], -2, 0)}, b""),
    "offsets not a pair": lambda p: raw_file(
        p, {"a": {"dtype": "U8", "shape": [1], "data_offsets": [0]}}, b"\0"
    ),
    "overlapping": lambda p: raw_file(
        p, {"a": entry("F32", [2], 0, 8), "b": entry("F32", [2], 4, 12)}, b"\0" * 12
    ),
    "gap": lambda p: raw_file(
        p, {"a": entry("U8", [2], 0, 2), "b": entry("U8", [2], 4, 6)}, b"\0" * 6
    ),
    "missing key": lambda p: raw_file(p, {"a": {"dtype": "U8", "shape": [1]}}, b"\0"),
    "extra key": lambda p: raw_file(
        p, {"a": {**entry("U8", [1], 0, 1), "code": "import os"}}, b"\0"
    ),
    "entry not an object": lambda p: raw_file(p, {"a": [1, 2]}, b""),
    "metadata not strings": lambda p: raw_file(p, {"__metadata__": {"k": 1}}, b""),
    "metadata not an object": lambda p: raw_file(p, {"__metadata__": "x"}, b""),
    "bool bytes": lambda p: raw_file(p, {"a": entry("BOOL", [2], 0, 2)}, b"\x01\x02"),
    "header not starting with brace": lambda p: raw_file(p, b'  {"a": 1}', b""),
    "tree names missing tensor": lambda p: raw_file(
        p,
        {"__metadata__": {"ember.tree": '{"x": "nope"}'}, "a": entry("U8", [1], 0, 1)},
        b"\0",
    ),
    "tree uses tensor twice": lambda p: raw_file(
        p,
        {"__metadata__": {"ember.tree": '{"x": "a", "y": "a"}'}, "a": entry("U8", [1], 0, 1)},
        b"\0",
    ),
    "tree bad json": lambda p: raw_file(
        p, {"__metadata__": {"ember.tree": "{"}, "a": entry("U8", [1], 0, 1)}, b"\0"
    ),
    "tree leaf not a string": lambda p: raw_file(
        p, {"__metadata__": {"ember.tree": '{"x": 3}'}, "a": entry("U8", [1], 0, 1)}, b"\0"
    ),
}


@pytest.mark.parametrize("case", list(MALFORMED))
def test_malformed_files_raise(tmp_path, case):
    p = tmp_path / "bad.safetensors"
    MALFORMED[case](p)
    with pytest.raises(ValueError, match="ember.load: .*bad.safetensors"):
        ember.load(p)


def test_truncated_copies_of_a_real_file(tmp_path):
    src = tmp_path / "full.st"
    ember.save({"a": ember.ones((4, 4)), "b": {"c": ember.arange(10, dtype=ember.int8)}}, src)
    blob = src.read_bytes()
    cut = tmp_path / "cut.st"
    for n in sorted({0, 4, 8, 9, 20, len(blob) // 2, len(blob) - 1}):
        cut.write_bytes(blob[:n])
        with pytest.raises(ValueError, match="cut.st"):
            ember.load(cut)


def test_huge_shape_of_empty_tensor_is_fine_but_overflow_is_not(tmp_path):
    p = raw_file(tmp_path / "z.st", {"a": entry("F32", [0, 1 << 40], 0, 0)})
    assert ember.load(p, device="cpu")["a"].shape == (0, 1 << 40)
    p = raw_file(tmp_path / "o.st", {"a": entry("F32", [0, 1 << 40, 1 << 40], 0, 0)})
    with pytest.raises(ValueError, match="too many elements"):
        ember.load(p)


def test_foreign_file_loads_flat(tmp_path):
    data = np.arange(6, dtype="<f4").tobytes() + bytes([1, 0])
    p = raw_file(
        tmp_path / "x.st",
        {"w.x": entry("F32", [2, 3], 0, 24), "m": entry("BOOL", [2], 24, 26)},
        data,
        pad=False,
    )
    got = ember.load(p, device="cpu")
    assert set(got) == {"w.x", "m"}
    same(got["w.x"], np.arange(6, dtype=np.float32).reshape(2, 3))
    same(got["m"], np.array([True, False]))


# ---------------------------------------------------------------------------------------------
# interoperability with the safetensors package
# ---------------------------------------------------------------------------------------------

INTEROP = [d for d in SAVABLE if d != "bfloat16"]  # safetensors.numpy has no bfloat16


@pytest.mark.parametrize("dtype", INTEROP)
def test_safetensors_reads_ember_files(tmp_path, dtype):
    st = pytest.importorskip("safetensors.numpy")
    arrays = {"x": sample((3, 4), dtype), "s": sample((), dtype, 1), "e": sample((0,), dtype)}
    ember.save({"group": {k: ember.asarray(v) for k, v in arrays.items()}}, tmp_path / "e.st")
    got = st.load_file(str(tmp_path / "e.st"))
    assert set(got) == {f"group.{k}" for k in arrays}
    for k, v in arrays.items():
        g = got[f"group.{k}"]
        assert g.dtype == v.dtype and g.shape == v.shape
        assert g.tobytes() == v.tobytes()


@pytest.mark.parametrize("dtype", INTEROP)
def test_ember_reads_safetensors_files(tmp_path, dtype):
    st = pytest.importorskip("safetensors.numpy")
    arrays = {"x": sample((2, 5), dtype), "s": sample((), dtype, 1), "e": sample((0, 3), dtype)}
    st.save_file(arrays, str(tmp_path / "s.st"), metadata={"format": "np"})
    got = ember.load(tmp_path / "s.st", device="cpu")
    assert set(got) == set(arrays)
    for k, v in arrays.items():
        same(got[k], v)


def test_safetensors_metadata_and_bfloat16(tmp_path):
    safetensors = pytest.importorskip("safetensors")
    bf = sample((4,), "bfloat16")
    ember.save(
        {"bf": ember.asarray(bf), "f": ember.ones(2)}, tmp_path / "b.st", metadata={"k": "v"}
    )
    with safetensors.safe_open(str(tmp_path / "b.st"), framework="numpy") as f:
        assert f.metadata()["k"] == "v"
        assert set(f.keys()) == {"bf", "f"}
        assert np.array_equal(f.get_tensor("f"), np.ones(2))
    same(ember.load(tmp_path / "b.st")["bf"], bf)


def test_checkpoints_with_python_values_round_trip(tmp_path, device):
    """A training checkpoint: arrays beside an optimizer's state_dict (integer keys, lists,
    tuples, floats, booleans, None), an epoch count, strings; all as JSON, no pickle."""
    from ember import nn

    m = nn.Linear(3, 2).to(device)
    opt = ember.optim.Adam(m.parameters(), lr=1e-3, betas=(0.8, 0.99))
    m(ember.ones((4, 3), device=device)).sum().backward()
    opt.step()
    ck = {
        "model": m.state_dict(),
        "opt": opt.state_dict(),
        "epoch": 3,
        "big": 2**70,
        "floats": [float("nan"), float("inf"), -0.0, 0.1],
        "name": "run-\u00e9",
        "flags": (True, False, None),
        "mixed": {
            1: ember.zeros(2, device=device),
            "a": [ember.ones(1, device=device), {2.5: "x"}],
        },
        "np": np.float32(1.5),
    }
    p = tmp_path / "ck.pt"
    ember.save(ck, p)
    b = ember.load(p, device=device)
    assert b["epoch"] == 3 and b["big"] == 2**70 and b["name"] == "run-\u00e9"
    f = b["floats"]
    assert math.isnan(f[0]) and f[1] == math.inf and math.copysign(1, f[2]) == -1 and f[3] == 0.1
    assert b["flags"] == (True, False, None) and isinstance(b["flags"], tuple)
    assert list(b["mixed"]) == [1, "a"] and b["mixed"]["a"][1] == {2.5: "x"}
    assert b["np"] == 1.5
    assert list(b["opt"]["state"]) == [0, 1]
    g = b["opt"]["param_groups"][0]
    assert g["betas"] == (0.8, 0.99) and g["params"] == [0, 1] and g["lr"] == 1e-3
    opt2 = ember.optim.Adam(m.parameters(), lr=1.0)
    opt2.load_state_dict(b["opt"])
    for k in ("exp_avg", "exp_avg_sq"):
        np.testing.assert_array_equal(
            ember.asnumpy(opt2.state_dict()["state"][0][k]), ember.asnumpy(opt.state[m.weight][k])
        )
    m2 = nn.Linear(3, 2).to(device)
    m2.load_state_dict(b["model"])
    np.testing.assert_array_equal(ember.asnumpy(m2.weight), ember.asnumpy(m.weight))
    # a list at the top, and the file stays a standard safetensors file
    ember.save([ember.ones(2), 5], tmp_path / "l.st")
    top = ember.load(tmp_path / "l.st")
    assert isinstance(top, list) and top[1] == 5


def test_a_forged_tree_is_refused(tmp_path):
    import json
    import struct

    header = {
        "__metadata__": {"ember.tree": json.dumps({"__ember__": "int", "v": 3})},
        "x": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
    }
    raw = json.dumps(header).encode()
    p = tmp_path / "forged.st"
    p.write_bytes(struct.pack("<Q", len(raw)) + raw + b"\0\0\0\0")
    with pytest.raises(ValueError, match="does not describe|misses"):
        ember.load(p)
