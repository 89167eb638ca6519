import numpy as np
import pytest

from gdcourse.data import make_linear_data


def test_linear_data_matches_its_ground_truth():
    p = make_linear_data(500, 4, noise=0.0, seed=1)
    assert p.X.shape == (500, 4) and p.y.shape == (500,) and p.w_true.shape == (4,)
    np.testing.assert_allclose(p.X @ p.w_true + p.b_true, p.y, rtol=1e-12, atol=1e-9)


def test_scales_and_means_set_each_column():
    p = make_linear_data(20_000, 2, scales=[12.0, 20_000.0], means=[40.0, 50_000.0], seed=2)
    np.testing.assert_allclose(p.X.mean(axis=0), [40.0, 50_000.0], rtol=0.01)
    np.testing.assert_allclose(p.X.std(axis=0), [12.0, 20_000.0], rtol=0.03)
    # each feature contributes comparably to y whatever its units
    contributions = np.abs(p.w_true) * p.X.std(axis=0)
    assert 1 / 3 < contributions[0] / contributions[1] < 3


def test_noise_level_is_what_was_asked():
    p = make_linear_data(50_000, 3, noise=0.5, seed=3)
    residual = p.y - p.X @ p.w_true - p.b_true
    assert abs(residual.std() - 0.5) < 0.01


def test_same_seed_same_data_other_seed_other_data():
    a, b, c = make_linear_data(seed=7), make_linear_data(seed=7), make_linear_data(seed=8)
    assert np.array_equal(a.X, b.X) and np.array_equal(a.y, b.y)
    assert not np.allclose(a.X, c.X)


@pytest.mark.parametrize("kwargs, match", [
    (dict(n_samples=0), "n_samples"),
    (dict(noise=-1.0), "noise"),
    (dict(n_features=2, scales=[1.0, 2.0, 3.0]), "one entry per feature"),
    (dict(n_features=2, scales=[1.0, 0.0]), "positive"),
])
def test_bad_arguments_get_clear_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        make_linear_data(**kwargs)
