"""Benchmark of ember.ml beside scikit-learn (issue 31's rows), one run each.

``python -m ember.ml._bench [--device cuda] [--scale 1.0] [--json PATH]``

Rows: KMeans (10^6 x 64, k = 100, same initial centres for both), kNN (10^5 queries into
10^6 x 64, k = 10, brute force), LogisticRegression (10^6 x 100, 10 classes, L-BFGS),
PCA (10^6 x 256 -> 32) and Ridge (10^7 x 100). ``--scale`` multiplies the sample counts
(0.01 for a quick run). Data are float32, generated on the host and copied to the device once,
outside the timings; scikit-learn runs on all the host's cores. Each row gives both times, the
speed-up and a quality figure of each (inertia, neighbour agreement, accuracy, explained
variance, R^2), so a fast wrong answer shows.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

import ember


def _sync(device):
    if str(device).startswith("cuda"):
        ember.cuda.synchronize()


def _timed(fn, device):
    _sync(device)
    t = time.perf_counter()
    out = fn()
    _sync(device)
    return time.perf_counter() - t, out


def _rows(device, scale, log):
    from sklearn import cluster, decomposition, linear_model, neighbors

    from . import cluster as ecl
    from . import decomposition as edc
    from . import linear_model as elm
    from . import neighbors as enb

    rng = np.random.default_rng(0)

    def n_(x):
        return max(1000, int(x * scale))

    rows = []

    def row(name, ours, ref, q_ours, q_ref, quality):
        r = {
            "case": name,
            "ember_s": round(ours, 4),
            "sklearn_s": round(ref, 4),
            "speedup": round(ref / ours, 2) if ours > 0 else None,
            "quality": quality,
            "ember_quality": q_ours,
            "sklearn_quality": q_ref,
        }
        log(r)
        rows.append(r)

    # KMeans
    n = n_(1_000_000)
    X = rng.normal(size=(n, 64)).astype(np.float32) + rng.integers(0, 10, (n, 1))
    init = X[rng.choice(n, 100, replace=False)]
    Xd = ember.asarray(X, device=device)
    initd = ember.asarray(init, device=device)
    ours, a = _timed(lambda: ecl.KMeans(100, init=initd, n_init=1, max_iter=50).fit(Xd), device)
    ref, b = _timed(lambda: cluster.KMeans(100, init=init, n_init=1, max_iter=50).fit(X), device)
    row("KMeans 1e6x64 k=100", ours, ref, a.inertia_, float(b.inertia_), "inertia")
    # kNN
    q = n_(100_000)
    Q = rng.normal(size=(q, 64)).astype(np.float32)
    Qd = ember.asarray(Q, device=device)
    knn = enb.NearestNeighbors(n_neighbors=10).fit(Xd)
    ours, (_, ia) = _timed(lambda: knn.kneighbors(Qd), device)
    sk = neighbors.NearestNeighbors(n_neighbors=10, algorithm="brute", n_jobs=-1).fit(X)
    ref, (_, ib) = _timed(lambda: sk.kneighbors(Q), device)
    agree = float((np.sort(ember.asnumpy(ia), 1) == np.sort(ib, 1)).mean())
    row("kNN 1e5 into 1e6x64 k=10", ours, ref, agree, 1.0, "neighbour agreement")
    del Xd
    # LogisticRegression
    n = n_(1_000_000)
    X = rng.normal(size=(n, 100)).astype(np.float32)
    W = rng.normal(size=(100, 10)).astype(np.float32)
    y = np.argmax(X @ W + rng.gumbel(size=(n, 10)), axis=1)
    Xd, yd = ember.asarray(X, device=device), ember.asarray(y, device=device)
    ours, a = _timed(lambda: elm.LogisticRegression(max_iter=100).fit(Xd, yd), device)
    ref, b = _timed(lambda: linear_model.LogisticRegression(max_iter=100).fit(X, y), device)
    row(
        "LogisticRegression 1e6x100 10 classes",
        ours,
        ref,
        a.score(Xd, yd),
        b.score(X, y),
        "accuracy",
    )
    # PCA
    X = (rng.normal(size=(n, 256)) @ rng.normal(size=(256, 256))).astype(np.float32)
    Xd = ember.asarray(X, device=device)
    ours, a = _timed(lambda: edc.PCA(32).fit(Xd), device)
    ref, b = _timed(lambda: decomposition.PCA(32).fit(X), device)
    row(
        "PCA 1e6x256 -> 32",
        ours,
        ref,
        float(ember.asnumpy(a.explained_variance_ratio_).sum()),
        float(b.explained_variance_ratio_.sum()),
        "explained variance",
    )
    del Xd
    # Ridge
    n = n_(10_000_000)
    X = rng.normal(size=(n, 100)).astype(np.float32)
    y = (X @ rng.normal(size=100) + rng.normal(size=n)).astype(np.float32)
    Xd, yd = ember.asarray(X, device=device), ember.asarray(y, device=device)
    ours, a = _timed(lambda: elm.Ridge(1.0).fit(Xd, yd), device)
    ref, b = _timed(lambda: linear_model.Ridge(1.0).fit(X, y), device)
    row("Ridge 1e7x100", ours, ref, a.score(Xd, yd), b.score(X, y), "R^2")
    return rows


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m ember.ml._bench")
    p.add_argument("--device", default="cuda" if ember.cuda.is_available() else "cpu")
    p.add_argument("--scale", type=float, default=1.0)
    p.add_argument("--json", default=None)
    args = p.parse_args(argv)
    rows = _rows(args.device, args.scale, lambda r: print(json.dumps(r), flush=True))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": args.device, "scale": args.scale, "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
