"""The results as a text table, a JSON file and a bar chart of ratios."""

from __future__ import annotations

import json
import math


def fmt_time(s: float | None) -> str:
    if s is None:
        return "-"
    if s < 1e-3:
        return f"{s * 1e6:.3g} µs"
    if s < 1:
        return f"{s * 1e3:.3g} ms"
    return f"{s:.3g} s"


def fmt_bytes(n: float) -> str:
    sign = "-" if n < 0 else ""
    n = abs(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{sign}{n:.1f} {unit}" if unit != "B" else f"{sign}{n:.0f} B"
        n /= 1024
    return f"{n}"


def _table(header: list[str], rows: list[list[str]], right: set[int]) -> str:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def line(cells):
        out = []
        for i, (c, w) in enumerate(zip(cells, widths, strict=True)):
            out.append(c.rjust(w) if i in right else c.ljust(w))
        return "  ".join(out).rstrip()

    sep = "  ".join("-" * w for w in widths)
    return "\n".join([line(header), sep, *(line(r) for r in rows)])


def table(records: list[dict], lib_names: list[str]) -> str:
    others = [n for n in lib_names if n != "ember"]
    header = ["case", "size"]
    header += [f"{n}" for n in lib_names]
    header += [f"{n} GB/s" for n in lib_names]
    header += [f"ember/{n}" for n in others]
    header += ["target", "status"]
    rows = []
    for rec in records:
        row = [rec["case"], rec["size"]]
        for n in lib_names:
            r = rec["results"].get(n, {})
            row.append("error" if "error" in r else fmt_time(r.get("median_s")))
        for n in lib_names:
            g = rec["results"].get(n, {}).get("gb_per_s")
            row.append(f"{g:.1f}" if g is not None else "-")
        for n in others:
            x = rec["ratios"].get(n)
            row.append(f"{x:.2f}x" if x is not None else "-")
        t = rec["target"]
        ref = rec.get("reference")
        row.append(f"<= {t:g}x {ref}" if t is not None and ref else "-")
        row.append(rec["status"])
        rows.append(row)
    right = set(range(2, len(header) - 2))
    return _table(header, rows, right)


def notes(records: list[dict]) -> list[str]:
    out = []
    for rec in records:
        for lib, r in rec["results"].items():
            if "error" in r:
                out.append(f"{rec['case']} [{lib}]: {r['error']}")
            elif r.get("check") is False:
                why = r.get("check_error") or f"max abs error {r.get('max_abs_err'):.3g}"
                out.append(f"{rec['case']} [{lib}]: result differs from NumPy ({why})")
    return out


def memory_table(mem: list[dict]) -> str:
    header = [
        "case",
        "lib",
        "baseline",
        "peak",
        "extra",
        "allowed extra",
        "method",
        "status",
    ]
    rows = []
    for m in mem:
        name = "a + b 1e7 float32 peak memory"
        if "error" in m:
            rows.append([name, m["lib"], "-", "-", "-", "-", m["error"][:90], "ERROR"])
            continue
        st = ("PASS" if m["ok"] else "FAIL") if m["lib"] == "ember" else "(ref)"
        if not m.get("correct", True):
            st = "WRONG"
        rows.append(
            [
                name,
                m["lib"],
                fmt_bytes(m["baseline_bytes"]),
                fmt_bytes(m["peak_bytes"]),
                fmt_bytes(m["extra_bytes"]),
                fmt_bytes(m["allowed_extra_bytes"]),
                m.get("method", ""),
                st,
            ]
        )
    return _table(header, rows, {2, 3, 4, 5})


def write_json(path: str, payload: dict) -> None:
    with open(path, "w") as f:
        json.dump(payload, f, indent=2, default=str)
        f.write("\n")


def write_png(path: str, records: list[dict], lib_names: list[str], title: str) -> str:
    """Returns a message saying what was written or why nothing was."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import matplotlib.ticker
    except Exception:  # any failure to load it means: no chart
        return f"--png {path}: matplotlib is not importable, no chart written"
    others = [n for n in lib_names if n != "ember"]
    recs = [r for r in records if r["ratios"]]
    if not recs or not others:
        return f"--png {path}: no ratios to plot"
    fig, ax = plt.subplots(figsize=(9, 0.3 * len(recs) * max(1, len(others)) + 1.5))
    h = 0.8 / len(others)
    ys = list(range(len(recs)))
    spread = [2.0]
    for k, n in enumerate(others):
        vals = [r["ratios"].get(n, math.nan) for r in recs]
        spread += [max(v, 1 / v) for v in vals if not math.isnan(v) and v > 0]
        # Bars grow from 1 (parity): right of it ember is slower, left of it faster.
        widths = [v - 1 for v in vals]
        ax.barh([y + k * h for y in ys], widths, left=1, height=h, label=f"ember / {n}")
    for y, r in zip(ys, recs, strict=True):
        if r["target"] is not None:
            top = y + h * (len(others) - 0.5)
            ax.plot([r["target"]] * 2, [y - h / 2, top], color="crimson", lw=2)
    ax.axvline(1.0, color="grey", lw=0.8)
    ax.set_xscale("log")
    lim = max(spread) * 1.2
    ax.set_xlim(1 / lim, lim)
    steps = ([1.25] if lim < 3 else []) + [1.5, 2, 3, 5, 10, 30, 100, 1000]
    ticks = [1.0] + [t for s in steps for t in (s, 1 / s) if s <= lim]
    ax.xaxis.set_major_locator(matplotlib.ticker.FixedLocator(sorted(ticks)))
    ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:.2g}x"))
    ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
    ax.set_yticks([y + h * (len(others) - 1) / 2 for y in ys])
    ax.set_yticklabels([f"{r['case']} ({r['size']})" for r in recs], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("ember time / other time (left of 1x: ember faster); red: target")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return f"wrote {path}"
