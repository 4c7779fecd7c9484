"""ember.ml.svm (scikit-learn's sklearn.svm): SVC, NuSVC, SVR, NuSVR, OneClassSVM, LinearSVC,
LinearSVR."""

from ._kernel import SVC, SVR
from ._linear import LinearSVC, LinearSVR
from ._nu import NuSVC, NuSVR, OneClassSVM

__all__ = ["SVC", "NuSVC", "SVR", "NuSVR", "OneClassSVM", "LinearSVC", "LinearSVR"]
