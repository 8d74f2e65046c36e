"""Dependent (redundant) constraint rows: found by rank-revealing QR or SVD, and reported.

Overconstrained mechanisms — a planar parallelogram built in 3-D, seed 002's six-body loop
(§5.4.2: "only 4 of the 5 closure equations are independent") — have a rank-deficient
constraint Jacobian, which makes ``[[M, Φ_qᵀ], [Φ_q, 0]]`` singular (Exudyn issue #39). The
dependent rows are removed at a configuration: pivoted QR of ``Gᵀ`` (``scipy.linalg.qr`` with
column pivoting) orders the rows by how much each adds to the span of those before it; the rank
is the number of ``|R_kk|`` above the tolerance, and the rows past it are the dependent ones.
With ``method="svd"`` the rank comes from the singular values instead (the rows dropped are still
QR's last ones). The result is valid near that configuration; a mechanism passing through a
singular configuration changes rank there.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg

from pkm.absolute.checks import array, choice, number, show
from pkm.errors import InputError

#: Default relative tolerance: a row is dependent if its pivot ``|R_kk|`` (or singular value) is
#: below ``rtol`` times the largest one.
RTOL = 1e-9


@dataclass(frozen=True)
class RedundancyReport:
    """Which rows of a constraint Jacobian are dependent, and how that was decided.

    Attributes
    ----------
    rank:
        Number of independent rows of the rows examined.
    rows:
        Number of rows examined.
    keep, removed:
        Indices (into the rows examined, ascending) of the independent rows kept and of the
        dependent rows removed.
    labels:
        ``(constraint name, row name)`` of each removed row.
    method:
        ``"qr"`` or ``"svd"``.
    rtol, tolerance:
        The relative tolerance and the absolute threshold it gave (``rtol`` × largest pivot or
        singular value).
    spectrum:
        ``|R_kk|`` in pivot order (QR) or the singular values (SVD), descending.
    gap:
        Smallest value kept over largest value dropped (``inf`` when nothing is dropped): a large
        gap means a clear decision, a gap near 1 an ill-posed one.
    """

    rank: int
    rows: int
    keep: tuple[int, ...]
    removed: tuple[int, ...]
    labels: tuple[tuple[str, str], ...]
    method: str
    rtol: float
    tolerance: float
    spectrum: np.ndarray
    gap: float

    def __str__(self) -> str:
        head = (f"{self.rows} rows, rank {self.rank} ({self.method}, tolerance {self.tolerance:.3g} = "
                f"{self.rtol:.1g} x largest, gap {self.gap:.3g})")
        if not self.removed:
            return head + ": no dependent rows"
        return head + f": {len(self.removed)} dependent rows removed: " + ", ".join(
            f"{name}[{row}]" for name, row in self.labels)


def dependent_rows(G, labels=None, rtol: float = RTOL, method: str = "qr") -> RedundancyReport:
    """Find the dependent rows of ``G`` (m × n).

    ``labels`` (m pairs ``(constraint, row)``, optional) name the rows in the report. The rows
    kept have full row rank and span the same row space as ``G`` (so ``G`` and ``G[keep]`` have the
    same null space).
    """
    G = array(G, "G", (None, None))
    m = G.shape[0]
    choice(method, "method", ("qr", "svd"))
    rtol = number(rtol, "rtol", low=0.0, high=1.0, low_open=True, high_open=True)
    if labels is not None and (isinstance(labels, (str, bytes)) or not hasattr(labels, "__len__")):
        raise InputError(f"labels must be a list of (constraint, row) pairs, got {show(labels)}")
    labels = [("", str(r)) for r in range(m)] if labels is None else list(labels)
    if len(labels) != m:
        raise InputError(f"{len(labels)} labels for {m} rows")
    if m == 0:
        return RedundancyReport(0, 0, (), (), (), method, rtol, 0.0, np.zeros(0), np.inf)
    _, R, piv = scipy.linalg.qr(G.T, mode="economic", pivoting=True)
    pivots = np.abs(np.diag(R))
    pivots = np.concatenate([pivots, np.zeros(m - pivots.size)])  # m > n: the rest are dependent
    spectrum = pivots if method == "qr" else np.concatenate(
        [np.linalg.svd(G, compute_uv=False), np.zeros(max(0, m - min(G.shape)))])
    largest = float(spectrum[0]) if spectrum.size else 0.0
    tolerance = rtol * largest
    rank = int(np.sum(spectrum > tolerance)) if largest > 0.0 else 0
    kept, dropped = spectrum[:rank], spectrum[rank:]
    gap = float(kept[-1] / dropped[0]) if rank and dropped.size and dropped[0] > 0.0 else np.inf
    keep = tuple(sorted(int(k) for k in piv[:rank]))
    removed = tuple(sorted(int(k) for k in piv[rank:]))
    return RedundancyReport(rank=rank, rows=m, keep=keep, removed=removed,
                            labels=tuple(labels[k] for k in removed), method=method, rtol=float(rtol),
                            tolerance=tolerance, spectrum=spectrum, gap=gap)
