"""``python -m ember.distributed.run``: torchrun's launcher for ember.

Starts ``--nproc-per-node`` copies of a script with torchrun's environment (RANK, LOCAL_RANK,
WORLD_SIZE, LOCAL_WORLD_SIZE, GROUP_RANK, ROLE_RANK, ROLE_WORLD_SIZE, MASTER_ADDR, MASTER_PORT,
and NCCL_NVLS_ENABLE=0 unless set). When one rank fails the others are terminated (SIGTERM, then
SIGKILL after ``--kill-grace`` seconds) and the launcher exits with the failed rank's code.

MPI builds its world through a process manager, so when mpi4py and an MPI with ``mpiexec`` are
present (``--spawn auto``, single node) the ranks start under that ``mpiexec`` through a small
wrapper that sets the variables above and reports a failing rank back to the launcher; otherwise
(``--spawn subprocess``, or no MPI) the launcher starts the ranks itself, which suits NCCL.
"""

from __future__ import annotations

import argparse
import os
import select
import signal
import socket
import subprocess
import sys
import time

__all__ = ["get_args_parser", "main", "parse_args", "run"]


def get_args_parser():
    p = argparse.ArgumentParser(
        prog="python -m ember.distributed.run",
        description="Starts N processes per node for ember.distributed (torchrun's options).",
    )
    p.add_argument("--nproc-per-node", "--nproc_per_node", default="1", dest="nproc_per_node")
    p.add_argument("--nnodes", default="1")
    p.add_argument("--node-rank", "--node_rank", type=int, default=0, dest="node_rank")
    p.add_argument("--master-addr", "--master_addr", default="127.0.0.1", dest="master_addr")
    p.add_argument("--master-port", "--master_port", type=int, default=None, dest="master_port")
    p.add_argument("--standalone", action="store_true", help="single node, a free port")
    p.add_argument("--spawn", choices=("auto", "mpiexec", "subprocess"), default="auto")
    p.add_argument("--kill-grace", type=float, default=5.0, dest="kill_grace")
    p.add_argument("-m", "--module", action="store_true", help="run the script as a module")
    p.add_argument("--no-python", "--no_python", action="store_true", dest="no_python")
    p.add_argument("training_script")
    p.add_argument("training_script_args", nargs=argparse.REMAINDER)
    return p


def parse_args(args=None):
    return get_args_parser().parse_args(args)


def _nproc(v):
    if v in ("auto", "gpu"):
        try:
            from ember import cuda

            n = cuda.device_count() if cuda.is_available() else 0
        except Exception:
            n = 0
        if v == "auto":
            return max(n, 1)  # one process per GPU, or one on a machine without GPUs
        if n == 0:
            raise SystemExit("ember.distributed.run: --nproc-per-node gpu: no GPU is available")
        return n
    if v == "cpu":
        return os.cpu_count() or 1
    try:
        n = int(v)
    except ValueError:
        n = 0
    if n <= 0:
        raise SystemExit(
            f"ember.distributed.run: --nproc-per-node must be a positive int, 'auto', 'cpu' or "
            f"'gpu', got {v!r}"
        )
    return n


def _free_port(host="127.0.0.1"):
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def _command(a):
    if a.no_python:
        return [a.training_script, *a.training_script_args]
    if a.module:
        return [sys.executable, "-u", "-m", a.training_script, *a.training_script_args]
    return [sys.executable, "-u", a.training_script, *a.training_script_args]


def _base_env(a, nproc, world):
    env = dict(os.environ)
    env.update(
        MASTER_ADDR=a.master_addr,
        MASTER_PORT=str(a.master_port),
        WORLD_SIZE=str(world),
        LOCAL_WORLD_SIZE=str(nproc),
        GROUP_RANK=str(a.node_rank),
        ROLE_WORLD_SIZE=str(world),
        ROLE_NAME="default",
    )
    env.setdefault("NCCL_NVLS_ENABLE", "0")
    if nproc > 1:
        env.setdefault("OMP_NUM_THREADS", "1")
    return env


def _kill(procs, sig):
    for p in procs:
        if p.poll() is None:
            try:
                os.killpg(p.pid, sig)
            except (ProcessLookupError, PermissionError):
                pass


def _stop_all(procs, grace):
    _kill(procs, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and any(p.poll() is None for p in procs):
        time.sleep(0.05)
    _kill(procs, signal.SIGKILL)
    for p in procs:
        p.wait()


def _code(rc):
    return 128 - rc if rc < 0 else rc


def _say(msg):
    print(f"ember.distributed.run: {msg}", file=sys.stderr, flush=True)


def _run_subprocess(a, nproc, world):
    cmd = _command(a)
    base = _base_env(a, nproc, world)
    procs = []
    for lr in range(nproc):
        env = dict(base)
        r = a.node_rank * nproc + lr
        env.update(RANK=str(r), LOCAL_RANK=str(lr), ROLE_RANK=str(r))
        procs.append(subprocess.Popen(cmd, env=env, start_new_session=True))
    return _monitor(procs, a, lambda i: (a.node_rank * nproc + i, i), None)


def _monitor(procs, a, rank_of, reports):
    """Waits for the ranks; on the first failure stops the rest. `reports` is a listening
    socket on which mpiexec-started ranks report their failure (None: watch exit codes)."""
    stop = []

    def on_signal(signum, frame):
        stop.append(signum)

    old = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        while True:
            if stop:
                _say(f"got signal {stop[0]}; stopping the ranks")
                _stop_all(procs, a.kill_grace)
                return 128 + stop[0]
            failed = None
            if reports is not None:
                ready, _, _ = select.select([reports], [], [], 0.05)
                if ready:
                    conn, _ = reports.accept()
                    with conn:
                        conn.settimeout(5)
                        msg = conn.recv(256).decode().split()
                    if len(msg) == 2:
                        failed = (int(msg[0]), int(msg[1]))
            else:
                time.sleep(0.05)
            for i, p in enumerate(procs):
                rc = p.poll()
                if rc is not None and rc != 0 and failed is None:
                    failed = (rank_of(i)[0], _code(rc))
            if failed is not None:
                rank, code = failed
                alive = [p for p in procs if p.poll() is None]
                _say(
                    f"rank {rank} failed with exit code {code}"
                    + ("; terminating the other ranks" if alive else "")
                )
                _stop_all(procs, a.kill_grace)
                return code or 1
            if all(p.poll() is not None for p in procs):
                return 0
    finally:
        for s, h in old.items():
            signal.signal(s, h)


def _run_mpiexec(a, nproc, world, mpiexec):
    reports = socket.socket()
    reports.bind(("127.0.0.1", 0))
    reports.listen(64)
    env = _base_env(a, nproc, world)
    env["EMBER_RUN_REPORT"] = f"127.0.0.1:{reports.getsockname()[1]}"
    env["EMBER_RUN_RANK_OFFSET"] = str(a.node_rank * nproc)
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        # torchrun starts ranks as root (containers run as root); Open MPI's mpiexec, an
        # implementation detail here, refuses to unless told so (MPICH ignores these).
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    mode = "module" if a.module else "script"
    cmd = [mpiexec, "-n", str(nproc), sys.executable, "-u", "-m", "ember.distributed._rank_main"]
    cmd += [mode, a.training_script, *a.training_script_args]
    proc = subprocess.Popen(cmd, env=env, start_new_session=True)
    try:
        return _monitor([proc], a, lambda i: (-1, -1), reports)
    finally:
        reports.close()


def run(args):
    """Runs the launcher with parsed `args`; returns the exit code."""
    nproc = _nproc(args.nproc_per_node)
    try:
        nnodes = int(str(args.nnodes).split(":")[-1])
    except ValueError:
        raise SystemExit(f"ember.distributed.run: invalid --nnodes {args.nnodes!r}") from None
    if nnodes < 1 or not 0 <= args.node_rank < nnodes:
        raise SystemExit(
            f"ember.distributed.run: invalid --nnodes {nnodes} / --node-rank {args.node_rank}"
        )
    if args.master_port is None:
        args.master_port = _free_port() if nnodes == 1 else 29500
    world = nnodes * nproc
    spawn = args.spawn
    mpiexec = None
    if spawn in ("auto", "mpiexec") and not args.no_python:
        from . import _mpi

        mpiexec = _mpi.mpiexec_path() if _mpi.available() else None
        if spawn == "mpiexec" and mpiexec is None:
            raise SystemExit(
                "ember.distributed.run: --spawn mpiexec needs mpi4py and an MPI with mpiexec "
                "(pip install mpi4py mpich)"
            )
        if nnodes > 1 and spawn == "auto":
            mpiexec = None  # mpiexec's own host list is needed across nodes
    if mpiexec is not None:
        return _run_mpiexec(args, nproc, world, mpiexec)
    return _run_subprocess(args, nproc, world)


def main(args=None):
    sys.exit(run(parse_args(args)))


if __name__ == "__main__":
    main()
