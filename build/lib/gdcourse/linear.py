"""Linear least squares in closed form: the facts chapter 1 derives.

For ``L(w, b) = mean((X @ w + b - y) ** 2)`` the Hessian is constant,
``H = (2/n) A^T A`` with ``A = [X, 1]``; it does not involve ``y``. Gradient
descent is stable exactly when ``lr < 2 / lambda_max(H)``.
"""

from __future__ import annotations

import numpy as np


def design(X) -> np.ndarray:
    """``A = [X, 1]``: the features with a column of ones for the bias."""
    X = np.asarray(X, dtype=float)
    if X.ndim != 2:
        raise ValueError(f"X must be 2-D (samples, features), got shape {X.shape}")
    return np.column_stack([X, np.ones(len(X))])


def hessian(X) -> np.ndarray:
    """The (d+1, d+1) Hessian of the mean squared error over ``(w, b)``."""
    A = design(X)
    return (2.0 / len(A)) * A.T @ A


def stable_lr(X) -> float:
    """The largest stable learning rate of full-batch gradient descent, ``2 / lambda_max``."""
    return float(2.0 / np.linalg.eigvalsh(hessian(X))[-1])


def least_squares(X, y) -> tuple[np.ndarray, float, float]:
    """The exact minimiser ``(w*, b*)`` and the lowest reachable loss ``L*``."""
    A = design(X)
    y = np.asarray(y, dtype=float).ravel()
    coef, *_ = np.linalg.lstsq(A, y, rcond=None)
    return coef[:-1], float(coef[-1]), float(np.mean((A @ coef - y) ** 2))
