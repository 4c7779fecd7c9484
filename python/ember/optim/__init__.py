"""ember.optim: optimizers and learning-rate schedules (``ember.optim.lr_scheduler``).

``Optimizer`` is the base class: parameter groups, per-parameter ``state``, ``zero_grad``,
``add_param_group`` and ``state_dict``/``load_state_dict`` in PyTorch's layout. A concrete
optimizer subclasses it and implements ``step()``.
"""

from . import lr_scheduler
from ._optimizer import Optimizer, required

__all__ = ["Optimizer", "lr_scheduler", "required"]
