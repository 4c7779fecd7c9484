"""ember.ml.svm (scikit-learn's sklearn.svm): SVC, SVR, LinearSVC, LinearSVR."""

from ._kernel import SVC, SVR
from ._linear import LinearSVC, LinearSVR

__all__ = ["SVC", "SVR", "LinearSVC", "LinearSVR"]
