"""Model-tuning problems of the Ax benchmark: scikit-learn estimators on datasets
bundled with scikit-learn (no download), scored by a deterministic cross-validation
error (fixed folds and estimator seeds). Evaluations are cached in SQLite (its own
locking serves parallel workers), so a rerun of a benchmark costs no refits."""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable, Mapping
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

#: where evaluations are cached (``BOTORCH_BANDITS_CACHE`` overrides the folder)
CACHE_ENV = "BOTORCH_BANDITS_CACHE"


def cache_path() -> Path:
    """The SQLite file of cached evaluations."""
    folder = os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "botorch_bandits"
    return Path(folder) / "tuning.sqlite"


def _key(params: Mapping[str, Any]) -> str:
    # repr of floats is exact: only an identical configuration hits the cache
    return json.dumps(
        {k: repr(v) if isinstance(v, float) else v for k, v in params.items()},
        sort_keys=True,
    )


def cached(task: str, params: Mapping[str, Any], compute: Callable[[], float]) -> float:
    """``compute()`` for ``(task, params)``, from the cache if it is there."""
    path = cache_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    key = _key(params)
    with sqlite3.connect(path, timeout=120) as db:
        db.execute(
            "CREATE TABLE IF NOT EXISTS evaluations "
            "(task TEXT, params TEXT, value REAL, PRIMARY KEY (task, params))"
        )
        row = db.execute(
            "SELECT value FROM evaluations WHERE task = ? AND params = ?", (task, key)
        ).fetchone()
    if row is not None:
        return float(row[0])
    value = float(compute())
    with sqlite3.connect(path, timeout=120) as db:
        db.execute(
            "INSERT OR REPLACE INTO evaluations VALUES (?, ?, ?)", (task, key, value)
        )
    return value


@cache
def _data(name: str) -> tuple[np.ndarray, np.ndarray]:
    from sklearn import datasets
    from sklearn.preprocessing import StandardScaler

    loader = {
        "digits": datasets.load_digits,
        "breast_cancer": datasets.load_breast_cancer,
        "diabetes": datasets.load_diabetes,
        "wine": datasets.load_wine,
    }[name]
    X, y = loader(return_X_y=True)
    return StandardScaler().fit_transform(X), y.astype(float)


def _cv_error(estimator: Any, dataset: str, folds: int, classify: bool) -> float:
    """Cross-validated error on shuffled folds seeded with 0: 1 - accuracy for a
    classifier, the mean squared error over the target's variance otherwise."""
    from sklearn.model_selection import KFold, StratifiedKFold, cross_val_score
    from threadpoolctl import threadpool_limits

    X, y = _data(dataset)
    split = (StratifiedKFold if classify else KFold)(
        n_splits=folds, shuffle=True, random_state=0
    )
    scoring = "accuracy" if classify else "neg_mean_squared_error"
    with threadpool_limits(
        1
    ):  # one job, one core (the benchmark runs jobs side by side)
        scores = cross_val_score(estimator, X, y, cv=split, scoring=scoring)
    if classify:
        return 1.0 - float(np.mean(scores))
    return float(-np.mean(scores) / np.var(y))


def svm_digits(p: Mapping[str, Any]) -> float:
    """An RBF support-vector classifier on the digits (1797 8x8 images), 3-fold
    error, over ``C`` and ``gamma``."""
    from sklearn.svm import SVC

    def compute() -> float:
        model = SVC(C=float(p["C"]), gamma=float(p["gamma"]))
        return _cv_error(model, "digits", 3, classify=True)

    return cached("svm-digits", p, compute)


def hgb_breast_cancer(p: Mapping[str, Any]) -> float:
    """Histogram gradient boosting (50 iterations) on the breast-cancer data (569
    samples, 30 features), 3-fold error, over the learning rate, the number of
    leaves, the leaf size and the L2 penalty."""
    from sklearn.ensemble import HistGradientBoostingClassifier

    def compute() -> float:
        model = HistGradientBoostingClassifier(
            learning_rate=float(p["learning_rate"]),
            max_leaf_nodes=int(p["max_leaf_nodes"]),
            min_samples_leaf=int(p["min_samples_leaf"]),
            l2_regularization=float(p["l2_regularization"]),
            max_iter=50,
            early_stopping=False,
            random_state=0,
        )
        return _cv_error(model, "breast_cancer", 3, classify=True)

    return cached("hgb-breast-cancer", p, compute)


def kernel_ridge_diabetes(p: Mapping[str, Any]) -> float:
    """Kernel ridge regression on the diabetes data (442 samples, 10 features),
    5-fold mean squared error over the target's variance, over the penalty, the
    kernel's scale and the kernel (RBF or Laplacian)."""
    from sklearn.kernel_ridge import KernelRidge

    def compute() -> float:
        model = KernelRidge(
            alpha=float(p["alpha"]), gamma=float(p["gamma"]), kernel=str(p["kernel"])
        )
        return _cv_error(model, "diabetes", 5, classify=False)

    return cached("kernel-ridge-diabetes", p, compute)


def rf_wine(p: Mapping[str, Any]) -> float:
    """A random forest on the wine data (178 samples, 13 features), 3-fold error,
    over the number of trees, their depth, the leaf size and the share of features
    tried at a split (the forest seeded with 0)."""
    from sklearn.ensemble import RandomForestClassifier

    def compute() -> float:
        model = RandomForestClassifier(
            n_estimators=int(p["n_estimators"]),
            max_depth=int(p["max_depth"]),
            min_samples_leaf=int(p["min_samples_leaf"]),
            max_features=float(p["max_features"]),
            random_state=0,
            n_jobs=1,
        )
        return _cv_error(model, "wine", 3, classify=True)

    return cached("rf-wine", p, compute)
