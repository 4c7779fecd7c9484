"""ember.optim: optimizers and learning-rate schedules (``ember.optim.lr_scheduler``).

``Optimizer`` is the base class: parameter groups, per-parameter ``state``, ``zero_grad``,
``add_param_group`` and ``state_dict``/``load_state_dict`` in PyTorch's layout. The concrete
optimizers ``SGD``, ``Adam``, ``AdamW``, ``RMSprop`` and ``Adagrad`` follow PyTorch's
formulas; each updates a whole param group with one multi-tensor function
(``ember.optim._functional``). ``NAdam``, ``RAdam`` and ``LBFGS`` are written with array ops.
"""

from . import lr_scheduler, swa_utils
from ._lr_cyclic import CyclicLR as _CyclicLR
from ._optimizer import Optimizer, required
from ._optimizers import SGD, Adagrad, Adam, AdamW, RMSprop
from ._optimizers_extra import Adadelta, Adamax, SparseAdam
from ._optimizers_more import LBFGS, NAdam, RAdam

lr_scheduler.CyclicLR = _CyclicLR  # in its own file: lr_scheduler.py is near the size limit
lr_scheduler.__all__.append("CyclicLR")

__all__ = [
    "LBFGS",
    "NAdam",
    "RAdam",
    "SGD",
    "Adadelta",
    "Adamax",
    "Adagrad",
    "Adam",
    "AdamW",
    "Optimizer",
    "RMSprop",
    "SparseAdam",
    "lr_scheduler",
    "swa_utils",
    "required",
]
