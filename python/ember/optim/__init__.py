"""ember.optim: optimizers and learning-rate schedules (``ember.optim.lr_scheduler``).

``Optimizer`` is the base class: parameter groups, per-parameter ``state``, ``zero_grad``,
``add_param_group`` and ``state_dict``/``load_state_dict`` in PyTorch's layout. The concrete
optimizers ``SGD``, ``Adam``, ``AdamW``, ``RMSprop`` and ``Adagrad`` follow PyTorch's
formulas; each updates a whole param group with one multi-tensor function
(``ember.optim._functional``). ``NAdam``, ``RAdam`` and ``LBFGS`` are written with array ops.
"""

from . import lr_scheduler
from ._optimizer import Optimizer, required
from ._optimizers import SGD, Adagrad, Adam, AdamW, RMSprop
from ._optimizers_more import LBFGS, NAdam, RAdam

__all__ = [
    "LBFGS",
    "NAdam",
    "RAdam",
    "SGD",
    "Adagrad",
    "Adam",
    "AdamW",
    "Optimizer",
    "RMSprop",
    "lr_scheduler",
    "required",
]
