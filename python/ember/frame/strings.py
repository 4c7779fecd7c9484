"""The ``.str`` accessor (pandas 3 "str" dtype semantics), computed on the device."""

from __future__ import annotations

import re

import numpy as np

import ember as _em

from . import dtypes as _dt
from . import strkernels as K
from .column import Column

_META = set(".^$*+?{}[]\\|()")


def cat_columns(parts):
    return K.concat_rows(parts, parts[0].device)


def _literal_alternatives(pat):
    """A regex made only of literals, anchors and top-level '|': [(anchor_start, lit, end)]."""
    out = []
    for alt in pat.split("|"):
        a0 = alt.startswith("^")
        a1 = alt.endswith("$") and not alt.endswith("\\$")
        body = alt[1 if a0 else 0 : len(alt) - (1 if a1 else 0)]
        if re.search(r"\\[A-Za-z0-9]", body):
            return None  # \d, \w, ... are classes, not literals
        lit = re.sub(r"\\(.)", r"\1", body)
        if any(ch in _META for ch in re.sub(r"\\.", "", body)):
            return None
        out.append((a0, lit, a1))
    return out


def _split_list(col, field, covered, nfields, valid):
    """The fields of every row as a list column (its child: all fields, row by row)."""
    from .lists import from_parts

    dev = col.device
    counts = _em.where(valid, nfields, 0)
    zero = _em.zeros(1, dtype=_em.int64, device=dev)
    first_elem = _em.concatenate([zero, _em.cumsum(counts)])
    nelem = int(first_elem[-1]) if len(col) else 0  # host read: number of fields in all
    if field is None:
        child_lens = _em.zeros(nelem, dtype=_em.int64, device=dev)
        chars = col.chars
    else:
        rows = K.byte_rows(col)
        keep = ~covered & _em.take(valid, rows)
        elem = _em.take(first_elem, rows) + field
        kept = _em.nonzero(keep)[0]
        child_lens = _em.bincount(_em.take(elem, kept), minlength=nelem).astype(_em.int64)
        chars = _em.take(col.chars, kept)
    child = Column(_dt.STRING, offsets=_em.concatenate([zero, _em.cumsum(child_lens)]), chars=chars)
    return from_parts(child, counts, col.mask)


class StringMethods:
    def __getattr__(self, name):
        # a pandas .str method this accessor lacks: NotImplementedError naming it
        if name.startswith("_"):
            raise AttributeError(name)
        import pandas as pd

        from .frame_base import UnsupportedError

        if hasattr(pd.Series.str, name):
            raise UnsupportedError(
                f"ember.frame.Series.str.{name} is not implemented (pandas' "
                f"Series.str.{name} has no device version here)"
            )
        raise AttributeError(f"'StringMethods' object has no attribute '{name}'")

    def __init__(self, series):
        if series._col.kind == "list":
            self._s = series
            self._c = series._col
            return
        if series._col.kind != "str" and not (
            series._col.kind == "cat" and series._col.categories.kind == "str"
        ):
            raise AttributeError("Can only use .str accessor with string values!")
        self._s = series
        col = series._col
        if col.kind == "cat":
            from .cast import astype

            col = astype(col, _dt.STRING)
        self._c = col

    # ---- wrapping ----------------------------------------------------------------------------
    def _str(self, col):
        return self._s._with(col)

    def _bool(self, data, na=False):
        """pandas 3 "str" dtype: predicates read False (na=) on missing strings."""
        valid = self._c.valid()
        if na is None or (isinstance(na, float) and np.isnan(na)):
            out = Column(np.dtype(bool), data, valid if self._c.mask is not None else None)
            return self._s._with(out)
        return self._s._with(Column(np.dtype(bool), _em.where(valid, data, bool(na))))

    def _num(self, data):
        """Integer results become float64 with NaN where the string is missing (pandas 3)."""
        if self._c.mask is not None and self._c.has_nulls():
            out = _em.where(self._c.valid(), data.astype(_em.float64), np.nan)
            return self._s._with(Column(np.dtype("float64"), out))
        return self._s._with(Column(np.dtype("int64"), data.astype(_em.int64)))

    # ---- methods -----------------------------------------------------------------------------
    def len(self):
        if self._c.kind == "list":
            from .lists import length

            return self._s._with(length(self._c))
        return self._num(K.char_len(self._c))

    def lower(self):
        return self._str(K.map_case(self._c, upper=False))

    def upper(self):
        return self._str(K.map_case(self._c, upper=True))

    def strip(self, to_strip=None):
        return self._str(K.strip(self._c, to_strip))

    def lstrip(self, to_strip=None):
        return self._str(K.strip(self._c, to_strip, right=False))

    def rstrip(self, to_strip=None):
        return self._str(K.strip(self._c, to_strip, left=False))

    def slice(self, start=None, stop=None, step=None):
        if step not in (None, 1):
            raise NotImplementedError("ember.frame.str.slice: step other than 1")
        return self._str(K.slice_chars(self._c, start, stop))

    def __getitem__(self, key):
        if isinstance(key, slice):
            return self.slice(key.start, key.stop, key.step)
        return self.get(key)

    def get(self, i):
        if not isinstance(i, (int, np.integer)):
            raise TypeError(f"ember.frame.str.get: expected an integer position, got {i!r}")
        if self._c.kind == "list":
            from .lists import get

            return self._s._with(get(self._c, int(i)))
        stop = i + 1 if i != -1 else None
        out = K.slice_chars(self._c, i, stop)
        empty = K.lens(out) == 0
        valid = self._c.valid() & ~empty
        return self._str(out.with_mask(valid))

    def startswith(self, pat, na=False):
        pats = [pat] if isinstance(pat, str) else list(pat) if isinstance(pat, tuple) else None
        if pats is None:
            raise TypeError(
                f"ember.frame.str.startswith: expected a string or tuple, not {type(pat).__name__}"
            )
        out = None
        for p in pats:
            r = K.startswith(self._c, K._pat_bytes(p, "startswith"))
            out = r if out is None else out | r
        return self._bool(out, na)

    def endswith(self, pat, na=False):
        pats = [pat] if isinstance(pat, str) else list(pat) if isinstance(pat, tuple) else None
        if pats is None:
            raise TypeError(
                f"ember.frame.str.endswith: expected a string or tuple, not {type(pat).__name__}"
            )
        out = None
        for p in pats:
            r = K.endswith(self._c, K._pat_bytes(p, "endswith"))
            out = r if out is None else out | r
        return self._bool(out, na)

    def contains(self, pat, case=True, flags=0, na=False, regex=True):
        if flags:
            raise NotImplementedError("ember.frame.str.contains: flags=")
        col = self._c if case else K.map_case(self._c, upper=False)
        if not case:
            pat = pat.lower()
        if not regex or not (set(pat) & _META):
            return self._bool(K.contains(col, K._pat_bytes(pat, "contains")), na)
        alts = _literal_alternatives(pat)
        if alts is None:
            from .regex import contains as regex_contains

            return self._bool(regex_contains(col, pat), na)
        out = None
        for a0, lit, a1 in alts:
            b = K._pat_bytes(lit, "contains")
            if a0 and a1:
                r = K.equals(col, b)
            elif a0:
                r = K.startswith(col, b)
            elif a1:
                r = K.endswith(col, b)
            else:
                r = K.contains(col, b)
            out = r if out is None else out | r
        return self._bool(out, na)

    def match(self, pat, case=True, na=False):
        return self.contains("^" + pat if not pat.startswith("^") else pat, case=case, na=na)

    def fullmatch(self, pat, case=True, na=False):
        p = pat if pat.startswith("^") else "^" + pat
        p = p if p.endswith("$") else p + "$"
        return self.contains(p, case=case, na=na)

    def count(self, pat):
        if set(pat) & _META:
            raise NotImplementedError(f"ember.frame.str.count: the regular expression {pat!r}")
        b = K._pat_bytes(pat, "count")
        if self._c.chars.shape[0] == 0 or b.shape[0] == 0:
            return self._num(K.char_len(self._c) + (1 if b.shape[0] == 0 else 0))
        return self._num(K.row_sums(self._c, K.match_starts(self._c, b)))

    def replace(self, pat, repl, n=-1, case=None, flags=0, regex=False):
        if regex and set(pat) & _META:
            raise NotImplementedError(
                f"ember.frame.str.replace: the regular expression {pat!r}"
                " (pass regex=False for a literal pattern)"
            )
        if callable(repl):
            raise NotImplementedError("ember.frame.str.replace: a callable repl")
        return self._str(
            K.replace(self._c, K._pat_bytes(pat, "replace"), K._pat_bytes(repl, "replace"), n)
        )

    def split(self, pat=None, n=-1, expand=False, regex=None):
        from .dataframe import DataFrame

        if pat is None:
            pat = " "
        if regex and set(pat) & _META:
            raise NotImplementedError(f"ember.frame.str.split: the regular expression {pat!r}")
        col = self._c
        b = K._pat_bytes(pat, "split")
        if b.shape[0] == 0:
            raise ValueError("ember.frame.str.split: empty separator")
        field, covered, nfields = K.split_fields(col, b, n)
        valid = col.valid()
        if not expand:
            return self._s._with(_split_list(col, field, covered, nfields, valid))
        width = int(_em.max(_em.where(valid, nfields, 0))) if len(col) else 0  # host read
        width = max(width, 1) if len(col) else 0
        cols = {}
        for k in range(width):
            if field is None:
                part = col
            else:
                part = K.keep_bytes(col, (field == k) & ~covered)
            has = valid & (nfields > k)
            cols[k] = part.with_mask(has)
        return DataFrame._from_columns(cols, self._s.index)

    def cat(self, others=None, sep=None, na_rep=None):
        from .series import Series

        sep = sep or ""
        if others is None:
            col = self._c
            keep = col.valid()
            vals = col.filter(keep) if na_rep is None else col
            if sep == "":
                return bytes(_em.asnumpy(vals.chars)).decode("utf-8")
            parts = vals.to_pandas()
            return sep.join(str(p) if p == p else na_rep for p in parts)
        items = others if isinstance(others, list) else [others]
        parts = [self._c]
        for o in items:
            oc = (
                o._col
                if isinstance(o, Series)
                else Column.from_scalar(str(o), len(self._c), self._c.device)
            )
            if oc.kind != "str":
                raise TypeError("ember.frame.str.cat: others must be string Series")
            if sep:
                parts.append(Column.from_scalar(sep, len(self._c), self._c.device))
            parts.append(oc)
        if na_rep is not None:
            from .missing import fillna

            parts = [fillna(p, na_rep) for p in parts]
        return self._str(cat_columns(parts))

    def zfill(self, width):
        col = self._c
        dev = col.device
        nch = K.char_len(col)
        first = K.slice_chars(col, 0, 1)
        signed = K.equals(first, np.frombuffer(b"-", np.uint8)) | K.equals(
            first, np.frombuffer(b"+", np.uint8)
        )
        pad = _em.clip(width - nch, 0, None)
        zeros = K.repeat_byte(48, pad, dev)
        sign = first.with_mask(None)
        sign = (
            K.keep_bytes(sign, _em.take(signed, K.byte_rows(sign))) if sign.chars.shape[0] else sign
        )
        rest = K.slice_chars(col, 0, None)
        if rest.chars.shape[0]:
            idx, _, rows = K.char_index(rest)
            rest = K.keep_bytes(rest, ~(_em.take(signed, rows) & (idx == 0)))
        out = cat_columns([sign, zeros, rest.with_mask(None)])
        return self._str(out.with_mask(col.mask))

    def pad(self, width, side="left", fillchar=" "):
        if len(fillchar) != 1 or ord(fillchar) > 127:
            raise TypeError("ember.frame.str.pad: fillchar must be one ASCII character")
        col = self._c
        dev = col.device
        pad = _em.clip(width - K.char_len(col), 0, None)
        fill = K.repeat_byte(ord(fillchar), pad, dev)
        body = col.with_mask(None)
        parts = [fill, body] if side == "left" else [body, fill]
        return self._str(cat_columns(parts).with_mask(col.mask))

    def isdigit(self):
        c = self._c
        if c.chars.shape[0] == 0:
            return self._bool(_em.zeros(len(c), dtype=_em.bool, device=c.device))
        nd = (c.chars < np.uint8(48)) | (c.chars > np.uint8(57))
        return self._bool((K.row_sums(c, nd) == 0) & (K.lens(c) > 0))

    isnumeric = isdigit
    isdecimal = isdigit

    def isalpha(self):
        c = self._c
        if c.chars.shape[0] == 0:
            return self._bool(_em.zeros(len(c), dtype=_em.bool, device=c.device))
        ch = c.chars | np.uint8(32)
        bad = (ch < np.uint8(97)) | (ch > np.uint8(122))
        return self._bool((K.row_sums(c, bad) == 0) & (K.lens(c) > 0))

    def isupper(self):
        return self._cased(True)

    def islower(self):
        return self._cased(False)

    def _cased(self, upper):
        c = self._c
        if c.chars.shape[0] == 0:
            return self._bool(_em.zeros(len(c), dtype=_em.bool, device=c.device))
        lo, hi = (97, 122) if upper else (65, 90)
        wrong = (c.chars >= np.uint8(lo)) & (c.chars <= np.uint8(hi))
        a, z = (65, 90) if upper else (97, 122)
        cased = (c.chars >= np.uint8(a)) & (c.chars <= np.uint8(z))
        return self._bool((K.row_sums(c, wrong) == 0) & (K.row_sums(c, cased) > 0))
