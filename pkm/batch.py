"""Batched inverse kinematics + inverse dynamics of a PKM (spec §11.2–11.3): the Python side.

:func:`inverse_dynamics_batch` (what :meth:`pkm.robot.Robot.inverse_dynamics` runs) checks the
input, computes the target platform states and the continuation poses of each chunk's cold start,
runs the numba kernel of :mod:`pkm.batch_kernel` on the robot's
:class:`pkm.batch_model.KernelModel` (:func:`pack`, joint frames) on one thread per chunk, and
turns a failure status into :class:`pkm.IKError` or :class:`pkm.SingularityError` naming the
sample. The kernel computes
exactly what :mod:`pkm.manipulator` computes (tests compare both to 1e-12).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
from numba import get_num_threads

from pkm.batch_kernel import (IK_FAILED, LOOP_FAILED, OK, SINGULAR_GY, SINGULAR_JIK, SINGULAR_LP, Results,
                              Samples, make_work, run_range)
from pkm.batch_model import LAY_NMAX, LI_AFF, LOOP_TOL, KernelModel, pack

__all__ = ["pack", "KernelModel", "LOOP_TOL", "inverse_dynamics_batch", "platform_states", "MIN_CHUNK", "OK",
           "IK_FAILED", "LOOP_FAILED", "SINGULAR_GY", "SINGULAR_LP", "SINGULAR_JIK"]


def platform_states(robot, X, XD, XDD):
    """Target platform poses ``C_p`` (N,4,4), twists ``V_p`` and ``V̇_p`` (N,6) for task samples.

    Vectorised when the task space has no rotational component (the platform keeps ``R_0``):
    ``V_p = (0; R_0ᵀ R_0 ṗ) = (0; ṗ)`` in the platform's reference axes.
    """
    N = X.shape[0]
    if not robot._rot:  # filled in place: no tile/hstack copies (they were ~5 % of the Delta's call)
        local = np.empty((N, 3))
        local[:] = robot.R0.T @ robot.r0
        Vp = np.zeros((N, 6))
        dVp = np.zeros((N, 6))
        for i, c in enumerate(robot.task.components):
            axis = "xyz".index(c[1])
            local[:, axis] = X[:, i]
            Vp[:, 3 + axis] = XD[:, i]
            dVp[:, 3 + axis] = XDD[:, i]
        pose = np.eye(4)
        pose[:3, :3] = robot.R0
        Cd = np.empty((N, 16))
        Cd[:] = pose.ravel()  # whole rows: far faster than assigning the 3×3 block to every sample
        for r in range(3):
            np.matmul(local, robot.R0[r], out=Cd[:, 4 * r + 3])  # p = R_0 · local
        return Cd.reshape(N, 4, 4), Vp, dVp
    Cd = np.array([robot.platform_pose(x) for x in X])
    pairs = [robot.platform_twist(x, xd, xdd) for x, xd, xdd in zip(X, XD, XDD)]
    return Cd, np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])


#: Fewest samples per parallel chunk.
MIN_CHUNK = 256


def inverse_dynamics_batch(robot, X, XD, XDD, wrench=None, gravity=None, *, tol=1e-12, max_iter=50,
                           singularity_threshold=1e8, start=None, threads=None, t=None):
    """:func:`pkm.batch_kernel.run_range` on samples ``X, XD, XDD`` (N, δ_p), chunks in parallel on threads;
    see :meth:`pkm.robot.Robot.inverse_dynamics`.

    ``start``: per-limb tree variables to start the first sample's IK from (default: the
    reference configuration, directly or by continuation along a straight line in task space,
    as :meth:`Robot.inverse_kinematics` does; the kernel does this itself). ``threads``: number
    of chunks run in parallel (default: numba's thread count; chunks have at least
    ``MIN_CHUNK`` samples, each started in the same way). ``t``: sample times (N,), optional; with
    them each sample starts from a prediction from the previous two. Returns the raw arrays
    ``(theta, thetad, thetadd, tau, JIK, limbW, platW)``.
    """
    from pkm.errors import IKError, SingularityError

    if robot.n_act != robot.task_dof:
        raise NotImplementedError(f"{robot.name}: {robot.n_act} actuators for {robot.task_dof} task coordinates; "
                                  "redundant or deficient actuation is not supported")
    km = robot._packed()
    N = X.shape[0]
    L, nmax = km.mi.shape[0], int(km.lay[LAY_NMAX])
    g0 = np.ascontiguousarray(robot.spec.gravity if gravity is None else gravity, dtype=float)
    if g0.shape != (3,) or not np.all(np.isfinite(g0)):
        raise ValueError(f"gravity must be a finite 3-vector, got {g0!r}")
    Wee = np.zeros((N, 6)) if wrench is None else np.ascontiguousarray(np.broadcast_to(np.asarray(wrench, float), (N, 6)))
    Cd, Vp, dVp = platform_states(robot, X, XD, XDD)
    dts = np.zeros(N)
    if t is not None:
        t = np.asarray(t, dtype=float)
        if t.shape != (N,) or not np.all(np.isfinite(t)):
            raise ValueError(f"t must be {N} finite sample times, got shape {t.shape}")
        dts[1:] = np.maximum(np.diff(t), 0.0)
    chunks = max(1, min(get_num_threads() if threads is None else int(threads), N // MIN_CHUNK))
    bounds = np.linspace(0, N, chunks + 1).round().astype(np.int64)
    work = make_work(km, chunks)
    cold = np.ones(chunks, np.int64)
    if start is not None:  # chunk 0 starts from the given tree variables, the others cold
        cold[0] = 0
        for l, th0 in enumerate(robot._check_start(start)):
            work.th[0, l, :len(th0)] = th0
    # intermediate poses from the reference to each chunk's first sample (cold starts that fail directly)
    Cs = np.ascontiguousarray([robot.continuation_poses(X[b])[:-1] for b in bounds[:-1]])
    dp = robot.task_dof
    out = Results(theta=np.zeros((N, L, nmax)), thetad=np.zeros((N, L, nmax)), thetadd=np.zeros((N, L, nmax)),
                  tau=np.empty((N, robot.n_act)), JIK=np.empty((N, robot.n_act, dp)), limbW=np.empty((N, L, dp)),
                  platW=np.empty((N, dp)))
    statuses = np.zeros((chunks, 4))
    smp = Samples(np.ascontiguousarray(Cd), np.ascontiguousarray(Vp), np.ascontiguousarray(dVp), Wee, dts, g0)
    args = (float(tol), int(max_iter), float(singularity_threshold))
    general = None if km.mi[:, LI_AFF].all() else km.lay  # None: numba compiles the affine path only

    def chunk(c):  # run_range releases the GIL: chunks on threads run in parallel
        run_range(bounds[c], bounds[c + 1], *km, *smp, *out, *(w[c] for w in work), bool(cold[c]), Cs[c], general,
                  *args, statuses[c])

    if chunks == 1:
        chunk(0)
    else:
        with ThreadPoolExecutor(max_workers=chunks) as pool:
            list(pool.map(chunk, range(chunks)))
    failed = [c for c in range(chunks) if statuses[c, 0] != OK]
    status = statuses[failed[0]] if failed else statuses[0]
    code, s, l, value = int(status[0]), int(status[1]), int(status[2]), status[3]
    if code != OK:
        where = f"sample {s} (x = {np.array2string(X[s], precision=6)})"
        limb = robot.limbs[l].name if l >= 0 else None
        if code in (IK_FAILED, LOOP_FAILED):
            what = "no inverse-kinematics solution" if code == IK_FAILED else "the loops cannot be closed"
            raise IKError(f"limb {limb!r}: {what} at {where}: residual {value:.3e} after {max_iter} Newton iterations "
                          "(target unreachable?)", limb=limb, residual=float(value), iterations=max_iter)
        what = {SINGULAR_GY: f"limb {limb!r}: G_y", SINGULAR_LP: f"limb {limb!r}: the platform Jacobian L_p",
                SINGULAR_JIK: "the IK Jacobian J_IK"}[code]
        raise SingularityError(f"{what} is ill conditioned at {where} (condition number {value:.3e} > "
                               f"{singularity_threshold:.1e})", condition=float(value), threshold=singularity_threshold)
    return tuple(out)
