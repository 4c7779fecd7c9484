"""ember.distributed: PyTorch's ``torch.distributed`` for ember arrays.

``init_process_group(backend=...)`` with "mpi" (CPU arrays, through mpi4py) and "nccl" (GPU
arrays, NCCL loaded with ctypes), the collectives (``all_reduce``, ``broadcast``,
``all_gather``, ``reduce_scatter``, ``reduce``, ``gather``, ``scatter``, ``all_to_all``,
``send``/``recv`` ...) with ``async_op=True`` work handles, ``new_group``, a rendezvous
``TCPStore``, the launcher ``python -m ember.distributed.run``, ``DistributedDataParallel``
and ``DistributedSampler``. A collective that hangs raises after the group's timeout, naming
the ranks that did not arrive.
"""

from ._collectives import (
    all_gather,
    all_gather_into_tensor,
    all_reduce,
    all_to_all,
    all_to_all_single,
    barrier,
    broadcast,
    gather,
    irecv,
    isend,
    monitored_barrier,
    recv,
    reduce,
    reduce_scatter,
    reduce_scatter_tensor,
    scatter,
    send,
)
from ._ddp import DistributedDataParallel
from ._objects import (
    P2POp,
    all_gather_object,
    batch_isend_irecv,
    broadcast_object_list,
    gather_object,
    scatter_object_list,
)
from ._pg import (
    Backend,
    GroupMember,
    ProcessGroup,
    destroy_process_group,
    get_backend,
    get_global_rank,
    get_group_rank,
    get_process_group_ranks,
    get_rank,
    get_world_size,
    group,
    init_process_group,
    is_initialized,
    is_mpi_available,
    is_nccl_available,
    new_group,
)
from ._sampler import DistributedSampler
from ._store import HashStore, PrefixStore, Store, TCPStore
from ._work import DistBackendError, DistError, ReduceOp, Work

__all__ = [
    "Backend",
    "DistBackendError",
    "DistributedDataParallel",
    "DistributedSampler",
    "DistError",
    "GroupMember",
    "HashStore",
    "P2POp",
    "PrefixStore",
    "ProcessGroup",
    "ReduceOp",
    "Store",
    "TCPStore",
    "Work",
    "all_gather",
    "all_gather_into_tensor",
    "all_gather_object",
    "all_reduce",
    "all_to_all",
    "all_to_all_single",
    "barrier",
    "batch_isend_irecv",
    "broadcast",
    "broadcast_object_list",
    "destroy_process_group",
    "gather",
    "gather_object",
    "get_backend",
    "get_global_rank",
    "get_group_rank",
    "get_process_group_ranks",
    "get_rank",
    "get_world_size",
    "group",
    "init_process_group",
    "irecv",
    "is_available",
    "is_initialized",
    "is_mpi_available",
    "is_nccl_available",
    "isend",
    "monitored_barrier",
    "new_group",
    "recv",
    "reduce",
    "reduce_scatter",
    "reduce_scatter_tensor",
    "scatter",
    "scatter_object_list",
    "send",
]


def is_available():
    """True: the package itself is always importable (backends are checked when chosen)."""
    return True
