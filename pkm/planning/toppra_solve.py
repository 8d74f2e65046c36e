"""The same rows solved by the ``toppra`` package (H. Pham's TOPP-RA, optional extra ``pkm[plan]``): a
cross-check and benchmark peer of :func:`pkm.planning.reachability.reachability`, and ``solver="toppra"``
of :func:`pkm.time_optimal`. pkm does not need it: it is imported here only, lazily, and a missing package
is a one-line PkmError.

toppra's canonical linear constraint ``a_i u + b_i x + c_i = v``, ``F_i v ≤ g_i`` (collocation) takes pkm's
rows as ``a = A``, ``b = B``, ``c = C``, ``F = I``, ``g = 0`` and the speed limits as ``x ≤ x̄``; its seidel
solver (a 2-D LP per step, in Cython) gives ``ṡ`` and ``s̈``.
"""
from __future__ import annotations

import numpy as np

from pkm.errors import PkmError

from pkm.planning.reachability import Profile, static_sets

__all__ = ["toppra_reachability"]

#: toppra takes a finite upper bound of x: "no speed limit" is this.
_NO_BOUND = 1e12


def _toppra():
    try:
        import toppra
        import toppra.algorithm
        import toppra.constraint
    except ImportError:
        raise PkmError("the toppra package is not installed (pip install 'pkm[plan]' or pip install toppra); "
                       "solver='reachability' needs nothing") from None
    toppra.setup_logging("CRITICAL") if hasattr(toppra, "setup_logging") else None
    return toppra


def toppra_reachability(A, B, C, xmax, ds: float) -> Profile:
    """:func:`pkm.planning.reachability.reachability`'s problem solved by toppra (seidel solver)."""
    tp = _toppra()
    A, B, C = (np.ascontiguousarray(v, dtype=float) for v in (A, B, C))
    N, m = A.shape
    X = static_sets(A, B, C, xmax)
    xb = np.column_stack([np.zeros(N), np.minimum(np.where(np.isfinite(xmax), xmax, _NO_BOUND), _NO_BOUND)])
    F = np.broadcast_to(np.eye(m), (N, m, m)).copy()
    g = np.zeros((N, m))

    class Rows(tp.constraint.LinearConstraint):
        def __init__(self):
            super().__init__()
            self.identical = False
            self.discretization_type = tp.constraint.DiscretizationType.Collocation

        def compute_constraint_params(self, path, gridpoints, *args, **kwargs):
            return A, B, C, F, g, None, xb

    grid = np.arange(N) * ds
    path = tp.SplineInterpolator(grid, np.zeros((N, 1)))
    algo = tp.algorithm.TOPPRA([Rows()], path, gridpoints=grid, solver_wrapper="seidel")
    sdd, sd, _, K = algo.compute_parameterization(0.0, 0.0, return_data=True)
    if sd is None or not np.all(np.isfinite(sd)):
        raise PkmError("toppra found no parametrisation of the path within the limits")
    u = np.append(np.asarray(sdd, dtype=float), 0.0)
    return Profile(x=np.asarray(sd, dtype=float) ** 2, u=u, K=np.asarray(K, dtype=float), X=X)
