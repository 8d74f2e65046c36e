"""Forward dynamics in task space (paper eq. 127–130): the task acceleration
``V̇_t`` under actuator forces ``u``, by the numba kernel :mod:`pkm.kernels.forward`.

The kernel solves each state's IK once and evaluates the inverse dynamics (eq. 140) ``δ_p + 1``
times, for the task accelerations ``0, e_1, …, e_δp``: that gives ``u_0 = J_IK⁻ᵀ(C_t V_t +
W_t^grav − W_t^EE)`` and ``A = J_IK⁻ᵀ M_t`` column by column, and ``V̇_t = A⁻¹(u − u_0)`` (eq. 129)
without forming ``M_t``, ``C_t``, ``W_t^grav`` or ``J_IK`` in Python. For a translational task
space ``V_t = ẋ`` (eq. 128 with ``H_t = I``), so ``V̇_t = ẍ``; with rotations the kernel's ``V̇_t``
(the selected components of the platform's body-fixed twist acceleration) is turned into ``ẍ`` by
:meth:`pkm.robot.Robot.coordinate_accelerations` (eq. 130 differentiated; :func:`task_accelerations`).

:class:`ForwardKernel` holds one robot's scratch (allocated once) for repeated calls, e.g. the
right-hand sides of a simulation; :func:`forward_dynamics` is the batched entry point behind
:meth:`pkm.robot.Robot.forward_dynamics`. A batch's states are first solved by the batched IK +
inverse dynamics (:func:`pkm.kernels.batch.inverse_dynamics_batch`, which follows the branch and
handles cold starts), and the forward kernel then starts each state's IK from that solution.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from pkm.algorithms.distribution import internal_part
from pkm.algorithms.inverse_kinematics import check_solver, explained, fmt_x
from pkm.algorithms.limb import SINGULARITY_THRESHOLD
from pkm.description.taskspace import _real
from pkm.errors import IKError, InputError, PkmError, SingularityError, fmt_condition
from pkm.kernels.batch import blocks, inverse_dynamics_batch, platform_states
from pkm.kernels.forward import CROSSED, SINGULAR_A, forward_range, pass_accelerations
from pkm.kernels.inverse_dynamics import IK_FAILED, LOOP_FAILED, SINGULAR_GY, SINGULAR_JIK, SINGULAR_LP
from pkm.kernels.model import LAY_NMAX, LI_AFF
from pkm.kernels.work import make_work


def pass_blocks(km, dp: int, na: int) -> list:
    """The ``δ_p + 1`` passes' arrays of the forward-dynamics kernels (platform states, limb rates,
    forces, J_IK, …; :func:`pkm.kernels.forward.forward_range`) for the packed model ``km``: zeroed, and
    the unit platform accelerations of passes 1…δ_p set (:func:`pkm.kernels.forward.pass_accelerations`)."""
    L, nmax = km.mi.shape[0], int(km.lay[LAY_NMAX])
    m = dp + 1
    passes = blocks((m, 4, 4), (m, 6), (m, 6), (m, 6), (m, L, nmax), (m, L, nmax), (m, na), (m, na, dp), (m, L, dp),
                    (m, dp))
    for a in passes:
        a[...] = 0.0
    pass_accelerations(km.dp_static, passes[2])
    return passes


@dataclass
class ForwardDynamics:
    """Task accelerations ``xdd`` (N, δ_p) under actuator forces ``u`` (N, n_act), with the
    actuator coordinates, rates and accelerations ``q_act``, ``qd_act``, ``qdd_act`` (N, n_act),
    ``J_IK`` (N, n_act, δ_p), each limb's tree variables and their rates ``theta``, ``thetad``,
    ``thetadd`` (N, L, n_max; the padding beyond ``n_l`` is zero), and ``bias`` = ``u_0``
    (N, n_act), the actuator forces that hold the state with zero acceleration."""

    xdd: np.ndarray
    q_act: np.ndarray
    qd_act: np.ndarray
    qdd_act: np.ndarray
    J_IK: np.ndarray
    theta: np.ndarray
    thetad: np.ndarray
    bias: np.ndarray
    thetadd: np.ndarray = None
    internal: np.ndarray = None

    def __post_init__(self):
        """``internal`` (N, n_act): the part of ``u`` that moves nothing, in the null space of
        ``J_IKᵀ`` (redundant actuation, :func:`pkm.algorithms.distribution.internal_part`; zero for a
        non-redundant robot): only ``J_IKᵀ u`` enters eq. 129."""
        if self.internal is None and self.J_IK is not None:
            self.internal = np.zeros(self.J_IK.shape[:2])


class ForwardKernel:
    """The forward-dynamics kernel of one robot with its scratch: gravity ``gravity`` (default the
    robot file's), the IK's ``tol``, ``max_iter``, ``singularity_threshold`` (limbs' ``L_p``, ``G_y``
    and J_IK, as :meth:`pkm.robot.Robot.inverse_dynamics`: the largest condition number accepted;
    ``hold=False``: J_IK unchecked, see :attr:`jik`).

    :meth:`run` evaluates N states; ``th`` (L, n_max) is the IK start of the next call without
    ``theta``: the solution of the last state evaluated, so that repeated calls follow the branch."""

    def __init__(self, robot, gravity=None, *, tol=1e-12, max_iter=50, singularity_threshold=SINGULARITY_THRESHOLD,
                 hold=True):
        check_solver(tol, max_iter, singularity_threshold)
        robot.check_dynamics()  # the kernel selects twist rows: V_p = P_p V_t
        self.robot = robot
        self.km = km = robot._packed()
        # a copy: the kernel's own (a batch sets it per member), never the spec's or the caller's array
        self.g0 = np.array(robot.spec.gravity if gravity is None else gravity, dtype=float)
        if self.g0.shape != (3,) or not np.all(np.isfinite(self.g0)):
            raise InputError(f"gravity must be a finite 3-vector, got {' '.join(repr(gravity).split())[:200]}")
        self.args = (float(tol), int(max_iter), float(singularity_threshold))
        #: J_IK's largest condition number: ``singularity_threshold`` where the forces that hold the
        #: state (``bias``, J_IK⁻ᵀ) are wanted; ``inf`` (``hold=False``: a simulation's right-hand
        #: sides) evaluates states at and near forward-kinematics singularities, ``bias`` NaN there
        self.jik = self.args[2] if hold else np.inf
        self.passes = pass_blocks(km, robot.task_dof, robot.n_act)
        self.work = [w[0] for w in make_work(km, 1)]
        self.th = self.work[0]
        self.general = None if km.mi[:, LI_AFF].all() else km.lay
        self.status = np.zeros(4)
        self.chord = False  # whether the scratch holds the limbs' L_p⁺ of a neighbouring state

    def set_start(self, start):
        """Each limb's tree variables (a list, as ``start`` of :meth:`pkm.robot.Robot.inverse_dynamics`)
        as the next IK start."""
        self.th[:] = 0.0
        self.chord = False
        for k, th in enumerate(self.robot._check_start(start)):
            self.th[k, :len(th)] = th

    def run(self, Cd, Vp, Wee, U, out, theta_given=False, X=None):
        """The kernel on states with platform poses ``Cd`` (N, 4, 4), twists ``Vp``, wrenches ``Wee``
        (N, 6) and forces ``U`` (N, n_act), into ``out = (theta, thetad, thetadd, xdd, bias, JIK)``;
        ``theta_given``: start each state's IK from ``out[0][s]``. Raises :class:`pkm.IKError` or
        :class:`pkm.SingularityError` naming the state (its task coordinates from ``X``)."""
        st = self.status
        st[:] = (-1, 0, 0, 0)
        forward_range(0, Cd.shape[0], theta_given, self.chord, *self.km, Cd, Vp, Wee, self.g0, U, *out,
                      *self.passes, *self.work, self.general, *self.args, self.jik, st)
        self.chord = st[0] == 0  # the scratch's L_p⁺ belong to the last state, a neighbour of the next
        if st[0] != 0:
            raise_status(self.robot, st, self.args, X)


def raise_status(robot, status, args, X=None, when=""):
    """:class:`pkm.IKError` or :class:`pkm.SingularityError` for a failed forward-kernel status."""
    code, s, value = int(status[0]), int(status[1]), float(status[3])
    tol, max_iter, thresh = args
    limb = robot.limbs[int(status[2])].name if status[2] >= 0 else None
    where = when or (f"state {s}" + (f" (x = {fmt_x(X[s])})" if X is not None else ""))
    if code in (IK_FAILED, LOOP_FAILED):
        what = "no inverse-kinematics solution" if code == IK_FAILED else "the loops cannot be closed"
        exc = IKError(f"limb {limb!r}: {what} at {where}: residual {value:.3e} with at most {max_iter} Newton "
                      "iterations", limb=limb, residual=value, iterations=max_iter, sample=s)
        if code == IK_FAILED and X is not None and status[2] >= 0:   # the limb's joints at fault?
            exc = explained(exc, robot.limbs[int(status[2])], robot.platform_pose(X[s]), robot)
        raise exc
    if code == CROSSED:
        raise SingularityError(f"the motion crossed a singularity before {where}: row {int(value)} of J_IK (actuator "
                               f"{robot.actuator_names[int(value)]!r}) turned by more than 90° since the previous "
                               "evaluation (the limb passed a stretched or folded configuration and its IK found "
                               "the other branch)", sample=s)
    what = {SINGULAR_GY: f"limb {limb!r}: G_y", SINGULAR_LP: f"limb {limb!r}: the platform Jacobian L_p",
            SINGULAR_JIK: "the IK Jacobian J_IK", SINGULAR_A: "the task-space mass matrix M_t"}[code]
    raise SingularityError(f"{what} is ill conditioned at {where} (condition number {fmt_condition(value)} > {thresh:.1e})",
                           condition=value, threshold=thresh, sample=s)


def checked_forward_dynamics(robot, x, xd, u, wrench=None, gravity=None, *, start=None, **solver) -> ForwardDynamics:
    """:func:`forward_dynamics` after the checks of :meth:`pkm.robot.Robot.forward_dynamics`'s arguments
    (one-line InputErrors): ``x, xd`` (δ_p,) or (N, δ_p), ``u`` (n_act,) or (N, n_act), ``wrench``
    (6,) or (N, 6), all finite. With redundant actuation the internal part of ``u`` is reported
    (``.internal``)."""
    X = np.atleast_2d(_real(x, "x"))
    XD = np.atleast_2d(_real(xd, "xd"))
    U = np.atleast_2d(_real(u, "u"))
    robot._check_x(X, "x")
    robot._check_x(XD, "xd", False)
    if U.ndim != 2 or U.shape[-1] != robot.n_act or U.shape[0] not in (1, X.shape[0]) or not np.all(np.isfinite(U)):
        raise InputError(f"u must hold {robot.n_act} finite actuator forces per state ({X.shape[0]} states), got "
                         f"shape {U.shape}")
    if wrench is not None:
        w = _real(wrench, "wrench")
        if w.shape not in ((6,), (X.shape[0], 6)) or not np.all(np.isfinite(w)):
            raise InputError(f"wrench must be finite with shape (6,) or ({X.shape[0]}, 6), got {w.shape}")
        wrench = w
    gravity = None if gravity is None else _real(gravity, "gravity")
    if U.shape[0] == 1 and X.shape[0] > 1:
        U = np.repeat(U, X.shape[0], axis=0)
    return forward_dynamics(robot, X, XD, U, wrench, gravity, start=start, **solver)


def forward_dynamics(robot, x, xd, u, wrench=None, gravity=None, *, start=None, threads=None,
                     on_branch_change="warn", **solver) -> ForwardDynamics:
    """Task accelerations at states ``(x, xd)`` (N, δ_p) under actuator forces ``u`` (N, n_act) in
    ``robot.actuator_names`` order (eq. 129; see the module docstring). ``wrench``: end-effector
    wrench on the platform, body-fixed ``(m; f)`` in ``F_p``, (6,) or (N, 6). ``start``: each
    limb's tree variables to start the first state's IK from (a configuration on the branch to
    follow); ``solver``: ``tol``, ``max_iter``, ``singularity_threshold``; ``threads`` and
    ``on_branch_change`` as for :meth:`pkm.robot.Robot.inverse_dynamics`. Raises
    :class:`pkm.SingularityError` where J_IK (or a limb) is singular, naming the state."""
    X = np.atleast_2d(np.asarray(x, dtype=float))
    XD = np.atleast_2d(np.asarray(xd, dtype=float))
    U = np.atleast_2d(np.asarray(u, dtype=float))
    N, d = X.shape
    if XD.shape != X.shape or U.shape != (N, robot.n_act):
        raise InputError(f"x and xd must be (N, {d}) and u (N, {robot.n_act}), got {X.shape}, {XD.shape}, {U.shape}")
    if not (np.all(np.isfinite(XD)) and np.all(np.isfinite(U))):
        raise InputError("xd and u must be finite")
    Wee = np.zeros((N, 6))
    if wrench is not None:
        Wee[:] = np.broadcast_to(np.asarray(wrench, dtype=float), (N, 6))
    if not robot._closed:
        return _finite(robot, X, XD, U, Wee, reference_forward_dynamics(robot, X, XD, U, Wee, gravity, start, **solver))
    # the branch: the batched IK (+ inverse dynamics at zero acceleration) follows it from `start`
    theta = inverse_dynamics_batch(robot, X, XD, np.zeros_like(X), Wee, gravity, start=start, threads=threads,
                                   on_branch_change=on_branch_change, **solver)[0]
    kernel = ForwardKernel(robot, gravity, **solver)
    Cd, Vp, _ = platform_states(robot, X, XD, np.zeros_like(X))
    L, nmax, na = theta.shape[1], theta.shape[2], robot.n_act
    out = blocks((N, L, nmax), (N, L, nmax), (N, L, nmax), (N, d), (N, na), (N, na, d))
    out[0][:] = theta
    kernel.run(Cd, Vp, Wee, np.ascontiguousarray(U), out, theta_given=True, X=X)
    th, thd, thdd, xdd, bias, J = out
    task_accelerations(robot, X, XD, xdd)
    act = robot._act_limb, robot._act_var
    internal = internal_part(J, U) if robot.n_act > d else None
    return _finite(robot, X, XD, U, Wee, ForwardDynamics(
        xdd=xdd, q_act=th[:, act[0], act[1]], qd_act=thd[:, act[0], act[1]], qdd_act=thdd[:, act[0], act[1]], J_IK=J,
        theta=th, thetad=thd, bias=bias, thetadd=thdd, internal=internal))


def _finite(robot, X, XD, U, Wee, fd: ForwardDynamics) -> ForwardDynamics:
    """``fd`` if its accelerations and bias forces are finite, else a one-line :class:`pkm.PkmError`
    naming the first such state and the sizes of its inputs: forces, a wrench or velocities so large
    that ``V̇_t = A⁻¹(u − u_0)`` overflows float64 (``u = 1e308`` gave ``ẍ = −inf``)."""
    bad = ~(np.isfinite(fd.xdd).all(axis=1) & np.isfinite(fd.bias).all(axis=1)
            & np.isfinite(fd.qdd_act).all(axis=1))
    if not bad.any():
        return fd
    s = int(np.argmax(bad))
    raise PkmError(f"{robot.name}: the accelerations overflow at state {s} (x = {fmt_x(X[s])}): forces |u| up to "
                   f"{np.max(np.abs(U[s])):.3g}, wrench up to {np.max(np.abs(Wee[s])):.3g}, velocities up to "
                   f"{np.max(np.abs(XD[s])):.3g}: too large for float64")


def task_accelerations(robot, X, XD, Vtd):
    """``ẍ`` in place of the kernel's ``V̇_t`` (N, δ_p) at states ``(X, XD)`` (a no-op for a task space
    without rotations, where ``V_t = ẋ``)."""
    if robot._rot:
        for s in range(X.shape[0]):
            Vtd[s] = robot.coordinate_accelerations(X[s], XD[s], Vtd[s])
    return Vtd


def reference_forward_dynamics(robot, X, XD, U, Wee, gravity=None, start=None, **solver) -> ForwardDynamics:
    """Eq. (129) on the reference path, for a task space that is not twist-closed (``V_p = P(x) V_t``,
    :meth:`pkm.robot.Robot.velocity_distribution`, which the kernels' row selection cannot hold):
    ``V̇_t = M_t⁻¹(J_IKᵀu + P(x)ᵀW^EE − C_tV_t − W_t^grav)`` from
    :func:`pkm.algorithms.manipulator.eom` at ``V_t = P_pᵀ V_p(x, ẋ)``, then ``ẍ`` and the joint rates."""
    from pkm.algorithms.manipulator import eom

    N, d = X.shape
    L, nmax = len(robot.limbs), max(l.n for l in robot.limbs)
    xdd, bias = np.empty((N, d)), np.empty((N, robot.n_act))
    J = np.empty((N, robot.n_act, d))
    th, thd, thdd = (np.zeros((N, L, nmax)) for _ in range(3))
    solver = {k: v for k, v in solver.items() if k in ("tol", "max_iter", "singularity_threshold")}
    for s in range(N):
        e = eom(robot, X[s], robot.task_velocity(X[s], XD[s]), gravity)
        b = e.C_t_V_t + e.W_t_grav - robot.velocity_distribution(X[s]).T @ Wee[s]
        J[s], bias[s] = e.J_IK, np.linalg.lstsq(e.J_IK.T, b, rcond=None)[0]   # least-norm with redundant actuation
        xdd[s] = robot.coordinate_accelerations(X[s], XD[s], np.linalg.solve(e.M_t, e.J_IK.T @ U[s] - b))
        sol = robot.inverse_kinematics(X[s], XD[s], xdd[s], start=start, limits=False, **solver)
        start = [sol.joints[l.name][0] for l in robot.limbs]
        for k, l in enumerate(robot.limbs):
            th[s, k, :l.n], thd[s, k, :l.n], thdd[s, k, :l.n] = start[k], sol.joints_d[l.name][0], sol.joints_dd[l.name][0]
    act = robot._act_limb, robot._act_var
    return ForwardDynamics(xdd=xdd, q_act=th[:, act[0], act[1]], qd_act=thd[:, act[0], act[1]],
                           qdd_act=thdd[:, act[0], act[1]], J_IK=J, theta=th, thetad=thd, bias=bias, thetadd=thdd,
                           internal=internal_part(J, U) if robot.n_act > d else None)
