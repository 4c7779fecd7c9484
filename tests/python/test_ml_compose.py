"""ember.ml.compose.ColumnTransformer and ember.ml.preprocessing.LabelBinarizer against
scikit-learn on the same data: outputs, fitted attributes, feature names and errors."""

from __future__ import annotations

import warnings

import ember
import numpy as np
import pandas as pd
import pytest
from ember.ml import linear_model as eml
from ember.ml import preprocessing as ep
from ember.ml.compose import ColumnTransformer, make_column_transformer
from ember.ml.exceptions import NotFittedError
from ember.ml.pipeline import make_pipeline
from sklearn import compose as skc
from sklearn import preprocessing as skp
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline as sk_make_pipeline


def _n(a):
    return ember.asnumpy(a) if isinstance(a, ember.ndarray) else np.asarray(a)


def _e(x, device):
    return ember.asarray(x, device=device)


def _X(dtype=np.float64, n=40, d=6, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.normal(size=(n, d)) * np.arange(1, d + 1) + np.arange(d)).astype(dtype)


def _frame(seed=0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(rng.normal(size=(30, 4)) * [1, 3, 5, 7], columns=["a", "b", "c", "d"])
    df["city"] = np.array(["paris", "rome", "oslo"])[rng.integers(0, 3, 30)]
    return df


def _pair(spec, remainder="drop", **kw):
    """The same ColumnTransformer built from ember's and scikit-learn's transformers."""
    table = {
        "std": (ep.StandardScaler, skp.StandardScaler),
        "mm": (ep.MinMaxScaler, skp.MinMaxScaler),
    }

    def build(side):
        ts = [(n, t if t in ("drop", "passthrough") else table[t][side](), c) for n, t, c in spec]
        rem = remainder if remainder in ("drop", "passthrough") else table[remainder][side]()
        cls = ColumnTransformer if side == 0 else skc.ColumnTransformer
        return cls(ts, remainder=rem, **kw)

    return build(0), build(1)


def _check_same(a, b, Xa, Xb):
    out_a, out_b = a.fit_transform(Xa), b.fit_transform(Xb)
    np.testing.assert_allclose(_n(out_a), out_b, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(_n(a.transform(Xa)), b.transform(Xb), rtol=1e-5, atol=1e-5)
    assert a.output_indices_ == b.output_indices_
    assert list(a.get_feature_names_out()) == list(b.get_feature_names_out())
    assert [(n, c) for n, _, c in a.transformers_] == [(n, c) for n, _, c in b.transformers_]
    assert list(a.named_transformers_) == list(b.named_transformers_)
    assert a.n_features_in_ == b.n_features_in_
    return out_a


SPECS = [
    ([("s", "std", [0, 1]), ("m", "mm", slice(2, 4))], "drop"),
    ([("s", "std", [0, 1]), ("p", "passthrough", [5])], "passthrough"),
    ([("s", "std", [True, False, True, False, False, False])], "mm"),
    ([("s", "std", [-1, 0]), ("d", "drop", [2])], "passthrough"),
    ([("s", "std", []), ("m", "mm", [3, 1])], "std"),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("spec,remainder", SPECS)
def test_column_transformer_arrays(device, dtype, spec, remainder):
    X = _X(dtype)
    a, b = _pair(spec, remainder)
    _check_same(a, b, X, X)  # NumPy in, NumPy out
    a, b = _pair(spec, remainder)
    out = _check_same(a, b, _e(X, device), X)
    assert isinstance(out, ember.ndarray) and str(out.device) == str(_e(X, device).device)
    assert _n(out).dtype == dtype
    # the fitted transformers are ember's, fitted on their own columns
    fitted = dict((n, t) for n, t, _ in a.transformers_)
    if "s" in fitted and hasattr(fitted["s"], "mean_"):
        ref = dict((n, t) for n, t, _ in b.transformers_)["s"]
        np.testing.assert_allclose(_n(fitted["s"].mean_), ref.mean_, rtol=1e-5)


def test_column_transformer_weights_and_empty_output():
    X = _X()
    a, b = _pair([("s", "std", [0]), ("m", "mm", [1, 2])], transformer_weights={"s": 2.0, "m": 0.5})
    _check_same(a, b, X, X)
    a, b = _pair([("d", "drop", [0, 1])])
    out = a.fit_transform(X)
    assert out.shape == (40, 0) and b.fit_transform(X).shape == (40, 0)
    # (scikit-learn leaves output_indices_ unset when nothing is output; ember records the
    # empty slices)
    assert a.output_indices_ == {"d": slice(0, 0), "remainder": slice(0, 0)}
    assert [(n, t, c) for n, t, c in a.transformers_] == [(n, t, c) for n, t, c in b.transformers_]
    assert a.transformers_[0][1] == "drop" and a.transformers_[-1][0] == "remainder"
    assert len(a.get_feature_names_out()) == 0


def test_column_transformer_pandas_names():
    df = _frame()
    a = ColumnTransformer(
        [
            ("num", ep.StandardScaler(), ["a", "b"]),
            ("cat", ep.OneHotEncoder(sparse_output=False), ["city"]),
        ],
        remainder="passthrough",
    )
    b = skc.ColumnTransformer(
        [
            ("num", skp.StandardScaler(), ["a", "b"]),
            ("cat", skp.OneHotEncoder(sparse_output=False), ["city"]),
        ],
        remainder="passthrough",
    )
    out = _check_same(a, b, df, df)
    assert isinstance(out, np.ndarray)
    assert list(a.feature_names_in_) == ["a", "b", "c", "d", "city"]
    assert a.transformers_[-1][2] == ["c", "d"]  # remainder columns by name, as scikit-learn
    # transform reads the columns by name: reordered columns give the same output
    shuffled = df[["city", "d", "c", "b", "a"]]
    np.testing.assert_allclose(a.transform(shuffled), b.transform(shuffled))
    with pytest.raises(ValueError, match="columns are missing"):
        a.transform(df.drop(columns=["a"]))
    # string slices are inclusive, as pandas' loc
    a, b = _pair([("s", "std", slice("b", "c"))])
    _check_same(a, b, df[["a", "b", "c", "d"]], df[["a", "b", "c", "d"]])
    # the sparse OneHotEncoder output (host CSR) is densified
    a = ColumnTransformer([("cat", ep.OneHotEncoder(), ["city"])]).fit(df)
    assert isinstance(a.transform(df), np.ndarray) and a.transform(df).shape == (30, 3)


def test_column_transformer_feature_names_options():
    df = _frame()[["a", "b", "c"]]
    a = ColumnTransformer(
        [("s", ep.StandardScaler(), ["a"]), ("p", "passthrough", ["b"])],
        verbose_feature_names_out=False,
    ).fit(df)
    assert list(a.get_feature_names_out()) == ["a", "b"]
    a = ColumnTransformer(
        [("s", ep.StandardScaler(), ["a"]), ("p", "passthrough", ["a"])],
        verbose_feature_names_out=False,
    ).fit(df)
    with pytest.raises(ValueError, match=r"Output feature names: \['a'\] are not unique"):
        a.get_feature_names_out()
    a = ColumnTransformer(
        [("s", ep.StandardScaler(), ["a", "c"])],
        verbose_feature_names_out="{feature_name}-{transformer_name}",
    ).fit(df)
    b = skc.ColumnTransformer(
        [("s", skp.StandardScaler(), ["a", "c"])],
        verbose_feature_names_out="{feature_name}-{transformer_name}",
    ).fit(df)
    assert list(a.get_feature_names_out()) == list(b.get_feature_names_out()) == ["a-s", "c-s"]
    X = _X()
    a = ColumnTransformer([("s", ep.StandardScaler(), [1, 3])]).fit(X)
    assert list(a.get_feature_names_out()) == ["s__x1", "s__x3"]
    assert list(a.get_feature_names_out(list("abcdef"))) == ["s__b", "s__d"]
    with pytest.raises(ValueError, match="input_features should have length"):
        a.get_feature_names_out(["a"])


def test_column_transformer_ember_frame(device):
    ef = pytest.importorskip("ember.frame")
    pdf = _frame()[["a", "b", "c", "d"]]
    df = ef.DataFrame(pdf, device=device)
    a = ColumnTransformer(
        [("s", ep.StandardScaler(), ["a", "b"]), ("m", ep.MinMaxScaler(), [3])],
        remainder="passthrough",
    )
    b = skc.ColumnTransformer(
        [("s", skp.StandardScaler(), ["a", "b"]), ("m", skp.MinMaxScaler(), [3])],
        remainder="passthrough",
    )
    out = a.fit_transform(df)
    assert isinstance(out, ember.ndarray) and str(out.device) == str(df.device)
    np.testing.assert_allclose(_n(out), b.fit_transform(pdf), atol=1e-12)
    assert list(a.get_feature_names_out()) == list(b.get_feature_names_out())
    assert list(a.feature_names_in_) == ["a", "b", "c", "d"]
    np.testing.assert_allclose(_n(a.transform(df)), b.transform(pdf), atol=1e-12)


def test_column_transformer_in_pipelines():
    df = _frame()[["a", "b", "c", "d"]]
    y = (df["a"] + 0.3 * df["c"] > 0).astype(int).to_numpy()

    def ct():
        return ColumnTransformer([("s", ep.StandardScaler(), ["a", "b"])], remainder="passthrough")

    ours = make_pipeline(ct(), eml.LogisticRegression()).fit(df, y)
    theirs = sk_make_pipeline(ct(), eml.LogisticRegression()).fit(df, y)
    ref = sk_make_pipeline(
        skc.ColumnTransformer([("s", skp.StandardScaler(), ["a", "b"])], remainder="passthrough"),
        eml.LogisticRegression(),
    ).fit(df, y)
    np.testing.assert_allclose(ours.predict_proba(df), ref.predict_proba(df), atol=1e-10)
    np.testing.assert_allclose(theirs.predict_proba(df), ref.predict_proba(df), atol=1e-10)
    assert list(theirs[:-1].get_feature_names_out()) == list(ref[:-1].get_feature_names_out())
    grid = GridSearchCV(
        sk_make_pipeline(ct(), eml.LogisticRegression()),
        {
            "columntransformer__s__with_mean": [True, False],
            "columntransformer__remainder": ["drop", "passthrough"],
        },
        cv=3,
    ).fit(df, y)
    assert grid.best_params_["columntransformer__remainder"] == "passthrough"


def test_column_transformer_params():
    a = ColumnTransformer([("s", ep.StandardScaler(), [0]), ("m", ep.MinMaxScaler(), [1])])
    params = a.get_params(deep=True)
    assert params["s__with_mean"] is True and isinstance(params["m"], ep.MinMaxScaler)
    a.set_params(s__with_mean=False, remainder="passthrough", m="drop")
    assert a.transformers[0][1].with_mean is False and a.transformers[1][1] == "drop"
    assert a.remainder == "passthrough"
    from ember.ml.base import clone

    c = clone(a)
    assert c.transformers[0][1] is not a.transformers[0][1]
    assert c.get_params(deep=False)["remainder"] == "passthrough"
    X = _X()
    out = a.fit_transform(X)
    np.testing.assert_allclose(out[:, 0], X[:, 0] / X[:, 0].std(), rtol=1e-12)
    assert out.shape == (40, 5)


def test_make_column_transformer():
    a = make_column_transformer(
        (ep.StandardScaler(), [0]),
        (ep.StandardScaler(), [1]),
        ("drop", [2]),
        remainder="passthrough",
    )
    b = skc.make_column_transformer(
        (skp.StandardScaler(), [0]),
        (skp.StandardScaler(), [1]),
        ("drop", [2]),
        remainder="passthrough",
    )
    assert [t[0] for t in a.transformers] == [t[0] for t in b.transformers]
    assert [t[0] for t in a.transformers] == ["standardscaler-1", "standardscaler-2", "drop"]
    _check_same(a, b, _X(), _X())


def test_column_transformer_errors():
    X = _X()
    with pytest.raises(NotFittedError):
        ColumnTransformer([("s", ep.StandardScaler(), [0])]).transform(X)
    with pytest.raises(NotFittedError):
        ColumnTransformer([("s", ep.StandardScaler(), [0])]).get_feature_names_out()
    cases = [
        ([("a__b", ep.StandardScaler(), [0])], ValueError, "must not contain __"),
        ([("a", ep.StandardScaler(), [0]), ("a", "drop", [1])], ValueError, "not unique"),
        ([("remainder", ep.StandardScaler(), [0])], ValueError, "conflict with constructor"),
        ([("a", object(), [0])], TypeError, "should implement fit and transform"),
        (
            [("a", ep.StandardScaler(), ["x"])],
            ValueError,
            "strings is only supported for dataframes",
        ),
        ([("a", ep.StandardScaler(), [7])], ValueError, r"all features must be in \[0, 5\]"),
        ([("a", ep.StandardScaler(), 1.5)], ValueError, "No valid specification of the columns"),
        ([("a", ep.StandardScaler(), [0, "x"])], ValueError, "No valid specification"),
        ([("a", ep.StandardScaler(), [True, False])], ValueError, "boolean column mask"),
        ([("a", ep.StandardScaler(), 0)], ValueError, "1D data passed to a transformer"),
        ([("a", "passthrough", 0)], ValueError, "should be 2D"),
    ]
    for transformers, err, msg in cases:
        with pytest.raises(err, match=msg):
            ColumnTransformer(transformers).fit(X)
    with pytest.raises(ValueError, match="'remainder' parameter of ColumnTransformer"):
        ColumnTransformer([("a", ep.StandardScaler(), [0])], remainder="foo").fit(X)
    with pytest.raises(TypeError, match="'transformers' parameter of ColumnTransformer"):
        ColumnTransformer("abc").fit(X)
    with pytest.raises(ValueError, match="'sparse_threshold' parameter"):
        ColumnTransformer([], sparse_threshold=2.0).fit(X)
    a = ColumnTransformer([("a", ep.StandardScaler(), [0])]).fit(X)
    with pytest.raises(ValueError, match="X has 3 features, but ColumnTransformer is expecting 6"):
        a.transform(X[:, :3])
    with pytest.raises(ValueError, match="Expected 2D array"):
        a.fit(X[:, 0])
    with pytest.raises(ValueError, match="Some column names are not columns"):
        ColumnTransformer([("a", ep.StandardScaler(), ["zz"])]).fit(_frame())
    with pytest.raises(KeyError, match="'zz' is not a valid transformer name"):
        a["zz"]
    with pytest.raises(TypeError, match="subscriptable after it is fitted"):
        ColumnTransformer([("a", ep.StandardScaler(), [0])])["a"]
    with pytest.warns(UserWarning, match="X has feature names"):
        a.transform(pd.DataFrame(X, columns=list("abcdef")))


def test_column_transformer_verbose(capsys):
    ColumnTransformer(
        [("s", ep.StandardScaler(), [0]), ("m", ep.MinMaxScaler(), [1])], verbose=True
    ).fit(_X())
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 2
    assert (
        lines[0].startswith("[ColumnTransformer] ") and "(1 of 2) Processing s, total=" in lines[0]
    )
    assert len(lines[0]) == 70


# ---- LabelBinarizer / label_binarize ---------------------------------------------------------

LABELS = [
    np.array([1, 2, 6, 4, 2, 6]),
    np.array(["spam", "ham", "ham", "eggs"]),
    np.array(["yes", "no", "no", "yes"]),
    np.array([[0, 1, 1], [1, 0, 0], [0, 0, 1]]),
    np.array([3, 3, 3]),
    np.array([1.0, 0.0, 2.0, 2.0]),
]


@pytest.mark.parametrize(
    "y", LABELS, ids=["ints", "strings", "binary", "multilabel", "one", "floats"]
)
@pytest.mark.parametrize("neg,pos", [(0, 1), (-1, 1), (-2, 0), (2, 5)])
def test_label_binarizer_matches_sklearn(y, neg, pos):
    a = ep.LabelBinarizer(neg_label=neg, pos_label=pos).fit(y)
    b = skp.LabelBinarizer(neg_label=neg, pos_label=pos).fit(y)
    assert a.y_type_ == b.y_type_
    np.testing.assert_array_equal(np.asarray(a.classes_), b.classes_)
    A, B = a.transform(y), b.transform(y)
    assert isinstance(A, np.ndarray) and A.dtype == B.dtype and A.shape == B.shape
    np.testing.assert_array_equal(A, B)
    np.testing.assert_array_equal(np.asarray(a.inverse_transform(A)), b.inverse_transform(B))
    scores = np.linspace(-1.0, 1.0, A.size).reshape(A.shape)
    for thr in (None, 0.0, 0.3):
        np.testing.assert_array_equal(
            np.asarray(a.inverse_transform(scores, threshold=thr)),
            b.inverse_transform(scores, threshold=thr),
        )


def test_label_binarizer_ember(device):
    y = np.array([2, 0, 1, 2, 2, 0], dtype=np.int32)
    a = ep.LabelBinarizer(neg_label=-1)
    A = a.fit_transform(_e(y, device))
    B = skp.LabelBinarizer(neg_label=-1).fit_transform(y)
    assert isinstance(A, ember.ndarray) and str(A.device) == str(_e(y, device).device)
    assert _n(A).dtype == np.int32
    np.testing.assert_array_equal(_n(A), B)
    assert isinstance(a.classes_, ember.ndarray)
    inv = a.inverse_transform(A)
    assert isinstance(inv, ember.ndarray)
    np.testing.assert_array_equal(_n(inv), y)
    # unseen labels give all-negative rows, as scikit-learn
    np.testing.assert_array_equal(
        _n(a.transform(_e(np.array([7, 0]), device))), [[-1, -1, -1], [1, -1, -1]]
    )
    yb = np.array([5.0, 7.0, 7.0])
    A = ep.LabelBinarizer().fit(_e(yb, device)).transform(_e(yb, device))
    np.testing.assert_array_equal(_n(A), skp.LabelBinarizer().fit_transform(yb))
    Y = np.array([[1, 0, 1], [0, 1, 0]], dtype=np.float64)
    b = ep.LabelBinarizer().fit(_e(Y, device))
    assert b.y_type_ == "multilabel-indicator"
    np.testing.assert_array_equal(_n(b.inverse_transform(_e(Y * 0.9, device))), Y.astype(int))


def test_label_binarize_function():
    for y, classes in [
        ([1, 6], [1, 2, 4, 6]),
        ([1, 6], [1, 6, 4, 2]),
        (["yes", "no", "no"], ["no", "yes"]),
    ]:
        np.testing.assert_array_equal(
            ep.label_binarize(y, classes=classes), skp.label_binarize(y, classes=classes)
        )
    Y = np.array([[1, 0, 1], [0, 1, 1]])
    for classes in ([0, 1, 2], [2, 0, 1]):
        np.testing.assert_array_equal(
            ep.label_binarize(Y, classes=classes, neg_label=-3),
            skp.label_binarize(Y, classes=classes, neg_label=-3),
        )
    out = ep.label_binarize([1, 2, 3, 1], classes=[1, 2, 3], sparse_output=True)
    ref = skp.label_binarize([1, 2, 3, 1], classes=[1, 2, 3], sparse_output=True)
    np.testing.assert_array_equal(out.toarray(), ref.toarray())


def test_label_binarizer_errors():
    with pytest.raises(NotFittedError):
        ep.LabelBinarizer().transform([1, 2])
    with pytest.raises(ValueError, match="neg_label=1 must be strictly less than pos_label=1"):
        ep.LabelBinarizer(neg_label=1, pos_label=1).fit([1, 2])
    with pytest.raises(ValueError, match="Multioutput target data is not supported"):
        ep.LabelBinarizer().fit([[1, 2], [3, 4]])
    with pytest.raises(ValueError, match="continuous target data is not supported"):
        ep.label_binarize([0.5, 1.5], classes=[0.5, 1.5])
    with pytest.raises(ValueError, match="y has 0 samples"):
        ep.label_binarize([], classes=[0, 1])
    with pytest.raises(ValueError, match="Sparse binarization is only supported"):
        ep.LabelBinarizer(sparse_output=True, neg_label=-1).fit([1, 2])
    with pytest.raises(ValueError, match="not fitted with multilabel input"):
        ep.LabelBinarizer().fit([1, 2, 3]).transform([[1, 0], [0, 1]])
    with pytest.raises(ValueError, match="sparse_output=True is not supported for ember"):
        ep.label_binarize(ember.asarray(np.array([1, 2])), classes=[1, 2], sparse_output=True)
    with pytest.raises(ValueError, match="'neg_label' parameter of LabelBinarizer"):
        ep.LabelBinarizer(neg_label=0.5).fit([1, 2])
    with pytest.raises(ValueError, match="mismatch with the labels"):
        ep.label_binarize([[1, 0], [0, 1]], classes=[0, 1, 2])
    with pytest.raises(ValueError, match="output_type='binary'"):
        ep.LabelBinarizer().fit([0, 1]).inverse_transform(np.zeros((2, 3)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ep.LabelBinarizer().fit(["a", "b"]).transform(["a", "c"])  # unseen label: no warning
