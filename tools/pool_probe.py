"""On the GPU machine: how the driver's stream-ordered pools reserve memory under the benchmark's
mixed-size workload, for pool splits by block size and trimming policies (ctypes on libcuda, no
ember build needed). Prints the pool's granularity, then reserved / peak live over ten seeds per
configuration. It chose ember's allocator: small blocks in their own pool, trimmed above 1.2x the
peak (2026-12-01, H200: 1.19-1.28, 1.22 for the benchmark's seed; one shared pool: 1.36-1.63)."""

import ctypes as C
import math
import random
import time

cu = C.CDLL("libcuda.so.1")
MiB, GiB = 1 << 20, 1 << 30
RESERVED_CUR, USED_CUR, RELEASE_THRESHOLD = 5, 7, 4


def ok(r, what):
    if r:
        raise RuntimeError(f"{what}: CUresult {r}")


ok(cu.cuInit(0), "cuInit")
dev = C.c_int()
ok(cu.cuDeviceGet(C.byref(dev), 0), "cuDeviceGet")
ctx = C.c_void_p()
ok(cu.cuDevicePrimaryCtxRetain(C.byref(ctx), dev), "retain")
ok(cu.cuCtxSetCurrent(ctx), "setcurrent")
stream = C.c_void_p()
ok(cu.cuStreamCreate(C.byref(stream), 1), "stream")


def attr(pool, a):
    v = C.c_uint64()
    ok(cu.cuMemPoolGetAttribute(pool, a, C.byref(v)), "getattr")
    return v.value


def alloc(pool, n):
    p = C.c_uint64()
    ok(cu.cuMemAllocFromPoolAsync(C.byref(p), C.c_size_t(n), pool, stream), f"alloc {n}")
    return p.value


def free(p):
    ok(cu.cuMemFreeAsync(C.c_uint64(p), stream), "free")


def granularity(pool):
    for n in (1, 4096, 1 * MiB, 2 * MiB + 1, 3 * MiB, 31 * MiB, 33 * MiB, 100 * MiB):
        cu.cuCtxSynchronize()
        cu.cuMemPoolTrimTo(pool, C.c_size_t(0))
        p = alloc(pool, n)
        q = alloc(pool, n)
        print(f"  alloc {n:>11} x2: reserved {attr(pool, RESERVED_CUR) / MiB:8.1f} MiB")
        free(p)
        free(q)
    cu.cuCtxSynchronize()
    cu.cuMemPoolTrimTo(pool, C.c_size_t(0))


class Props(C.Structure):
    _fields_ = [
        ("alloc_type", C.c_int),
        ("handle_types", C.c_int),
        ("loc_type", C.c_int),
        ("loc_id", C.c_int),
        ("win32", C.c_void_p),
        ("max_size", C.c_size_t),
        ("usage", C.c_ushort),
        ("reserved", C.c_ubyte * 54),
    ]


def create_pool():
    p = Props(alloc_type=1, loc_type=1, loc_id=0)
    pool = C.c_void_p()
    ok(cu.cuMemPoolCreate(C.byref(pool), C.byref(p)), "create")
    keep = C.c_uint64(2**64 - 1)
    ok(cu.cuMemPoolSetAttribute(pool, RELEASE_THRESHOLD, C.byref(keep)), "setattr")
    return pool


class Alloc:
    """ember's allocator in miniature: small blocks (<= 1 MiB) rounded to powers of two and
    cached (64 MiB at most); pools chosen by size (bounds: the largest size of each pool)."""

    def __init__(self, bounds, policy, sync):
        self.pools = [create_pool() for _ in bounds]
        self.bounds, self.policy, self.sync = bounds, policy, sync
        self.cache, self.cached, self.live, self.peak, self.trims = {}, 0, 0, 0, 0

    def reserved(self):
        return sum(attr(p, RESERVED_CUR) for p in self.pools)

    def pool_of(self, n):
        return next(i for i, b in enumerate(self.bounds) if n <= b)

    def alloc(self, n):
        if n <= MiB:
            c = 512
            while c < n:
                c *= 2
            if self.cache.get(c):
                self.cached -= c
                p = self.cache[c].pop()
            else:
                p = alloc(self.pools[self.pool_of(c)], c)
            blk = (p, n, c)
        else:
            i = self.pool_of(n)
            before = attr(self.pools[i], RESERVED_CUR)
            p = alloc(self.pools[i], n)
            blk = (p, n, 0)
            self.live += n
            if self.policy(self, i, before):
                self.trims += 1
            self.live -= n
        self.live += n
        self.peak = max(self.peak, self.live)
        return blk

    def free(self, blk):
        p, n, c = blk
        self.live -= n
        if c and self.cached + c <= 64 * MiB:
            self.cache.setdefault(c, []).append(p)
            self.cached += c
        else:
            free(p)

    def trim(self, i):
        if self.sync:
            cu.cuStreamSynchronize(stream)
        cu.cuMemPoolTrimTo(self.pools[i], C.c_size_t(0))
        return True

    def close(self):
        for ps in self.cache.values():
            for p in ps:
                free(p)
        cu.cuCtxSynchronize()
        for p in self.pools:
            cu.cuMemPoolDestroy(p)


def run(a, seed, steps=2000, cap=2 * GiB, lo=1 << 10, hi=256 * MiB):
    rng = random.Random(seed)
    live, live_b = [], 0
    t0 = time.perf_counter()
    for _ in range(steps):
        n = int(math.exp(rng.uniform(math.log(lo), math.log(hi))))
        while live and live_b + n > cap:
            b = live.pop(rng.randrange(len(live)))
            a.free(b)
            live_b -= b[1]
        live.append(a.alloc(n))
        live_b += n
    cu.cuCtxSynchronize()
    t = time.perf_counter() - t0
    r = a.reserved() / a.peak
    for b in live:
        a.free(b)
    a.close()
    return r, t


def over_peak(f, query=False, keep=False):
    def pol(a, i, before):
        if a.reserved() <= f * a.peak:
            return False
        if query:
            cu.cuStreamQuery(stream)
        if a.sync:
            cu.cuStreamSynchronize(stream)
        k = 0
        if keep:
            others = a.reserved() - attr(a.pools[i], RESERVED_CUR)
            k = max(0, int(f * a.peak) - others)
        cu.cuMemPoolTrimTo(a.pools[i], C.c_size_t(k))
        return True

    return pol


INF = 1 << 62
CONFIGS = [
    ("one pool", [INF]),
    ("<=1M | rest", [MiB, INF]),
    ("<=1M | <=32M | rest", [MiB, 32 * MiB, INF]),
]
POL = [
    (">1.2peak", over_peak(1.2), False),
    (">1.2peak query", over_peak(1.2, True), False),
    (">1.2peak query keep", over_peak(1.2, True, True), False),
    (">1.15peak query", over_peak(1.15, True), False),
    (">1.1peak query", over_peak(1.1, True), False),
    (">1.2peak sync", over_peak(1.2), True),
]
SEEDS = [1234, 0, 1, 2, 3, 4, 5, 6, 7, 8]
print("granularity:")
granularity(create_pool())
for cname, bounds in CONFIGS:
    for pname, pol, sync in POL:
        rs, ts, trims = [], [], 0
        for s in SEEDS:
            a = Alloc(bounds, pol, sync)
            r, t = run(a, s)
            rs.append(r)
            ts.append(t)
            trims += a.trims
        print(
            f"{cname:28} {pname:22} ratio mean {sum(rs) / len(rs):.3f} max {max(rs):.3f} "
            f"[{' '.join(f'{r:.2f}' for r in rs)}] trims {trims // len(SEEDS):4} "
            f"loop {1e3 * sum(ts) / len(ts):7.1f} ms",
            flush=True,
        )
