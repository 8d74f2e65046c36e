"""Inverse kinematics of the limb mechanisms and of the PKM (paper §4–5, eq. 85–98).

For a target platform pose ``C_p^d`` each limb is solved separately by Newton's method in its
generalized coordinates (eq. 95–96): with the body-fixed pose error ``ΔX = log(C_p⁻¹ C_p^d)``,

    ``Δq = L_p⁺ ΔX``,  ``θ := θ + H Δq``,  then the loops are closed again (paper Sec. 3.5–3.7, eq. 75–84; Sec. 4.4, eq. 95–96),

where ``L_p = J_p H`` and ``L_p⁺ = (L_pᵀ L_p)⁻¹ L_pᵀ`` (eq. 94). Using the full 6-D error and the
left pseudo-inverse needs no row selection: it is exact whenever the target twist lies in the
limb's motion space, which holds for every admissible platform motion, and it keeps the constrained
directions (e.g. the Delta's ω₂) at their targets instead of letting them drift.

Velocities and accelerations (eq. 86–88, 91, with the correction of paper Sec. 4.2, eq. 90–93):

    ``q̇ = L_p⁺ V_p``,  ``θ̇ = H q̇``,  ``q̈ = L_p⁺ (V̇_p − J̇_p θ̇ − J_p Ḣ q̇)``,  ``θ̈ = H q̈ + Ḣ q̇``.

``F = L_p⁺ P_p`` maps the task velocity to ``q̇`` (eq. 86/91/94) and its actuated rows are the
limb's block of ``J_IK`` (eq. 97–98).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import warnings

from pkm.errors import BranchError, BranchWarning, IKError, InputError, PkmError, SingularityError, fmt_array
from pkm.algorithms.kinematics import body_accelerations, body_jacobians, forward_kinematics
from pkm.lie import dexp_inv_so3, exp_se3, exp_so3, log_se3, log_so3
from pkm.lie.interpret import kernel
from pkm.description.taskspace import _real
from pkm.algorithms.limb import MAX_NEWTON_STEP, SINGULARITY_THRESHOLD, LimbModel, _check_condition, _limit


#: Branches (assembly modes). Along a trajectory every sample's IK starts from its predecessor's
#: solution; a joint variable that then changes by more than ``BRANCH_STEP`` (rad or m), or a row of
#: J_IK that turns by more than 90° (each row is ∝ 1/det of its limb's actuation and flips sign
#: where the limb crosses a singularity), marks a sample whose solution may be on another branch.
#: It is checked by continuation: ``BRANCH_STEPS`` solves along the straight task-space line from
#: the predecessor; solutions closer than ``SAME_SOLUTION`` (max-norm of the tree variables) are
#: the same.
BRANCH_STEP = 0.5
BRANCH_STEPS = 10
#: Steps of the straight-line continuation in task space for an IK that fails from the reference.
CONTINUATION_STEPS = 10
SAME_SOLUTION = 1e-8
#: A Newton step that reduces the pose error by less than this factor, at an error within
#: ``tol · max(1, max|θ|)``, has reached the rounding floor: the solution is accepted there (as
#: :func:`pkm.kernels.ik._converged` does), not reported as unreachable.
STALL = 0.1


def branch_suspect(theta_prev, theta, J_prev, J) -> bool:
    """Whether the solution ``theta`` (per-limb tree variables) with IK Jacobian ``J`` may lie on
    another branch than its predecessor's (``theta_prev``, ``J_prev``): see ``BRANCH_STEP``."""
    step = max(float(np.max(np.abs(a - b), initial=0.0)) for a, b in zip(theta, theta_prev))
    return step > BRANCH_STEP or bool((np.einsum("ad,ad->a", J, J_prev) <= 0.0).any())


#: What :func:`branch_event` does when the branch changes: warn (default) or raise BranchError.
BRANCH_POLICIES = ("warn", "raise")


def check_branch_policy(policy: str) -> str:
    if policy not in BRANCH_POLICIES:
        raise InputError(f"on_branch_change must be one of {', '.join(map(repr, BRANCH_POLICIES))}, got {policy!r}")
    return policy


def branch_event(kind: str, name: str, s: int, x_prev, x, policy: str = "warn", stacklevel: int = 3) -> None:
    """Report what happened at sample ``s`` of a trajectory: ``"continued"`` — it jumps, and the IK
    kept sample ``s − 1``'s branch by continuation (a :class:`pkm.BranchWarning`); ``"changed"`` —
    sample ``s`` cannot be reached from sample ``s − 1``'s solution without crossing a singularity
    or leaving the workspace, so its solution is on another branch (a warning, or
    :class:`pkm.BranchError` with ``policy="raise"``)."""
    where = f"sample {s} (x = {fmt_x(x)}; sample {s - 1}: x = {fmt_x(x_prev)})"
    if kind == "continued":
        warnings.warn(BranchWarning(f"{name}: the trajectory jumps at {where}: the inverse kinematics continued "
                                    f"sample {s - 1}'s branch along a straight line"), stacklevel=stacklevel)
        return
    msg = (f"{name}: the branch (assembly mode) changes at {where}: sample {s} cannot be reached from sample "
           f"{s - 1}'s solution without crossing a singularity or leaving the workspace")
    if policy == "raise":
        raise BranchError(msg, sample=s)
    warnings.warn(BranchWarning(msg + " (on_branch_change='raise' makes this an error)"), stacklevel=stacklevel)


def fmt_x(x) -> str:
    """A task point as error messages write it."""
    return fmt_array(x)


#: Most Newton iterations per solve: Newton converges quadratically or not at all, so more only
#: spends time (10**12 iterations on an unreachable point hung inside the kernel, uninterruptible).
MAX_ITER = 10_000


def check_solver(tol, max_iter, threshold) -> None:
    """:class:`pkm.InputError` (a ValueError) unless ``max_iter`` is an integer from 1 to
    :data:`MAX_ITER`, ``tol`` a finite positive number and ``threshold`` (the singularity threshold,
    inf: no check) a positive number."""
    if isinstance(max_iter, bool) or not isinstance(max_iter, (int, np.integer)) or not 1 <= max_iter <= MAX_ITER:
        raise InputError(f"max_iter must be an integer from 1 to {MAX_ITER}, got {max_iter!r}")
    for name, value in (("tol", tol), ("singularity_threshold", threshold)):
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) or not value > 0:
            raise InputError(f"{name} must be a positive number, got {value!r}")
    if not np.isfinite(tol):
        raise InputError(f"tol must be finite (a pose residual), got {tol!r}")


def check_parallel(threads, simd) -> None:
    """:class:`pkm.InputError` unless ``threads`` is None or an integer ≥ 1 and ``simd`` None, a bool
    or a lane count 2, 4 or 8 (the options of :meth:`pkm.Robot.inverse_dynamics`)."""
    if threads is not None and (isinstance(threads, bool) or not isinstance(threads, (int, np.integer)) or threads < 1):
        raise InputError(f"threads must be None or an integer >= 1, got {threads!r}")
    if not (simd is None or isinstance(simd, bool) or (isinstance(simd, (int, np.integer)) and simd in (2, 4, 8))):
        raise InputError(f"simd must be None, True, False or a lane count 2, 4 or 8, got {simd!r}")


@dataclass
class LimbIK:
    """The IK solution of one limb at one sample (all arrays are the limb's own)."""

    theta: np.ndarray  # tree variables θ_(l) (n_l)
    iterations: int
    residual: float
    H: np.ndarray  # n_l × δ_l
    Lp: np.ndarray  # 6 × δ_l
    Lp_pinv: np.ndarray  # δ_l × 6


def _closing(errs, last: int = 5) -> bool:
    """Whether Newton's residuals fell at each of the ``last`` iterations (steady progress cut by the
    step limit: a far target), not oscillating about a point it cannot reach."""
    tail = errs[-last - 1:]
    return len(tail) == last + 1 and all(b < a for a, b in zip(tail, tail[1:]))


def solve_limb(limb: LimbModel, Cd: np.ndarray, theta0: np.ndarray, tol: float = 1e-12, max_iter: int = 50,
               singularity_threshold: float = SINGULARITY_THRESHOLD) -> LimbIK:
    """Newton's method (eq. 96) for the limb's tree variables that put its platform at ``Cd``.

    Converged at a pose residual ≤ ``tol``, or where Newton stalls at the rounding floor (see
    ``STALL``). Raises :class:`IKError` (naming the limb, the residual and the iterations) when it
    does not converge, and :class:`SingularityError` when the solution is at a configuration where ``G_y``
    or the limb's platform Jacobian ``L_p`` has a condition number above ``singularity_threshold``.
    """
    tree, p = limb.tree, limb.platform
    theta = limb.close_loops(theta0)
    err, converged, limited, errs = np.inf, False, False, []
    for it in range(max_iter + 1):
        C = forward_kinematics(tree, theta)
        dX = kernel(log_se3)(np.linalg.solve(C[p], Cd))
        prev, err = err, float(np.linalg.norm(dX))
        errs.append(err)
        if err <= tol or it == max_iter or not np.isfinite(err):
            break
        if it >= 2 and err > STALL * prev and err <= tol * max(1.0, float(np.max(np.abs(theta)))):
            converged = True  # Newton stalled at the rounding floor, which grows with |θ|
            break
        J = body_jacobians(tree, theta)
        H = limb._H(C, J, np.inf)
        dq = np.linalg.lstsq(J[p] @ H, dX, rcond=None)[0]
        step = _limit(dq)
        limited = step is not dq
        theta = limb.close_loops(theta + H @ step)
    if not (converged or err <= tol):
        why = (f"still moving at the step limit of {MAX_NEWTON_STEP:g} rad or m per iteration: the target is farther "
               f"from the start than {it} steps reach (more: max_iter)" if limited and np.isfinite(err) and _closing(errs)
               else "target unreachable?")
        raise IKError(f"limb {limb.name!r}: no inverse-kinematics solution: platform pose residual {err:.3e} "
                      f"after {it} Newton iterations ({why})", limb=limb.name, residual=err, iterations=it)
    J = body_jacobians(tree, theta)
    H = limb._H(C, J, singularity_threshold)
    Lp = J[p] @ H
    _check_condition(Lp, singularity_threshold, f"limb {limb.name!r}: the platform Jacobian L_p")
    return LimbIK(theta=theta, iterations=it, residual=err, H=H, Lp=Lp, Lp_pinv=np.linalg.pinv(Lp))


def limb_rates(limb: LimbModel, sol: LimbIK, Vp: np.ndarray, dVp: np.ndarray | None = None):
    """Joint velocities (and accelerations) of a solved limb from the platform twist ``V_p``
    and its derivative ``V̇_p`` (body-fixed): returns ``(θ̇, θ̈ or None)`` (eq. 86–88)."""
    qd = sol.Lp_pinv @ Vp
    thd = sol.H @ qd
    if dVp is None:
        return thd, None
    th = sol.theta
    Hdqd = limb.Hdot_qd(th, thd)
    bias = body_accelerations(limb.tree, th, thd, np.zeros(limb.n))[limb.platform]  # J̇_p θ̇
    J = body_jacobians(limb.tree, th)
    qdd = sol.Lp_pinv @ (dVp - bias - J[limb.platform] @ Hdqd)
    return thd, sol.H @ qdd + Hdqd



#: Where a limb's IK fails, :func:`explain_failure` solves the limb for the task coordinates alone; a
#: platform deviation in the other components above this (rad or m) is what the limb cannot hold.
HOLD_TOL = 1e-7


def explain_failure(limb: LimbModel, Cd: np.ndarray, R0: np.ndarray, components, coordinate_names,
                    max_iter: int = 60) -> str | None:
    """Why ``limb`` has no IK solution at the platform pose ``Cd``, when the cause is the mechanism
    rather than the target: None if the limb cannot reach the target's task coordinates either
    (then the target is out of reach), else a phrase naming the platform motions outside the task
    space that the limb cannot hold, e.g. ``the limb cannot hold the platform's rotation about x, y, z …``.

    The limb is solved for the task coordinates alone (:func:`_closest`): where it reaches them,
    the platform's least deviation in the other components is what its joints do not hold. That is
    the mechanism's fault only if it happens near the reference configuration too — at a fifth of
    the way there (``C_ref exp(log(C_ref⁻¹ C_d) / 5)``, deviations ∝ distance² for a limb that holds
    the pose to first order only); a limb that holds it there and not at the target merely reaches
    a target outside its workspace by turning the platform. At the reference the load check
    (``freedom.check_task_mobility``) found the pose held to first order, so a deviation near it
    means the reference is a singular point of the limb (e.g. a U joint's two axes in the wrong order)."""
    sel = np.array([c in components for c in ("wx", "wy", "wz", "vx", "vy", "vz")])
    dev, scale = _closest(limb, Cd, R0, sel, max_iter)
    if dev is None or np.max(np.abs(dev)) <= HOLD_TOL * scale:
        return None          # out of reach, or it reaches the whole pose: the failure was Newton's
    C_ref = forward_kinematics(limb.tree, limb.close_loops(np.zeros(limb.n)))[limb.platform]
    near = C_ref @ kernel(exp_se3)(kernel(log_se3)(np.linalg.solve(C_ref, Cd)) / 5.0)
    probe, probe_scale = _closest(limb, near, R0, sel, max_iter)
    if probe is None or np.max(np.abs(probe)) <= HOLD_TOL * probe_scale:
        return None
    axes = "xyz"
    rot = [axes[i] for i in range(3) if abs(dev[i]) > HOLD_TOL]
    lin = [axes[i] for i in range(3) if abs(dev[3 + i]) > HOLD_TOL * scale]
    what = " and ".join(([f"rotation about {', '.join(rot)}"] if rot else []) + ([f"position along {', '.join(lin)}"] if lin else []))
    how = " and ".join(([f"turned by {np.linalg.norm(dev[:3]):.3g} rad"] if rot else [])
                       + ([f"displaced by {np.linalg.norm(dev[3:]):.3g} m"] if lin else []))
    coords = ", ".join(coordinate_names)
    return (f"the limb cannot hold the platform's {what}, which the task space ({coords}) keeps fixed: it reaches "
            f"these task coordinates at best with the platform {how}; the limbs hold it at the reference configuration "
            f"but this one not away from it (check the order and directions of its joints' axes, e.g. a U joint's "
            f"two axes swapped)")


def _closest(limb: LimbModel, Cd: np.ndarray, R0: np.ndarray, sel: np.ndarray, max_iter: int):
    """``(dev, scale)``: the least deviation (6, zero in the ``sel`` rows) of the limb's platform from
    ``Cd`` in the unselected task coordinates among the limb's configurations that reach the
    selected ones, from the reference configuration (``dev`` None where it does not reach them).

    Task coordinates as in :mod:`pkm.description.taskspace`: ``l = R0ᵀ r``, ``ρ = log(R0ᵀ R)``, with
    ``l̇ = exp(ρ) v`` and ``ρ̇ = dexp_{−ρ}⁻¹ ω`` from the body-fixed twist ``(ω; v) = L_p q̇`` (eq. 7,
    80). Gauss–Newton with priorities: the selected coordinates' step, then the others' least
    squares in the null space of the selected rows."""
    tree, p = limb.tree, limb.platform
    target = np.concatenate([kernel(log_so3)(R0.T @ Cd[:3, :3]), R0.T @ Cd[:3, 3]])
    scale = max(1.0, float(np.max(np.abs(target[3:]))))
    if not (np.all(np.isfinite(target)) and scale < 1e6):   # out of any robot's reach (fileformat.MAX_LENGTH)
        return None, scale
    try:
        theta = limb.close_loops(np.zeros(limb.n))
        for _ in range(max_iter):
            C = forward_kinematics(tree, theta)
            rho = kernel(log_so3)(R0.T @ C[p][:3, :3])
            e = np.concatenate([rho, R0.T @ C[p][:3, 3]]) - target
            J = body_jacobians(tree, theta)
            H = limb._H(C, J, np.inf)
            Lp = J[p] @ H
            Je = np.vstack([kernel(dexp_inv_so3)(-rho) @ Lp[:3], kernel(exp_so3)(rho) @ Lp[3:]])
            A, B = Je[sel], Je[~sel]
            dq = np.linalg.lstsq(A, -e[sel], rcond=None)[0]
            _, sv, vt = np.linalg.svd(A)
            N = vt[int(np.sum(sv > 1e-10 * max(1.0, sv[0]))):].T
            if N.size and B.size:
                dq = dq + N @ np.linalg.lstsq(B @ N, -(e[~sel] + B @ dq), rcond=None)[0]
            if not np.all(np.isfinite(dq)):
                return None, scale
            if np.linalg.norm(e[sel]) <= 1e-12 * scale and np.max(np.abs(dq), initial=0.0) <= 1e-9:
                break
            theta = limb.close_loops(theta + H @ _limit(dq))
        else:
            if np.linalg.norm(e[sel]) > 1e-9 * scale:
                return None, scale
    except (PkmError, ValueError, np.linalg.LinAlgError):   # a loop that cannot be closed, NaN joints: no diagnosis
        return None, scale
    return np.where(sel, 0.0, e), scale


def explained(exc: IKError, limb: LimbModel, Cd: np.ndarray, robot) -> IKError:
    """``exc`` (a limb's IK failure at the platform pose ``Cd``) with its cause in place of "target
    unreachable?" where :func:`explain_failure` finds that the mechanism cannot hold the pose
    (``robot``: the platform's reference orientation ``R0`` and the ``task``); else ``exc``."""
    why = explain_failure(limb, Cd, robot.R0, robot.task.components, robot.task.coordinate_names())
    if why is None:
        return exc
    msg = str(exc).removesuffix(" (target unreachable?)")
    return type(exc)(f"{msg}: {why}", limb=exc.limb, residual=exc.residual, iterations=exc.iterations,
                     sample=exc.sample)


def _along(limb, poses, theta, tol, max_iter, threshold):
    """The limb's IK continued from ``theta`` through ``poses`` (each solve starts from the one
    before); the singularity check at the last pose only. Raises IKError where a step fails."""
    for i, Cd in enumerate(poses):
        sol = solve_limb(limb, Cd, theta, tol, max_iter, threshold if i == len(poses) - 1 else np.inf)
        theta = sol.theta
    return sol


def _at_sample(exc, s, x):
    """``exc`` (an IKError or SingularityError of one sample) naming sample ``s`` of a trajectory."""
    msg = f"{exc} at sample {s} (x = {fmt_x(x)})"
    if isinstance(exc, SingularityError):
        return SingularityError(msg, condition=exc.condition, threshold=exc.threshold, sample=s)
    return type(exc)(msg, limb=exc.limb, residual=exc.residual, iterations=exc.iterations, sample=s)


#: The solver keywords of :meth:`Robot.forward_dynamics` (those of :meth:`Robot.inverse_dynamics` that apply).
FORWARD_OPTIONS = ("tol", "max_iter", "singularity_threshold", "threads", "on_branch_change")


def check_keywords(given: dict, accepted, where: str) -> None:
    """:class:`pkm.InputError` naming the first keyword of ``given`` that is not ``accepted`` (a misspelt
    option is never ignored silently) and the accepted ones."""
    unknown = [k for k in given if k not in accepted]
    if unknown:
        raise InputError(f"{where}: unknown keyword {unknown[0]!r} (accepted: {', '.join(accepted)})")


def _flag(value, name: str) -> bool:
    """``value`` as a bool (True/False, numpy's too), else :class:`pkm.InputError`."""
    if not isinstance(value, (bool, np.bool_)):
        raise InputError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def _progress(progress):
    """``progress`` of :meth:`Robot.inverse_dynamics`: None (also for False) or a callable."""
    if progress is None or progress is False:
        return None
    if not callable(progress):
        raise InputError(f"progress must be None, False or a callable receiving the number of samples done (e.g. a "
                         f"tqdm bar's update), got {type(progress).__name__}")
    return progress


def check_start(limbs, start) -> list[np.ndarray]:
    """``start`` as a list of each limb's tree variables (the reference configuration if None): a
    one-line InputError unless it holds every limb's ``n_l`` finite tree variables."""
    if start is None:
        return [np.zeros(l.n) for l in limbs]
    if not isinstance(start, (list, tuple)) and not (isinstance(start, np.ndarray) and start.ndim >= 1):
        raise InputError(f"start must be a list of the tree variables of all {len(limbs)} limbs, "
                         f"got {type(start).__name__}")
    if len(start) != len(limbs):
        raise InputError(f"start must hold the tree variables of all {len(limbs)} limbs, got {len(start)}")
    out = []
    for l, th in zip(limbs, start):
        th = np.array(_real(th, f"start for limb {l.name!r}"))
        if th.shape != (l.n,) or not np.all(np.isfinite(th)):
            raise InputError(f"start for limb {l.name!r} must be {l.n} finite tree variables, got shape {th.shape}")
        out.append(th)
    return out


def ik_jacobian(robot, sols, x) -> np.ndarray:
    """J_IK (n_act, δ_p) from the limbs' IK solutions ``sols`` at ``x`` (eq. 91, 97–98): the actuated rows
    of F = L_p⁺ P(x) (``P_p`` for a twist-closed task space, :meth:`pkm.robot.Robot.velocity_distribution`)."""
    J = np.empty((robot.n_act, robot.task_dof))
    P = robot.velocity_distribution(x)
    for k, (limb, sol) in enumerate(zip(robot.limbs, sols)):
        F = sol.Lp_pinv @ P
        pos = {int(v): c for c, v in enumerate(limb.q_index)}
        J[robot._act_slices[k]] = F[[pos[int(a)] for a in limb.actuated]]
    return J
