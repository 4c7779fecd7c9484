"""Kernel ridge regression (scikit-learn's ``sklearn.kernel_ridge``)."""

from __future__ import annotations

from ._kernel_ridge import KernelRidge

__all__ = ["KernelRidge"]
