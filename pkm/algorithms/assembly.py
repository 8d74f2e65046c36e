"""Forward kinematics of the assembled PKM: the platform pose for given actuator coordinates.

All limbs are solved together, with the platform pose left free: the unknowns are the tree-joint
variables of every limb except the actuated ones, the equations are the loop constraints of every
limb (eq. 12) and the agreement of the limbs' platform poses, ``log(C_p(1)⁻¹ C_p(l)) = 0`` for
``l ≥ 2`` (the loops through the platform, paper Sec. 2). Newton's method with a least-squares step
solves the (generally overdetermined but consistent) system; its Jacobian uses

    ``d/dt log(E) = dexp⁻¹(−log E) (V_p(l) − Ad_{E⁻¹} V_p(1))``,  ``E = C_p(1)⁻¹ C_p(l)``.

Nothing here assumes a particular robot: it also shows which platform motions the assembled
mechanism admits (:func:`platform_motion_rank`).
"""

from __future__ import annotations

import numpy as np

from pkm.errors import IKError
from pkm.algorithms.inverse_kinematics import STALL
from pkm.algorithms.kinematics import body_jacobians, forward_kinematics
from pkm.lie import Ad_inv, dexp_inv_se3, log_se3
from pkm.lie.interpret import kernel
from pkm.algorithms import constraints as cons


def _system(robot, thetas):
    """Residual and Jacobian (w.r.t. all tree variables of all limbs) of the assembly equations, the
    offsets of the limbs' variables, the first limb's platform pose and the size of the coordinates,
    ``max(1, |θ|, |r_k|)`` over the joint variables and the bodies' positions (m, rad): the residual's
    rounding floor grows with it (a hexapod's 100 m legs leave 3e-14 m)."""
    limbs = robot.limbs
    offs = np.cumsum([0] + [l.n for l in limbs])
    res, rows = [], []
    Cp, Jp = [], []
    scale = 1.0
    for k, limb in enumerate(limbs):
        C = forward_kinematics(limb.tree, thetas[k])
        scale = max(scale, float(np.max(np.abs(C[:, :3, 3]), initial=0.0)),
                    float(np.max(np.abs(thetas[k]), initial=0.0)))
        J = body_jacobians(limb.tree, thetas[k])
        Cp.append(C[limb.platform])
        Jp.append(J[limb.platform])
        for lp in limb.loops:
            res.append(cons.residual(lp.cut, C)[lp.rows])
            block = np.zeros((lp.m, offs[-1]))
            block[:, offs[k]:offs[k + 1]] = cons.jacobian(lp.cut, C, J)[lp.rows]
            rows.append(block)
    for k in range(1, len(limbs)):
        E = np.linalg.solve(Cp[0], Cp[k])
        xi = kernel(log_se3)(E)
        res.append(xi)
        D = kernel(dexp_inv_se3)(-xi)
        block = np.zeros((6, offs[-1]))
        block[:, offs[k]:offs[k + 1]] = D @ Jp[k]
        block[:, offs[0]:offs[1]] = -D @ kernel(Ad_inv)(E) @ Jp[0]
        rows.append(block)
    if not res:   # one limb without loops (a serial arm): nothing to close
        return np.zeros(0), np.zeros((0, offs[-1])), offs, Cp[0], scale
    return np.concatenate(res), np.vstack(rows), offs, Cp[0], scale


#: Redundant actuation: actuator coordinates that assemble to a residual within this (times the size of
#: the coordinates) are consistent (an IK solution's, converged to 1e-12, assemble to ~5e-13).
CONSISTENT = 1e-9


def assemble(robot, q_act, start=None, tol: float = 1e-14, max_iter: int = 50):
    """Joint coordinates of every limb and the platform pose for actuator coordinates ``q_act``.

    ``start``: initial tree variables per limb (default: the reference configuration). Converged at
    a residual (the loops' constraints and the limbs' platform mismatch, max-norm) ≤ ``tol``, or where
    Newton stalls (reduces it by less than ``STALL``) at a residual ≤ ``tol`` times the size of the
    coordinates (:func:`_system`): the rounding floor, as the IK's stall test. With redundant
    actuation (more actuator coordinates than DOF) they over-determine the assembly: Gauss–Newton
    finds the least-squares configuration, accepted where it stalls at a residual ≤ ``CONSISTENT``
    times the size of the coordinates (actuator coordinates consistent to that, e.g. an IK's). Returns
    ``(thetas, C_p)``; raises :class:`pkm.IKError` when the mechanism cannot be assembled.
    """
    q_act = np.asarray(q_act, dtype=float)
    thetas = [np.zeros(l.n) if start is None else np.array(start[k], dtype=float) for k, l in enumerate(robot.limbs)]
    k0 = 0
    for k, limb in enumerate(robot.limbs):
        thetas[k][limb.actuated] = q_act[k0:k0 + len(limb.actuated)]
        k0 += len(limb.actuated)
    offs = np.cumsum([0] + [l.n for l in robot.limbs])
    fixed = np.concatenate([offs[k] + l.actuated for k, l in enumerate(robot.limbs)])
    free = np.setdiff1d(np.arange(offs[-1]), fixed)
    err, scale, stalled = np.inf, 1.0, False
    floor = CONSISTENT if robot.n_act > robot.task_dof else tol   # redundant: least squares, consistent data
    for it in range(max_iter + 1):
        r, A, _, Cp, scale = _system(robot, thetas)
        prev, err = err, float(np.max(np.abs(r))) if r.size else 0.0
        if err <= tol or not np.isfinite(err) or it == max_iter:
            break
        if it >= 2 and err > STALL * prev and err <= max(tol, floor) * scale:
            stalled = True   # Newton at the rounding floor, which grows with the coordinates
            break
        step = np.linalg.lstsq(A[:, free], -r, rcond=None)[0]
        big = np.max(np.abs(step))
        if big > 0.5:
            step *= 0.5 / big
        flat = np.concatenate(thetas)
        flat[free] += step
        thetas = [flat[offs[k]:offs[k + 1]].copy() for k in range(len(robot.limbs))]
    if not (stalled or err <= tol):
        why = (f"; with redundant actuation ({robot.n_act} actuators for {robot.task_dof} task coordinates) the "
               "actuator coordinates must be consistent, e.g. those of pkm ik" if robot.n_act > robot.task_dof else "")
        raise IKError(f"the mechanism cannot be assembled at these actuator coordinates: residual {err:.3e} "
                      f"after {it} iterations (tolerance {tol:.1e} x {scale:.3g}, the size of the coordinates){why}",
                      residual=err, iterations=it)
    return thetas, Cp


def platform_motion_rank(robot, thetas, tol: float = 1e-9) -> int:
    """Rank of the platform twists the assembled mechanism admits at ``thetas`` (all joints free)."""
    _, A, offs, _, _ = _system(robot, thetas)
    _, s, vt = np.linalg.svd(A)
    rank = int(np.sum(s > tol * s[0]))
    null = vt[rank:].T
    limb = robot.limbs[0]
    Jp = body_jacobians(limb.tree, thetas[0])[limb.platform]
    sv = np.linalg.svd(Jp @ null[offs[0]:offs[1]], compute_uv=False)
    return int(np.sum(sv > tol * max(1.0, sv[0])))
