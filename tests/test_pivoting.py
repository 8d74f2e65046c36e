"""The column-pivoted QR of the loops' partition (pkm.algorithms.pivoting) against LAPACK's
(scipy.linalg.qr, pivoting=True), and its tie rule: the first of the columns whose norms tie."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg

from pkm.algorithms.pivoting import TIE, pivoted_qr


@pytest.mark.parametrize("seed", range(6))
def test_equals_lapacks_pivoted_qr_where_nothing_ties(seed):
    rng = np.random.default_rng(seed)
    for _ in range(50):
        m, n = rng.integers(1, 9, 2)
        A = rng.standard_normal((m, n)) * rng.uniform(0.1, 10.0, n)
        if n > 2 and rng.random() < 0.4:   # rank-deficient: a column a combination of two others
            A[:, -1] = 0.3 * A[:, 0] - 2.0 * A[:, 1]
        _, R, piv = scipy.linalg.qr(A, pivoting=True, mode="economic")
        d, p = pivoted_qr(A)
        ref = np.abs(np.diag(R))
        assert np.allclose(d, ref, rtol=1e-12, atol=1e-12 * ref.max())
        full = np.sum(ref > 1e-9 * ref[0])
        assert list(p[:full]) == list(piv[:full])
        assert sorted(p) == list(range(n))


def test_a_tie_goes_to_the_first_column_whatever_the_rounding():
    """Two columns of equal norm (mirror images, as a US pair's): the first is taken, also when
    rounding-level noise makes the second the larger one, while a real difference decides."""
    rng = np.random.default_rng(1)
    a = rng.standard_normal(4)
    mirror = a * np.array([1.0, -1.0, 1.0, -1.0])
    base = np.column_stack([rng.standard_normal(4) * 0.1, a, mirror])
    for k in range(40):
        A = base * (1.0 + 1e-15 * rng.standard_normal(base.shape))
        assert pivoted_qr(A)[1][0] == 1
    assert pivoted_qr(base * np.array([1.0, 1.0, 1.0 + 1e-6]))[1][0] == 2
    assert 1e-14 < TIE < 1e-8
    d, p = pivoted_qr(np.zeros((3, 2)))
    assert (d == 0).all() and sorted(p) == [0, 1]
