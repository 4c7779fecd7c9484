"""ember.ml estimator protocol: params, clone, sklearn interop, estimator checks, model
selection and pipelines."""

from __future__ import annotations

import pickle
import warnings

import ember
import numpy as np
import pandas as pd
import pytest
import sklearn
from ember.ml import clone
from ember.ml.cluster import DBSCAN, KMeans, MiniBatchKMeans
from ember.ml.decomposition import PCA, TruncatedSVD
from ember.ml.linear_model import (
    ElasticNet,
    Lasso,
    LinearRegression,
    LogisticRegression,
    Ridge,
    SGDRegressor,
)
from ember.ml.model_selection import (
    KFold,
    StratifiedKFold,
    cross_val_score,
    cross_validate,
    train_test_split,
)
from ember.ml.neighbors import KNeighborsClassifier, KNeighborsRegressor, NearestNeighbors
from ember.ml.pipeline import Pipeline, make_pipeline
from ember.ml.preprocessing import MinMaxScaler, PolynomialFeatures, StandardScaler
from sklearn import model_selection as skms
from sklearn.base import clone as sk_clone
from sklearn.datasets import load_iris
from sklearn.exceptions import NotFittedError as SkNotFittedError
from sklearn.pipeline import make_pipeline as sk_make_pipeline
from sklearn.utils.estimator_checks import check_estimator

# scikit-learn is imported above, so ember's errors are also scikit-learn's classes.
SK_VERSION = tuple(int(v) for v in sklearn.__version__.split(".")[:2])


def test_get_set_params_clone_repr():
    km = KMeans(3, random_state=1)
    p = km.get_params()
    assert p["n_clusters"] == 3 and p["init"] == "k-means++" and p["n_init"] == "auto"
    assert km.set_params(n_clusters=5) is km and km.n_clusters == 5
    with pytest.raises(ValueError, match="Invalid parameter 'bogus'"):
        km.set_params(bogus=1)
    c = clone(km)
    assert c is not km and c.get_params() == km.get_params()
    assert repr(Ridge(alpha=3)) == "Ridge(alpha=3)"
    assert repr(LogisticRegression()) == "LogisticRegression()"
    s = sk_clone(LogisticRegression(C=2.0))
    assert isinstance(s, LogisticRegression) and s.C == 2.0
    X = np.random.default_rng(0).normal(size=(30, 3))
    fitted = KMeans(2, random_state=0).fit(X)
    assert not hasattr(clone(fitted), "cluster_centers_")
    p2 = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_array_equal(p2.predict(X), fitted.predict(X))


def test_errors_are_sklearn_classes():
    X = np.ones((5, 2))
    with pytest.raises(SkNotFittedError):
        LinearRegression().predict(X)
    from sklearn.utils._param_validation import InvalidParameterError

    with pytest.raises(InvalidParameterError):
        PCA(n_components=-3).fit(X)


def test_dataframes_and_lists():
    df = pd.DataFrame({"a": [1.0, 2.0, 3.0, 4.0], "b": [0.5, 0.1, 0.9, 0.2]})
    y = pd.Series([1.0, 2.0, 3.0, 4.5])
    m = LinearRegression().fit(df, y)
    assert isinstance(m.coef_, np.ndarray) and m.n_features_in_ == 2
    np.testing.assert_allclose(
        m.predict(df), LinearRegression().fit(df.values, y.values).predict(df.values)
    )
    out = StandardScaler().fit_transform([[1.0, 2.0], [3.0, 5.0]])
    np.testing.assert_allclose(out, [[-1, -1], [1, 1]])


_CHECKED = [
    KMeans(n_clusters=2, n_init=2),
    LinearRegression(),
    Ridge(),
    Lasso(),
    ElasticNet(),
    LogisticRegression(),
    PCA(),
    TruncatedSVD(),
    NearestNeighbors(),
    KNeighborsClassifier(),
    KNeighborsRegressor(),
    StandardScaler(),
    MinMaxScaler(),
    PolynomialFeatures(),
    DBSCAN(),
    MiniBatchKMeans(n_clusters=2, n_init=1),
    SGDRegressor(max_iter=5, tol=None),
]
# SGDClassifier passes the same checks but takes ~20 s (check_class_weight_classifiers fits
# one-versus-all models for 1000 epochs), so it is left out of the quick suite.
_EXPECTED_FAILURES = {
    # stochastic fits: reweighting is not the same random stream as repeating rows
    ("MiniBatchKMeans", "check_sample_weight_equivalence_on_dense_data"),
    ("SGDRegressor", "check_sample_weight_equivalence_on_dense_data"),
    # randomised k-means++ seeding: weights and repeated rows draw different seeds
    ("KMeans", "check_sample_weight_equivalence_on_dense_data"),
    # scikit-learn's Ridge also leaves n_iter_ = None for its direct solvers
    ("Ridge", "check_non_transformer_estimators_n_iter"),
}


@pytest.mark.skipif(SK_VERSION < (1, 6), reason="check_estimator(on_fail=None) is 1.6+")
@pytest.mark.parametrize("est", _CHECKED, ids=lambda e: type(e).__name__)
def test_sklearn_estimator_checks(est):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = check_estimator(est, on_fail=None)
    failed = {
        (type(est).__name__, r["check_name"]): str(r["exception"])[:200]
        for r in results
        if r["status"] == "failed"
    }
    unexpected = {k: v for k, v in failed.items() if k not in _EXPECTED_FAILURES}
    assert not unexpected, unexpected
    assert len(results) > 30


def test_sklearn_pipeline_and_grid_search():
    X, y = load_iris(return_X_y=True)
    ours = make_pipeline(StandardScaler(), PCA(3), LogisticRegression()).fit(X, y)
    from sklearn.decomposition import PCA as SkPCA
    from sklearn.linear_model import LogisticRegression as SkLR
    from sklearn.preprocessing import StandardScaler as SkSS

    ref = sk_make_pipeline(SkSS(), SkPCA(3), SkLR()).fit(X, y)
    assert ours.score(X, y) == pytest.approx(ref.score(X, y))
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))
    assert list(ours.named_steps) == ["standardscaler", "pca", "logisticregression"]
    ours.set_params(logisticregression__C=0.5)
    assert ours["logisticregression"].C == 0.5
    grid = skms.GridSearchCV(
        sk_make_pipeline(StandardScaler(), LogisticRegression()),
        {"logisticregression__C": [0.1, 1.0, 10.0]},
        cv=3,
    ).fit(X, y)
    ref_grid = skms.GridSearchCV(
        sk_make_pipeline(SkSS(), SkLR()), {"logisticregression__C": [0.1, 1.0, 10.0]}, cv=3
    ).fit(X, y)
    assert grid.best_params_ == ref_grid.best_params_
    assert grid.best_score_ == pytest.approx(ref_grid.best_score_, abs=1e-9)
    p = Pipeline([("s", StandardScaler()), ("k", KMeans(3, random_state=0))])
    assert p.fit_predict(X).shape == (150,)


def test_train_test_split(device):
    X = np.arange(80.0).reshape(40, 2)
    y = np.arange(40) % 2
    Xtr, Xte, ytr, yte = train_test_split(X, y, random_state=0)
    assert Xtr.shape == (30, 2) and Xte.shape == (10, 2) and ytr.shape == (30,)
    assert sorted(np.concatenate([Xtr[:, 0], Xte[:, 0]])) == sorted(X[:, 0])
    Xe = ember.asarray(X, device=device)
    a, b, c, d = train_test_split(Xe, y, test_size=0.3, stratify=y, random_state=1)
    assert isinstance(a, ember.ndarray) and str(a.device) == str(Xe.device)
    assert b.shape == (12, 2) and np.bincount(d).tolist() == [6, 6]
    a, b = train_test_split(list(range(10)), shuffle=False, test_size=3)
    assert a == list(range(7)) and b == [7, 8, 9]
    df = pd.DataFrame({"x": range(8)})
    a, b = train_test_split(df, train_size=0.5, random_state=0)
    assert len(a) == 4 and len(b) == 4
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        train_test_split(X, y[:-1])
    with pytest.raises(ValueError, match="test_size=1.5"):
        train_test_split(X, test_size=1.5)


def test_folds_and_cross_validation():
    X, y = load_iris(return_X_y=True)
    for ours, ref in [(KFold(4), skms.KFold(4)), (StratifiedKFold(3), skms.StratifiedKFold(3))]:
        for (a_tr, a_te), (b_tr, b_te) in zip(ours.split(X, y), ref.split(X, y), strict=True):
            np.testing.assert_array_equal(a_tr, b_tr)
            np.testing.assert_array_equal(a_te, b_te)
    for _tr, te in StratifiedKFold(5, shuffle=True, random_state=0).split(X, y):
        assert np.bincount(y[te]).tolist() == [10, 10, 10]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = cross_val_score(LogisticRegression(max_iter=500), X, y, cv=5)
        ref = skms.cross_val_score(LogisticRegression(max_iter=500), X, y, cv=5)
    np.testing.assert_allclose(ours, ref)
    res = cross_validate(
        Ridge(), X[:, :3], X[:, 3], cv=3, scoring="neg_mean_squared_error", return_train_score=True
    )
    assert res["test_score"].shape == (3,) and (res["test_score"] < 0).all()
    assert "train_score" in res
    with pytest.raises(ValueError, match="n_splits=1"):
        KFold(1)


def test_ember_frame_inputs(device):
    ef = pytest.importorskip("ember.frame")
    pdf = pd.DataFrame({"a": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0], "b": [0.5, 0.1, 0.9, 0.2, 0.3, 0.7]})
    df = ef.DataFrame(pdf)
    if hasattr(df, "to"):
        df = df.to(device)
    y = ef.Series([1.0, 2.0, 3.0, 4.5, 5.0, 6.5])
    if hasattr(y, "to"):
        y = y.to(device)
    m = LinearRegression().fit(df, y)
    assert isinstance(m.coef_, ember.ndarray)
    ref = LinearRegression().fit(pdf.values, y.to_numpy())
    np.testing.assert_allclose(ember.asnumpy(m.coef_), ref.coef_, atol=1e-10)
    lab = ef.Series(["x", "y", "x", "y", "y", "x"])
    clf = LogisticRegression().fit(df, lab)
    assert set(np.asarray(clf.classes_).tolist()) == {"x", "y"}
    assert clf.predict(df).shape == (6,)
    parts = train_test_split(df, y, random_state=0, test_size=2)
    assert len(parts[1]) == 2 and type(parts[0]).__module__.startswith("ember.frame")


def test_feature_names_out():
    X = np.random.default_rng(0).random((20, 4))
    from sklearn.decomposition import PCA as SkPCA
    from sklearn.preprocessing import StandardScaler as SkSS

    assert list(PCA(2).fit(X).get_feature_names_out()) == list(
        SkPCA(2).fit(X).get_feature_names_out()
    )
    assert list(StandardScaler().fit(X).get_feature_names_out()) == list(
        SkSS().fit(X).get_feature_names_out()
    )
    assert list(KMeans(3, random_state=0).fit(X).get_feature_names_out()) == [
        "kmeans0",
        "kmeans1",
        "kmeans2",
    ]


def test_feature_names_in():
    df = pd.DataFrame({"a": [1.0, 2, 3, 4, 5, 6], "b": [3.0, 1, 2, 4, 4, 5]})
    for est in (StandardScaler(), KNeighborsClassifier(2), LinearRegression(), PCA(1)):
        y = [0, 1, 0, 1, 0, 1]
        kind = getattr(est, "_estimator_type", None)
        est.fit(df, y) if kind in ("classifier", "regressor") else est.fit(df)
        assert list(est.feature_names_in_) == ["a", "b"]
        f = est.predict if hasattr(est, "predict") else est.transform
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            f(df)
        with pytest.warns(UserWarning, match="does not have valid feature names"):
            f(df.values)
        with pytest.raises(ValueError, match="feature names should match"):
            f(df[["b", "a"]])
    assert not hasattr(StandardScaler().fit(df.values), "feature_names_in_")


_ALL = [
    (KMeans(2, n_init=1), "n_clusters", 0, False),
    (MiniBatchKMeans(2, n_init=1), "batch_size", 0, False),
    (DBSCAN(), "min_samples", 0, False),
    (LinearRegression(), "fit_intercept", "yes", True),
    (Ridge(), "solver", "qr", True),
    (Lasso(), "alpha", -1.0, True),
    (ElasticNet(), "l1_ratio", 2.0, True),
    (LogisticRegression(), "max_iter", -5, True),
    (SGDRegressor(max_iter=5, tol=None), "learning_rate", "fast", True),
    (PCA(1), "n_components", -2, False),
    (TruncatedSVD(1), "n_components", 0, False),
    (NearestNeighbors(n_neighbors=2), "n_neighbors", 0, False),
    (KNeighborsClassifier(2), "weights", "near", True),
    (KNeighborsRegressor(2), "p", -1, True),
    (StandardScaler(), "with_mean", "no", False),
    (MinMaxScaler(), "clip", 3, False),
    (PolynomialFeatures(), "order", "Z", False),
]


@pytest.mark.parametrize("case", _ALL, ids=lambda c: type(c[0]).__name__)
def test_common_errors(device, case):
    est, param, bad, supervised = case
    rng = np.random.default_rng(0)
    X = ember.asarray(rng.normal(size=(12, 3)), device=device)
    y = ember.asarray(np.arange(12) % 2, device=device)
    name = type(est).__name__
    method = next(
        m for m in ("predict", "transform", "kneighbors", "fit_predict") if hasattr(est, m)
    )
    if method != "fit_predict":
        with pytest.raises(SkNotFittedError, match=f"This {name} instance is not fitted yet"):
            getattr(est, method)(X)
    bad_est = clone(est).set_params(**{param: bad})
    with pytest.raises(ValueError, match=f"'{param}' parameter of {name} must be"):
        bad_est.fit(X, y) if supervised else bad_est.fit(X)
    Xn = rng.normal(size=(12, 3))
    Xn[2, 1] = np.nan
    if name not in ("StandardScaler", "MinMaxScaler"):  # these keep NaNs, as scikit-learn's
        with pytest.raises(ValueError, match="NaN"):
            clone(est).fit(ember.asarray(Xn, device=device), y) if supervised else clone(est).fit(
                ember.asarray(Xn, device=device)
            )
    Xn[2, 1] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        clone(est).fit(ember.asarray(Xn, device=device), y) if supervised else clone(est).fit(
            ember.asarray(Xn, device=device)
        )
    if supervised:
        with pytest.raises(ValueError, match="inconsistent numbers of samples"):
            clone(est).fit(X, y[:-1])
    fitted = clone(est).fit(X, y) if supervised else clone(est).fit(X)
    assert fitted.n_features_in_ == 3
    if method != "fit_predict":
        with pytest.raises(ValueError, match=f"X has 2 features, but {name} is expecting 3"):
            getattr(fitted, method)(X[:, :2])
        out = getattr(fitted, method)(X)
        out = out[0] if isinstance(out, tuple) else out
        assert isinstance(out, ember.ndarray) and str(out.device) == str(X.device)


def test_pipeline_fits_its_steps_in_place():
    """scikit-learn's Pipeline (no caching memory) and FeatureUnion fit the step objects they
    were given: the caller's references are the fitted ones."""
    import pandas as pd
    from ember.ml import compose, impute, linear_model, pipeline, preprocessing

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    y = (X[:, 0] > 0).astype(int)
    df = pd.DataFrame(X, columns=list("abc"))
    df["cat"] = rng.choice(["x", "y"], 40)
    df.loc[::7, "a"] = np.nan
    pre = compose.ColumnTransformer(
        [
            ("num", impute.SimpleImputer(strategy="median"), list("abc")),
            ("cat", preprocessing.OneHotEncoder(), ["cat"]),
        ]
    )
    pipe = pipeline.Pipeline([("pre", pre), ("clf", linear_model.LogisticRegression())])
    pipe.fit(df, y)
    assert pipe.named_steps["pre"] is pre
    assert list(pre.get_feature_names_out()) == [
        "num__a",
        "num__b",
        "num__c",
        "cat__cat_x",
        "cat__cat_y",
    ]
    sc = preprocessing.StandardScaler()
    fu = pipeline.FeatureUnion([("sc", sc), ("mm", preprocessing.MinMaxScaler())])
    fu.fit(X)
    assert hasattr(sc, "mean_")


def test_set_output_pandas_and_config_context():
    import pandas as pd
    import pytest
    from ember.ml import (
        clone,
        compose,
        config_context,
        decomposition,
        get_config,
        impute,
        pipeline,
        preprocessing,
    )
    from sklearn.compose import ColumnTransformer as SkCT
    from sklearn.decomposition import PCA as SkPCA
    from sklearn.preprocessing import StandardScaler as SkSS

    rng = np.random.default_rng(1)
    df = pd.DataFrame(rng.random((8, 3)), columns=list("abc"), index=list("stuvwxyz"))
    sc = preprocessing.StandardScaler().set_output(transform="pandas")
    got = sc.fit_transform(df)
    want = SkSS().set_output(transform="pandas").fit_transform(df)
    pd.testing.assert_frame_equal(got, want)
    pd.testing.assert_frame_equal(sc.transform(df), want)
    assert clone(sc)._sklearn_output_config == {"transform": "pandas"}
    ct = compose.ColumnTransformer(
        [
            ("sc", preprocessing.StandardScaler(), ["a", "b"]),
            ("pca", decomposition.PCA(1), ["b", "c"]),
        ]
    ).set_output(transform="pandas")
    sk = SkCT([("sc", SkSS(), ["a", "b"]), ("pca", SkPCA(1), ["b", "c"])]).set_output(
        transform="pandas"
    )
    a, b = ct.fit_transform(df), sk.fit_transform(df)
    assert list(a.columns) == list(b.columns) and list(a.index) == list(b.index)
    np.testing.assert_allclose(np.abs(a.to_numpy()), np.abs(b.to_numpy()), rtol=1e-10)
    with config_context(transform_output="pandas"):
        assert get_config()["transform_output"] == "pandas"
        out = pipeline.make_pipeline(impute.SimpleImputer(), preprocessing.MinMaxScaler())
        assert isinstance(out.fit_transform(df), pd.DataFrame)
    assert get_config()["transform_output"] == "default"
    assert isinstance(preprocessing.StandardScaler().fit_transform(df), np.ndarray)
    with pytest.raises(ValueError, match="set_output.*transform"):
        preprocessing.StandardScaler().set_output(transform="arrow")


def test_set_output_pandas_of_ember_arrays(device):
    import ember
    import pandas as pd
    from ember.ml import preprocessing

    x = ember.asarray(np.arange(12.0).reshape(4, 3), device=device)
    got = preprocessing.MinMaxScaler().set_output(transform="pandas").fit_transform(x)
    assert isinstance(got, pd.DataFrame) and list(got.columns) == ["x0", "x1", "x2"]
    np.testing.assert_allclose(got.to_numpy()[:, 0], [0, 1 / 3, 2 / 3, 1])


def test_pipeline_feature_names_and_log_metrics():
    import pandas as pd
    import pytest
    from ember.ml import compose, impute, metrics, pipeline, preprocessing
    from sklearn import metrics as skm

    df = pd.DataFrame({"a": [1.0, np.nan, 3.0, 4.0], "b": [0.5, 1.5, 2.5, 3.5]})
    ct = compose.ColumnTransformer(
        [
            (
                "num",
                pipeline.make_pipeline(impute.SimpleImputer(), preprocessing.StandardScaler()),
                ["a", "b"],
            )
        ]
    )
    ct.fit(df)
    assert list(ct.get_feature_names_out()) == ["num__a", "num__b"]
    y, p = np.array([0.5, 1.0, 3.0, 7.0]), np.array([0.4, 1.5, 2.0, 8.0])
    assert metrics.max_error(y, p) == skm.max_error(y, p)
    np.testing.assert_allclose(
        metrics.mean_squared_log_error(y, p), skm.mean_squared_log_error(y, p)
    )
    np.testing.assert_allclose(
        metrics.root_mean_squared_log_error(y, p), skm.root_mean_squared_log_error(y, p)
    )
    with pytest.raises(ValueError, match="less than or equal to -1"):
        metrics.mean_squared_log_error([-2.0, 1.0], [1.0, 1.0])
