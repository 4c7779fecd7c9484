"""ember.save_safetensors / ember.load_safetensors: dicts of arrays in the safetensors file
format, read and written here (``ember.save(obj, path)`` and ``ember.load`` come here too, see
_npyio).

A file is an 8-byte little-endian header length N, N bytes of UTF-8 JSON (padded with spaces)
mapping each tensor name to ``{"dtype", "shape", "data_offsets": [begin, end]}`` (offsets into
the data section that follows) plus an optional ``"__metadata__"`` object of strings, then the
raw little-endian bytes. Loading validates the whole header before it allocates anything, and
never runs code from the file.
"""

from __future__ import annotations

import builtins
import json
import math
import os
import sys
from collections.abc import Mapping

import numpy as _np

from ._array import asarray, asnumpy
from ._core import ndarray

__all__ = ["load_safetensors", "save_safetensors"]

#: headers longer than this are refused (the safetensors library's own limit)
MAX_HEADER_BYTES = 100_000_000
#: the ``__metadata__`` key under which ember records how nested dicts were flattened
TREE_KEY = "ember.tree"
#: the tensor name of a single array saved on its own
ARRAY_NAME = "array"

# ember dtype name -> (safetensors code, NumPy dtype)
_DTYPES = {
    "bool": ("BOOL", _np.dtype(_np.bool_)),
    "uint8": ("U8", _np.dtype("<u1")),
    "int8": ("I8", _np.dtype("<i1")),
    "uint16": ("U16", _np.dtype("<u2")),
    "int16": ("I16", _np.dtype("<i2")),
    "float16": ("F16", _np.dtype("<f2")),
    "bfloat16": ("BF16", None),  # ml_dtypes.bfloat16, looked up when needed
    "uint32": ("U32", _np.dtype("<u4")),
    "int32": ("I32", _np.dtype("<i4")),
    "float32": ("F32", _np.dtype("<f4")),
    "uint64": ("U64", _np.dtype("<u8")),
    "int64": ("I64", _np.dtype("<i8")),
    "float64": ("F64", _np.dtype("<f8")),
    "complex64": ("C64", _np.dtype("<c8")),
}
_BY_CODE = {code: name for name, (code, _) in _DTYPES.items()}
_ITEMSIZE = {
    "BOOL": 1,
    "U8": 1,
    "I8": 1,
    "U16": 2,
    "I16": 2,
    "F16": 2,
    "BF16": 2,
    "U32": 4,
    "I32": 4,
    "F32": 4,
    "U64": 8,
    "I64": 8,
    "F64": 8,
    "C64": 8,
}
# safetensors dtypes that ember has no dtype for
_FOREIGN = {"F8_E4M3", "F8_E5M2", "F8_E8M0", "F6_E2M3", "F6_E3M2", "F4", "E8M0"}
_INT64_MAX = (1 << 63) - 1


def _np_dtype(name):
    dt = _DTYPES[name][1]
    if dt is None:
        import ml_dtypes

        dt = _np.dtype(ml_dtypes.bfloat16)
    return dt


def _dtype_name(x):
    if isinstance(x, ndarray):
        return x.dtype.name
    dt = x.dtype
    if dt.name == "bfloat16" and dt.kind == "V" and dt.itemsize == 2:
        return "bfloat16"
    if dt.kind not in "biufc":
        return str(dt)
    return _np.dtype(dt).newbyteorder("=").name


def _flatten(obj, who):
    """(names -> arrays in insertion order, the tree of nested names)."""
    flat = {}

    def leaf(x, name, where):
        dname = _dtype_name(x)
        if dname not in _DTYPES:
            raise TypeError(
                f"{who}: {where} has dtype {dname}, which the safetensors format cannot store "
                f"(supported: {', '.join(_DTYPES)})"
            )
        if name in flat:
            raise ValueError(
                f"{who}: two entries flatten to the tensor name {name!r}; rename one of them"
            )
        if name == "__metadata__":
            raise ValueError(f"{who}: the tensor name '__metadata__' is reserved by the format")
        flat[name] = x
        return name

    def sub(prefix, k):
        return str(k) if prefix is None else f"{prefix}.{k}"

    def walk(node, prefix):
        if isinstance(node, Mapping):
            plain = _MARK not in node and all(isinstance(k, str) for k in node)
            if plain:  # the original layout: {key: subtree}
                return {k: walk(v, sub(prefix, k)) for k, v in node.items()}
            items = []
            for k, v in node.items():
                kn = _scalar_node(k)
                if kn is None:
                    raise TypeError(
                        f"{who}: dict keys must be strings, numbers, booleans or None, got "
                        f"{type(k).__name__} {k!r}" + (f" under {prefix!r}" if prefix else "")
                    )
                items.append([kn, walk(v, sub(prefix, k))])
            return {_MARK: "dict", "items": items}
        if isinstance(node, (ndarray, _np.ndarray)):
            if prefix is None:
                return leaf(node, ARRAY_NAME, "the array")
            return leaf(node, prefix, f"entry {prefix!r}")
        if isinstance(node, (list, tuple)):
            kind = "tuple" if isinstance(node, tuple) else "list"
            return {_MARK: kind, "items": [walk(v, sub(prefix, i)) for i, v in enumerate(node)]}
        sn = _scalar_node(node)
        if sn is not None:
            return sn
        where = "obj" if prefix is None else f"entry {prefix!r}"
        raise TypeError(
            f"{who}: {where} is a {type(node).__name__}; only arrays, dicts, lists, tuples, "
            "numbers, strings, booleans and None can be saved (ember.save writes no pickle)"
        )

    return flat, walk(obj, None)


_MARK = "__ember__"  # a tree node that is not a tensor name nor a dict of str keys


def _scalar_node(x):
    """The tree node of a Python (or NumPy) scalar, string or None; None for anything else."""
    if isinstance(x, _np.generic) and x.dtype.kind in "biuf":
        x = x.item()
    if x is None:
        return {_MARK: "none"}
    if isinstance(x, bool):
        return {_MARK: "bool", "v": x}
    if isinstance(x, int):
        return {_MARK: "int", "v": str(x)}
    if isinstance(x, float):
        return {_MARK: "float", "v": repr(x)}  # a string: nan and inf survive strict JSON
    if isinstance(x, str):
        return {_MARK: "str", "v": x}
    return None


def _decode_scalar(node):
    kind = node[_MARK]
    if kind == "none":
        return None
    v = node["v"]
    if kind == "bool" and isinstance(v, bool):
        return v
    if kind == "int" and isinstance(v, str):
        return int(v)
    if kind == "float" and isinstance(v, str):
        return float(v)
    if kind == "str" and isinstance(v, str):
        return v
    raise ValueError


def _host_bytes(x):
    """The array's bytes, C-ordered and little-endian, as a uint8 NumPy array."""
    a = asnumpy(x) if isinstance(x, ndarray) else x
    a = _np.ascontiguousarray(a)
    big = a.dtype.byteorder == ">" or (a.dtype.byteorder == "=" and sys.byteorder == "big")
    if a.dtype.kind in "iufc" and big:
        a = a.astype(a.dtype.newbyteorder("<"))
    return a.reshape(-1).view(_np.uint8)


def save_safetensors(obj, path, *, metadata=None):
    """Writes `obj` to `path` in the safetensors format (``ember.save(obj, path)`` too).

    `obj` is a dict of arrays (ember or NumPy), possibly nested: nested keys are joined with
    ``"."`` into tensor names (``{"fc": {"weight": w}}`` is stored as ``"fc.weight"``) and the
    nesting is recorded in the metadata so that ``ember.load`` rebuilds the same dicts, in the
    same order (a flat dict whose keys contain dots comes back unchanged). A single array is
    stored as the tensor ``"array"``. What a training checkpoint holds besides arrays is kept
    in that metadata too, as JSON, never as a pickle: lists, tuples, Python numbers (floats
    exactly, nan and inf included), booleans, strings, None, and dict keys of those kinds
    (an optimizer's ``state_dict()`` with its integer keys, an epoch count). `metadata` is an
    optional dict of strings stored in the header's ``"__metadata__"``.

    Dtypes: bool, int8-64, uint8-64, float16, bfloat16, float32, float64 and complex64
    (complex128 has no safetensors name and raises TypeError). Arrays on a GPU are copied to the
    host one at a time. The file other tools write and read is standard (``safetensors``'
    ``load_file`` reads it).
    """
    _save(obj, path, metadata, "ember.save_safetensors")


def _save(obj, path, metadata, who):
    if not isinstance(obj, (Mapping, ndarray, _np.ndarray, list, tuple)):
        raise TypeError(
            f"{who}: obj must be a dict (nested dicts, lists, tuples, numbers, strings and None "
            f"inside), a list or tuple, or an array; got {type(obj).__name__}"
        )
    meta = {}
    if metadata is not None:
        if not isinstance(metadata, Mapping):
            raise TypeError(f"{who}: metadata must be a dict of strings, got {metadata!r}")
        for k, v in metadata.items():
            if not isinstance(k, str) or not isinstance(v, str):
                raise TypeError(f"{who}: metadata must map strings to strings, got {k!r}: {v!r}")
            if k == TREE_KEY:
                raise ValueError(f"{who}: the metadata key {TREE_KEY!r} is reserved by ember")
            meta[k] = v
    flat, tree = _flatten(obj, who)
    meta[TREE_KEY] = json.dumps(tree, ensure_ascii=False, separators=(",", ":"))

    # widest dtypes first: with the header padded to 8 bytes every tensor starts aligned
    order = sorted(flat, key=lambda n: -_ITEMSIZE[_DTYPES[_dtype_name(flat[n])][0]])
    header = {"__metadata__": meta}
    offset = 0
    for name in order:
        x = flat[name]
        code = _DTYPES[_dtype_name(x)][0]
        nbytes = math.prod(x.shape) * _ITEMSIZE[code]
        header[name] = {
            "dtype": code,
            "shape": [int(s) for s in x.shape],
            "data_offsets": [offset, offset + nbytes],
        }
        offset += nbytes
    text = json.dumps(header, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    text += b" " * (-len(text) % 8)
    p = os.fspath(path)
    with open(p, "wb") as f:
        f.write(len(text).to_bytes(8, "little"))
        f.write(text)
        for name in order:
            f.write(_host_bytes(flat[name]).data)


def _reject_duplicates(pairs):
    out = {}
    for k, v in pairs:
        if k in out:
            raise ValueError(f"the key {k!r} appears twice")
        out[k] = v
    return out


def _reject_constant(c):
    raise ValueError(f"{c} is not valid JSON")


def _is_int(v):
    return isinstance(v, int) and not isinstance(v, builtins.bool)


def _parse_header(raw, where):
    """The validated header: ({name: (ember dtype name, shape, begin, end)}, metadata)."""
    if not raw.startswith(b"{"):
        raise ValueError(f"{where}: the JSON header does not start with '{{'")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(f"{where}: the header is not valid UTF-8 ({e})") from None
    try:
        header = json.loads(
            text, object_pairs_hook=_reject_duplicates, parse_constant=_reject_constant
        )
    except (ValueError, RecursionError) as e:
        raise ValueError(f"{where}: the header is not valid JSON: {e}") from None
    if not isinstance(header, dict):
        raise ValueError(f"{where}: the header is not a JSON object")
    meta = header.pop("__metadata__", None)
    if meta is None:
        meta = {}
    if not isinstance(meta, dict) or not all(isinstance(v, str) for v in meta.values()):
        raise ValueError(f"{where}: '__metadata__' must be an object of strings")
    entries = {}
    for name, info in header.items():
        what = f"{where}: tensor {name!r}"
        if not isinstance(info, dict) or set(info) != {"dtype", "shape", "data_offsets"}:
            raise ValueError(
                f"{what}: the entry must have exactly the keys dtype, shape and data_offsets"
            )
        code, shape, offsets = info["dtype"], info["shape"], info["data_offsets"]
        if not isinstance(code, str) or code not in _ITEMSIZE:
            if isinstance(code, str) and code in _FOREIGN:
                raise ValueError(f"{what}: dtype {code} is not supported by ember")
            raise ValueError(f"{what}: unknown dtype {code!r}")
        if isinstance(shape, list) and len(shape) > 64:
            raise ValueError(f"{what}: shape has {len(shape)} dimensions; at most 64 are allowed")
        if not isinstance(shape, list) or not all(
            _is_int(s) and 0 <= s <= _INT64_MAX for s in shape
        ):
            raise ValueError(f"{what}: shape must be a list of non-negative ints, got {shape!r}")
        if math.prod(s for s in shape if s) > _INT64_MAX:
            raise ValueError(f"{what}: shape {shape} has too many elements")
        if not (isinstance(offsets, list) and len(offsets) == 2 and all(map(_is_int, offsets))):
            raise ValueError(f"{what}: data_offsets must be [begin, end], got {offsets!r}")
        begin, end = offsets
        if not 0 <= begin <= end:
            raise ValueError(f"{what}: data_offsets {offsets} are not 0 <= begin <= end")
        nbytes = math.prod(shape) * _ITEMSIZE[code]
        if end - begin != nbytes:
            raise ValueError(
                f"{what}: data_offsets {offsets} hold {end - begin} bytes, but shape {shape} of "
                f"{code} needs {nbytes}"
            )
        entries[name] = (_BY_CODE[code], tuple(shape), begin, end)
    return entries, meta


def _check_layout(entries, data_len, where):
    """The tensors must tile the data section exactly: no overlap, no gap, nothing after."""
    pos, prev = 0, None
    for name, (_, _, begin, end) in sorted(entries.items(), key=lambda e: (e[1][2], e[1][3])):
        if end > data_len:
            raise ValueError(
                f"{where}: tensor {name!r} ends at byte {end} of the data section, which has "
                f"only {data_len} bytes (the file is truncated or the offsets are wrong)"
            )
        if begin < pos:
            raise ValueError(f"{where}: tensors {prev!r} and {name!r} overlap")
        if begin > pos:
            raise ValueError(
                f"{where}: bytes {pos}..{begin} of the data section belong to no tensor"
            )
        pos, prev = end, name
    if pos != data_len:
        raise ValueError(
            f"{where}: the data section has {data_len} bytes but the tensors cover only {pos}"
        )


def _check_tree(tree, names, where):
    """The recorded nesting must use every tensor name exactly once."""
    seen = set()

    def walk(node):
        if isinstance(node, str):
            if node not in names or node in seen:
                raise ValueError
            seen.add(node)
        elif isinstance(node, dict) and _MARK in node:
            kind = node[_MARK]
            if kind in ("list", "tuple"):
                for v in node["items"]:
                    walk(v)
            elif kind == "dict":
                for pair in node["items"]:
                    if not isinstance(pair, list) or len(pair) != 2:
                        raise ValueError
                    _decode_scalar(pair[0])
                    walk(pair[1])
            else:
                _decode_scalar(node)
        elif isinstance(node, dict):
            for v in node.values():
                walk(v)
        else:
            raise ValueError

    try:
        walk(tree)
    except (ValueError, RecursionError, KeyError, TypeError):
        raise ValueError(
            f"{where}: the metadata {TREE_KEY!r} does not describe the file's tensors"
        ) from None
    if seen != names:
        raise ValueError(f"{where}: the metadata {TREE_KEY!r} misses some of the file's tensors")


def _read_tensor(f, base, name, entry, where):
    dname, shape, begin, end = entry
    buf = _np.empty(end - begin, dtype=_np.uint8)
    f.seek(base + begin)
    if f.readinto(buf) != end - begin:
        raise ValueError(f"{where}: the file ended while reading its data (it changed?)")
    if dname == "bool":
        if buf.size and buf.max() > 1:
            raise ValueError(f"{where}: tensor {name!r} (BOOL) holds bytes other than 0 and 1")
    dt = _np_dtype(dname)
    if sys.byteorder == "big" and dt.itemsize > 1:
        buf = buf.reshape(-1, dt.itemsize)[:, ::-1].copy().reshape(-1)
    return buf.view(dt).reshape(shape)


def load_safetensors(path, *, device=None):
    """Reads a safetensors file written by ``ember.save_safetensors`` (or ``ember.save(obj,
    path)``) or by any other tool (``ember.load`` recognizes such files too).

    Returns what was saved: the same nested dicts (or the single array) for ember's files, a
    flat dict of tensor name to array for other files. Arrays land on `device` (None: the
    default device, as ``ember.asarray``). The file is checked completely before any array is
    made: header size, JSON, dtypes, shapes and byte ranges, which must tile the data section
    exactly. Any problem raises ValueError naming the file.
    """
    return _load(path, device, "ember.load_safetensors")


def _load(path, device, who):
    p = os.fspath(path)
    where = f"{who}: {p!r}"
    with open(p, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size < 8:
            raise ValueError(
                f"{where} is not a safetensors file: it has {size} bytes, fewer than the "
                "8-byte header length"
            )
        n = int.from_bytes(f.read(8), "little")
        if n > MAX_HEADER_BYTES:
            raise ValueError(
                f"{where}: the header length {n} exceeds the limit of {MAX_HEADER_BYTES} bytes"
            )
        if n > size - 8:
            raise ValueError(
                f"{where}: the header length {n} is more than the {size - 8} bytes that follow "
                "it (truncated file?)"
            )
        if n < 2:
            raise ValueError(f"{where}: the header length {n} is too small for a JSON object")
        raw = f.read(n)
        if len(raw) != n:
            raise ValueError(f"{where}: the file ended inside the header")
        entries, meta = _parse_header(raw, where)
        _check_layout(entries, size - 8 - n, where)
        tree = None
        if TREE_KEY in meta:
            try:
                tree = json.loads(meta[TREE_KEY], object_pairs_hook=_reject_duplicates)
            except (ValueError, RecursionError):
                raise ValueError(f"{where}: the metadata {TREE_KEY!r} is not valid JSON") from None
            _check_tree(tree, set(entries), where)
        # everything is checked: now read
        host = {name: _read_tensor(f, 8 + n, name, e, where) for name, e in entries.items()}
    arrays = {}
    for name in list(host):
        arrays[name] = asarray(host.pop(name), device=device)
    if tree is None:
        return arrays

    def build(node):
        if isinstance(node, str):
            return arrays[node]
        if _MARK in node:
            kind = node[_MARK]
            if kind == "list":
                return [build(v) for v in node["items"]]
            if kind == "tuple":
                return tuple(build(v) for v in node["items"])
            if kind == "dict":
                return {_decode_scalar(k): build(v) for k, v in node["items"]}
            return _decode_scalar(node)
        return {k: build(v) for k, v in node.items()}

    return build(tree)
