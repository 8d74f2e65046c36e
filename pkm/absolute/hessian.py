"""``Σ_k λ_k ∇²Φ_k``: the constraint Hessian contracted with multipliers, for Newton's method in the
time-stepping schemes.

Every constraint of this package is at most quadratic in ``q`` (seed 002 §4.3; the joints are
quadratic forms of marker vectors, :mod:`pkm.absolute.quadratic`), so each ``∇²Φ_k`` is a constant
matrix (for a rheonomic joint it depends on t only) and ``Φ_q(q)ᵀλ`` is affine in ``q``. The
Hessian is therefore read off the Jacobian at the unit vectors, ``∇²Φ_k[:, a] = ∇Φ_k(e_a) − ∇Φ_k(0)``,
exactly — no finite-difference error — once per joint (per time for rheonomic joints).

Internal constraints (seed 002 eq. 24): ``½(d_I·d_I − 1)`` has ``I₃`` on the (d_I, d_I) block,
``d_I·d_J`` has ``I₃`` on (d_I, d_J) and (d_J, d_I).
"""
from __future__ import annotations

import numpy as np

from pkm.absolute.body import NINT, NQ
from pkm.absolute.quadratic import QuadraticConstraint
from pkm.errors import InputError

_PAIRS = ((0, 0), (1, 1), (2, 2), (0, 1), (0, 2), (1, 2))


def joint_hessian(joint, t: float = 0.0) -> np.ndarray:
    """``∇²Φ_r`` of each row of ``joint`` (m × nz × nz) over its non-ground bodies' coordinates
    ``z = (q_i, q_j)`` (12 or 24)."""
    sides = [s for s, b in enumerate(joint.bodies) if b is not None]
    nz = NQ * len(sides)
    Z = np.concatenate([np.zeros((1, nz)), np.eye(nz)])   # z = 0 and the unit vectors
    args = [None, None]
    for k, s in enumerate(sides):
        args[s] = Z[:, NQ * k:NQ * k + NQ]
    blocks = joint.jacobian(args[0], args[1], t)
    J = np.concatenate([blocks[s] for s in sides], axis=-1)  # (nz + 1, m, nz)
    H = np.moveaxis(J[1:] - J[0], 0, -1)                    # (m, nz (row a), nz (column e_b))
    return 0.5 * (H + np.swapaxes(H, 1, 2))


class ConstraintHessian:
    """``Σ_k λ_k ∇²Φ_k`` (n × n) for the active rows of ``system`` (internal rows first, as in
    :meth:`~pkm.absolute.system.System.phi`)."""

    def __init__(self, system):
        for j in system.joints:
            if not isinstance(j, QuadraticConstraint):
                raise InputError(f"joint {j.name!r} is a {type(j).__name__}, not quadratic in q: this scheme needs "
                                 f"constraints at most quadratic (seed 002 §4.3); use Lock, or projected_ode")
        self.system = system
        offsets = np.cumsum([0] + [j.m for j in system.joints])
        ri, ci, li = [], [], []                  # the internal rows' entries: out[ri, ci] += λ[li]
        for b_index in range(len(system.bodies)):
            base = NQ * b_index
            for r, (I, J) in enumerate(_PAIRS):
                a, b = base + 3 + 3 * I, base + 3 + 3 * J
                for c in range(3):
                    pairs = [(a + c, b + c)] + ([(b + c, a + c)] if I != J else [])
                    for x, y in pairs:
                        ri.append(x)
                        ci.append(y)
                        li.append(NINT * b_index + r)
        self._ri, self._ci, self._li = np.array(ri, int), np.array(ci, int), np.array(li, int)
        self._joints = []
        row = NINT * len(system.bodies)
        for k, j in enumerate(system.joints):
            mask = system.active[offsets[k]:offsets[k + 1]]
            rows = int(mask.sum())
            if rows:
                idx = np.concatenate([np.arange(system.body_slice(b).start, system.body_slice(b).stop)
                                      for b in j.bodies if b is not None])
                H = None if j.rheonomic else joint_hessian(j)[mask]
                self._joints.append((j, mask, slice(row, row + rows), idx, H))
            row += rows

    def contract(self, lam, t: float = 0.0) -> np.ndarray:
        lam = np.asarray(lam, dtype=float)
        n = self.system.n
        out = np.zeros((n, n))
        np.add.at(out, (self._ri, self._ci), lam[self._li])
        for j, mask, rows, idx, H in self._joints:
            if H is None:
                H = joint_hessian(j, t)[mask]
            out[np.ix_(idx, idx)] += np.tensordot(lam[rows], H, axes=1)
        return out
