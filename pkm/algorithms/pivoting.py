"""Column-pivoted QR in numpy (Businger–Golub) whose pivots do not depend on rounding, for the loops'
partition at load time (paper eq. 42–45).

``pkm.load`` keeps a maximal independent set of every loop's constraint rows and splits the loop's
variables into dependent ``y`` and independent ``q`` by column-pivoted QRs (:mod:`pkm.algorithms.limb`).
Symmetric limbs tie: the two chains of the IRSBot-2's and the 3R[2US]'s US pairs give columns of
exactly equal norm in exact arithmetic. LAPACK's ``dgeqp3`` (downdated norms, BLAS kernels that differ
between builds) breaks such a tie by the last bit of rounding, and so did the kernels that formed
the Jacobians (with or without fused multiply–adds): the partition, and with it which variables a
limb's kernels solve for, could differ from one machine, one numba target or one mode
(:func:`pkm.lie.interpret.python_kernels`) to the next. Here the pivot is the column of largest
remaining norm, recomputed at each step, and on a tie — norms within ``TIE`` (relative) of the
largest — the first one. Every choice is a valid partition; the results agree to rounding.
"""
from __future__ import annotations

import numpy as np

__all__ = ["pivoted_qr", "TIE"]

#: Relative difference of two columns' squared norms below which they count as tied.
TIE = 1e-10


def pivoted_qr(A: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(|diag R|, piv)`` of ``A[:, piv] = Q R`` (``R`` upper triangular, ``|R_jj|`` non-increasing):
    the column order of a rank-revealing QR, as ``scipy.linalg.qr(A, pivoting=True)`` gives it up to
    the choice among tied columns. ``|diag R|`` has ``min(m, n)`` entries; ``piv`` is a permutation
    of ``range(n)``."""
    R = np.array(A, dtype=float)
    if R.ndim != 2:
        raise ValueError("pivoted_qr: a 2-d array is expected")
    m, n = R.shape
    piv = np.arange(n)
    diag = np.zeros(min(m, n))
    for j in range(diag.size):
        rest = R[j:, j:]
        norms = np.einsum("ij,ij->j", rest, rest)
        p = j + int(np.argmax(norms >= norms.max() * (1.0 - TIE)))
        if p != j:
            R[:, [j, p]] = R[:, [p, j]]
            piv[[j, p]] = piv[[p, j]]
        x = R[j:, j]
        nx = float(np.sqrt(x @ x))
        diag[j] = nx
        if nx == 0.0:
            continue
        v = x.copy()
        v[0] += np.copysign(nx, x[0])
        R[j:, j:] -= np.outer(v, (2.0 / (v @ v)) * (v @ R[j:, j:]))
    return diag, piv
