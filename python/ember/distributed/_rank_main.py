"""The per-rank wrapper of ``ember.distributed.run`` under mpiexec: turns the process
manager's rank into torchrun's variables, runs the script as ``__main__`` and, when it fails,
tells the launcher (which then stops every rank) before exiting with the script's code."""

from __future__ import annotations

import os
import runpy
import socket
import sys
import traceback


def _report(rank, code):
    addr = os.environ.get("EMBER_RUN_REPORT")
    if not addr:
        return
    host, _, port = addr.rpartition(":")
    try:
        with socket.create_connection((host, int(port)), timeout=5) as s:
            s.sendall(f"{rank} {code}".encode())
    except OSError:
        pass


def _exit_code(e):
    c = e.code
    if c is None:
        return 0
    if isinstance(c, int):
        return c
    print(c, file=sys.stderr)
    return 1


def main():
    mode, target, *args = sys.argv[1:]
    env = os.environ
    local = int(env.get("PMI_RANK", env.get("OMPI_COMM_WORLD_RANK", "0")))
    rank = int(env.get("EMBER_RUN_RANK_OFFSET", "0")) + local
    env["LOCAL_RANK"] = str(int(env.get("MPI_LOCALRANKID", local)))
    env["RANK"] = env["ROLE_RANK"] = str(rank)
    code = 0
    try:
        if mode == "module":
            sys.argv = [target, *args]
            runpy.run_module(target, run_name="__main__", alter_sys=True)
        else:
            sys.argv = [target, *args]
            sys.path.insert(0, os.path.dirname(os.path.abspath(target)))
            runpy.run_path(target, run_name="__main__")
    except SystemExit as e:
        code = _exit_code(e)
    except BaseException:
        traceback.print_exc()
        code = 1
    if code:
        sys.stdout.flush()
        sys.stderr.flush()
        _report(rank, code)
        os._exit(code)


if __name__ == "__main__":
    main()
