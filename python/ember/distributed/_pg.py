"""Process groups: ``init_process_group``, ``new_group``, ranks, and the per-group backends.

A group holds its global ranks (sorted, as PyTorch), a store prefixed by the group id, a
collective counter and one backend per device type: ``"cpu"`` (MPI through mpi4py) and
``"cuda"`` (NCCL through ctypes, or MPI staging through the host when NCCL is not chosen).
"""

from __future__ import annotations

import datetime
import os
import threading
import time
import warnings
import weakref

from ._store import PrefixStore, TCPStore, _seconds
from ._work import DistBackendError

__all__ = [
    "Backend",
    "GroupMember",
    "ProcessGroup",
    "destroy_process_group",
    "get_backend",
    "get_global_rank",
    "get_group_rank",
    "get_process_group_ranks",
    "get_rank",
    "get_world_size",
    "group",
    "init_process_group",
    "is_initialized",
    "is_mpi_available",
    "is_nccl_available",
    "new_group",
]

_DEFAULT_TIMEOUT = datetime.timedelta(minutes=30)


class Backend(str):
    """Backend names (``Backend.MPI == "mpi"``, ``Backend.NCCL == "nccl"``)."""

    MPI = "mpi"
    NCCL = "nccl"
    UNDEFINED = "undefined"

    def __new__(cls, name):
        if not isinstance(name, str):
            raise TypeError(f"ember.distributed.Backend: name must be a str, got {name!r}")
        return super().__new__(cls, name.lower())


def is_mpi_available():
    """True when mpi4py and an MPI library load."""
    from . import _mpi

    return _mpi.available()


def is_nccl_available():
    """True when libnccl loads (a GPU is still needed to use it)."""
    from . import _nccl

    return _nccl.available()


def _parse_backend(backend):
    """{'cpu': name, 'cuda': name} from "mpi", "nccl", "cpu:mpi,cuda:nccl" or None (auto)."""
    if backend is None or backend == Backend.UNDEFINED:
        # PyTorch's default: the CPU library for CPU arrays, NCCL for GPU arrays when usable
        nccl = is_nccl_available() and _has_gpu()
        if not is_mpi_available():
            return {"cuda": "nccl"} if nccl else {"cpu": "mpi", "cuda": "mpi"}
        return {"cpu": "mpi", "cuda": "nccl" if nccl else "mpi"}
    if not isinstance(backend, str):
        raise TypeError(
            f"ember.distributed.init_process_group: backend must be a str, got "
            f"{type(backend).__name__} {backend!r}"
        )
    spec = backend.lower().replace(" ", "")
    out = {}
    if ":" in spec:
        for part in spec.split(","):
            dev, _, name = part.partition(":")
            if dev not in ("cpu", "cuda") or name not in ("mpi", "nccl"):
                raise ValueError(
                    f"ember.distributed.init_process_group: invalid backend entry {part!r} in "
                    f"{backend!r} (expected 'cpu:mpi' or 'cuda:nccl'/'cuda:mpi')"
                )
            out[dev] = name
    elif spec == "mpi":
        out = {"cpu": "mpi", "cuda": "mpi"}
    elif spec == "nccl":
        out = {"cuda": "nccl"}
    else:
        raise ValueError(
            f"ember.distributed.init_process_group: unknown backend {backend!r} "
            f"(ember has 'mpi' for CPU arrays and 'nccl' for GPU arrays)"
        )
    if out.get("cpu") == "nccl":
        raise ValueError(
            "ember.distributed.init_process_group: NCCL does not handle CPU arrays "
            f"(backend={backend!r})"
        )
    return out


def _has_gpu():
    try:
        from .. import cuda

        return cuda.is_available()
    except Exception:
        return False


class ProcessGroup:
    """A set of ranks that run collectives together (one communicator per backend)."""

    def __init__(self, gid, ranks, my_global, store, backends, timeout_s):
        self.id = gid
        self.ranks = list(ranks)
        self._rank = self.ranks.index(my_global) if my_global in self.ranks else -1
        self.store = PrefixStore(f"ember/pg/{gid}", store)
        self._names = backends
        self._impl = {}
        self._timeout_s = timeout_s
        self._seq = 0
        self._published = 0
        self._last = ""

    def rank(self):
        return self._rank

    def size(self):
        return len(self.ranks)

    def name(self):
        return ",".join(f"{k}:{v}" for k, v in self._names.items())

    def _backend(self, device_type, who):
        name = self._names.get(device_type)
        if name is None:
            raise RuntimeError(
                f"ember.distributed.{who}: no backend for {device_type} arrays in this process "
                f"group (backend {self.name()!r}); pass backend='cpu:mpi,cuda:nccl' to "
                "init_process_group to use both"
            )
        key = name
        if key not in self._impl:
            if name == "mpi":
                from ._mpi import MPIBackend

                self._impl[key] = MPIBackend(self)
            else:
                from ._nccl import NCCLBackend

                self._impl[key] = NCCLBackend(self)
        return self._impl[key]

    def _enter(self, name):
        """Numbers this collective; the progress publisher sends the marker the timeout path
        reads (off the collective's path: a thread publishes changed markers every 50 ms)."""
        self._seq += 1
        self._last = name
        _Publisher.watch(self)
        return self._seq

    def _publish(self):
        """Sends this rank's latest marker if it changed (called by the publisher thread)."""
        seq = self._seq
        if seq != self._published:
            self._published = seq
            self.store._set_nowait(f"progress/{self._rank}", f"{seq} {self._last}")

    def _timeout_error(self, name, seq, limit):
        time.sleep(3 * _Publisher.PERIOD)  # every live rank's latest marker is published
        missing, notes = [], []
        for r in range(self.size()):
            if r == self._rank:
                continue
            got = None
            try:
                if self.store.check([f"progress/{r}"]):
                    got = self.store.get(f"progress/{r}").decode()
            except Exception:
                got = None
            last = int(got.split(" ", 1)[0]) if got else 0
            if last < seq:
                missing.append(self.ranks[r])
                notes.append(
                    f"rank {self.ranks[r]} last entered #{got.replace(' ', ' (', 1)})"
                    if got
                    else f"rank {self.ranks[r]} never entered a collective"
                )
        who = f"ember.distributed.{name}"
        if missing:
            return DistBackendError(
                f"{who}: collective #{seq} of process group {self.id} (ranks {self.ranks}) "
                f"timed out after {limit:g} s; ranks {missing} did not arrive ("
                + "; ".join(notes)
                + ")"
            )
        return DistBackendError(
            f"{who}: collective #{seq} of process group {self.id} (ranks {self.ranks}) timed "
            f"out after {limit:g} s although every rank entered it (mismatched collectives or "
            "arguments across ranks?)"
        )

    def _destroy(self):
        _Publisher.forget(self)
        for impl in self._impl.values():
            impl.close()
        self._impl.clear()

    def __repr__(self):
        return f"<ember.distributed.ProcessGroup {self.id} ranks={self.ranks} {self.name()}>"


class _Publisher:
    """One daemon thread per process that publishes the groups' progress markers."""

    PERIOD = 0.05
    groups = weakref.WeakSet()
    thread = None
    lock = threading.Lock()

    @classmethod
    def watch(cls, g):
        if g in cls.groups:
            return
        with cls.lock:
            cls.groups.add(g)
            if cls.thread is None:
                cls.thread = threading.Thread(target=cls._run, daemon=True, name="ember-progress")
                cls.thread.start()

    @classmethod
    def _run(cls):
        while True:
            time.sleep(cls.PERIOD)
            with cls.lock:
                groups = list(cls.groups)
            for g in groups:
                try:
                    g._publish()
                except Exception:  # a closed store (destroyed group): nothing to report
                    cls.forget(g)

    @classmethod
    def forget(cls, g):
        with cls.lock:
            cls.groups.discard(g)


class _State:
    world = None
    store = None
    own_store = False
    rank = -1
    groups = []
    next_gid = 0


_S = _State()


class GroupMember:
    """``GroupMember.WORLD`` (``group.WORLD``): the default group once initialized."""

    NON_GROUP_MEMBER = object()

    @classmethod
    def __class_getitem__(cls, item):
        raise TypeError("GroupMember")


class _GroupNamespace:
    @property
    def WORLD(self):
        return _S.world


group = _GroupNamespace()


def _world_or_raise(who):
    if _S.world is None:
        raise ValueError(
            f"ember.distributed.{who}: default process group has not been initialized, "
            "please make sure to call init_process_group."
        )
    return _S.world


def _group(g, who):
    world = _world_or_raise(who)
    if g is None or g is GroupMember:
        return world
    if not isinstance(g, ProcessGroup):
        raise TypeError(
            f"ember.distributed.{who}: group must be a ProcessGroup or None, got {type(g).__name__}"
        )
    if g not in _S.groups:
        raise ValueError(f"ember.distributed.{who}: group {g!r} was destroyed")
    return g


def is_initialized():
    return _S.world is not None


def _env(name, who):
    v = os.environ.get(name)
    if v is None:
        raise ValueError(
            f"ember.distributed.{who}: env:// rendezvous: environment variable {name} expected, "
            "but not set"
        )
    return v


def _env_int(name, who):
    v = _env(name, who)
    try:
        return int(v)
    except ValueError:
        raise ValueError(
            f"ember.distributed.{who}: environment variable {name}={v!r} is not an int"
        ) from None


def init_process_group(
    backend=None,
    init_method=None,
    timeout=None,
    world_size=-1,
    rank=-1,
    store=None,
    group_name="",
    pg_options=None,
    device_id=None,
):
    """Initializes the default process group (PyTorch's signature). `init_method` is
    ``"env://"`` (MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE; the default) or
    ``"tcp://host:port"``; or pass a `store` with `rank` and `world_size`. Rank 0 serves the
    rendezvous store. `timeout` bounds every collective (default 30 minutes)."""
    who = "init_process_group"
    if _S.world is not None:
        raise ValueError(
            f"ember.distributed.{who}: trying to initialize the default process group twice!"
        )
    timeout_s = _seconds(timeout if timeout is not None else _DEFAULT_TIMEOUT, who)
    names = _parse_backend(backend)
    if store is not None:
        if init_method is not None:
            raise ValueError(f"ember.distributed.{who}: cannot specify both init_method and store")
        if rank < 0 or world_size <= 0:
            raise ValueError(
                f"ember.distributed.{who}: rank and world_size are required with store"
            )
    else:
        init_method = "env://" if init_method is None else init_method
        if not isinstance(init_method, str):
            raise TypeError(
                f"ember.distributed.{who}: init_method must be a str, got {init_method!r}"
            )
        if init_method.startswith("env://"):
            host = _env("MASTER_ADDR", who)
            port = _env_int("MASTER_PORT", who)
            # Under a bare `mpiexec` the process manager's variables stand in for RANK/WORLD_SIZE.
            for ours, theirs in (
                ("RANK", "PMI_RANK"),
                ("WORLD_SIZE", "PMI_SIZE"),
                ("RANK", "OMPI_COMM_WORLD_RANK"),
                ("WORLD_SIZE", "OMPI_COMM_WORLD_SIZE"),
            ):
                if ours not in os.environ and theirs in os.environ:
                    os.environ[ours] = os.environ[theirs]
            rank = _env_int("RANK", who) if rank < 0 else rank
            world_size = _env_int("WORLD_SIZE", who) if world_size < 0 else world_size
        elif init_method.startswith("tcp://"):
            hp = init_method[len("tcp://") :].split("?")[0]
            host, _, p = hp.rpartition(":")
            if not host or not p.isdigit():
                raise ValueError(f"ember.distributed.{who}: invalid init_method {init_method!r}")
            port = int(p)
            if rank < 0 or world_size <= 0:
                raise ValueError(f"ember.distributed.{who}: tcp:// needs rank and world_size")
        else:
            raise ValueError(
                f"ember.distributed.{who}: unsupported init_method {init_method!r} "
                "(ember supports 'env://' and 'tcp://host:port')"
            )
    if isinstance(rank, bool) or not isinstance(world_size, int) or world_size <= 0:
        raise ValueError(f"ember.distributed.{who}: invalid world_size {world_size!r}")
    if not isinstance(rank, int) or not 0 <= rank < world_size:
        raise ValueError(
            f"ember.distributed.{who}: invalid rank {rank!r} for world_size {world_size}"
        )
    if "nccl" in names.values():
        from ._nccl import _need

        _need()  # a clear error now rather than at the first GPU collective
    own_store = store is None
    if own_store:
        store = TCPStore(host, port, world_size, rank == 0, datetime.timedelta(seconds=timeout_s))
    _S.store, _S.rank, _S.next_gid, _S.own_store = store, rank, 1, own_store
    pg = ProcessGroup(0, range(world_size), rank, store, names, timeout_s)
    _S.world = pg
    _S.groups = [pg]
    try:
        if names.get("cpu") == "mpi" or (names.get("cuda") == "mpi"):
            pg._backend("cpu" if "cpu" in names else "cuda", who)  # MPI comm is collective
    except BaseException:
        _S.world, _S.groups, _S.store = None, [], None
        if own_store:
            store.close()
        raise
    return None


def destroy_process_group(group=None):
    """Destroys `group` (the default group and every other group when None)."""
    if group is None or group is _S.world:
        _world_or_raise("destroy_process_group")
        for g in reversed(_S.groups):
            g._destroy()
        _S.groups, _S.world = [], None
        st, _S.store = _S.store, None
        if _S.own_store and hasattr(st, "close"):  # a store the caller passed stays open
            st.close()
        return
    g = _group(group, "destroy_process_group")
    g._destroy()
    _S.groups.remove(g)


def new_group(
    ranks=None, timeout=None, backend=None, pg_options=None, use_local_synchronization=False
):
    """A group of `ranks` (all ranks when None). Every rank of the default group must call
    it, members or not (as PyTorch); non-members get a group on which collectives are no-ops
    with a warning."""
    world = _world_or_raise("new_group")
    if ranks is None:
        ranks = list(range(world.size()))
    try:
        ranks = sorted({int(r) for r in ranks})
    except (TypeError, ValueError):
        raise TypeError(
            f"ember.distributed.new_group: ranks must be a list of ints, got {ranks!r}"
        ) from None
    bad = [r for r in ranks if not 0 <= r < world.size()]
    if bad:
        raise ValueError(
            f"ember.distributed.new_group: ranks {bad} are out of range for world size "
            f"{world.size()}"
        )
    names = _parse_backend(backend) if backend is not None else dict(world._names)
    timeout_s = world._timeout_s if timeout is None else _seconds(timeout, "new_group")
    gid = _S.next_gid
    _S.next_gid += 1
    g = ProcessGroup(gid, ranks, _S.rank, _S.store, names, timeout_s)
    _S.groups.append(g)
    # MPI builds group communicators collectively over the world: do it now, on every rank.
    if "mpi" in names.values():
        from ._mpi import MPIBackend

        MPIBackend.split_from_world(world, g)
    return g


def get_rank(group=None):
    """This process's rank in `group` (-1 when not a member)."""
    return _group(group, "get_rank").rank()


def get_world_size(group=None):
    return _group(group, "get_world_size").size()


def get_backend(group=None):
    g = _group(group, "get_backend")
    vals = set(g._names.values())
    return Backend(vals.pop()) if len(vals) == 1 else g.name()


def get_process_group_ranks(group):
    return list(_group(group, "get_process_group_ranks").ranks)


def get_global_rank(group, group_rank):
    g = _group(group, "get_global_rank")
    if not 0 <= group_rank < g.size():
        raise ValueError(
            f"ember.distributed.get_global_rank: group rank {group_rank} is not in {g!r}"
        )
    return g.ranks[group_rank]


def get_group_rank(group, global_rank):
    g = _group(group, "get_group_rank")
    if global_rank not in g.ranks:
        raise ValueError(
            f"ember.distributed.get_group_rank: global rank {global_rank} is not part of {g!r}"
        )
    return g.ranks.index(global_rank)


def _warn_not_in_group(who):
    warnings.warn(
        f"ember.distributed.{who}: running a collective on a group this rank is not a member of; "
        "it does nothing",
        stacklevel=3,
    )
