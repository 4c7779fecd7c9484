"""DistributedDataParallel (against single-process training on the concatenated batch, over
2 ranks of the CPU backend) and DistributedSampler (the partition rules)."""

import os
import subprocess
import sys

import numpy as np
import pytest

HERE = os.path.abspath(__file__)


def _out(line):
    os.write(1, (line + "\n").encode())


def _model(seed, extra=False):
    import ember
    from ember import nn

    ember.random.seed(seed) if hasattr(ember.random, "seed") else None

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(6, 16)
            self.fc2 = nn.Linear(16, 3)
            self.unused = nn.Linear(4, 4)
            self.side = nn.Linear(6, 3)

        def forward(self, x, use_side=False):
            y = self.fc2(nn.functional.relu(self.fc1(x)))
            return y + self.side(x) if use_side else y

    m = Net()
    rng = np.random.default_rng(seed)
    with ember.no_grad():
        for p in m.parameters():
            p[...] = ember.asarray(rng.standard_normal(p.shape).astype("float32") * 0.3)
    return m


def _batch(k, n=8):
    rng = np.random.default_rng(100 + k)
    return rng.standard_normal((n, 6)).astype("float32"), rng.integers(0, 3, n)


def _grads(m):
    import ember

    return {n: (None if p.grad is None else ember.asnumpy(p.grad)) for n, p in m.named_parameters()}


def _close(a, b, what):
    assert (a is None) == (b is None), what
    if a is not None:
        np.testing.assert_allclose(a, b, rtol=2e-5, atol=2e-6, err_msg=what)


def case_ddp():
    import ember
    import ember.distributed as dist
    from ember import nn

    dist.init_process_group("mpi")
    r, n = dist.get_rank(), dist.get_world_size()
    loss_fn = nn.CrossEntropyLoss()
    # construction broadcasts rank 0's parameters
    local = _model(seed=r)
    ddp = dist.DistributedDataParallel(local, bucket_cap_mb=0.0005, find_unused_parameters=True)
    assert len(ddp._buckets) > 1
    ref = _model(seed=0)
    for (name, p), q in zip(local.named_parameters(), ref.parameters(), strict=True):
        _close(ember.asnumpy(p), ember.asnumpy(q), "broadcast " + name)
    assert set(ddp.state_dict()) == {"module." + k for k in local.state_dict()}
    # gradients equal single-process gradients on the concatenated batch; optimizer steps agree
    opt = ember.optim.SGD(ddp.parameters(), lr=0.1)
    ref_opt = ember.optim.SGD(ref.parameters(), lr=0.1)
    for step in range(3):
        xs, ys = zip(*[_batch(10 * step + k) for k in range(n)], strict=True)
        use_side = step == 2 and r == 0  # used on one rank only: averaged with zeros
        opt.zero_grad()
        loss_fn(ddp(ember.asarray(xs[r]), use_side=use_side), ember.asarray(ys[r])).backward()
        ref_opt.zero_grad()
        full = ember.asarray(np.concatenate(xs))
        if step == 2:  # rank 0's half used `side`: reproduce that on the first half
            out = ref(full)
            side = ref.side(full[: len(xs[0])])
            pad = ember.zeros((len(full) - len(xs[0]), 3))
            out = out + ember.concatenate([side, pad])
        else:
            out = ref(full)
        loss_fn(out, ember.asarray(np.concatenate(ys))).backward()
        g, gr = _grads(local), _grads(ref)
        for name in g:
            if name.startswith("side") and step < 2:
                assert g[name] is None and gr[name] is None, name
                continue
            _close(g[name], gr[name], f"step {step} grad {name}")
        assert g["unused.weight"] is None
        opt.step()
        ref_opt.step()
    for (name, p), q in zip(local.named_parameters(), ref.parameters(), strict=True):
        _close(ember.asnumpy(p), ember.asnumpy(q), "after training " + name)
    # no_sync: local accumulation, then one synchronized backward reduces the sum
    m2 = _model(seed=5)
    d2 = dist.DistributedDataParallel(m2, find_unused_parameters=True)
    ref2 = _model(seed=5)
    xa, ya = _batch(50 + r)
    xb, yb = _batch(60 + r)
    with d2.no_sync():
        loss_fn(d2(ember.asarray(xa)), ember.asarray(ya)).backward()
    local_after_first = _grads(m2)
    loss_fn(d2(ember.asarray(xb)), ember.asarray(yb)).backward()
    for k in range(n):
        for xx, yy in (_batch(50 + k), _batch(60 + k)):
            (loss_fn(ref2(ember.asarray(xx)), ember.asarray(yy)) / n).backward()
    g, gr = _grads(m2), _grads(ref2)
    for name in ("fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"):
        _close(g[name], gr[name], "no_sync " + name)
    assert local_after_first["fc1.weight"] is not None
    # without find_unused_parameters a parameter without gradient is reported next forward
    m3 = _model(seed=1)
    d3 = dist.DistributedDataParallel(m3)
    loss_fn(d3(ember.asarray(xa)), ember.asarray(ya)).backward()
    with pytest.raises(RuntimeError, match="finished reduction.*unused.weight"):
        d3(ember.asarray(xa))
    with pytest.raises(TypeError, match="module"):
        dist.DistributedDataParallel("not a module")
    dist.destroy_process_group()
    _out(f"OK {r}")


def case_seed_loop():
    """The seed's training loop (examples/train_mlp.py) with the two DDP changes: the model is
    wrapped in DistributedDataParallel and the loader takes a DistributedSampler."""
    import ember
    import ember.distributed as dist

    backend = os.environ.get("EMBER_TEST_BACKEND", "mpi")
    dist.init_process_group(backend)
    r, n = dist.get_rank(), dist.get_world_size()
    gpu = os.environ.get("EMBER_TEST_DEVICE") == "cuda"
    device = ember.device(f"cuda:{os.environ['LOCAL_RANK']}" if gpu else "cpu")
    x, y = ember.datasets.load_digits()
    data = ember.data.TensorDataset(x / 16.0, y)
    train, test = ember.data.random_split(data, [0.8, 0.2], generator=0)
    sampler = dist.DistributedSampler(train, seed=0)
    train_loader = ember.data.DataLoader(train, batch_size=32, sampler=sampler)
    ember.random.seed(r)  # different initial weights: DDP broadcasts rank 0's
    model = ember.nn.Sequential(
        ember.nn.Linear(64, 128),
        ember.nn.ReLU(),
        ember.nn.Linear(128, 10),
        ember.nn.Softmax(dim=1),
    )
    model.to(device)
    model = dist.DistributedDataParallel(model)
    criterion = ember.nn.CrossEntropyLoss()
    optimizer = ember.optim.Adam(model.parameters())
    for epoch in range(4):
        sampler.set_epoch(epoch)
        for data, target in train_loader:
            data, target = data.to(device), target.to(device)
            optimizer.zero_grad()
            loss = criterion(model(data), target)
            loss.backward()
            optimizer.step()
    # every rank holds the same weights
    flat = ember.concatenate([p.detach().reshape(-1) for p in model.parameters()])
    every = [ember.empty(flat.shape, dtype=flat.dtype, device=flat.device) for _ in range(n)]
    dist.all_gather(every, flat)
    for k in range(n):
        np.testing.assert_array_equal(ember.asnumpy(every[k]), ember.asnumpy(flat))
    correct = total = 0
    with ember.no_grad():
        for data, target in ember.data.DataLoader(test, batch_size=512):
            pred = ember.argmax(model(data.to(device)), axis=1)
            correct += int(ember.sum(pred == target.to(device)))
            total += target.shape[0]
    assert correct / total > 0.7, correct / total  # the seed model (softmax + CE) learns slowly
    dist.destroy_process_group()
    _out(f"OK {r}")


if __name__ == "__main__":
    globals()["case_" + sys.argv[1]]()
    sys.exit(0)


mpi = pytest.mark.skipif(
    "not __import__('ember.distributed', fromlist=['x']).is_mpi_available()",
    reason="mpi4py / MPI not installed",
)


@mpi
def test_ddp_matches_single_process_on_concatenated_batch():
    env = dict(os.environ)
    root = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [env.get("PYTHONPATH"), root]))
    cmd = [sys.executable, "-m", "ember.distributed.run", "--nproc-per-node", "2", HERE, "ddp"]
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr
    assert sorted(x for x in p.stdout.splitlines() if x.startswith("OK")) == ["OK 0", "OK 1"]


@mpi
def test_seed_training_loop_two_ranks():
    _ok_launch(2, "seed_loop")


def _ok_launch(nproc, case, *extra):
    env = dict(os.environ)
    root = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [env.get("PYTHONPATH"), root]))
    cmd = [sys.executable, "-m", "ember.distributed.run", "--nproc-per-node", str(nproc)]
    p = subprocess.run(
        [*cmd, *extra, HERE, case], env=env, capture_output=True, text=True, timeout=300
    )
    assert p.returncode == 0, p.stdout + p.stderr
    assert sorted(x for x in p.stdout.splitlines() if x.startswith("OK")) == [
        f"OK {r}" for r in range(nproc)
    ]


@pytest.mark.parametrize("case", ["ddp", "seed_loop"])
def test_ddp_multi_gpu(case, monkeypatch):
    """DDP over 2 GPUs with NCCL (NOT RUN on CPU machines)."""
    import ember
    import ember.distributed as dist

    if not (ember.cuda.is_available() and ember.cuda.device_count() >= 2):
        pytest.skip("needs 2 GPUs")
    if not dist.is_nccl_available():
        pytest.skip("needs NCCL")
    monkeypatch.setenv("EMBER_TEST_DEVICE", "cuda")
    monkeypatch.setenv("EMBER_TEST_BACKEND", "nccl")
    _ok_launch(2, case, "--spawn", "subprocess")


def test_ddp_world_size_one(monkeypatch):
    ds = pytest.importorskip("ember.distributed")
    if not ds.is_mpi_available():
        pytest.skip("mpi4py / MPI not installed")
    import ember
    from ember import nn

    store = ds.TCPStore("127.0.0.1", 0, 1, True)
    ds.init_process_group("mpi", store=store, rank=0, world_size=1)
    try:
        m, ref = _model(3), _model(3)
        d = ds.DistributedDataParallel(m)
        x, y = _batch(1)
        nn.CrossEntropyLoss()(d(ember.asarray(x)), ember.asarray(y)).backward()
        nn.CrossEntropyLoss()(ref(ember.asarray(x)), ember.asarray(y)).backward()
        with pytest.raises(RuntimeError, match="finished reduction"):
            d(ember.asarray(x))  # `unused` and `side` got no gradient
        g, gr = _grads(m), _grads(ref)
        for k in ("fc1.weight", "fc2.bias"):
            _close(g[k], gr[k], k)
    finally:
        ds.destroy_process_group()


# ---- DistributedSampler --------------------------------------------------------------------


@pytest.mark.parametrize("n", [0, 1, 7, 10, 12])
@pytest.mark.parametrize("replicas", [1, 3, 4])
@pytest.mark.parametrize("drop_last", [False, True])
@pytest.mark.parametrize("shuffle", [False, True])
def test_sampler_partition(n, replicas, drop_last, shuffle):
    import math

    from ember.distributed import DistributedSampler

    data = list(range(n))
    parts = [
        list(DistributedSampler(data, replicas, r, shuffle=shuffle, seed=4, drop_last=drop_last))
        for r in range(replicas)
    ]
    if drop_last and n % replicas:
        per = math.ceil((n - replicas) / replicas)
    else:
        per = math.ceil(n / replicas)
    assert all(len(p) == per for p in parts)
    assert all(
        len(DistributedSampler(data, replicas, r, drop_last=drop_last)) == per
        for r in range(replicas)
    )
    flat = [i for p in parts for i in p]
    if drop_last:
        assert len(set(flat)) == len(flat) == per * replicas
    elif n:
        assert set(flat) == set(range(n))  # every sample, padded by repetition
    if not shuffle:
        order = list(range(n))
        if not drop_last and n:
            order += (order * math.ceil((per * replicas - n) / n))[: per * replicas - n]
        assert parts == [order[r : per * replicas : replicas] for r in range(replicas)]


def test_sampler_epochs_and_errors():
    from ember.distributed import DistributedSampler

    s = DistributedSampler(range(20), num_replicas=2, rank=1, seed=3)
    a = list(s)
    assert a == list(s)  # deterministic within an epoch
    s.set_epoch(1)
    b = list(s)
    assert a != b and sorted(a + list(DistributedSampler(range(20), 2, 0, seed=3))) == list(
        range(20)
    )
    with pytest.raises(ValueError, match="Invalid rank 2"):
        DistributedSampler(range(4), num_replicas=2, rank=2)
    with pytest.raises(ValueError, match="num_replicas"):
        DistributedSampler(range(4), num_replicas=0, rank=0)
    with pytest.raises(TypeError, match="rank"):
        DistributedSampler(range(4), num_replicas=2, rank=1.5)
    with pytest.raises(RuntimeError, match="init_process_group"):
        DistributedSampler(range(4))


def test_sampler_with_dataloader():
    import ember
    from ember.data import DataLoader, TensorDataset
    from ember.distributed import DistributedSampler

    x = ember.asarray(np.arange(10, dtype="float32"))
    ds = TensorDataset(x)
    seen = []
    for r in range(2):
        loader = DataLoader(ds, batch_size=2, sampler=DistributedSampler(ds, 2, r, shuffle=False))
        seen += [v for (b,) in loader for v in ember.asnumpy(b).tolist()]
    assert sorted(seen) == list(range(10))
