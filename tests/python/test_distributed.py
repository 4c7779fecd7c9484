"""ember.distributed on CPUs: the launcher and the "mpi" backend over 2-4 processes, every
collective against NumPy, async work handles, groups, point-to-point and the timeout path.

The test functions start ranks with ``python -m ember.distributed.run``; this file is also the
script those ranks run (``python test_distributed.py <case>``)."""

import os
import subprocess
import sys

import numpy as np
import pytest

HERE = os.path.abspath(__file__)
DTYPES = ["float32", "float64", "int32", "int64", "uint8", "bool", "float16", "complex64"]
SHAPES = [(), (5,), (3, 4), (0, 2)]


def _data(rank, shape, dtype, salt=0):
    rng = np.random.default_rng(1000 * rank + salt)
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype.startswith("complex"):
        return (rng.integers(-4, 5, shape) + 1j * rng.integers(-4, 5, shape)).astype(dtype)
    if dtype.startswith("uint"):
        return rng.integers(0, 4, shape).astype(dtype)
    return rng.integers(-4, 5, shape).astype(dtype)


def _np_reduce(arrs, op):
    a = np.stack(arrs)
    if a.dtype == bool:
        return a.any(0) if op in ("SUM", "MAX") else a.all(0)
    if op == "SUM":
        return a.sum(0, dtype=a.dtype)
    if op == "PRODUCT":
        return a.prod(0, dtype=a.dtype)
    if op == "MIN":
        return a.min(0)
    if op == "MAX":
        return a.max(0)
    s = a.sum(0, dtype=a.dtype)
    if a.dtype.kind in "fc":
        return s / a.dtype.type(len(arrs))
    return np.trunc(s / len(arrs)).astype(a.dtype)


def _eq(got, want, what):
    import ember

    g = ember.asnumpy(got)
    assert g.dtype == want.dtype, (what, g.dtype, want.dtype)
    assert g.shape == want.shape, (what, g.shape, want.shape)
    np.testing.assert_allclose(g.astype(np.complex128), want.astype(np.complex128), err_msg=what)


def _out(line):
    """One write per line, so lines of several ranks sharing a pipe do not interleave."""
    os.write(1, (line + "\n").encode())


# ---- the ranks' side ---------------------------------------------------------------------


def _backend_device():
    """The backend and device the cases run on: "mpi" on the CPU unless EMBER_TEST_BACKEND /
    EMBER_TEST_DEVICE say otherwise (GPU runs: "nccl" and "cuda", one GPU per local rank)."""
    backend = os.environ.get("EMBER_TEST_BACKEND", "mpi")
    dev = os.environ.get("EMBER_TEST_DEVICE", "cpu")
    if dev == "cuda":
        import ember

        local = int(os.environ.get("LOCAL_RANK", "0"))
        ember.cuda.set_device(local)
        dev = f"cuda:{local}"
    return backend, dev


def case_collectives():
    import ember
    import ember.distributed as dist

    backend, dev = _backend_device()
    dist.init_process_group(backend)
    r, n = dist.get_rank(), dist.get_world_size()
    assert dist.is_initialized() and dist.get_backend() == backend
    assert (r, n) == (int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]))
    for dtype in DTYPES:
        for shape in SHAPES:
            mine = _data(r, shape, dtype)
            every = [_data(k, shape, dtype) for k in range(n)]
            ops = ["SUM", "PRODUCT", "MIN", "MAX", "AVG"]
            if dtype == "bool":
                ops.remove("AVG")
            if dtype.startswith("complex"):
                ops = ["SUM", "AVG"]  # PyTorch's supports_complex rule, every backend
                with pytest.raises(ValueError, match="PRODUCT"):
                    dist.all_reduce(ember.array(mine, device=dev), op=dist.ReduceOp.PRODUCT)
            for op in ops:
                x = ember.array(mine, device=dev)
                dist.all_reduce(x, op=getattr(dist.ReduceOp, op))
                _eq(x, _np_reduce(every, op), f"all_reduce {op} {dtype} {shape}")
            x = ember.array(mine, device=dev)
            dist.broadcast(x, src=n - 1)
            _eq(x, every[n - 1], f"broadcast {dtype} {shape}")
            outs = [ember.empty(shape, dtype=dtype, device=dev) for _ in range(n)]
            dist.all_gather(outs, ember.array(mine, device=dev))
            for k in range(n):
                _eq(outs[k], every[k], f"all_gather {dtype} {shape}")
            big = ember.empty((n, *shape), dtype=dtype, device=dev)
            dist.all_gather_into_tensor(big, ember.array(mine, device=dev))
            _eq(big, np.stack(every), f"all_gather_into_tensor {dtype} {shape}")
            x = ember.array(mine, device=dev)
            dist.reduce(x, dst=1 % n, op=dist.ReduceOp.MAX if dtype[0] != "c" else "sum")
            want = _np_reduce(every, "MAX" if dtype[0] != "c" else "SUM")
            _eq(x, want if r == 1 % n else mine, f"reduce {dtype} {shape}")
            gl = [ember.empty(shape, dtype=dtype, device=dev) for _ in range(n)] if r == 0 else None
            dist.gather(ember.array(mine, device=dev), gl, dst=0)
            if r == 0:
                for k in range(n):
                    _eq(gl[k], every[k], f"gather {dtype} {shape}")
            src = n - 1
            sl = [ember.asarray(_data(k, shape, dtype, 7), device=dev) for k in range(n)]
            x = ember.empty(shape, dtype=dtype, device=dev)
            dist.scatter(x, sl if r == src else None, src=src)
            _eq(x, _data(r, shape, dtype, 7), f"scatter {dtype} {shape}")
            # reduce_scatter: input_list[k] of every rank reduces into rank k
            ins = [ember.asarray(_data(r, shape, dtype, 10 + k), device=dev) for k in range(n)]
            x = ember.empty(shape, dtype=dtype, device=dev)
            dist.reduce_scatter(x, ins)
            _eq(x, _np_reduce([_data(q, shape, dtype, 10 + r) for q in range(n)], "SUM"), "rs")
    # reduce_scatter_tensor / all_gather_into_tensor with a concatenated first dimension
    inp = ember.asarray(np.arange(n * 6, dtype="float32").reshape(n * 2, 3) * (r + 1), device=dev)
    out = ember.empty((2, 3), dtype="float32", device=dev)
    dist.reduce_scatter_tensor(out, inp, op=dist.ReduceOp.AVG)
    full = np.arange(n * 6, dtype="float32").reshape(n * 2, 3) * (n + 1) / 2
    _eq(out, full[2 * r : 2 * r + 2], "reduce_scatter_tensor AVG")
    cat = ember.empty((2 * n, 3), dtype="float32", device=dev)
    dist.all_gather_into_tensor(cat, out)
    _eq(cat, full, "all_gather_into_tensor concatenated")
    # non-contiguous arrays are written in place
    base = ember.asarray(np.arange(12, dtype="float64").reshape(3, 4) + r, device=dev)
    view = base.T
    dist.all_reduce(view)
    want = sum(np.arange(12.0).reshape(3, 4) + k for k in range(n))
    _eq(base, want, "all_reduce non-contiguous")
    # bfloat16 (raw bits for broadcast; float32 staging for reductions)
    b = ember.asarray(np.array([1.5, -2.0, 3.0]) * (r + 1), device=dev).astype("bfloat16")
    dist.all_reduce(b)
    np.testing.assert_allclose(
        ember.asnumpy(b.astype("float32")), np.array([1.5, -2.0, 3.0]) * n * (n + 1) / 2
    )
    dist.broadcast(b, src=0)
    np.testing.assert_allclose(
        ember.asnumpy(b.astype("float32")), np.array([1.5, -2.0, 3.0]) * n * (n + 1) / 2
    )
    dist.destroy_process_group()
    assert not dist.is_initialized()
    _out(f"OK {r}")


def case_async_p2p_groups():
    import ember
    import ember.distributed as dist

    backend, dev = _backend_device()
    dist.init_process_group(backend=backend, init_method="env://")
    r, n = dist.get_rank(), dist.get_world_size()

    def A(a, **kw):
        return ember.asarray(a, device=dev, **kw)

    def full(shape, v, dtype="float64"):
        return ember.full(shape, v, dtype=dtype, device=dev)

    def empty(shape, dtype="float64"):
        return ember.empty(shape, dtype=dtype, device=dev)

    # async all_reduce: a Work handle
    x = full((4,), float(r))
    w = dist.all_reduce(x, async_op=True)
    assert isinstance(w, dist.Work)
    assert w.wait() is True and w.is_completed() and w.is_success()
    _eq(x, np.full(4, n * (n - 1) / 2), "async all_reduce")
    # several in flight at once
    xs = [full((3,), float(r + k)) for k in range(3)]
    ws = [dist.all_reduce(t, op=dist.ReduceOp.MAX, async_op=True) for t in xs]
    for w in ws:
        w.wait()
    for k, t in enumerate(xs):
        _eq(t, np.full(3, float(n - 1 + k)), "async MAX")
    # send / recv in a ring, and recv from any source
    nxt, prv = (r + 1) % n, (r - 1) % n
    out = A(np.arange(5, dtype="int64") * (r + 1))
    inb = empty((5,), "int64")
    ws = dist.batch_isend_irecv(
        [dist.P2POp(dist.isend, out, nxt, tag=3), dist.P2POp(dist.irecv, inb, prv, tag=3)]
    )
    for w in ws:
        w.wait()
    _eq(inb, np.arange(5, dtype="int64") * (prv + 1), "batch_isend_irecv ring")
    if n > 1 and (n == 2 or backend != "nccl"):  # unbatched (NCCL rings need the batch)
        if r % 2 == 0:
            dist.send(out, dst=nxt)
            dist.recv(inb, src=prv)
        else:
            dist.recv(inb, src=prv)
            dist.send(out, dst=nxt)
        _eq(inb, np.arange(5, dtype="int64") * (prv + 1), "send/recv")
    # Python objects
    objs = [None] * n
    dist.all_gather_object(objs, {"rank": r, "data": list(range(r))})
    assert objs == [{"rank": k, "data": list(range(k))} for k in range(n)], objs
    lst = ["a", r] if r == n - 1 else [None, None]
    dist.broadcast_object_list(lst, src=n - 1)
    assert lst == ["a", n - 1], lst
    got = [None] * n if r == 0 else None
    dist.gather_object(("g", r), got, dst=0)
    if r == 0:
        assert got == [("g", k) for k in range(n)], got
    one = [None]
    dist.scatter_object_list(one, [k * "x" for k in range(n)] if r == 0 else None, src=0)
    assert one == [r * "x"], one
    if backend == "nccl":
        pass  # NCCL has no receive from any source
    elif r == 0:
        got = set()
        for _ in range(n - 1):
            buf = empty((2,), "float32")
            sender = dist.recv(buf)
            got.add(sender)
            _eq(buf, np.full(2, float(sender), "float32"), "recv any")
        assert got == set(range(1, n)), got
    else:
        dist.send(full((2,), float(r), "float32"), dst=0)
    # all_to_all with unequal sizes, and all_to_all_single with splits
    ins = [full((r + k + 1,), float(10 * r + k)) for k in range(n)]
    outs = [empty((k + r + 1,)) for k in range(n)]
    dist.all_to_all(outs, ins)
    for k in range(n):
        _eq(outs[k], np.full(k + r + 1, float(10 * k + r)), "all_to_all")
    isz = [k + 1 for k in range(n)]  # rank r sends k+1 rows to rank k
    osz = [r + 1] * n
    inp = A(np.concatenate([np.full((k + 1, 2), 100 * r + k) for k in range(n)]))
    outp = ember.empty((sum(osz), 2), dtype=inp.dtype, device=dev)
    dist.all_to_all_single(outp, inp, output_split_sizes=osz, input_split_sizes=isz)
    want = np.concatenate([np.full((r + 1, 2), 100 * k + r) for k in range(n)])
    _eq(outp, want.astype(inp.dtype.name), "all_to_all_single")
    eq_in = A(np.arange(n * 2, dtype="int32") + 100 * r)
    eq_out = empty((n * 2,), "int32")
    dist.all_to_all_single(eq_out, eq_in)
    _eq(
        eq_out,
        np.concatenate([[100 * k + 2 * r, 100 * k + 2 * r + 1] for k in range(n)]).astype("int32"),
        "a2a equal",
    )
    # groups: the even ranks; global src/dst; non-members are no-ops
    evens = list(range(0, n, 2))
    g = dist.new_group(evens)
    assert dist.get_process_group_ranks(g) == evens
    y = full((2,), float(r))
    if r in evens:
        assert dist.get_rank(g) == evens.index(r) and dist.get_world_size(g) == len(evens)
        dist.all_reduce(y, group=g)
        _eq(y, np.full(2, float(sum(evens))), "group all_reduce")
        z = full((1,), float(r))
        dist.broadcast(z, src=evens[-1], group=g)
        _eq(z, np.full(1, float(evens[-1])), "group broadcast global src")
    else:
        assert dist.get_rank(g) == -1
        import warnings

        with warnings.catch_warnings(record=True) as wl:
            warnings.simplefilter("always")
            assert dist.all_reduce(y, group=g) is None
        assert wl and "not a member" in str(wl[0].message)
        _eq(y, np.full(2, float(r)), "non-member unchanged")
    dist.barrier()
    # errors name the function and the argument
    for bad, exc, text in [
        (lambda: dist.all_reduce(np.ones(2)), TypeError, "tensor"),
        (lambda: dist.broadcast(full(2, 1.0), src=n), ValueError, "src"),
        (lambda: dist.all_reduce(full(2, 1.0), op="median"), ValueError, "op"),
        (
            lambda: dist.all_gather([full(2, 1.0)] * (n + 1), full(2, 1.0)),
            ValueError,
            "tensor_list",
        ),
        (lambda: dist.all_reduce(full(2, 1, "complex64"), op="max"), ValueError, "MAX"),
    ]:
        with pytest.raises(exc, match=text):
            bad()
    dist.destroy_process_group()
    _out(f"OK {r}")


def case_timeout():
    import datetime
    import time

    import ember
    import ember.distributed as dist

    dist.init_process_group("mpi", timeout=datetime.timedelta(seconds=1))
    r, n = dist.get_rank(), dist.get_world_size()
    x = ember.ones(2)
    dist.all_reduce(x)
    if r == n - 1:
        time.sleep(2.5)  # joins the second collective long after the others gave up
        dist.all_reduce(x)
    else:
        t0 = time.monotonic()
        with pytest.raises(dist.DistBackendError) as ei:
            dist.all_reduce(x)
        msg = str(ei.value)
        assert time.monotonic() - t0 < 2.5, msg
        assert "all_reduce" in msg and f"ranks [{n - 1}] did not arrive" in msg, msg
        assert "timed out after 1 s" in msg and f"rank {n - 1} last entered #1" in msg, msg
    dist.monitored_barrier(timeout=10)  # the late arrival completed the pending all_reduce
    dist.destroy_process_group()
    _out(f"OK {r}")


def case_fail():
    import time

    import ember.distributed as dist

    dist.init_process_group("mpi")
    if dist.get_rank() == 1:
        sys.exit(7)
    time.sleep(60)  # the launcher must stop this rank long before
    _out("NOT STOPPED")


def case_env():
    keys = ("RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")
    _out(" ".join(["ENV", *(os.environ.get(k) for k in (*keys, "NCCL_NVLS_ENABLE"))]))


if __name__ == "__main__":
    globals()["case_" + sys.argv[1]]()
    sys.exit(0)


# ---- the test side -----------------------------------------------------------------------


def _launch(nproc, case, *extra, timeout=240):  # generous: loaded 2-core CI hosts
    env = dict(os.environ)
    root = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [env.get("PYTHONPATH"), root]))
    cmd = [sys.executable, "-m", "ember.distributed.run", "--nproc-per-node", str(nproc)]
    cmd += [*extra, HERE, case]
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)


def _ok(p, nproc):
    out = p.stdout + p.stderr
    assert p.returncode == 0, out
    assert sorted(line for line in p.stdout.splitlines() if line.startswith("OK")) == [
        f"OK {r}" for r in range(nproc)
    ], out


def test_launcher_env_subprocess():
    p = _launch(3, "env", "--spawn", "subprocess")
    assert p.returncode == 0, p.stderr
    rows = sorted(line.split()[1:] for line in p.stdout.splitlines() if line.startswith("ENV"))
    assert [row[:4] for row in rows] == [[str(r), str(r), "3", "3"] for r in range(3)]
    assert {row[4] for row in rows} == {"127.0.0.1"} and len({row[5] for row in rows}) == 1
    assert {row[6] for row in rows} == {"0"}


def test_launcher_bad_args():
    p = _launch(0, "env")
    assert p.returncode != 0 and "--nproc-per-node" in p.stderr


def test_launcher_propagates_failure_subprocess():
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "ember.distributed.run",
            "--nproc-per-node",
            "3",
            "--spawn",
            "subprocess",
            "-m",
            "this_module_does_not_exist_xyz",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env={
            **os.environ,
            "PYTHONPATH": os.pathsep.join(
                filter(
                    None,
                    [
                        os.environ.get("PYTHONPATH"),
                        os.path.dirname(os.path.dirname(os.path.dirname(HERE))),
                    ],
                )
            ),
        },
    )
    assert p.returncode == 1 and "failed with exit code 1" in p.stderr, p.stderr


mpi = pytest.mark.skipif(
    "not __import__('ember.distributed', fromlist=['x']).is_mpi_available()",
    reason="mpi4py / MPI not installed",
)


@mpi
@pytest.mark.parametrize("nproc", [2, 3])
def test_collectives_against_numpy(nproc):
    _ok(_launch(nproc, "collectives"), nproc)


@mpi
def test_async_p2p_groups_4_ranks():
    _ok(_launch(4, "async_p2p_groups"), 4)


@mpi
def test_timeout_names_missing_rank():
    _ok(_launch(3, "timeout"), 3)


@mpi
def test_failure_stops_siblings():
    p = _launch(3, "fail", "--kill-grace", "1")
    assert p.returncode == 7, p.stdout + p.stderr
    assert "rank 1 failed with exit code 7" in p.stderr
    assert "NOT STOPPED" not in p.stdout


@mpi
def test_world_size_one_in_process(monkeypatch):
    import ember
    import ember.distributed as dist

    monkeypatch.setenv("MASTER_ADDR", "127.0.0.1")
    monkeypatch.setenv("MASTER_PORT", "0")
    store = dist.TCPStore("127.0.0.1", 0, 1, True)
    dist.init_process_group("mpi", store=store, rank=0, world_size=1)
    try:
        x = ember.asarray(np.arange(4.0))
        w = dist.all_reduce(x, op=dist.ReduceOp.AVG, async_op=True)
        assert w.wait() and w.is_completed()
        _eq(x, np.arange(4.0), "world 1")
        with pytest.raises(ValueError, match="twice"):
            dist.init_process_group("mpi", store=store, rank=0, world_size=1)
    finally:
        dist.destroy_process_group()
    with pytest.raises(ValueError, match="not been initialized"):
        dist.get_rank()


def _world_one_env(monkeypatch, device):
    """The environment the launcher would give a single rank, and the backend for `device`:
    "mpi" for CPU arrays (skipped without MPI), "nccl" for GPU arrays (skipped without NCCL)."""
    import socket

    import ember.distributed as dist

    if device == "cpu" and not dist.is_mpi_available():
        pytest.skip("mpi4py / MPI not installed")
    if device == "cuda" and not dist.is_nccl_available():
        pytest.skip("NCCL not installed")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    for k, v in dict(
        RANK="0",
        LOCAL_RANK="0",
        WORLD_SIZE="1",
        MASTER_ADDR="127.0.0.1",
        MASTER_PORT=str(port),
        EMBER_TEST_DEVICE=device,
        EMBER_TEST_BACKEND="mpi" if device == "cpu" else "nccl",
    ).items():
        monkeypatch.setenv(k, v)


@pytest.fixture
def world_one(device, monkeypatch):
    """A single rank's environment; the default group is torn down even after a failure (the
    next test initializes its own)."""
    import ember.distributed as dist

    _world_one_env(monkeypatch, device)
    yield
    if dist.is_initialized():
        dist.destroy_process_group()


def test_world_one_collectives(world_one):
    """Every collective with world size 1 in this process (on a GPU: NCCL, all paths)."""
    case_collectives()


def test_world_one_async_p2p_groups(world_one):
    case_async_p2p_groups()


def _gpus():
    try:
        import ember

        return ember.cuda.device_count() if ember.cuda.is_available() else 0
    except Exception:
        return 0


@pytest.mark.parametrize("nproc", [2, 4])
@pytest.mark.parametrize("case", ["collectives", "async_p2p_groups"])
def test_nccl_multi_gpu(nproc, case, monkeypatch):
    """NCCL over 2 and 4 GPUs of one host (needs that many GPUs; NOT RUN on CPU machines)."""
    import ember.distributed as dist

    if _gpus() < nproc or not dist.is_nccl_available():
        pytest.skip(f"needs {nproc} GPUs and NCCL")
    monkeypatch.setenv("EMBER_TEST_DEVICE", "cuda")
    monkeypatch.setenv("EMBER_TEST_BACKEND", "nccl")
    _ok(_launch(nproc, case, "--spawn", "subprocess", timeout=300), nproc)


def test_nccl_without_gpu_raises(monkeypatch):
    import ember.distributed as dist

    if _gpus() and dist.is_nccl_available():
        pytest.skip("a GPU and NCCL are present")
    monkeypatch.setenv("MASTER_ADDR", "127.0.0.1")
    with pytest.raises(RuntimeError, match="nccl"):
        dist.init_process_group("nccl", init_method="tcp://127.0.0.1:1", rank=0, world_size=1)
    assert not dist.is_initialized()


def test_nn_parallel_names_ddp():
    """PyTorch code spells it torch.nn.parallel.DistributedDataParallel."""
    import ember
    import ember.distributed as dist

    assert ember.nn.parallel.DistributedDataParallel is dist.DistributedDataParallel
    with pytest.raises(AttributeError, match="DataParallel"):
        ember.nn.parallel.DataParallel  # noqa: B018
