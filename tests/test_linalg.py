"""pkm.lie.linalg: the small allocation-free solvers of the numba kernels."""

import numpy as np
import pytest

from pkm.lie.linalg import cholesky_solve_into, condition_number, inverse_into


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


@pytest.mark.parametrize("n", [1, 2, 3, 4, 6, 9])
def test_spd_inverse_with_int_and_static_size(n):
    """The Cholesky-based inverse of an SPD matrix equals inverse_into's; the size may be an int
    or a tuple of that length (a compile-time constant), with the same bits."""
    from pkm.lie.linalg import norm1, spd_inverse_into

    rng = np.random.default_rng(10 + n)
    G = rng.normal(size=(n + 2, n))
    A = G.T @ G
    ref = np.empty((n, n))
    assert inverse_into(A, n, ref, np.empty((n, n)))
    out = np.full((n, n), np.nan)
    assert spd_inverse_into(A, n, out, np.empty((n, n)))
    np.testing.assert_allclose(out, ref, rtol=0, atol=1e-13 * np.linalg.cond(A) * np.abs(ref).max())
    np.testing.assert_array_equal(out, out.T)
    static = np.full((n, n), np.nan)
    assert spd_inverse_into(A, (0,) * n, static, np.empty((n, n)))
    np.testing.assert_array_equal(static, out)
    assert norm1(A, (0,) * n, (0,) * n) == norm1(A, n, n) == np.abs(A).sum(0).max()


def test_spd_inverse_rejects_a_singular_or_indefinite_matrix():
    from pkm.lie.linalg import spd_inverse_into

    for A in (np.array([[1.0, 2.0], [2.0, 4.0]]), np.array([[1.0, 0.0], [0.0, -1.0]])):
        assert not spd_inverse_into(A, 2, np.empty((2, 2)), np.empty((2, 2)))
