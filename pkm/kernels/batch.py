"""Batched inverse kinematics + inverse dynamics of a PKM (spec §11.2–11.3): the Python side.

:func:`inverse_dynamics_batch` (what :meth:`pkm.robot.Robot.inverse_dynamics` runs) checks the
input, computes the target platform states and the continuation poses of each chunk's cold start,
runs the numba kernel of :mod:`pkm.kernels.inverse_dynamics` on the robot's
:class:`pkm.kernels.model.KernelModel` (:func:`pack`, joint frames) on one thread per chunk, and
turns a failure status into :class:`pkm.IKError` or :class:`pkm.SingularityError` naming the
sample. The kernel computes
exactly what :mod:`pkm.algorithms.manipulator` computes (tests compare both to 1e-12).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
from numba import get_num_threads

from pkm.kernels.inverse_dynamics import (IK_FAILED, LOOP_FAILED, OK, SINGULAR_GY, SINGULAR_JIK, SINGULAR_LP, Results,
                              Samples, make_work, run_range)
from pkm.kernels.model import LAY_NMAX, LI_AFF, LOOP_TOL, KernelModel, pack

__all__ = ["pack", "KernelModel", "LOOP_TOL", "inverse_dynamics_batch", "platform_states", "MIN_CHUNK", "OK",
           "IK_FAILED", "LOOP_FAILED", "SINGULAR_GY", "SINGULAR_LP", "SINGULAR_JIK"]


def platform_states(robot, X, XD, XDD, out=None):
    """Target platform poses ``C_p`` (N,4,4), twists ``V_p`` and ``V̇_p`` (N,6) for task samples.

    Vectorised when the task space has no rotational component (the platform keeps ``R_0``):
    ``V_p = (0; R_0ᵀ R_0 ṗ) = (0; ṗ)`` in the platform's reference axes. ``out``: three
    C-contiguous float arrays of those shapes to fill (default: new ones).
    """
    N = X.shape[0]
    Cd, Vp, dVp = out if out is not None else blocks((N, 4, 4), (N, 6), (N, 6))
    if not (Cd.flags.c_contiguous and Cd.shape == (N, 4, 4)):  # else the row view below would be a copy
        raise ValueError(f"out: the poses must be a C-contiguous ({N}, 4, 4) array, got shape {Cd.shape}")
    if not robot._rot:  # filled in place: no tile/hstack temporaries (7–9 % of a Delta call, A/B)
        local = np.empty((N, 3))
        local[:] = robot.R0.T @ robot.r0
        Vp.fill(0.0)
        dVp.fill(0.0)
        for i, c in enumerate(robot.task.components):
            axis = "xyz".index(c[1])
            local[:, axis] = X[:, i]
            Vp[:, 3 + axis] = XD[:, i]
            dVp[:, 3 + axis] = XDD[:, i]
        pose = np.eye(4)
        pose[:3, :3] = robot.R0
        rows = Cd.reshape(N, 16)
        rows[:] = pose.ravel()  # whole rows: far faster than assigning the 3×3 block to every sample
        for r in range(3):
            np.matmul(local, robot.R0[r], out=rows[:, 4 * r + 3])  # p = R_0 · local
        return Cd, Vp, dVp
    for s in range(N):
        Cd[s] = robot.platform_pose(X[s])
        Vp[s], dVp[s] = robot.platform_twist(X[s], XD[s], XDD[s])
    return Cd, Vp, dVp


def blocks(*shapes):
    """Uninitialised C-contiguous float arrays of the given shapes, views of ONE allocation.

    The per-call arrays of :func:`inverse_dynamics_batch` (~0.9 kB per sample in all for the
    Delta) come as two blocks instead of a dozen arrays: glibc's malloc then keeps the freed
    memory for the next call (its mmap threshold adapts to the largest block freed, and the
    heap is trimmed only beyond twice that), so repeated calls reuse memory instead of taking a
    fresh page fault for every 4 kB (~2000 per call of 10⁴ samples of the Delta: ~20 % of its
    time per sample on a KVM guest, A/B alternated). Each array starts a multiple of 64 bytes
    after the block's start. The arrays returned to the user are views of the output block, so
    the block lives as long as any of them."""
    sizes = [int(np.prod(s)) for s in shapes]
    starts = np.cumsum([0] + [-(-n // 8) * 8 for n in sizes])
    block = np.empty(int(starts[-1]))
    return [block[o:o + n].reshape(s) for o, n, s in zip(starts[:-1], sizes, shapes)]


#: Fewest samples per parallel chunk.
MIN_CHUNK = 256


def inverse_dynamics_batch(robot, X, XD, XDD, wrench=None, gravity=None, *, tol=1e-12, max_iter=50,
                           singularity_threshold=1e8, start=None, threads=None, t=None):
    """:func:`pkm.kernels.inverse_dynamics.run_range` on samples ``X, XD, XDD`` (N, δ_p), chunks in parallel on threads;
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
    if t is not None:
        t = np.asarray(t, dtype=float)
        if t.shape != (N,) or not np.all(np.isfinite(t)):
            raise ValueError(f"t must be {N} finite sample times, got shape {t.shape}")
    Cd, Vp, dVp, Wee, dts = blocks((N, 4, 4), (N, 6), (N, 6), (N, 6), (N,))
    platform_states(robot, X, XD, XDD, out=(Cd, Vp, dVp))
    Wee[:] = 0.0 if wrench is None else np.asarray(wrench, float)
    dts[0] = 0.0
    if t is None:
        dts[1:] = 0.0
    else:
        np.maximum(np.diff(t), 0.0, out=dts[1:])
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
    out = Results(*blocks(*[(N, L, nmax)] * 3, (N, robot.n_act), (N, robot.n_act, dp), (N, L, dp), (N, dp)))
    for a in out[:3]:  # the kernel writes each limb's n_l variables; zero the padding to n_max
        for k, l in enumerate(robot.limbs):
            a[:, k, l.n:] = 0.0
    statuses = np.zeros((chunks, 4))
    smp = Samples(Cd, Vp, dVp, Wee, dts, g0)
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
