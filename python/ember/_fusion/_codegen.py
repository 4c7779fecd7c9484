"""Code generation for ember.fuse: one per-element body (a C++ function calling the scalar
functors of src/ops/scalar.hpp, the bodies ember's eager kernels run) and the loops around it: a
host loop (compiled by the host's C++ compiler) and CUDA kernels (compiled by NVRTC through
RawKernel). The body's text is the same on both sides; only FZ_HD and FZ_CVT differ (the
device prelude's ember::dev::convert, or its host twin below)."""

from __future__ import annotations

import numpy as np

from ._trace import BOOL_OUT, CAST_BOOL, REAL_OUT

CTYPE = {
    "bool": "bool",
    "int8": "int8_t",
    "int16": "int16_t",
    "int32": "int32_t",
    "int64": "int64_t",
    "uint8": "uint8_t",
    "uint16": "uint16_t",
    "uint32": "uint32_t",
    "uint64": "uint64_t",
    "float16": "fz_f16",
    "bfloat16": "fz_bf16",
    "float32": "float",
    "float64": "double",
    "complex64": "fz_c64",
    "complex128": "fz_c128",
}
REAL_OF = {"complex64": "float32", "complex128": "float64"}


class Slot:
    """A scalar kernel parameter: a scalar node's value as one op consumes it."""

    __slots__ = ("node", "carrier", "loop", "weak", "index")

    def __init__(self, node, carrier, loop, index):
        self.node = node
        self.carrier = carrier
        self.loop = loop
        self.weak = node.weak
        self.index = index


class Plan:
    """What the kernels of one trace need: the array parameters they read, the scalar slots,
    the pow selectors, the body nodes in order and the outputs (or the final reduction)."""

    def __init__(self, outputs, nparams, reduce=None):
        # With a reduction: outputs[0] is the function's result, the reduction itself or
        # elementwise ops of it and scalars (the epilogue, applied to each reduced value).
        self.reduce = reduce
        self.result = outputs[0] if reduce is not None else None
        if reduce is not None:
            outputs = [reduce.inputs[0]]
        self.outputs = outputs
        order, seen = [], set()

        def visit(n):
            if n.id in seen:
                return
            seen.add(n.id)
            for m in n.inputs:
                visit(m)
            order.append(n)

        for o in outputs:
            visit(o)
        self.post = []
        if reduce is not None:
            seen.add(reduce.id)
            k = len(order)
            visit(self.result)
            self.post = [n for n in order[k:] if n.kind in ("op", "cast")]
            order.insert(k, reduce)
        self.order = order
        self.num = {n.id: k for k, n in enumerate(order)}
        self.arrays = sorted(
            [n for n in order if n.kind == "param" and n.array], key=lambda n: n.index
        )
        self.body = [n for n in order if n.kind in ("op", "cast") and n not in self.post]
        self.scalar_nodes = [n for n in order if not n.array]
        self.slots, self.selectors = [], []
        self.slot_of = {}
        self.pow_checks = []  # (pow node, exponent node) of signed integer powers
        for n in self.body + self.post:
            if n.kind != "op":
                continue
            for pos, m in enumerate(n.inputs):
                if m.array:
                    continue
                loop = "bool" if n.op in CAST_BOOL or (n.op == "where" and pos == 0) else n.loop
                carrier = _carrier(m, loop)
                key = (m.id, carrier, loop)
                if key not in self.slot_of:
                    self.slot_of[key] = Slot(m, carrier, loop, len(self.slots))
                    self.slots.append(self.slot_of[key])
            if n.op == "pow" and n.loop[0] == "i":
                self.pow_checks.append((n, n.inputs[1]))
            if (
                n.op == "pow"
                and n.inputs[0].array
                and not n.inputs[1].array
                and n.inputs[1].weak in (int, float)
                and n.inputs[1].kind != "const"
            ):
                self.selectors.append(n)
        self.complex = any(
            (n.dtype or "").startswith("complex")
            or (getattr(n, "compute", None) or "").startswith("complex")
            for n in order
        ) or any(s.carrier.startswith("complex") for s in self.slots)
        if self.reduce is not None and self.reduce.acc.startswith("complex"):
            self.complex = True
        self.nparams = nparams
        self.host_lib = None  # the compiled host program (ctypes library), once built
        self.cuda_sources = {}  # (kernel name, layout) -> CUDA source text


def _carrier(node, loop):
    """The C type a scalar travels in: a weak Python scalar in the loop's type (integers, range
    checked at the call) or in int64/double/complex128, converted in the kernel to the loop
    type as eager ember stores it; a strong scalar in its own dtype."""
    if node.weak is None:
        return node.dtype
    if node.weak is bool:
        return "bool"
    if node.weak is int:
        return loop if loop[0] in "iu" else "int64"
    if node.weak is float:
        return "float64"
    return "complex128"


# ---- the body -----------------------------------------------------------------------------------


def _result_t(n):
    if n.op in BOOL_OUT:
        return "bool"
    if n.op in REAL_OUT:
        return CTYPE[REAL_OF.get(n.compute, n.compute)]
    return CTYPE[n.compute]


def _statements(plan, nodes):
    """The C++ statements computing `nodes` (in order) into variables v<number>."""
    num = plan.num  # values are named by their place in the plan: the same DAG, the same text
    sel = {n.id: k for k, n in enumerate(plan.selectors)}
    lines = []
    for n in nodes:
        out = CTYPE[n.dtype]
        if n.kind == "cast":
            lines.append(f"    const {out} v{num[n.id]} = FZ_CVT<{out}>(v{num[n.inputs[0].id]});")
            continue
        c = CTYPE[n.compute]
        args = []
        for pos, m in enumerate(n.inputs):
            as_bool = n.op in CAST_BOOL or (n.op == "where" and pos == 0)
            if m.array:
                x = f"v{num[m.id]}"
            else:
                loop = "bool" if as_bool else n.loop
                s = plan.slot_of[(m.id, _carrier(m, loop), loop)]
                x = f"s{s.index}"
                if s.weak is not None and s.carrier != loop:
                    x = f"FZ_CVT<{CTYPE[loop]}>({x})"
            if n.op in CAST_BOOL:
                args.append(f"FZ_CVT<bool>({x})")
            elif n.op == "where" and pos == 0:
                args.append(f"FZ_CVT<{c}>(FZ_CVT<bool>({x}))")
            else:
                args.append(f"FZ_CVT<{c}>({x})")
        r = _result_t(n)
        call = f"ember::ops::op_{n.op}::apply({', '.join(args)})"
        if n.id in sel:
            q = f"q{sel[n.id]}"
            sq = f"ember::ops::op_square::apply({args[0]})"
            if n.loop in ("float16", "bfloat16", "float32", "float64", "complex64", "complex128"):
                rt = f"ember::ops::op_sqrt::apply({args[0]})"
                call = f"({q} == 1 ? {sq} : {q} == 2 ? {rt} : {call})"
            else:  # an integer power's exponent is an integer: no sqrt branch (no int sqrt)
                call = f"({q} == 1 ? {sq} : {call})"
        if n.dtype in ("float32", "float64", "complex64", "complex128"):
            # An optimization barrier: no contraction across ops (a * b + c stays two
            # roundings, as eager's two kernels round), so fused == eager bit for bit.
            lines.append(f"    {out} v{num[n.id]} = FZ_CVT<{out}>(({r})({call}));")
            lines.append(f"    fz_keep(v{num[n.id]});")
        else:
            lines.append(f"    const {out} v{num[n.id]} = FZ_CVT<{out}>(({r})({call}));")
    return lines


def _scalar_list(plan):
    params = [f"const {CTYPE[s.carrier]} s{s.index}" for s in plan.slots]
    return params + [f"const int q{k}" for k in range(len(plan.selectors))]


def body_function(plan):
    """The element function: fz_body(array values..., scalars..., selectors..., outputs&); with
    a reduction, also fz_post(reduced value, scalars..., selectors...): its epilogue."""
    num = plan.num
    params = [f"const {CTYPE[a.dtype]} v{num[a.id]}" for a in plan.arrays]
    params += _scalar_list(plan)
    params += [f"{CTYPE[o.dtype]}& y{k}" for k, o in enumerate(plan.outputs)]
    lines = [f"FZ_HD void fz_body({', '.join(params)}) {{"]
    lines += _statements(plan, plan.body)
    for k, o in enumerate(plan.outputs):
        lines.append(f"    y{k} = v{num[o.id]};")
    lines.append("}")
    if plan.reduce is not None:
        red, res = plan.reduce, plan.result
        params = [f"const {CTYPE[red.dtype]} v{num[red.id]}"] + _scalar_list(plan)
        lines.append(f"FZ_HD {CTYPE[res.dtype]} fz_post({', '.join(params)}) {{")
        lines += _statements(plan, plan.post)
        lines.append(f"    return v{num[res.id]};")
        lines.append("}")
    return "\n".join(lines) + "\n"


def _post_call(plan, value):
    args = [value] + [f"s{s.index}" for s in plan.slots]
    args += [f"q{k}" for k in range(len(plan.selectors))]
    return f"fz_post({', '.join(args)})"


def _typedefs(device, cplx):
    s = "typedef ember::float16 fz_f16;\ntypedef ember::bfloat16 fz_bf16;\n"
    if device:
        if cplx:
            s += "typedef ember::dev::complex64 fz_c64;\ntypedef ember::dev::complex128 fz_c128;\n"
    else:
        s += "typedef std::complex<float> fz_c64;\ntypedef std::complex<double> fz_c128;\n"
    return s


# ---- the reduction's pieces ---------------------------------------------------------------------

_COMBINE = {
    "sum": "add",
    "mean": "add",
    "prod": "multiply",
    "max": "maximum",
    "min": "minimum",
    "any": "logical_or",
    "all": "logical_and",
}


def _int_literal(v, t):
    if t == "uint64":
        return f"{v}ULL"
    if v == -(2**63):
        return "(-9223372036854775807LL - 1)"
    return f"{v}LL"


def identity(red):
    a, name = red.acc, red.op
    ca = CTYPE[a]
    if name in ("sum", "mean"):
        return f"{ca}(0)"
    if name == "prod":
        return f"{ca}(1)"
    if name in ("any", "all"):
        return "false" if name == "any" else "true"
    lowest = name == "max"
    if a == "bool":
        return "false" if lowest else "true"
    if a[0] in "iu":
        info = np.iinfo(a)
        return f"{ca}({_int_literal(info.min if lowest else info.max, a)})"
    r = CTYPE[REAL_OF.get(a, a)]
    inf = f"{'-' if lowest else ''}ember::ops::limits<{r}>::infinity()"
    return f"{ca}({inf}, {inf})" if a.startswith("complex") else inf


def reduce_helpers(red):
    """fz_combine, fz_identity and fz_finish of the final reduction."""
    ca, co = CTYPE[red.acc], CTYPE[red.dtype]
    s = f"typedef {ca} fz_acc;\n"
    s += f"FZ_HD fz_acc fz_identity() {{ return {identity(red)}; }}\n"
    s += (
        f"FZ_HD fz_acc fz_combine(fz_acc a, fz_acc b) {{ return "
        f"ember::ops::op_{_COMBINE[red.op]}::apply(a, b); }}\n"
    )
    if red.op == "mean":
        fin = "ember::ops::op_divide::apply(a, FZ_CVT<fz_acc>(cnt))"
    else:
        fin = "a"
    s += (
        f"FZ_HD {co} fz_finish(fz_acc a, double cnt) {{ (void)cnt; return FZ_CVT<{co}>({fin}); }}\n"
    )
    return s


def _body_call(plan, at, outs):
    """fz_body(...) with array k read at offset expression at(k) and outputs `outs`."""
    args = [f"in{k}[{at(k)}]" for k in range(len(plan.arrays))]
    args += [f"s{s.index}" for s in plan.slots]
    args += [f"q{k}" for k in range(len(plan.selectors))]
    return f"fz_body({', '.join(args + outs)});"


# ---- the host program ----------------------------------------------------------------------------

HOST_PRELUDE = r"""#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <thread>
#include <type_traits>
#include <vector>
#include "ember/half.hpp"
#include "ember/ops/scalar.hpp"

namespace fz {
// src/ops/convert.hpp's conversions (NumPy's unsafe casts, no undefined behaviour), on the host.
template <class T> struct is_c : std::false_type {};
template <class T> struct is_c<std::complex<T>> : std::true_type {};
template <class T>
inline constexpr bool is_h =
    std::is_same_v<T, ember::float16> || std::is_same_v<T, ember::bfloat16>;
template <class T> inline auto widen(T v) { if constexpr (is_h<T>) return float(v); else return v; }
template <class To, class From>
inline To cvt(From v) {
    if constexpr (std::is_same_v<To, From>) {
        return v;
    } else if constexpr (is_h<From>) {
        return cvt<To>(float(v));
    } else if constexpr (std::is_same_v<To, bool>) {
        if constexpr (is_c<From>::value) return v.real() != 0 || v.imag() != 0;
        else return v != From(0);
    } else if constexpr (is_c<From>::value) {
        if constexpr (is_c<To>::value)
            return To(typename To::value_type(v.real()), typename To::value_type(v.imag()));
        else
            return cvt<To>(v.real());
    } else if constexpr (is_c<To>::value) {
        using R = typename To::value_type;
        return To(R(widen(v)), R(0));
    } else if constexpr (is_h<To>) {
        if constexpr (std::is_same_v<From, double>) {
            float f = float(v);
            if (double(f) != v && v == v) {
                uint32_t b = std::bit_cast<uint32_t>(f);
                if ((double(f) > v) == (v > 0)) --b;
                f = std::bit_cast<float>(b | 1u);
            }
            return To(f);
        } else {
            return To(float(v));
        }
    } else if constexpr (std::is_integral_v<To> && std::is_floating_point_v<From>) {
        if constexpr (std::is_unsigned_v<To> && sizeof(To) == 8) {
            if (v >= From(0) && v < From(18446744073709551616.0)) return To(v);
            if (v > From(-9223372036854775808.0) && v < From(0)) return To(int64_t(v));
            return To(uint64_t(1) << 63);
        } else {
            if (v > From(-9223372036854775808.0) && v < From(9223372036854775808.0))
                return To(int64_t(v));
            return To(int64_t(0x8000000000000000ull));
        }
    } else {
        return To(v);
    }
}
}  // namespace fz
#define FZ_HD static inline
#define FZ_CVT fz::cvt
// No contraction across ops on the host: the program is compiled with -ffp-contract=off
// (GCC would otherwise fuse a * b + c across statements), which keeps its loops vectorizable.
template <class T> static inline void fz_keep(T&) {}
"""

_HOST_THREADS = r"""
template <class F>
static void fz_parallel(long long n, long long grain, int workers, F f) {
    long long parts = std::min<long long>(workers, std::max<long long>(1, n / grain));
    if (parts <= 1) { f(0, n); return; }
    std::vector<std::thread> ts;
    for (long long p = 1; p < parts; ++p)
        ts.emplace_back([&, p] { f(n * p / parts, n * (p + 1) / parts); });
    f(0, n / parts);
    for (auto& t : ts) t.join();
}
"""


def _host_loads(plan, base):
    s = "".join(
        f"    const {CTYPE[x.carrier]} s{x.index} = *(const {CTYPE[x.carrier]}*)S[{x.index}];\n"
        for x in plan.slots
    )
    s += "".join(
        f"    const int q{k} = *(const int*)S[{len(plan.slots) + k}];\n"
        for k in range(len(plan.selectors))
    )
    s += "".join(
        f"    const {CTYPE[a.dtype]}* in{k} = (const {CTYPE[a.dtype]}*)P[{k}];\n"
        for k, a in enumerate(plan.arrays)
    )
    return s


def host_source(plan):
    """The host program: fz_map (elementwise over rows of a collapsed strided space) or
    fz_reduce (each output folds its slice in blocks of 1024, threads over outputs or over the
    slice of a single output, partials combined in a fixed order)."""
    na, no = len(plan.arrays), len(plan.outputs)
    s = HOST_PRELUDE + _typedefs(False, True) + body_function(plan) + _HOST_THREADS
    ex = 'extern "C" __attribute__((visibility("default")))'
    if plan.reduce is None:
        nops = na + no
        outs = [f"out{k}[o[{na + k}]]" for k in range(no)]
        s += f"{ex} int fz_map(void* const* P, void* const* S, const long long* shape,\n"
        s += "                  const long long* st, int nd, long long n, int workers) {\n"
        s += _host_loads(plan, 0)
        s += "".join(
            f"    {CTYPE[o.dtype]}* out{k} = ({CTYPE[o.dtype]}*)P[{na + k}];\n"
            for k, o in enumerate(plan.outputs)
        )
        s += "    const long long inner = shape[nd - 1], rows = n / inner;\n"
        s += f"    bool unit = true;\n    for (int k = 0; k < {nops}; ++k)\n"
        s += "        unit = unit && st[k * nd + nd - 1] == 1;\n"
        s += "    fz_parallel(rows, std::max<long long>(1, 32768 / inner), workers,\n"
        s += "                [&](long long r0, long long r1) {\n"
        s += "        for (long long r = r0; r < r1; ++r) {\n"
        s += f"            long long b[{nops}] = {{}}, q = r;\n"
        s += "            for (int d = nd - 2; d >= 0; --d) {\n"
        s += "                const long long c = q % shape[d];\n                q /= shape[d];\n"
        s += f"                for (int k = 0; k < {nops}; ++k) b[k] += c * st[k * nd + d];\n"
        s += "            }\n"
        # The unit-stride rows: restrict pointers, a loop the compiler can vectorize.
        s += "            if (unit) {\n"
        s += "".join(
            f"                const {CTYPE[a.dtype]}* __restrict u{k} = in{k} + b[{k}];\n"
            for k, a in enumerate(plan.arrays)
        )
        s += "".join(
            f"                {CTYPE[o.dtype]}* __restrict w{k} = out{k} + b[{na + k}];\n"
            for k, o in enumerate(plan.outputs)
        )
        s += "                for (long long i = 0; i < inner; ++i) {\n"
        args = [f"u{k}[i]" for k in range(na)] + [f"s{x.index}" for x in plan.slots]
        args += [f"q{k}" for k in range(len(plan.selectors))] + [f"w{k}[i]" for k in range(no)]
        s += f"                    fz_body({', '.join(args)});\n"
        s += "                }\n            } else {\n"
        s += "                for (long long i = 0; i < inner; ++i) {\n"
        s += f"                    long long o[{nops}];\n"
        s += f"                    for (int k = 0; k < {nops}; ++k)\n"
        s += "                        o[k] = b[k] + i * st[k * nd + nd - 1];\n"
        s += "                    " + _body_call(plan, lambda k: f"o[{k}]", outs) + "\n"
        s += "                }\n            }\n        }\n    });\n    return 0;\n}\n"
        return s
    red = plan.reduce
    s += reduce_helpers(red)
    m = CTYPE[plan.outputs[0].dtype]
    s += "static fz_acc fz_partial(void* const* P, void* const* S, const long long* kb,\n"
    s += "                         const long long* rshape, const long long* rst, int nr,\n"
    s += "                         long long j0, long long j1) {\n"
    s += _host_loads(plan, 0)
    s += "    fz_acc acc = fz_identity(), part = fz_identity();\n"
    s += "    const long long inner = rshape[nr - 1];\n"
    s += "    long long j = j0;\n"
    s += "    while (j < j1) {\n"
    s += "        // one row of the innermost reduced dimension (or the part of it in range)\n"
    s += "        const long long col = j % inner;\n"
    s += "        long long q = j / inner;\n"
    s += f"        long long b[{max(na, 1)}], st[{max(na, 1)}];\n"
    s += f"        for (int k = 0; k < {na}; ++k) {{\n"
    s += "            b[k] = kb[k] + col * rst[k * nr + nr - 1];\n"
    s += "            st[k] = rst[k * nr + nr - 1];\n        }\n"
    s += "        for (int d = nr - 2; d >= 0; --d) {\n"
    s += "            const long long c = q % rshape[d];\n            q /= rshape[d];\n"
    s += f"            for (int k = 0; k < {na}; ++k) b[k] += c * rst[k * nr + d];\n"
    s += "        }\n"
    s += "        const long long len = std::min(j1 - j, inner - col);\n"
    s += "        for (long long t0 = 0; t0 < len; t0 += 1024) {\n"
    s += "            const long long t1 = std::min(len, t0 + 1024);\n"
    s += "            for (long long t = t0; t < t1; ++t) {\n"
    s += f"                {m} y0;\n"
    s += "                " + _body_call(plan, lambda k: f"b[{k}] + t * st[{k}]", ["y0"]) + "\n"
    s += "                part = fz_combine(part, FZ_CVT<fz_acc>(y0));\n"
    s += "            }\n"
    s += "            acc = fz_combine(acc, part);\n            part = fz_identity();\n"
    s += "        }\n        j += len;\n    }\n    return acc;\n}\n"
    co = CTYPE[plan.result.dtype]
    s += f"{ex} int fz_reduce(void* const* P, void* const* S, const long long* kshape, int nk,\n"
    s += "                     const long long* kst, const long long* rshape, int nr,\n"
    s += "                     const long long* rst, long long nout, long long nred, double cnt,\n"
    s += "                     int workers) {\n"
    s += f"    {co}* out = ({co}*)P[{na}];\n"
    s += _host_loads(plan, 0)
    s += "    auto base = [&](long long o, long long* kb) {\n"
    s += f"        for (int k = 0; k < {na}; ++k) kb[k] = 0;\n"
    s += "        for (int d = nk - 1; d >= 0; --d) {\n"
    s += "            const long long c = o % kshape[d];\n            o /= kshape[d];\n"
    s += f"            for (int k = 0; k < {na}; ++k) kb[k] += c * kst[k * nk + d];\n"
    s += "        }\n    };\n"
    s += "    if (nout >= workers || nred < 65536) {\n"
    s += "        fz_parallel(nout, std::max<long long>(1, 65536 / std::max(nred, 1LL)), workers,\n"
    s += "                    [&](long long o0, long long o1) {\n"
    s += f"            long long kb[{max(na, 1)}];\n"
    s += "            for (long long o = o0; o < o1; ++o) {\n"
    s += "                base(o, kb);\n"
    s += (
        "                const fz_acc a = fz_partial(P, S, kb, rshape, rst, nr, 0, nred);\n"
        f"                out[o] = {_post_call(plan, 'fz_finish(a, cnt)')};\n"
    )
    s += "            }\n        });\n        return 0;\n    }\n"
    s += "    std::vector<fz_acc> parts(workers);\n"
    s += f"    long long kb[{max(na, 1)}];\n"
    s += "    for (long long o = 0; o < nout; ++o) {\n        base(o, kb);\n"
    s += "        std::vector<std::thread> ts;\n"
    s += "        for (int p = 0; p < workers; ++p)\n"
    s += "            ts.emplace_back([&, p] {\n"
    s += "                parts[p] = fz_partial(P, S, kb, rshape, rst, nr, nred * p / workers,\n"
    s += "                                      nred * (p + 1) / workers);\n            });\n"
    s += "        for (auto& t : ts) t.join();\n"
    s += "        fz_acc a = parts[0];\n"
    s += "        for (int p = 1; p < workers; ++p) a = fz_combine(a, parts[p]);\n"
    s += f"        out[o] = {_post_call(plan, 'fz_finish(a, cnt)')};\n    }}\n    return 0;\n}}\n"
    return s


# ---- the CUDA program ----------------------------------------------------------------------------


# The device's optimization barrier (an empty PTX block the value passes through).
_DEVICE_KEEP = """template <class T> FZ_HD void fz_keep(T&) {}
FZ_HD void fz_keep(float& v) { asm volatile("" : "+f"(v)); }
FZ_HD void fz_keep(double& v) { asm volatile("" : "+d"(v)); }
"""
_DEVICE_KEEP_COMPLEX = """FZ_HD void fz_keep(fz_c64& v) {
    float* p = reinterpret_cast<float*>(&v);
    fz_keep(p[0]);
    fz_keep(p[1]);
}
FZ_HD void fz_keep(fz_c128& v) {
    double* p = reinterpret_cast<double*>(&v);
    fz_keep(p[0]);
    fz_keep(p[1]);
}
"""


def _device_head(plan, name):
    s = f"// Generated by ember.fuse ({name}): one fused kernel over src/ops/scalar.hpp's bodies.\n"
    if plan.complex:
        s += "#define EMBER_DEVICE_COMPLEX 1\n"
    s += '#include "ember/device_prelude.cuh"\n#include "ember/ops/scalar.hpp"\n'
    s += "#define FZ_HD __device__ __forceinline__\n#define FZ_CVT ember::dev::convert\n"
    s += _typedefs(True, plan.complex) + _DEVICE_KEEP
    if plan.complex:
        s += _DEVICE_KEEP_COMPLEX
    return s + body_function(plan)


def _scalar_params(plan):
    p = [f"const {CTYPE[s.carrier]} s{s.index}" for s in plan.slots]
    return p + [f"const int q{k}" for k in range(len(plan.selectors))]


def cuda_source(plan, name, nd, i32=False):
    """The elementwise kernel `name` over an nd-dimensional collapsed space (nd == 0: every
    operand contiguous, indexed by i). With `i32` the element index and the offsets are 32-bit
    (the launcher checks they fit): the n-d index arithmetic (one division per dimension but the
    outermost, which takes the remainder) is then several times cheaper than in 64 bits."""
    na, no = len(plan.arrays), len(plan.outputs)
    s = _device_head(plan, name)
    iu, ii = ("unsigned", "int") if i32 else ("unsigned long long", "long long")
    if nd:
        s += f"struct fz_geom {{\n    {ii} shape[{nd}];\n"
        s += f"    {ii} st[{na + no}][{nd}];\n}};\n"
    sig = [f"const {CTYPE[a.dtype]}* __restrict__ in{k}" for k, a in enumerate(plan.arrays)]
    sig += [f"{CTYPE[o.dtype]}* __restrict__ out{k}" for k, o in enumerate(plan.outputs)]
    sig += _scalar_params(plan)
    if nd:
        sig.append("const fz_geom g")
    sig.append("const long long n")
    s += f'extern "C" __global__ void {name}({", ".join(sig)}) {{\n'
    s += "    const long long step = (long long)gridDim.x * blockDim.x;\n"
    s += "    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;"
    s += " i += step) {\n"
    if nd:
        s += f"        {iu} rem = ({iu})i;\n        {ii} o[{na + no}] = {{}};\n"
        s += "#pragma unroll\n"
        s += f"        for (int d = {nd - 1}; d >= 1; --d) {{\n"
        s += f"            const {iu} sh = ({iu})g.shape[d], c = rem % sh;\n"
        s += "            rem /= sh;\n"
        s += "#pragma unroll\n"
        s += f"            for (int k = 0; k < {na + no}; ++k) o[k] += ({ii})c * g.st[k][d];\n"
        s += "        }\n"
        s += "#pragma unroll\n"
        s += f"        for (int k = 0; k < {na + no}; ++k) o[k] += ({ii})rem * g.st[k][0];\n"
        at = lambda k: f"o[{k}]"  # noqa: E731
        outs = [f"out{k}[o[{na + k}]]" for k in range(no)]
    else:
        at = lambda k: "i"  # noqa: E731
        outs = [f"out{k}[i]" for k in range(no)]
    s += "        " + _body_call(plan, at, outs) + "\n    }\n}\n"
    return s


RBLOCK = 256


def cuda_reduce_source(plan, name, nk, nr):
    """Two kernels: `name` folds slice part p of output o in block o * G + p (one block per
    output when G == 1, which then writes the result), `name`_fin folds the G partials of each
    output in a fixed order; both reduce inside the block through shared memory in a fixed
    order, so results are the same run to run."""
    na = len(plan.arrays)
    red = plan.reduce
    co, m = CTYPE[plan.result.dtype], CTYPE[plan.outputs[0].dtype]
    s = _device_head(plan, name) + reduce_helpers(red)
    s += (
        f"struct fz_rgeom {{\n    long long kshape[{nk}];\n    long long kst[{max(na, 1)}][{nk}];\n"
        f"    long long rshape[{nr}];\n    long long rst[{max(na, 1)}][{nr}];\n}};\n"
    )
    fold = (
        "    sd[tid] = acc;\n    __syncthreads();\n"
        f"    for (unsigned w = {RBLOCK // 2}; w > 0; w >>= 1) {{\n"
        "        if (tid < w) sd[tid] = fz_combine(sd[tid], sd[tid + w]);\n"
        "        __syncthreads();\n    }\n"
    )
    shared = (
        f"    __shared__ alignas(16) unsigned char sbuf[{RBLOCK} * sizeof(fz_acc)];\n"
        "    fz_acc* sd = reinterpret_cast<fz_acc*>(sbuf);\n    const unsigned tid = threadIdx.x;\n"
    )
    sig = [f"const {CTYPE[a.dtype]}* __restrict__ in{k}" for k, a in enumerate(plan.arrays)]
    sig += [f"{co}* __restrict__ out", "fz_acc* __restrict__ part"]
    sig += _scalar_params(plan)
    sig += ["const fz_rgeom g", "const long long nout", "const long long nred"]
    sig += ["const long long G", "const double cnt"]
    s += f'extern "C" __global__ void {name}({", ".join(sig)}) {{\n' + shared
    s += "  for (long long b = blockIdx.x; b < nout * G; b += gridDim.x) {\n"
    s += "    const long long ob = b / G, p = b % G;\n"
    s += f"    long long kb[{max(na, 1)}] = {{}}, r = ob;\n"
    s += f"    for (int d = {nk - 1}; d >= 1; --d) {{\n"
    s += "        const long long c = r % g.kshape[d];\n        r /= g.kshape[d];\n"
    s += f"        for (int k = 0; k < {na}; ++k) kb[k] += c * g.kst[k][d];\n    }}\n"
    s += f"    for (int k = 0; k < {na}; ++k) kb[k] += r * g.kst[k][0];\n"
    s += "    fz_acc acc = fz_identity();\n"
    s += "#pragma unroll 4\n"
    s += f"    for (long long j = p * {RBLOCK} + tid; j < nred; j += G * {RBLOCK}) {{\n"
    s += f"        long long q = j, o[{max(na, 1)}];\n"
    s += f"        for (int k = 0; k < {na}; ++k) o[k] = kb[k];\n"
    s += f"        for (int d = {nr - 1}; d >= 1; --d) {{\n"
    s += "            const long long c = q % g.rshape[d];\n            q /= g.rshape[d];\n"
    s += f"            for (int k = 0; k < {na}; ++k) o[k] += c * g.rst[k][d];\n        }}\n"
    s += f"        for (int k = 0; k < {na}; ++k) o[k] += q * g.rst[k][0];\n"
    s += f"        {m} y0;\n"
    s += "        " + _body_call(plan, lambda k: f"o[{k}]", ["y0"]) + "\n"
    s += "        acc = fz_combine(acc, FZ_CVT<fz_acc>(y0));\n    }\n"
    s += fold
    fin = _post_call(plan, "fz_finish(sd[0], cnt)")
    s += f"    if (tid == 0) {{\n        if (G == 1) out[ob] = {fin};\n"
    s += "        else part[b] = sd[0];\n    }\n    __syncthreads();\n  }\n}\n"
    s += f'extern "C" __global__ void {name}_fin({co}* __restrict__ out, '
    s += "const fz_acc* __restrict__ part, "
    s += "".join(p + ", " for p in _scalar_params(plan))
    s += "const long long nout, const long long G, const double cnt) {\n" + shared
    s += "  for (long long ob = blockIdx.x; ob < nout; ob += gridDim.x) {\n"
    s += "    fz_acc acc = fz_identity();\n"
    s += f"    for (long long j = tid; j < G; j += {RBLOCK})\n"
    s += "        acc = fz_combine(acc, part[ob * G + j]);\n"
    s += fold
    s += f"    if (tid == 0) out[ob] = {fin};\n    __syncthreads();\n  }}\n}}\n"
    # Column mode, for outputs adjacent in memory (the kept dimensions innermost, as a
    # channels_last batch norm's statistics over N, H, W): the 32 lanes of a warp take 32
    # neighbouring outputs (coalesced loads) and the 8 warps of a block, then G blocks, split
    # each output's slice; the 8 warp partials fold in a fixed order, then the G partials
    # (`name`_fin).
    fin_col = _post_call(plan, "fz_finish(a, cnt)")
    s += f'extern "C" __global__ void {name}_col({", ".join(sig)}) {{\n'
    s += "  __shared__ alignas(16) unsigned char cbuf[8 * 33 * sizeof(fz_acc)];\n"
    s += "  fz_acc (*sc)[33] = reinterpret_cast<fz_acc (*)[33]>(cbuf);\n"
    s += "  const unsigned tx = threadIdx.x & 31, ty = threadIdx.x >> 5;\n"
    s += "  const long long ncb = (nout + 31) / 32;\n"
    s += "  for (long long b = blockIdx.x; b < ncb * G; b += gridDim.x) {\n"
    s += "    const long long ob = (b / G) * 32 + tx, p = b % G;\n"
    s += "    fz_acc acc = fz_identity();\n"
    s += "    if (ob < nout) {\n"
    s += f"      long long kb[{max(na, 1)}] = {{}}, r = ob;\n"
    s += f"      for (int d = {nk - 1}; d >= 1; --d) {{\n"
    s += "          const long long c = r % g.kshape[d];\n          r /= g.kshape[d];\n"
    s += f"          for (int k = 0; k < {na}; ++k) kb[k] += c * g.kst[k][d];\n      }}\n"
    s += f"      for (int k = 0; k < {na}; ++k) kb[k] += r * g.kst[k][0];\n"
    s += "#pragma unroll 8\n"
    s += "      for (long long j = p * 8 + ty; j < nred; j += G * 8) {\n"
    s += f"        long long q = j, o[{max(na, 1)}];\n"
    s += f"        for (int k = 0; k < {na}; ++k) o[k] = kb[k];\n"
    s += f"        for (int d = {nr - 1}; d >= 1; --d) {{\n"
    s += "            const long long c = q % g.rshape[d];\n            q /= g.rshape[d];\n"
    s += f"            for (int k = 0; k < {na}; ++k) o[k] += c * g.rst[k][d];\n        }}\n"
    s += f"        for (int k = 0; k < {na}; ++k) o[k] += q * g.rst[k][0];\n"
    s += f"        {m} y0;\n"
    s += "        " + _body_call(plan, lambda k: f"o[{k}]", ["y0"]) + "\n"
    s += "        acc = fz_combine(acc, FZ_CVT<fz_acc>(y0));\n      }\n    }\n"
    s += "    sc[ty][tx] = acc;\n    __syncthreads();\n"
    s += "    if (ty == 0 && ob < nout) {\n      fz_acc a = sc[0][tx];\n"
    s += "      for (int w = 1; w < 8; ++w) a = fz_combine(a, sc[w][tx]);\n"
    s += f"      if (G == 1) out[ob] = {fin_col};\n      else part[ob * G + p] = a;\n    }}\n"
    s += "    __syncthreads();\n  }\n}\n"
    return s
