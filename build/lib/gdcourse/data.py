"""Synthetic data sets with a known ground truth."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class LinearProblem:
    """Features ``X`` (n, d), targets ``y`` (n,), and the weights that made them."""

    X: np.ndarray
    y: np.ndarray
    w_true: np.ndarray
    b_true: float


def make_linear_data(
    n_samples: int = 200,
    n_features: int = 3,
    *,
    scales=None,
    means=None,
    noise: float = 0.1,
    seed: int = 0,
) -> LinearProblem:
    """Linear-regression data ``y = X @ w_true + b_true + noise``.

    ``scales`` and ``means`` set each feature's standard deviation and mean
    (say an age, mean 40 and spread 12, next to an account balance, mean
    50 000 and spread 20 000). The true weights are drawn per *standardised*
    feature and divided by the scale, so every feature matters about equally
    to ``y`` whatever its units: badly scaled features are then a pure
    optimisation problem, not a modelling one.
    """
    if n_samples < 1 or n_features < 1:
        raise ValueError(f"need n_samples >= 1 and n_features >= 1, got {n_samples}, {n_features}")
    if noise < 0:
        raise ValueError(f"noise must be >= 0, got {noise}")
    scales = _per_feature(scales, 1.0, n_features, "scales")
    means = _per_feature(means, 0.0, n_features, "means")
    if np.any(scales <= 0):
        raise ValueError("every scale must be positive")
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((n_samples, n_features))
    X = means + scales * Z
    w_std = rng.uniform(1.0, 3.0, n_features) * rng.choice([-1.0, 1.0], n_features)
    w_true = w_std / scales
    b_true = float(rng.uniform(-2.0, 2.0)) - float(means @ w_true)
    y = X @ w_true + b_true + noise * rng.standard_normal(n_samples)
    return LinearProblem(X=X, y=y, w_true=w_true, b_true=b_true)


def _per_feature(value, default: float, n: int, name: str) -> np.ndarray:
    if value is None:
        return np.full(n, default)
    arr = np.broadcast_to(np.asarray(value, dtype=float), (n,)) if np.ndim(value) == 0 else np.asarray(value, float)
    if arr.shape != (n,):
        raise ValueError(f"{name} must be a scalar or have one entry per feature ({n}), got shape {arr.shape}")
    return arr.astype(float)


@dataclass(frozen=True)
class Split:
    """Train and validation arrays of a classification data set (float32 features, int64 labels)."""

    X_train: np.ndarray
    y_train: np.ndarray
    X_val: np.ndarray
    y_val: np.ndarray

    @property
    def n_features(self) -> int:
        return self.X_train.shape[1]

    @property
    def n_classes(self) -> int:
        return int(max(self.y_train.max(), self.y_val.max())) + 1


def load_digits_split(val_fraction: float = 0.25, *, n_samples: int | None = None, seed: int = 0) -> Split:
    """scikit-learn's bundled 8x8 digits (1,797 images, 64 features, 10 classes), offline.

    Shuffled with ``seed``, optionally cut to ``n_samples`` (small CI runs),
    split, and standardised with the *training* mean and spread only, so no
    statistic of the validation set leaks into training. Constant pixels
    (the image border) get a spread of 1 instead of a division by zero.
    """
    from sklearn.datasets import load_digits

    if not 0.0 < val_fraction < 1.0:
        raise ValueError(f"val_fraction must be strictly between 0 and 1, got {val_fraction}")
    X, y = load_digits(return_X_y=True)
    order = np.random.default_rng(seed).permutation(len(y))
    if n_samples is not None:
        if not 2 <= n_samples <= len(y):
            raise ValueError(f"n_samples must be between 2 and {len(y)}, got {n_samples}")
        order = order[:n_samples]
    X, y = X[order], y[order]
    n_val = max(1, int(round(val_fraction * len(y))))
    if n_val >= len(y):
        raise ValueError(f"val_fraction={val_fraction} leaves no training samples out of {len(y)}")
    X_train, X_val = X[n_val:], X[:n_val]
    mean, std = X_train.mean(axis=0), X_train.std(axis=0)
    std = np.where(std > 0, std, 1.0)
    def scale(a):
        return ((a - mean) / std).astype(np.float32)
    return Split(scale(X_train), y[n_val:].astype(np.int64), scale(X_val), y[:n_val].astype(np.int64))
