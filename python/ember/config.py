"""ember.config: TensorFlow's device queries and spellings on ember's devices.

- ``list_physical_devices('GPU' | 'CPU' | None)`` returns ``PhysicalDevice`` s with
  TensorFlow's ``.name`` (``'/physical_device:GPU:0'``) and ``.device_type`` (``'GPU'``);
  ``list_logical_devices`` and ``get_visible_devices`` the same devices (no logical splitting).
- ``device_string(spec)`` translates TensorFlow's device names (``'/GPU:0'``, ``'GPU:1'``,
  ``'/device:CPU:0'``, ``'/job:localhost/replica:0/task:0/device:GPU:0'``, lower case too) and
  ember's own (``'cpu'``, ``'cuda:1'``) to ember's: ``'cpu'`` or ``'cuda:N'``.
- ``device`` is what ``ember.device`` is: called, it returns an ``ember.Device`` (a context
  manager making itself the default device, as ``tf.device`` places what is created inside) and
  accepts both spellings; ``isinstance(d, ember.device)`` holds for every ``ember.Device``.
- ``experimental.set_memory_growth`` / ``get_memory_growth``: ember's allocator always grows on
  demand, so growth is recorded and reported, not configured.
"""

from __future__ import annotations

import re

from ._core import Device
from ._core import device_count as _device_count

__all__ = [
    "LogicalDevice",
    "PhysicalDevice",
    "device",
    "device_string",
    "experimental",
    "get_visible_devices",
    "list_logical_devices",
    "list_physical_devices",
]

_TF_TYPES = {"gpu": "GPU", "cpu": "CPU"}
# [/job:x][/replica:n][/task:n][/device:]TYPE:N  or  [/]TYPE[:N]  or /physical_device:TYPE:N
_TF_NAME = re.compile(
    r"^(?:/job:[^/]+)?(?:/replica:\d+)?(?:/task:\d+)?"
    r"(?:/?(?:device|physical_device):|/)?(?P<type>[A-Za-z_]+)(?::(?P<index>\d+))?$"
)


def device_string(spec, who="ember.device"):
    """ember's name (``'cpu'`` / ``'cuda:N'``) for a device given in ember's or TensorFlow's
    spelling, an ``ember.Device`` or a ``PhysicalDevice``/``LogicalDevice``."""
    if isinstance(spec, Device):
        return str(spec)
    if isinstance(spec, (PhysicalDevice, LogicalDevice)):
        spec = spec.name
    if not isinstance(spec, str):
        raise TypeError(
            f"{who}: device must be a string (e.g. 'cuda:0', '/GPU:0', 'cpu', '/CPU:0') or an "
            f"ember.Device, got {type(spec).__name__}"
        )
    s = spec.strip()
    low = s.lower()
    if low == "cpu" or low == "cuda" or re.fullmatch(r"cuda:\d+", low):
        return low
    m = _TF_NAME.match(s)
    kind = m and m.group("type").lower()
    if not m or kind not in _TF_TYPES:
        raise ValueError(
            f"{who}: unknown device {spec!r}; expected 'cpu', 'cuda', 'cuda:N' or TensorFlow's "
            "'/CPU:0', '/GPU:N', 'GPU:N', '/device:GPU:N'"
        )
    index = int(m.group("index") or 0)
    if kind == "cpu":
        if index != 0:
            raise ValueError(f"{who}: ember has one CPU device ('/CPU:0'), got {spec!r}")
        return "cpu"
    return f"cuda:{index}"


class _DeviceType(type):
    """Makes ``ember.device`` a class-like factory: calls return ``ember.Device`` objects and
    isinstance/issubclass checks answer for ``ember.Device``."""

    def __call__(cls, type, index=None):  # noqa: A002
        name = device_string(type)
        return Device(name) if index is None else Device(name, index)

    def __instancecheck__(cls, obj):
        return isinstance(obj, Device)

    def __subclasscheck__(cls, sub):
        return issubclass(sub, Device)


class device(metaclass=_DeviceType):  # noqa: N801  (torch.device / tf.device spelling)
    """``ember.device('cuda:0')``, ``ember.device('/GPU:0')``, ``with ember.device('/CPU:0'):``
    -- an ``ember.Device``; as a context manager it makes itself the default device for the
    arrays (and Keras weights) created inside."""


class PhysicalDevice:
    """TensorFlow's PhysicalDevice: ``name`` ('/physical_device:GPU:0') and ``device_type``."""

    __slots__ = ("device_type", "name")

    def __init__(self, name, device_type):
        self.name = name
        self.device_type = device_type

    def __repr__(self):
        return f"PhysicalDevice(name='{self.name}', device_type='{self.device_type}')"

    def __eq__(self, other):
        return isinstance(other, PhysicalDevice) and (self.name, self.device_type) == (
            other.name,
            other.device_type,
        )

    def __hash__(self):
        return hash((self.name, self.device_type))

    @property
    def ember_device(self):
        """The ``ember.Device`` this names."""
        return Device(device_string(self.name))


class LogicalDevice(PhysicalDevice):
    """TensorFlow's LogicalDevice: ``name`` ('/device:GPU:0') and ``device_type``."""

    __slots__ = ()

    def __repr__(self):
        return f"LogicalDevice(name='{self.name}', device_type='{self.device_type}')"


def _check_type(device_type, who):
    if device_type is None:
        return None
    if not isinstance(device_type, str):
        raise TypeError(f"{who}: device_type must be a string or None, got {device_type!r}")
    return device_type.upper()


def _devices(device_type, prefix, cls, who):
    kind = _check_type(device_type, who)
    out = []
    if kind in (None, "CPU"):
        out.append(cls(f"/{prefix}:CPU:0", "CPU"))
    if kind in (None, "GPU"):
        out.extend(cls(f"/{prefix}:GPU:{i}", "GPU") for i in range(_device_count("cuda")))
    return out


def list_physical_devices(device_type=None):
    """The machine's devices, CPU first: ``[PhysicalDevice(name='/physical_device:GPU:0',
    device_type='GPU'), ...]``; a device type ember does not have gives ``[]``."""
    return _devices(device_type, "physical_device", PhysicalDevice, "list_physical_devices")


def list_logical_devices(device_type=None):
    return _devices(device_type, "device", LogicalDevice, "list_logical_devices")


def get_visible_devices(device_type=None):
    return list_physical_devices(device_type)


class experimental:  # noqa: N801  (tf.config.experimental)
    """``tf.config.experimental``'s memory-growth switches (ember's allocator always grows)."""

    _growth: dict = {}

    @staticmethod
    def set_memory_growth(device, enable):
        if not isinstance(device, PhysicalDevice) or device.device_type != "GPU":
            raise ValueError(
                f"set_memory_growth: expected a GPU PhysicalDevice from "
                f"list_physical_devices('GPU'), got {device!r}"
            )
        experimental._growth[device.name] = bool(enable)

    @staticmethod
    def get_memory_growth(device):
        if not isinstance(device, PhysicalDevice):
            raise ValueError(f"get_memory_growth: expected a PhysicalDevice, got {device!r}")
        return experimental._growth.get(device.name, True)

    list_physical_devices = staticmethod(list_physical_devices)
