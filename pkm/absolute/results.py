"""Trajectories of the time-stepping schemes with their health: energy, momentum maps, constraint
residual at every node, and per step the Newton iterations, final residual and the condition number
of the iteration matrix (seed 002 Tables II–V report the last)."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class Trajectory:
    """A simulated motion, nodes ``t[0] … t[N]``.

    Attributes
    ----------
    scheme:
        Name of the scheme and its options.
    t, q, v:
        Times (N+1,), coordinates and velocities (N+1, n) at the nodes.
    kinetic, potential, energy:
        ``½ vᵀ M v``, ``V(q)`` and their sum at the nodes (N+1,).
    angular_momentum, linear_momentum:
        Momentum maps at the nodes (N+1, 3): about the world origin, of all bodies (seed 002 §5).
    constraint_residual:
        ``max |Φ(q)|`` over *all* rows of the system as given, also rows the scheme left out as
        dependent (N+1,).
    iterations, residual, condition:
        Per step (N,): Newton iterations, the scaled residual at the last one, the 2-norm condition
        number of the last iteration matrix (NaN when not computed).
    unknowns:
        Size of the Newton system per step (seed 002: 21 constrained vs 3 reduced for the gyro top).
    dof:
        Degrees of freedom of the system.
    redundancy:
        The report of the dependent rows left out (:class:`~pkm.absolute.redundancy.RedundancyReport`).
    info:
        Anything else (the tree, the time step, …).
    """

    scheme: str
    t: np.ndarray
    q: np.ndarray
    v: np.ndarray
    kinetic: np.ndarray
    potential: np.ndarray
    energy: np.ndarray
    angular_momentum: np.ndarray
    linear_momentum: np.ndarray
    constraint_residual: np.ndarray
    iterations: np.ndarray
    residual: np.ndarray
    condition: np.ndarray
    unknowns: int
    dof: int
    redundancy: object = None
    info: dict = field(default_factory=dict)

    @property
    def steps(self) -> int:
        return len(self.t) - 1

    def energy_drift(self) -> float:
        """``max_n |E_n − E_0|`` relative to ``max(|E_0|, T_0)`` (the kinetic energy guards against a
        total energy near zero)."""
        scale = max(abs(self.energy[0]), self.kinetic[0], np.finfo(float).tiny)
        return float(np.max(np.abs(self.energy - self.energy[0])) / scale)

    def momentum_drift(self, component=None) -> float:
        """``max_n |L_n − L_0|`` relative to ``|L_0|`` (or of one component ``L·e_k`` relative to
        ``|L_0|``)."""
        d = self.angular_momentum - self.angular_momentum[0]
        scale = max(float(np.linalg.norm(self.angular_momentum[0])), np.finfo(float).tiny)
        if component is None:
            return float(np.max(np.linalg.norm(d, axis=1)) / scale)
        return float(np.max(np.abs(d[:, component])) / scale)

    def summary(self) -> str:
        cond = self.condition[np.isfinite(self.condition)]
        return (f"{self.scheme}: {self.steps} steps of {self.info.get('dt', float('nan')):g} s, {self.unknowns} "
                f"unknowns/step, {self.dof} DOF; energy drift {self.energy_drift():.2e}, momentum drift "
                f"{self.momentum_drift():.2e}, max|Φ| {np.max(self.constraint_residual):.2e}, Newton iterations "
                f"{np.mean(self.iterations):.2f} (max {np.max(self.iterations, initial=0)}), "
                + (f"condition {np.median(cond):.3g} (median)" if cond.size else "condition not computed"))


def health(system, potential, q, v):
    """``(T, V, E, L, p, max|Φ|)`` at one node, for :class:`Trajectory`."""
    T = system.kinetic_energy(v)
    V = potential.energy(q) if potential is not None else 0.0
    L, p = system.momentum(q, v)
    return T, V, T + V, L, p, float(np.max(np.abs(system.phi(q)), initial=0.0))


def assemble(scheme, system, potential, t, qs, vs, iterations, residual, condition, unknowns, dof,
             redundancy=None, info=None) -> Trajectory:
    """Build a :class:`Trajectory`, evaluating the health of every node on ``system`` (all rows)."""
    rows = [health(system, potential, q, v) for q, v in zip(qs, vs)]
    T, V, E, L, p, res = (np.array([r[k] for r in rows]) for k in range(6))
    return Trajectory(scheme, np.asarray(t, dtype=float), np.array(qs), np.array(vs), T, V, E, L, p, res,
                      np.asarray(iterations, dtype=int), np.asarray(residual, dtype=float),
                      np.asarray(condition, dtype=float), int(unknowns), int(dof), redundancy, dict(info or {}))
