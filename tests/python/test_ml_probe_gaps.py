"""ember.ml probe gaps (1): dummy estimators, more splitters, more metrics, class weights and
MultiLabelBinarizer, each compared with the installed scikit-learn on the same data."""

import warnings

import ember
import numpy as np
import pytest

sklearn = pytest.importorskip("sklearn")

import ember.ml.metrics as em  # noqa: E402
import ember.ml.model_selection as ems  # noqa: E402
import sklearn.dummy as sk_dummy  # noqa: E402
import sklearn.metrics as skm  # noqa: E402
import sklearn.model_selection as skms  # noqa: E402
from ember.ml.dummy import DummyClassifier, DummyRegressor  # noqa: E402
from ember.ml.exceptions import NotFittedError  # noqa: E402
from ember.ml.preprocessing import MultiLabelBinarizer  # noqa: E402
from ember.ml.utils import class_weight as em_cw  # noqa: E402
from sklearn.preprocessing import MultiLabelBinarizer as SkMLB  # noqa: E402
from sklearn.utils import class_weight as sk_cw  # noqa: E402

RNG = np.random.RandomState(0)
N = 37
X = RNG.randn(N, 3)
Y3 = RNG.randint(0, 3, N)
G = RNG.randint(0, 9, N)
W = RNG.rand(N)


def _same_splits(a, b):
    a, b = list(a), list(b)
    assert len(a) == len(b)
    for (tr1, te1), (tr2, te2) in zip(a, b, strict=True):
        np.testing.assert_array_equal(np.asarray(tr2), tr1)
        np.testing.assert_array_equal(np.asarray(te2), te1)


# ---------------------------------------------------------------- dummy


@pytest.mark.parametrize(
    "strategy,kw",
    [
        ("prior", {}),
        ("most_frequent", {}),
        ("stratified", {"random_state": 3}),
        ("uniform", {"random_state": 3}),
        ("constant", {"constant": 2}),
    ],
)
@pytest.mark.parametrize("target", ["int", "str", "multi"])
def test_dummy_classifier_matches_sklearn(strategy, kw, target):
    y = {"int": Y3, "str": np.array(list("abc"))[Y3], "multi": np.c_[Y3, 2 - Y3]}[target]
    if strategy == "constant" and target == "str":
        kw = {"constant": "b"}
    if strategy == "constant" and target == "multi":
        kw = {"constant": [2, 1]}
    a = sk_dummy.DummyClassifier(strategy=strategy, **kw).fit(X, y, sample_weight=W)
    b = DummyClassifier(strategy=strategy, **kw).fit(X, y, sample_weight=W)
    np.testing.assert_array_equal(b.predict(X), a.predict(X))
    pa, pb = a.predict_proba(X), b.predict_proba(X)
    if target != "multi":
        pa, pb = [pa], [pb]
        np.testing.assert_allclose(b.class_prior_, a.class_prior_, rtol=1e-14)
        np.testing.assert_array_equal(b.classes_, a.classes_)
        assert b.n_classes_ == a.n_classes_
    for u, v in zip(pa, pb, strict=True):
        np.testing.assert_allclose(v, u, atol=1e-15)
    assert b.n_outputs_ == a.n_outputs_
    assert b.n_features_in_ == 3


def test_dummy_classifier_ember_and_errors():
    Xe, ye = ember.asarray(X), ember.asarray(Y3)
    clf = DummyClassifier().fit(Xe, ye)
    p = clf.predict_proba(Xe)
    assert isinstance(p, ember.ndarray)
    ref = sk_dummy.DummyClassifier().fit(X, Y3)
    np.testing.assert_allclose(ember.asnumpy(p), ref.predict_proba(X), rtol=1e-14)
    np.testing.assert_array_equal(ember.asnumpy(clf.predict(Xe)), ref.predict(X))
    assert clf.score(None, Y3) == pytest.approx(ref.score(None, Y3))
    with pytest.raises(NotFittedError):
        DummyClassifier().predict(X)
    with pytest.raises(ValueError, match="strategy"):
        DummyClassifier(strategy="bad").fit(X, Y3)
    with pytest.raises(ValueError, match="Constant target value has to be specified"):
        DummyClassifier(strategy="constant").fit(X, Y3)
    with pytest.raises(ValueError, match="must be present in the training data"):
        DummyClassifier(strategy="constant", constant=7).fit(X, Y3)


@pytest.mark.parametrize(
    "strategy,kw",
    [
        ("mean", {}),
        ("median", {}),
        ("quantile", {"quantile": 0.3}),
        ("constant", {"constant": 1.5}),
    ],
)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("multi", [False, True])
def test_dummy_regressor_matches_sklearn(strategy, kw, weighted, multi):
    y = RNG.randn(N, 2) if multi else RNG.randn(N)
    if strategy == "constant" and multi:
        kw = {"constant": [1.0, 2.0]}
    sw = W if weighted else None
    a = sk_dummy.DummyRegressor(strategy=strategy, **kw).fit(X, y, sample_weight=sw)
    b = DummyRegressor(strategy=strategy, **kw).fit(X, y, sample_weight=sw)
    np.testing.assert_allclose(b.constant_, a.constant_, rtol=0, atol=1e-12)
    np.testing.assert_allclose(b.predict(X), a.predict(X), rtol=0, atol=1e-12)
    ya, sa = a.predict(X, return_std=True)
    yb, sb = b.predict(X, return_std=True)
    np.testing.assert_array_equal(sb, sa)
    assert b.score(X, y) == pytest.approx(a.score(X, y), abs=1e-12)


def test_dummy_regressor_ember_and_errors():
    y = RNG.randn(N)
    r = DummyRegressor(strategy="median").fit(ember.asarray(X), ember.asarray(y))
    out = r.predict(ember.asarray(X))
    assert isinstance(out, ember.ndarray)
    np.testing.assert_allclose(ember.asnumpy(out), np.median(y))
    with pytest.raises(ValueError, match="quantile"):
        DummyRegressor(strategy="quantile").fit(X, y)
    with pytest.raises(ValueError, match="quantile"):
        DummyRegressor(strategy="quantile", quantile=1.5).fit(X, y)
    with pytest.raises(TypeError, match="Constant target value"):
        DummyRegressor(strategy="constant").fit(X, y)
    with pytest.raises(NotFittedError):
        DummyRegressor().predict(X)


def test_dummy_check_estimator():
    from sklearn.utils.estimator_checks import check_estimator

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_estimator(DummyRegressor())
        check_estimator(DummyClassifier(strategy="most_frequent"))


# ---------------------------------------------------------------- splitters


@pytest.mark.parametrize(
    "name,kw,args",
    [
        ("GroupKFold", {"n_splits": 3}, "Xyg"),
        ("GroupKFold", {"n_splits": 4, "shuffle": True, "random_state": 2}, "Xyg"),
        ("StratifiedGroupKFold", {"n_splits": 3}, "Xyg"),
        ("StratifiedGroupKFold", {"n_splits": 3, "shuffle": True, "random_state": 5}, "Xyg"),
        ("TimeSeriesSplit", {"n_splits": 4, "gap": 2, "max_train_size": 10}, "X"),
        ("TimeSeriesSplit", {"n_splits": 3, "test_size": 5}, "X"),
        ("TimeSeriesSplit", {}, "X"),
        ("ShuffleSplit", {"n_splits": 4, "random_state": 1, "test_size": 0.3}, "X"),
        ("StratifiedShuffleSplit", {"n_splits": 4, "random_state": 3, "test_size": 0.3}, "Xy"),
        ("StratifiedShuffleSplit", {"n_splits": 2, "random_state": 0, "train_size": 11}, "Xy"),
        ("LeaveOneOut", {}, "X"),
        ("RepeatedKFold", {"n_splits": 3, "n_repeats": 2, "random_state": 4}, "X"),
        ("RepeatedStratifiedKFold", {"n_splits": 3, "n_repeats": 2, "random_state": 4}, "Xy"),
        ("KFold", {"n_splits": 3, "shuffle": True, "random_state": 7}, "X"),
        ("StratifiedKFold", {"n_splits": 3, "shuffle": True, "random_state": 7}, "Xy"),
    ],
)
def test_splitters_match_sklearn(name, kw, args):
    data = {"X": (X,), "Xy": (X, Y3), "Xyg": (X, Y3, G)}[args]
    a = getattr(skms, name)(**kw)
    b = getattr(ems, name)(**kw)
    _same_splits(a.split(*data), b.split(*data))
    assert b.get_n_splits(*data) == a.get_n_splits(*data)
    # ember inputs give the same indices
    _same_splits(a.split(*data), b.split(*(ember.asarray(d) for d in data)))


def test_train_test_split_matches_sklearn():
    for kw in ({"random_state": 0}, {"random_state": 1, "stratify": Y3, "test_size": 0.3}):
        a = skms.train_test_split(X, Y3, **kw)
        b = ems.train_test_split(X, Y3, **kw)
        for u, v in zip(a, b, strict=True):
            np.testing.assert_array_equal(v, u)


def test_splitter_errors():
    with pytest.raises(ValueError, match="groups"):
        next(ems.GroupKFold(3).split(X, Y3))
    with pytest.raises(ValueError, match="number of groups"):
        next(ems.GroupKFold(20).split(X, Y3, G))
    with pytest.raises(ValueError, match="Too many splits"):
        next(ems.TimeSeriesSplit(5, test_size=10).split(X))
    with pytest.raises(ValueError, match="n_splits"):
        ems.TimeSeriesSplit(1)
    with pytest.raises(ValueError, match="least populated class"):
        next(ems.StratifiedShuffleSplit().split(X[:4], [0, 0, 1, 2]))
    with pytest.raises(ValueError, match="Number of repetitions"):
        ems.RepeatedKFold(n_repeats=0)
    with pytest.raises(ValueError, match="Supported target types"):
        next(ems.StratifiedGroupKFold(3).split(X, RNG.rand(N), G))
    with pytest.raises(ValueError, match="LeaveOneOut"):
        next(ems.LeaveOneOut().split(X[:1]))
    scores = ems.cross_val_score(DummyRegressor(), X, RNG.randn(N), cv=ems.TimeSeriesSplit(3))
    assert len(scores) == 3


# ---------------------------------------------------------------- metrics


def _check(name, *args, **kw):
    ref = getattr(skm, name)(*args, **kw)
    got = getattr(em, name)(*args, **kw)
    if isinstance(ref, tuple):
        for u, v in zip(ref, got, strict=True):
            np.testing.assert_allclose(np.asarray(v), u, rtol=1e-12, atol=1e-12)
    else:
        np.testing.assert_allclose(np.asarray(got), ref, rtol=1e-12, atol=1e-12, err_msg=name)


YT, YP = RNG.rand(N) * 3 + 0.1, RNG.rand(N) * 3 + 0.1
YT2, YP2 = RNG.rand(N, 2) + 0.1, RNG.rand(N, 2) + 0.1


@pytest.mark.parametrize(
    "name",
    ["median_absolute_error", "d2_absolute_error_score", "mean_pinball_loss"],
)
def test_regression_metrics(name):
    _check(name, YT, YP)
    _check(name, YT, YP, sample_weight=W)
    _check(name, YT2, YP2)
    _check(name, YT2, YP2, multioutput="raw_values", sample_weight=W)
    _check(name, YT2, YP2, multioutput=[0.3, 0.7])
    got = getattr(em, name)(ember.asarray(YT2), ember.asarray(YP2), multioutput="raw_values")
    assert isinstance(got, ember.ndarray)


def test_pinball_and_tweedie():
    _check("mean_pinball_loss", YT, YP, alpha=0.9, sample_weight=W)
    _check("d2_pinball_score", YT, YP, alpha=0.2, sample_weight=W)
    _check("mean_poisson_deviance", YT, YP, sample_weight=W)
    _check("mean_gamma_deviance", YT, YP)
    for p in (-1, 0, 1, 1.5, 2, 3):
        _check("mean_tweedie_deviance", YT, YP, power=p, sample_weight=W)
        _check("d2_tweedie_score", YT, YP, power=p)
    yz = YT.copy()
    yz[:5] = 0
    _check("mean_poisson_deviance", yz, YP)
    with pytest.raises(ValueError, match="strictly positive y and y_pred"):
        em.mean_gamma_deviance(yz, YP)
    with pytest.raises(ValueError, match="power"):
        em.mean_tweedie_deviance(YT, YP, power=0.5)
    with pytest.raises(ValueError, match="alpha"):
        em.mean_pinball_loss(YT, YP, alpha=2)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        em.median_absolute_error(YT, YP[:-1])


LT, LP = RNG.randint(0, 4, N), RNG.randint(0, 3, N)


@pytest.mark.parametrize(
    "name",
    [
        "homogeneity_score",
        "completeness_score",
        "v_measure_score",
        "homogeneity_completeness_v_measure",
        "fowlkes_mallows_score",
    ],
)
def test_label_pair_metrics(name):
    _check(name, LT, LP)
    _check(name, np.array(list("abcd"))[LT], LP)
    _check(name, LT, LT)
    _check(name, [0, 0, 0], [1, 1, 1])


def test_cluster_geometry_metrics():
    _check("v_measure_score", LT, LP, beta=0.3)
    for name in ("davies_bouldin_score", "calinski_harabasz_score"):
        _check(name, X, LP)
        got = getattr(em, name)(ember.asarray(X), ember.asarray(LP))
        assert got == pytest.approx(getattr(skm, name)(X, LP), rel=1e-12)
        with pytest.raises(ValueError, match="Number of labels is 1"):
            getattr(em, name)(X, np.zeros(N, dtype=int))


YB, PB = RNG.randint(0, 2, N), RNG.randint(0, 2, N)
YM, PM = RNG.randint(0, 3, N), RNG.randint(0, 3, N)
ML, MP = RNG.randint(0, 2, (N, 4)), RNG.randint(0, 2, (N, 4))


@pytest.mark.parametrize("pair", ["binary", "multiclass", "multilabel"])
def test_hamming_zero_one(pair):
    a, b = {"binary": (YB, PB), "multiclass": (YM, PM), "multilabel": (ML, MP)}[pair]
    _check("hamming_loss", a, b)
    _check("hamming_loss", a, b, sample_weight=W)
    _check("zero_one_loss", a, b)
    _check("zero_one_loss", a, b, normalize=False, sample_weight=W)
    _check("zero_one_loss", a, b, normalize=False)


def test_jaccard():
    _check("jaccard_score", YB, PB)
    _check("jaccard_score", YB, PB, pos_label=0)
    for av in (None, "micro", "macro", "weighted"):
        _check("jaccard_score", YM, PM, average=av)
        _check("jaccard_score", ML, MP, average=av, sample_weight=W)
    _check("jaccard_score", ML, MP, average="samples")
    _check("jaccard_score", YM, PM, average="macro", labels=[0, 2])
    with pytest.raises(ValueError, match="average='binary'"):
        em.jaccard_score(YM, PM)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(Warning, match="Jaccard is ill-defined"):
            em.jaccard_score([0, 0], [0, 0])


def test_brier_hinge_det():
    pr = RNG.rand(N)
    _check("brier_score_loss", YB, pr)
    _check("brier_score_loss", YB, pr, sample_weight=W)
    _check("brier_score_loss", YB, pr, scale_by_half=False)
    P3 = RNG.rand(N, 3)
    P3 /= P3.sum(1, keepdims=True)
    _check("brier_score_loss", YM, P3)
    _check("brier_score_loss", np.array(list("xyz"))[YM], P3, scale_by_half=True)
    with pytest.raises(ValueError, match="greater than 1"):
        em.brier_score_loss(YB, pr + 1)
    _check("hinge_loss", YB, pr - 0.5)
    _check("hinge_loss", 2 * YB - 1, pr - 0.5, sample_weight=W)
    _check("hinge_loss", YM, RNG.randn(N, 3), sample_weight=W)
    with pytest.raises(ValueError, match="cannot be 1d"):
        em.hinge_loss(YM, pr)
    s = np.round(RNG.rand(N), 1)
    _check("det_curve", YB, s)
    _check("det_curve", YB, s, sample_weight=W)
    _check("det_curve", YB, s, drop_intermediate=True)
    _check("det_curve", np.where(YB, 5, 3), s, pos_label=5)
    with pytest.raises(ValueError, match="Only one class"):
        em.det_curve(np.ones(5), RNG.rand(5), pos_label=1)


def test_ranking_metrics():
    Sc = np.round(RNG.rand(N, 4), 1)  # with ties
    Gn = RNG.randint(0, 4, (N, 4))
    for kw in ({}, {"sample_weight": W}):
        _check("coverage_error", ML, Sc, **kw)
        _check("label_ranking_average_precision_score", ML, Sc, **kw)
    for k in (None, 2):
        _check("dcg_score", Gn, Sc, k=k)
        _check("ndcg_score", Gn, Sc, k=k)
        _check("dcg_score", Gn, Sc, k=k, log_base=10, sample_weight=W)
        _check("ndcg_score", Gn, RNG.rand(N, 4), k=k, ignore_ties=True)
    got = em.ndcg_score(ember.asarray(Gn), ember.asarray(Sc))
    assert got == pytest.approx(skm.ndcg_score(Gn, Sc), rel=1e-12)
    with pytest.raises(ValueError, match="negative y_true"):
        em.ndcg_score(-Gn - 1, Sc)
    with pytest.raises(ValueError, match="format is not supported"):
        em.coverage_error(YB, RNG.rand(N))
    with pytest.raises(ValueError, match="different shape"):
        em.label_ranking_average_precision_score(ML, Sc[:, :3])


# ---------------------------------------------------------------- class weights, MLB


@pytest.mark.parametrize("cw", [None, "balanced", {0: 2.0, 1: 1.0, 2: 0.5}])
def test_class_weight(cw):
    cls = np.unique(Y3)
    np.testing.assert_allclose(
        em_cw.compute_class_weight(cw, classes=cls, y=Y3),
        sk_cw.compute_class_weight(cw, classes=cls, y=Y3),
        rtol=1e-14,
    )
    np.testing.assert_allclose(
        em_cw.compute_sample_weight(cw, Y3), sk_cw.compute_sample_weight(cw, Y3), rtol=1e-14
    )


def test_class_weight_more():
    cls = np.unique(Y3)
    kw = {"classes": cls, "y": Y3, "sample_weight": W}
    np.testing.assert_allclose(
        em_cw.compute_class_weight("balanced", **kw), sk_cw.compute_class_weight("balanced", **kw)
    )
    ys = np.array(list("abc"))[Y3]
    np.testing.assert_allclose(
        em_cw.compute_class_weight("balanced", classes=np.unique(ys), y=ys),
        sk_cw.compute_class_weight("balanced", classes=np.unique(ys), y=ys),
    )
    Y2 = np.c_[Y3, RNG.randint(0, 2, N)]
    for cw in ("balanced", [{0: 1, 1: 2, 2: 3}, {0: 2, 1: 1}]):
        np.testing.assert_allclose(
            em_cw.compute_sample_weight(cw, Y2), sk_cw.compute_sample_weight(cw, Y2)
        )
    ind = RNG.randint(0, N, 20)
    np.testing.assert_allclose(
        em_cw.compute_sample_weight("balanced", Y3, indices=ind),
        sk_cw.compute_sample_weight("balanced", Y3, indices=ind),
    )
    out = em_cw.compute_sample_weight("balanced", ember.asarray(Y3))
    assert isinstance(out, ember.ndarray)
    with pytest.raises(ValueError, match="classes should include all valid labels"):
        em_cw.compute_class_weight("balanced", classes=np.array([0, 1]), y=Y3)
    with pytest.raises(ValueError, match="are not in class_weight"):
        em_cw.compute_class_weight({0: 1.0, 5: 2.0}, classes=cls, y=Y3)
    with pytest.raises(ValueError, match="class_weight"):
        em_cw.compute_sample_weight("bad", Y3)
    with pytest.raises(ValueError, match="list of dicts"):
        em_cw.compute_sample_weight({0: 1}, Y2)


def test_multilabel_binarizer():
    data = [{"a", "b"}, {"c"}, set(), {"b", "d", "a"}]
    a, b = SkMLB().fit(data), MultiLabelBinarizer().fit(data)
    np.testing.assert_array_equal(b.classes_, a.classes_)
    np.testing.assert_array_equal(b.transform(data), a.transform(data))
    assert b.inverse_transform(b.transform(data)) == a.inverse_transform(a.transform(data))
    kw = {"classes": [3, 1, 2]}
    ya = SkMLB(**kw).fit_transform([(1, 2), (3,)])
    yb = MultiLabelBinarizer(**kw).fit_transform([(1, 2), (3,)])
    np.testing.assert_array_equal(yb, ya)
    sp = MultiLabelBinarizer(sparse_output=True).fit_transform([(1, 2), (3,)])
    np.testing.assert_array_equal(sp.toarray(), SkMLB().fit_transform([(1, 2), (3,)]))
    with pytest.warns(UserWarning, match="unknown class"):
        b.transform([{"a", "zz"}])
    with pytest.raises(ValueError, match="duplicate classes"):
        MultiLabelBinarizer(classes=[1, 1]).fit([(1,)])
    with pytest.raises(ValueError, match="Expected only 0s and 1s"):
        b.inverse_transform(np.full((1, 4), 2))
    with pytest.raises(NotFittedError):
        MultiLabelBinarizer().transform([(1,)])
