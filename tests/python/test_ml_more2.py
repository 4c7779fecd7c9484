"""ember.ml's searches, extra metrics, preprocessing, feature selection, FeatureUnion, utils,
datasets and naive Bayes against scikit-learn on the same data: equal choices and labels,
values within tolerances, equal error types."""

from __future__ import annotations

import warnings

import ember
import numpy as np
import pytest
from ember.ml import feature_selection as efs
from ember.ml import linear_model as eml
from ember.ml import metrics as em
from ember.ml import model_selection as ems
from ember.ml import naive_bayes as enb
from ember.ml import preprocessing as ep
from ember.ml.exceptions import InvalidParameterError
from sklearn import feature_selection as skfs
from sklearn import linear_model as skl
from sklearn import metrics as skm
from sklearn import model_selection as skms
from sklearn import naive_bayes as sknb
from sklearn import preprocessing as skp
from sklearn.datasets import make_classification, make_regression


def _n(a):
    if hasattr(a, "toarray"):
        return a.toarray()
    return ember.asnumpy(a) if isinstance(a, ember.ndarray) else np.asarray(a)


def _e(x, device):
    return ember.asarray(x, device=device)


@pytest.fixture(scope="module")
def clf_data():
    return make_classification(200, 8, n_informative=4, random_state=0)


@pytest.fixture(scope="module")
def reg_data():
    return make_regression(200, 8, noise=5, random_state=0)


# ----------------------------------------------------------------------------- searches


def test_grid_search_cv_results_match(device, reg_data):
    X, y = reg_data
    grid = {"alpha": [0.1, 1, 10, 100], "fit_intercept": [True, False]}
    a = skms.GridSearchCV(skl.Ridge(), grid, cv=4, return_train_score=True).fit(X, y)
    b = ems.GridSearchCV(eml.Ridge(), grid, cv=4, return_train_score=True)
    b.fit(_e(X, device), _e(y, device))
    assert sorted(a.cv_results_) == sorted(b.cv_results_)
    for k, u in a.cv_results_.items():
        v = b.cv_results_[k]
        if "time" in k:
            continue
        if k == "params":
            assert u == v
        elif k.startswith("param_"):
            assert isinstance(v, np.ma.MaskedArray) and u.dtype == v.dtype and list(u) == list(v)
        else:
            assert u.dtype == v.dtype, k
            np.testing.assert_allclose(v, u, rtol=1e-6, err_msg=k)
    assert a.best_params_ == b.best_params_ and a.best_index_ == b.best_index_
    assert b.best_score_ == pytest.approx(a.best_score_, rel=1e-8)
    assert isinstance(b.predict(_e(X, device)), ember.ndarray)
    np.testing.assert_allclose(_n(b.predict(X)), a.predict(X), rtol=1e-6)
    assert b.n_splits_ == 4 and b.multimetric_ is False


def test_grid_search_multimetric_refit_and_scorers(clf_data):
    X, y = clf_data
    sc = ["accuracy", "neg_log_loss", "roc_auc"]
    grid = {"C": [0.01, 0.1, 1]}
    a = skms.GridSearchCV(skl.LogisticRegression(), grid, scoring=sc, refit="neg_log_loss")
    b = ems.GridSearchCV(eml.LogisticRegression(), grid, scoring=sc, refit="neg_log_loss")
    a.fit(X, y)
    b.fit(X, y)
    assert sorted(a.cv_results_) == sorted(b.cv_results_)
    assert a.best_params_ == b.best_params_
    for m in sc:
        np.testing.assert_allclose(
            b.cv_results_[f"mean_test_{m}"], a.cv_results_[f"mean_test_{m}"], rtol=2e-3
        )
    assert b.score(X, y) == pytest.approx(a.score(X, y), rel=1e-3)
    with pytest.raises(ValueError, match="refit"):
        ems.GridSearchCV(eml.LogisticRegression(), grid, scoring=sc).fit(X, y)
    c = ems.GridSearchCV(eml.LogisticRegression(), grid, scoring={"acc": "accuracy"}, refit=False)
    c.fit(X, y)
    assert "mean_test_acc" in c.cv_results_ and not hasattr(c, "best_estimator_")
    with pytest.raises(AttributeError):
        c.predict(X)


def test_grid_search_callable_scoring_and_errors(reg_data):
    X, y = reg_data

    def neg_mae(est, Xs, ys):
        return -float(np.mean(np.abs(_n(est.predict(Xs)) - _n(ys))))

    g = ems.GridSearchCV(eml.Ridge(), {"alpha": [0.01, 1000.0]}, scoring=neg_mae, cv=3)
    g.fit(X, y)
    assert g.best_params_ == {"alpha": 0.01}
    with pytest.raises(TypeError):
        ems.GridSearchCV(eml.Ridge(), {"alpha": 1.0}).fit(X, y)
    with pytest.raises(ValueError, match="not a valid scoring value"):
        ems.GridSearchCV(eml.Ridge(), {"alpha": [1.0]}, scoring="nope").fit(X, y)
    with pytest.raises(InvalidParameterError):
        ems.GridSearchCV(eml.Ridge(), {"alpha": [1.0]}, return_train_score="yes").fit(X, y)
    with pytest.raises(ValueError):
        ems.GridSearchCV(eml.Ridge(), {"alpha": [-5.0]}, error_score="raise").fit(X, y)
    with pytest.raises(ValueError, match="All the 2 fits failed"):
        ems.GridSearchCV(eml.Ridge(), {"alpha": [-5.0]}, cv=2).fit(X, y)


def test_randomized_search(reg_data):
    X, y = reg_data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        r = ems.RandomizedSearchCV(eml.Ridge(), {"alpha": [0.1, 1, 10]}, n_iter=10, random_state=0)
        r.fit(X, y)
        s = skms.RandomizedSearchCV(skl.Ridge(), {"alpha": [0.1, 1, 10]}, n_iter=10).fit(X, y)
    assert len(r.cv_results_["params"]) == 3
    assert r.best_params_ == s.best_params_
    stats = pytest.importorskip("scipy.stats")
    r = ems.RandomizedSearchCV(
        eml.Ridge(), {"alpha": stats.loguniform(1e-3, 1e2)}, n_iter=5, random_state=0
    ).fit(X, y)
    alphas = r.cv_results_["param_alpha"]
    assert alphas.dtype == np.float64 and len(set(alphas.tolist())) == 5
    assert np.all((alphas >= 1e-3) & (alphas <= 1e2))
    r2 = ems.RandomizedSearchCV(
        eml.Ridge(), {"alpha": stats.loguniform(1e-3, 1e2)}, n_iter=5, random_state=0
    ).fit(X, y)
    assert r2.cv_results_["param_alpha"].tolist() == alphas.tolist()
    assert len(ems.ParameterGrid([{"a": [1, 2]}, {"b": [3]}])) == 3


def test_cross_val_predict_and_curves(device, clf_data, reg_data):
    X, y = clf_data
    p1 = skms.cross_val_predict(skl.LogisticRegression(), X, y, method="predict_proba")
    p2 = ems.cross_val_predict(
        eml.LogisticRegression(), _e(X, device), _e(y, device), method="predict_proba"
    )
    assert isinstance(p2, ember.ndarray)
    np.testing.assert_allclose(_n(p2), p1, atol=2e-3)
    r1 = skms.cross_val_predict(skl.Ridge(), *reg_data, cv=3)
    np.testing.assert_allclose(ems.cross_val_predict(eml.Ridge(), *reg_data, cv=3), r1, rtol=1e-7)
    a = skms.learning_curve(skl.Ridge(), *reg_data, cv=3)
    b = ems.learning_curve(eml.Ridge(), *reg_data, cv=3)
    for u, v in zip(a, b, strict=True):
        np.testing.assert_allclose(v, u, rtol=1e-6)
    kw = {"param_name": "alpha", "param_range": [1, 10], "cv": 3}
    a = skms.validation_curve(skl.Ridge(), *reg_data, **kw)
    b = ems.validation_curve(eml.Ridge(), *reg_data, **kw)
    for u, v in zip(a, b, strict=True):
        np.testing.assert_allclose(v, u, rtol=1e-6)
    out = ems.cross_validate(eml.Ridge(), *reg_data, scoring=["r2", "neg_mean_squared_error"])
    assert "test_r2" in out and "test_neg_mean_squared_error" in out


# ------------------------------------------------------------------------------ metrics


@pytest.fixture(scope="module")
def labels():
    rng = np.random.RandomState(0)
    y = rng.randint(0, 3, 100)
    yp = rng.randint(0, 3, 100)
    s = rng.rand(100)
    s[:10] = 0.5
    P = rng.rand(100, 3)
    P /= P.sum(1, keepdims=True)
    w = rng.rand(100)
    yr = rng.randn(100)
    return y, yp, (y > 0).astype(int), s, P, w, yr, yr + 0.1 * rng.randn(100)


CASES = [
    ("log_loss", lambda d: (d[0], d[4]), {}),
    ("log_loss", lambda d: (d[2], d[3]), {}),
    ("log_loss", lambda d: (d[0], d[4]), {"sample_weight": "w"}),
    ("precision_recall_curve", lambda d: (d[2], d[3]), {}),
    ("precision_recall_curve", lambda d: (d[2], d[3]), {"drop_intermediate": True}),
    ("precision_recall_curve", lambda d: (d[2], d[3]), {"sample_weight": "w"}),
    ("average_precision_score", lambda d: (d[2], d[3]), {}),
    ("average_precision_score", lambda d: (d[0], d[4]), {}),
    ("average_precision_score", lambda d: (d[0], d[4]), {"average": "micro"}),
    ("average_precision_score", lambda d: (d[0], d[4]), {"average": "weighted"}),
    ("balanced_accuracy_score", lambda d: (d[0], d[1]), {}),
    ("balanced_accuracy_score", lambda d: (d[0], d[1]), {"adjusted": True}),
    ("matthews_corrcoef", lambda d: (d[0], d[1]), {}),
    ("matthews_corrcoef", lambda d: (d[2], (d[1] > 0).astype(int)), {}),
    ("cohen_kappa_score", lambda d: (d[0], d[1]), {}),
    ("cohen_kappa_score", lambda d: (d[0], d[1]), {"weights": "quadratic"}),
    ("cohen_kappa_score", lambda d: (d[0], d[1]), {"weights": "linear"}),
    ("top_k_accuracy_score", lambda d: (d[0], d[4]), {"k": 2}),
    ("top_k_accuracy_score", lambda d: (d[0], d[4]), {"k": 1}),
    ("top_k_accuracy_score", lambda d: (d[2], d[3]), {"k": 1}),
    ("mean_absolute_percentage_error", lambda d: (d[6], d[7]), {}),
    ("adjusted_rand_score", lambda d: (d[0], d[1]), {}),
    ("adjusted_mutual_info_score", lambda d: (d[0], d[1]), {}),
    ("normalized_mutual_info_score", lambda d: (d[0], d[1]), {}),
    ("normalized_mutual_info_score", lambda d: (d[0], d[1]), {"average_method": "geometric"}),
    ("mutual_info_score", lambda d: (d[0], d[1]), {}),
]


@pytest.mark.parametrize(("name", "args", "kw"), CASES)
def test_metrics_match(device, labels, name, args, kw):
    a = args(labels)
    kw = {k: (labels[5] if v == "w" else v) for k, v in kw.items()}
    ref = getattr(skm, name)(*a, **kw)
    for conv in (lambda v: v, lambda v: _e(v, device)):
        got = getattr(em, name)(*[conv(v) for v in a], **kw)
        if isinstance(ref, tuple):
            for u, v in zip(ref, got, strict=True):
                np.testing.assert_allclose(_n(v), u, rtol=1e-10)
        else:
            assert isinstance(got, float)
            assert got == pytest.approx(ref, rel=1e-9, abs=1e-12)


def test_metric_edge_cases_and_errors():
    rng = np.random.RandomState(3)
    a, b = rng.randint(0, 7, 300), rng.randint(0, 5, 300)
    assert em.adjusted_mutual_info_score(a, b) == pytest.approx(
        skm.adjusted_mutual_info_score(a, b), rel=1e-9
    )
    assert em.adjusted_rand_score([0, 0, 1, 1], [1, 1, 0, 0]) == 1.0
    with pytest.raises(ValueError, match="only one label"):
        em.log_loss([0, 0], [0.1, 0.2])
    with pytest.raises(ValueError, match="different number of classes"):
        em.log_loss([0, 1, 2], [[0.2, 0.8], [0.5, 0.5], [0.1, 0.9]])
    with pytest.warns(UserWarning, match="do not sum to one"):
        em.log_loss([0, 1], [[0.5, 0.6], [0.3, 0.7]])
    assert em.log_loss(["a", "b", "a"], [0.1, 0.8, 0.3]) == pytest.approx(
        skm.log_loss(["a", "b", "a"], [0.1, 0.8, 0.3])
    )


def test_neg_log_loss_scorer(clf_data):
    X, y = clf_data
    est = eml.LogisticRegression().fit(X, y)
    ref = skm.get_scorer("neg_log_loss")(skl.LogisticRegression().fit(X, y), X, y)
    assert em.get_scorer("neg_log_loss")(est, X, y) == pytest.approx(ref, rel=1e-4)
    assert "neg_log_loss" in em.get_scorer_names()
    sc = em.make_scorer(em.balanced_accuracy_score)
    assert sc(est, X, y) == pytest.approx(em.balanced_accuracy_score(y, est.predict(X)))


# ------------------------------------------------------------------------ preprocessing


def _cmp_transformer(name, X, device, rtol=1e-7, atol=1e-9, attrs=(), inverse=True, **kw):
    a = getattr(skp, name)(**kw)
    ref = _n(a.fit_transform(X))
    for conv in (lambda v: v, lambda v: _e(v, device)):
        b = getattr(ep, name)(**kw)
        got = b.fit_transform(conv(X))
        assert isinstance(got, ember.ndarray) == isinstance(conv(X), ember.ndarray)
        np.testing.assert_allclose(_n(got), ref, rtol=rtol, atol=atol)
        for at in attrs:
            u, v = getattr(a, at), getattr(b, at)
            if isinstance(u, np.ndarray) and u.dtype == object:
                for p, q in zip(u, v, strict=True):
                    np.testing.assert_allclose(_n(q), p, rtol=rtol, atol=atol)
            else:
                np.testing.assert_allclose(_n(v), u, rtol=rtol, atol=atol, err_msg=at)
        if inverse:
            np.testing.assert_allclose(
                _n(b.inverse_transform(conv(ref))), a.inverse_transform(ref), rtol=1e-5, atol=1e-6
            )


@pytest.fixture(scope="module")
def Xmix():
    rng = np.random.RandomState(0)
    X = rng.randn(200, 4)
    X[:, 1] = np.exp(X[:, 1])
    X[:, 2] = rng.randint(0, 5, 200)
    return X


def test_scalers_and_quantile(device, Xmix):
    _cmp_transformer("MaxAbsScaler", Xmix, device, attrs=("max_abs_", "scale_"))
    _cmp_transformer("Binarizer", Xmix, device, inverse=False, threshold=0.5)
    _cmp_transformer(
        "QuantileTransformer", Xmix, device, attrs=("quantiles_", "references_"), n_quantiles=50
    )
    _cmp_transformer(
        "QuantileTransformer", Xmix, device, n_quantiles=50, output_distribution="normal"
    )
    X32 = Xmix.astype(np.float32)
    got = ep.MaxAbsScaler().fit_transform(_e(X32, device))
    assert got.dtype == ember.float32


@pytest.mark.parametrize(
    ("kw", "pos"),
    [({}, False), ({"method": "box-cox"}, True), ({"standardize": False}, False)],
)
def test_power_transformer(device, Xmix, kw, pos):
    X = np.abs(Xmix) + 0.1 if pos else Xmix
    _cmp_transformer("PowerTransformer", X, device, rtol=1e-5, atol=1e-6, attrs=("lambdas_",), **kw)


def test_power_transformer_errors():
    with pytest.raises(ValueError, match="strictly positive"):
        ep.PowerTransformer(method="box-cox").fit(np.array([[-1.0], [2.0]]))
    with pytest.raises(InvalidParameterError):
        ep.PowerTransformer(method="nope").fit(np.ones((3, 1)))


@pytest.mark.parametrize("strategy", ["uniform", "quantile", "kmeans"])
@pytest.mark.parametrize("encode", ["ordinal", "onehot-dense", "onehot"])
def test_kbins(device, Xmix, strategy, encode):
    _cmp_transformer(
        "KBinsDiscretizer",
        Xmix,
        device,
        rtol=1e-6,
        attrs=("bin_edges_", "n_bins_"),
        inverse=encode != "onehot",
        n_bins=4,
        strategy=strategy,
        encode=encode,
    )


@pytest.mark.parametrize("method", ["linear", "inverted_cdf", "hazen", "closest_observation"])
def test_kbins_quantile_methods(Xmix, method):
    a = skp.KBinsDiscretizer(5, encode="ordinal", quantile_method=method).fit(Xmix)
    b = ep.KBinsDiscretizer(5, encode="ordinal", quantile_method=method).fit(Xmix)
    for u, v in zip(a.bin_edges_, b.bin_edges_, strict=True):
        np.testing.assert_allclose(v, u, rtol=1e-12)


def test_ordinal_encoder(device):
    Xc = np.array([["a", "x"], ["b", "y"], ["a", "z"], ["c", "x"]], dtype=object)
    a, b = skp.OrdinalEncoder().fit(Xc), ep.OrdinalEncoder().fit(Xc)
    np.testing.assert_array_equal(b.transform(Xc), a.transform(Xc))
    np.testing.assert_array_equal(b.inverse_transform(b.transform(Xc)), Xc)
    Xt = np.array([["d", "x"]], dtype=object)
    kw = {"handle_unknown": "use_encoded_value", "unknown_value": -1}
    a, b = skp.OrdinalEncoder(**kw).fit(Xc), ep.OrdinalEncoder(**kw).fit(Xc)
    np.testing.assert_array_equal(b.transform(Xt), a.transform(Xt))
    assert b.inverse_transform(b.transform(Xt)).tolist() == [[None, "x"]]
    with pytest.raises(ValueError, match="unknown categor"):
        ep.OrdinalEncoder().fit(Xc).transform(Xt)
    with pytest.raises(TypeError):
        ep.OrdinalEncoder(handle_unknown="use_encoded_value").fit(Xc)
    with pytest.raises(ValueError):
        ep.OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=1).fit(Xc)
    Xn = np.array([[1.0], [np.nan], [3.0], [1.0]])
    a = skp.OrdinalEncoder(encoded_missing_value=-2).fit(Xn)
    b = ep.OrdinalEncoder(encoded_missing_value=-2).fit(Xn)
    np.testing.assert_array_equal(b.transform(Xn), a.transform(Xn))
    got = ep.OrdinalEncoder(encoded_missing_value=-2).fit(_e(Xn, device)).transform(_e(Xn, device))
    assert isinstance(got, ember.ndarray)
    np.testing.assert_array_equal(_n(got), a.transform(Xn))


def test_function_transformer(device):
    X = np.abs(np.random.RandomState(0).randn(20, 3))
    ft = ep.FunctionTransformer(np.log1p, np.expm1).fit(X)
    np.testing.assert_allclose(ft.transform(X), np.log1p(X))
    np.testing.assert_allclose(ft.inverse_transform(ft.transform(X)), X)
    with pytest.warns(UserWarning, match="not strictly inverse"):
        ep.FunctionTransformer(np.log1p, np.exp).fit(X)
    ident = ep.FunctionTransformer().fit_transform(_e(X, device))
    assert isinstance(ident, ember.ndarray)
    ft = ep.FunctionTransformer(lambda v: v * 2, validate=True, feature_names_out="one-to-one")
    ft.fit(X)
    assert ft.n_features_in_ == 3 and list(ft.get_feature_names_out()) == ["x0", "x1", "x2"]


# -------------------------------------------------------------------- feature selection


@pytest.mark.parametrize("fn", ["f_classif", "f_regression", "chi2", "r_regression"])
def test_score_functions(device, clf_data, reg_data, fn):
    X, y = reg_data if fn in ("f_regression", "r_regression") else clf_data
    if fn == "chi2":
        X = np.abs(X)
    ref = getattr(skfs, fn)(X, y)
    for conv in (lambda v: v, lambda v: _e(v, device)):
        got = getattr(efs, fn)(conv(X), conv(y))
        ref_t = ref if isinstance(ref, tuple) else (ref,)
        got_t = got if isinstance(got, tuple) else (got,)
        for u, v in zip(ref_t, got_t, strict=True):
            np.testing.assert_allclose(_n(v), u, rtol=1e-9, atol=1e-300)


def test_selectors(device, clf_data):
    X, y = clf_data
    for k in (1, 3, "all"):
        a, b = skfs.SelectKBest(k=k).fit(X, y), efs.SelectKBest(k=k).fit(X, y)
        np.testing.assert_array_equal(a.get_support(), b.get_support())
    for p in (10, 30, 50):
        a = skfs.SelectPercentile(percentile=p).fit(X, y)
        b = efs.SelectPercentile(percentile=p).fit(X, y)
        np.testing.assert_array_equal(a.get_support(), b.get_support())
    Xv = X.copy()
    Xv[:, 2] = 1.0
    np.testing.assert_array_equal(
        skfs.VarianceThreshold().fit(Xv).get_support(),
        efs.VarianceThreshold().fit(Xv).get_support(),
    )
    np.testing.assert_allclose(
        efs.VarianceThreshold(0.9).fit(X).variances_, skfs.VarianceThreshold(0.9).fit(X).variances_
    )
    out = efs.SelectKBest(k=3).fit_transform(_e(X, device), _e(y, device))
    assert isinstance(out, ember.ndarray)
    np.testing.assert_allclose(_n(out), skfs.SelectKBest(k=3).fit_transform(X, y))
    sel = efs.SelectKBest(efs.f_classif, k=2).fit(X, y)
    np.testing.assert_allclose(
        sel.inverse_transform(sel.transform(X))[:, sel.get_support()], X[:, sel.get_support()]
    )
    with pytest.raises(ValueError, match="variance threshold"):
        efs.VarianceThreshold(100.0).fit(X)
    with pytest.raises(ValueError, match="non-negative"):
        efs.chi2(X, y)


# ------------------------------------------------- FeatureUnion, utils, datasets, NB


def test_feature_union(device, clf_data):
    from ember.ml.decomposition import PCA
    from ember.ml.pipeline import FeatureUnion, make_union
    from sklearn.decomposition import PCA as SkPCA
    from sklearn.pipeline import FeatureUnion as SkFU

    X, _ = clf_data
    a = SkFU([("p", SkPCA(2)), ("s", skp.StandardScaler())], transformer_weights={"p": 2.0})
    b = FeatureUnion([("p", PCA(2)), ("s", ep.StandardScaler())], transformer_weights={"p": 2.0})
    np.testing.assert_allclose(b.fit_transform(X), a.fit_transform(X), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(b.transform(X), a.transform(X), rtol=1e-6, atol=1e-8)
    u = make_union(PCA(2), ep.StandardScaler())
    assert [n for n, _ in u.transformer_list] == ["pca", "standardscaler"]
    got = u.fit_transform(_e(X, device))
    assert isinstance(got, ember.ndarray) and got.shape == (200, 10)
    u.set_params(pca__n_components=3)
    assert u.fit_transform(X).shape == (200, 11)
    with pytest.raises(ValueError, match="not unique"):
        FeatureUnion([("a", PCA(2)), ("a", PCA(2))]).fit(X)


def test_shuffle_resample(device):
    from ember.ml.utils import resample, shuffle

    X = np.arange(40.0).reshape(20, 2)
    y = np.arange(20)
    Xs, ys = shuffle(X, y, random_state=0)
    np.testing.assert_array_equal(Xs[:, 0] / 2, ys)
    assert sorted(ys.tolist()) == list(range(20)) and ys.tolist() != list(range(20))
    Xe = shuffle(_e(X, device), random_state=1)
    assert isinstance(Xe, ember.ndarray) and sorted(_n(Xe)[:, 0].tolist()) == X[:, 0].tolist()
    r = resample(X, random_state=0, n_samples=500)
    assert r.shape == (500, 2) and len(np.unique(r[:, 0])) == 20
    yc = np.r_[np.zeros(15), np.ones(5)]
    rs = resample(yc, stratify=yc, n_samples=8, replace=False, random_state=0)
    assert sorted(rs.tolist()) == [0] * 6 + [1] * 2
    with pytest.raises(ValueError):
        resample(X, n_samples=30, replace=False)
    with pytest.raises(ValueError, match="inconsistent"):
        resample(X, y[:5])


def test_datasets_statistics(device):
    from ember.ml import datasets

    X, y, C = datasets.make_blobs(
        3000, 3, centers=4, cluster_std=0.5, random_state=0, return_centers=True, device=device
    )
    Xh, yh, Ch = _n(X), _n(y), _n(C)
    assert X.shape == (3000, 3) and np.bincount(yh).tolist() == [750] * 4
    assert np.all((Ch >= -10) & (Ch <= 10))
    for k in range(4):
        np.testing.assert_allclose(Xh[yh == k].mean(0), Ch[k], atol=0.08)
        np.testing.assert_allclose(Xh[yh == k].std(0), 0.5, atol=0.05)
    X, y = datasets.make_classification(
        2000,
        10,
        n_informative=3,
        n_redundant=2,
        n_repeated=1,
        flip_y=0,
        random_state=0,
        device=device,
    )
    Xh, yh = _n(X), _n(y)
    assert X.shape == (2000, 10) and set(np.unique(yh)) == {0, 1}
    assert np.linalg.matrix_rank(Xh) == 7  # 3 informative + 4 noise; redundant/repeated dependent
    acc = skl.LogisticRegression().fit(Xh, yh).score(Xh, yh)
    assert acc > 0.7
    X, y, coef = datasets.make_regression(
        500, 6, n_informative=3, noise=0.0, coef=True, random_state=0, device=device
    )
    Xh, yh, ch = _n(X), _n(y), _n(coef)
    np.testing.assert_allclose(Xh @ ch, yh, rtol=1e-10, atol=1e-8)
    assert (ch != 0).sum() == 3 and np.all((ch >= 0) & (ch < 100))
    X, y = datasets.make_moons(200, noise=None, random_state=0, device=device)
    Xh, yh = _n(X), _n(y)
    np.testing.assert_allclose(np.hypot(Xh[yh == 0, 0], Xh[yh == 0, 1]), 1.0, atol=1e-12)
    np.testing.assert_allclose(np.hypot(Xh[yh == 1, 0] - 1, Xh[yh == 1, 1] - 0.5), 1, atol=1e-12)
    with pytest.raises(ValueError, match="must sum to less"):
        datasets.make_classification(10, 3, n_informative=3, n_redundant=1)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize(
    ("name", "kw", "pos"),
    [
        ("GaussianNB", {}, False),
        ("GaussianNB", {"priors": [0.2, 0.3, 0.5]}, False),
        ("MultinomialNB", {}, True),
        ("MultinomialNB", {"alpha": 0.3, "fit_prior": False}, True),
        ("BernoulliNB", {}, False),
        ("BernoulliNB", {"binarize": 0.5, "class_prior": [0.5, 0.25, 0.25]}, False),
    ],
)
def test_naive_bayes(device, name, kw, pos, dtype):
    X, y = make_classification(300, 8, n_informative=4, n_classes=3, random_state=0)
    X = (np.abs(X) if pos else X).astype(dtype)
    a = getattr(sknb, name)(**kw).fit(X, y)
    w = np.random.RandomState(0).rand(300)
    for conv in (lambda v: v, lambda v: _e(v, device)):
        b = getattr(enb, name)(**kw).fit(conv(X), conv(y))
        tol = 1e-4 if dtype == np.float32 else 1e-7
        np.testing.assert_allclose(
            _n(b.predict_proba(conv(X))), a.predict_proba(X), rtol=tol, atol=tol
        )
        np.testing.assert_array_equal(_n(b.predict(conv(X))), a.predict(X))
    aw = getattr(sknb, name)(**kw).fit(X, y, sample_weight=w)
    bw = getattr(enb, name)(**kw).fit(X, y, sample_weight=w)
    np.testing.assert_allclose(
        bw.predict_log_proba(X), aw.predict_log_proba(X), rtol=1e-4, atol=1e-4
    )


def test_naive_bayes_errors():
    X = np.random.RandomState(0).randn(20, 3)
    y = np.r_[np.zeros(10), np.ones(10)]
    with pytest.raises(ValueError, match="Negative values"):
        enb.MultinomialNB().fit(X, y)
    with pytest.raises(ValueError, match="sum of the priors"):
        enb.GaussianNB(priors=[0.5, 0.6]).fit(X, y)
    with pytest.raises(InvalidParameterError):
        enb.GaussianNB(var_smoothing=-1).fit(X, y)
    from ember.ml.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        enb.GaussianNB().predict(X)
