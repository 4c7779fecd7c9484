"""A device matcher for the regular expressions ``str.contains`` sees most: alternatives of
fixed-length sequences of atoms (literals, ``.``, ``\\d \\w \\s`` and their negations, ``[...]``
classes), ``^``/``$`` anchors, and quantifiers where a search can drop them (``A+`` -> ``A``,
``A*``/``A?`` -> nothing, at either end of an unanchored side). Each atom is a 256-entry byte
table; a match is the AND of table lookups over shifted byte slices. Classes read bytes, so
they need ASCII text: a column holding other bytes raises NotImplementedError."""

from __future__ import annotations

import numpy as np

import ember as _em

from . import strkernels as K

_DIGIT = np.zeros(256, bool)
_DIGIT[48:58] = True
_SPACE = np.zeros(256, bool)
_SPACE[[9, 10, 11, 12, 13, 32]] = True
_WORD = _DIGIT.copy()
_WORD[65:91] = True
_WORD[97:123] = True
_WORD[95] = True
_ANY = np.ones(256, bool)
_ANY[10] = False
_ESC = {"d": _DIGIT, "s": _SPACE, "w": _WORD}
_SPECIAL_ESC = {"n": 10, "t": 9, "r": 13, "f": 12, "v": 11}


def _unsupported(pat, why):
    return NotImplementedError(
        f"ember.frame.str.contains: the regular expression {pat!r} ({why}); the device matcher "
        "takes literals, '.', \\d \\w \\s, [...] classes, anchors, '|' and end quantifiers"
    )


def _byte(ch, pat):
    b = ch.encode("utf-8")
    if len(b) != 1:
        raise _unsupported(pat, f"non-ASCII {ch!r} in a class")
    return b[0]


def _parse_class(pat, i):
    """[...] starting at pat[i] == '['; returns (table, next index)."""
    j = i + 1
    neg = j < len(pat) and pat[j] == "^"
    if neg:
        j += 1
    table = np.zeros(256, bool)
    first = True
    while j < len(pat) and (pat[j] != "]" or first):
        first = False
        ch = pat[j]
        if ch == "\\" and j + 1 < len(pat):
            e = pat[j + 1]
            if e in _ESC:
                table |= _ESC[e]
            elif e.upper() in _ESC and e.isupper():
                table |= ~_ESC[e.lower()]
            else:
                table[_SPECIAL_ESC.get(e, None) or _byte(e, pat)] = True
            j += 2
            continue
        if j + 2 < len(pat) and pat[j + 1] == "-" and pat[j + 2] != "]":
            lo, hi = _byte(ch, pat), _byte(pat[j + 2], pat)
            if lo > hi:
                raise ValueError(f"ember.frame.str.contains: bad character range in {pat!r}")
            table[lo : hi + 1] = True
            j += 3
            continue
        table[_byte(ch, pat)] = True
        j += 1
    if j >= len(pat):
        raise ValueError(f"ember.frame.str.contains: unterminated character set in {pat!r}")
    return (~table if neg else table), j + 1, True


def _atoms(body, pat):
    """[(table, is_class, quantifier)] for one alternative's body."""
    out = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch == "[":
            table, i, cls = _parse_class(body, i)
            out.append([table, cls, ""])
        elif ch == "\\":
            if i + 1 >= len(body):
                raise ValueError(f"ember.frame.str.contains: bad escape (end of pattern) {pat!r}")
            e = body[i + 1]
            if e in _ESC:
                out.append([_ESC[e], True, ""])
            elif e.lower() in _ESC:
                out.append([~_ESC[e.lower()], True, ""])
            elif e.isalnum() and e not in _SPECIAL_ESC:
                raise _unsupported(pat, f"escape \\{e}")
            else:
                t = np.zeros(256, bool)
                t[_SPECIAL_ESC.get(e) or _byte(e, pat)] = True
                out.append([t, False, ""])
            i += 2
        elif ch == ".":
            out.append([_ANY, True, ""])
            i += 1
        elif ch in "+*?":
            if not out or out[-1][2]:
                raise _unsupported(pat, "a quantifier without an atom")
            out[-1][2] = ch
            i += 1
        elif ch in "(){}":
            raise _unsupported(pat, f"{ch!r}")
        else:
            for b in ch.encode("utf-8"):
                t = np.zeros(256, bool)
                t[b] = True
                out.append([t, False, ""])
            i += 1
    return out


def parse(pat):
    """Alternatives as (anchored_start, [byte tables], anchored_end, uses_classes)."""
    alts = []
    for alt in pat.split("|"):
        a0 = alt.startswith("^")
        a1 = alt.endswith("$") and not alt.endswith("\\$")
        body = alt[1 if a0 else 0 : len(alt) - (1 if a1 else 0)]
        atoms = _atoms(body, pat)
        # drop quantifiers a search does not need
        if atoms and not a1:
            q = atoms[-1][2]
            if q in "*?" and q:
                atoms.pop()
            elif q == "+":
                atoms[-1][2] = ""
        if atoms and not a0:
            q = atoms[0][2]
            if q in "*?" and q:
                atoms.pop(0)
            elif q == "+":
                atoms[0][2] = ""
        if a0 and a1 and len(atoms) == 1 and atoms[0][2] in ("+", "*"):
            # ^A+$ / ^A*$: every byte of the row is in A (and, for +, the row is not empty)
            alts.append((a0, atoms[0][0], atoms[0][2], atoms[0][1]))
            continue
        if any(a[2] for a in atoms):
            raise _unsupported(pat, "a quantifier inside the pattern")
        alts.append((a0, [a[0] for a in atoms], a1, any(a[1] for a in atoms)))
    return alts


def contains(col, pat):
    """bool per row: does the regex ``pat`` match somewhere in the row?"""
    alts = parse(pat)
    n = len(col)
    dev = col.device
    if any(a[3] for a in alts) and col.chars.shape[0]:
        if bool(_em.any(col.chars >= np.uint8(128))):  # host read: is the text ASCII?
            raise NotImplementedError(
                f"ember.frame.str.contains: character classes in {pat!r} on non-ASCII text"
            )
    out = _em.zeros(n, dtype=_em.bool, device=dev)
    for a0, tables, a1, _ in alts:
        out = out | _one(col, tables, a0, a1)
    return out


def _whole_row(col, table, quant):
    dev = col.device
    lens = K.lens(col)
    if col.chars.shape[0] == 0:
        return lens < 0 if quant == "+" else lens == 0
    hit = _em.take(_em.asarray(table, device=dev), col.chars.astype(_em.int64))
    good = K.row_sums(col, ~hit) == 0
    return good & (lens > 0) if quant == "+" else good


def _one(col, tables, a0, a1):
    if isinstance(a1, str):  # (anchored, table, quantifier) from ^A+$ / ^A*$
        return _whole_row(col, tables, a1)
    n = len(col)
    dev = col.device
    m = len(tables)
    lens = K.lens(col)
    nb = col.chars.shape[0]
    if m == 0:
        return (lens == 0) if (a0 and a1) else _em.ones(n, dtype=_em.bool, device=dev)
    if nb == 0:
        return _em.zeros(n, dtype=_em.bool, device=dev)
    padded = _em.concatenate([col.chars, _em.zeros(m, dtype=_em.uint8, device=dev)])
    ok = None
    for k, t in enumerate(tables):
        hit = _em.take(_em.asarray(t, device=dev), padded[k : k + nb].astype(_em.int64))
        ok = hit if ok is None else ok & hit
    bound = _em.concatenate(
        [_em.zeros(nb, dtype=_em.bool, device=dev), _em.ones(m, dtype=_em.bool, device=dev)]
    )
    inner = col.offsets[1:-1]
    if inner.shape[0]:
        bound[inner] = _em.ones(inner.shape[0], dtype=_em.bool, device=dev)
    for k in range(1, m):
        ok = ok & ~bound[k : k + nb]
    if a0 or a1:
        start = col.offsets[:-1] if a0 else col.offsets[1:] - m
        at = _em.take(ok, _em.clip(start, 0, nb - 1))
        good = at & (lens >= m)
        if a0 and a1:
            good = good & (lens == m)
        return good
    return K.row_sums(col, ok) > 0
