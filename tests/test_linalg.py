"""pkm._linalg: the small allocation-free solvers of the numba kernels."""

import numpy as np
import pytest

from pkm._linalg import cholesky_solve_into, condition_number, inverse_into


@pytest.mark.parametrize("n", [1, 2, 4, 6, 9, 12])
def test_cholesky_solve_and_inverse(n):
    rng = np.random.default_rng(n)
    G = rng.normal(size=(n + 3, n))
    A = G.T @ G
    b = rng.normal(size=n)
    x = np.empty(n)
    assert cholesky_solve_into(A, n, b, x, np.empty((n, n)))
    np.testing.assert_allclose(A @ x, b, atol=1e-10 * np.abs(b).max() * np.linalg.cond(A))
    inv = np.empty((n, n))
    assert inverse_into(A, n, inv, np.empty((n, n)))
    np.testing.assert_allclose(inv @ A, np.eye(n), atol=1e-9 * np.linalg.cond(A))
    assert condition_number(A) == pytest.approx(np.linalg.cond(A, 1), rel=1e-8)


def test_cholesky_rejects_a_singular_gram_matrix():
    G = np.array([[1.0, 2.0], [2.0, 4.0]])
    assert not cholesky_solve_into(G, 2, np.ones(2), np.empty(2), np.empty((2, 2)))
