"""The task-coordinate form of the simulation (paper eq. 129–130): its
right-hand side on the forward-dynamics kernel, and the fixed-step RK4 run entirely inside numba.

The state is ``y = (x, ẋ, w)`` (with rotations: ``ẍ`` from the kernel's ``V̇_t``,
:func:`pkm.sim.forward.task_accelerations`), with the work ``w = ∫ (u·θ̇_act + W^EE·V_p) dt`` of the actuators
and the end-effector wrench integrated alongside
(:mod:`pkm.sim.simulate`). :class:`TaskRhs` evaluates ``y'`` for scipy's solvers or a Python RK4
(any input, controllers included) with one call of :func:`pkm.kernels.forward.forward_range` on
preallocated arrays; its IK starts from the last evaluation's joint coordinates, so the run stays
on the initial branch. :func:`rk4_numba` integrates a whole run in one call of
:func:`pkm.kernels.forward.rk4_run` when the forces are a function of time alone that numba can
evaluate (a constant or a table: a piecewise cubic, :func:`piecewise_cubic`) and the task space is
translational.
"""
from __future__ import annotations

import numpy as np

from pkm.algorithms.dynamics import dissipated_power
from pkm.algorithms.limb import SINGULARITY_THRESHOLD
from pkm.errors import IKError, PkmError, SingularityError, fmt_array
from pkm.kernels.batch import blocks
from pkm.kernels.forward import rk4_run
from pkm.kernels.inverse_dynamics import PREDICT_LIMIT
from pkm.sim.forward import ForwardKernel, raise_status, reference_forward_dynamics, task_accelerations
from pkm.sim.inputs import Constant, Table


class TaskRhs:
    """``y' = f(t, y)`` for ``y = (x, ẋ, w)`` on the forward-dynamics kernel (one state a call).

    ``u``: the forces ``u(t, x, ẋ)`` (:func:`pkm.sim.inputs.actuator_input`); ``start``: each limb's
    tree variables on the branch (None: the reference configuration); ``solver`` the IK's options;
    ``max_condition``: the largest condition number of a limb's ``L_p`` or ``G_y`` (the kernel's
    1-norm estimates, as in the inverse dynamics) at which an evaluation fails with
    :class:`pkm.SingularityError` (the lower of it and the IK's ``singularity_threshold``; the
    simulation's own, unit-free monitor is :mod:`pkm.sim.switching`). J_IK is not checked: the
    accelerations never invert it (:mod:`pkm.kernels.forward`)."""

    DEGENERATE = ("the task-space equations of motion degenerate (a limb near a singularity, where J_IK grows "
                  "without bound; form='auto' passes through)")

    def __init__(self, robot, u, wrench, gravity, start, solver, max_condition=np.inf):
        self.robot, self.u = robot, u
        solver = {k: v for k, v in solver.items() if k != "threads"}
        solver["singularity_threshold"] = min(solver.get("singularity_threshold", SINGULARITY_THRESHOLD),
                                              max_condition)
        self.start, self.solver = start, solver
        self.g0 = np.asarray(robot.spec.gravity if gravity is None else gravity, dtype=float)
        self.kernel = None  # a task space that is not twist-closed runs the reference path (_reference)
        if robot._closed:  # J_IK unchecked: the accelerations never invert it (a type-II state evaluates)
            self.kernel = ForwardKernel(robot, gravity, hold=False, **solver)
            self.kernel.set_start(start)
        self.d, self.n = robot.task_dof, robot.n_act
        self.DEGENERATE = degenerate_hint(robot)
        L, nmax = len(robot.limbs), max(l.n for l in robot.limbs)
        d, na = self.d, self.n
        self.Cd, self.Vp, self.Wee, self.U = blocks((1, 4, 4), (1, 6), (1, 6), (1, na))
        self.Wee[:] = 0.0 if wrench is None else np.asarray(wrench, dtype=float)
        self.wrench = bool(np.any(self.Wee))
        self.out = blocks((1, L, nmax), (1, L, nmax), (1, L, nmax), (1, d), (1, na), (1, na, d))
        self._pose = np.eye(4)
        self._pose[:3, :3] = robot.R0
        self._local0 = robot.R0.T @ robot.r0
        self._axes = translational_axes(robot)
        self.nfev = 0

    def where(self, y):
        return f"x = {fmt_array(y[:self.d])}"

    def _state(self, x, xd):
        if self._axes is None:  # rotational task coordinates: the robot's own conversion
            self.Cd[0] = self.robot.platform_pose(x)
            self.Vp[0] = self.robot.platform_twist(x, xd)[0]
            return
        local = self._local0.copy()
        local[self._axes] = x
        self.Cd[0] = self._pose
        self.Cd[0, :3, 3] = self.robot.R0 @ local
        self.Vp[0] = 0.0
        self.Vp[0, 3 + self._axes] = xd

    def evaluate(self, t, x, xd):
        """The forces at ``(t, x, ẋ)`` and the kernel's outputs ``(θ, θ̇, θ̈, ẍ, u_0, J_IK)`` (each with
        a leading axis of 1; overwritten by the next call)."""
        u = forces(self.u, t, x, xd, self.n)
        if not self.robot._closed:  # V_p = P(x) V_t: the reference path (one state)
            return u, self._reference(t, x, xd, u)
        self.U[0] = u
        try:
            self._state(x, xd)   # the rotation vector's domain too (taskspace.MAX_ROTATION)
            self.kernel.run(self.Cd, self.Vp, self.Wee, self.U, self.out)
            task_accelerations(self.robot, x[None], xd[None], self.out[3])
        except PkmError as exc:  # the same error, naming the time
            hint = f": {self.DEGENERATE}" if isinstance(exc, SingularityError) else ""
            exc.args = (f"at t = {t:.6g} s (x = {fmt_array(x)}): {exc}{hint}",) + exc.args[1:]
            raise exc from None
        self.nfev += 1
        return u, self.out

    def _reference(self, t, x, xd, u):
        """:func:`pkm.sim.forward.reference_forward_dynamics` at one state into ``self.out``, its IK
        started from the last evaluation's joint coordinates."""
        th = self.out[0][0]
        start = [th[k, :l.n] for k, l in enumerate(self.robot.limbs)] if self.nfev else self.start
        try:
            fd = reference_forward_dynamics(self.robot, x[None], xd[None], u[None], self.Wee, self.g0, start,
                                            **self.solver)
        except PkmError as exc:
            exc.args = (f"at t = {t:.6g} s (x = {fmt_array(x)}): {exc}",) + exc.args[1:]
            raise exc from None
        for dst, src in zip(self.out, (fd.theta, fd.thetad, fd.thetadd, fd.xdd, fd.bias, fd.J_IK)):
            dst[:] = src
        self.nfev += 1
        return self.out

    def restart(self, thetas):
        """Start the next evaluation's IK from the limbs' tree variables ``thetas`` (a list): the
        branch of a state entered from other coordinates."""
        self.start = [np.asarray(th, dtype=float) for th in thetas]
        if self.kernel is not None:
            self.kernel.set_start(self.start)
        else:
            for k, th in enumerate(self.start):
                self.out[0][0, k, :len(th)] = th

    def thetas(self, t, y):
        """Every limb's tree variables at state ``y`` (an evaluation: the IK from the last one's solution)."""
        th = self.evaluate(t, y[:self.d], y[self.d:2 * self.d])[1][0][0]
        return [th[k, :l.n].copy() for k, l in enumerate(self.robot.limbs)]

    def __call__(self, t, y):
        d = self.d
        u, (th, thd, _, xdd, _, _) = self.evaluate(t, y[:d], y[d:2 * d])
        r = self.robot
        power = float(u @ thd[0, r._act_limb, r._act_var])
        if self.wrench:  # the end-effector wrench's power W^EE · V_p (body-fixed), in the work too
            Vp = self.Vp[0] if self.kernel is not None else r.platform_twist(y[:d], y[d:2 * d])[0]
            power += float(self.Wee[0] @ Vp)
        return np.concatenate([y[d:2 * d], xdd[0], [power, dissipation(r, thd[0])]])


def forces(u, t, x, xd, n) -> np.ndarray:
    """The actuator forces ``u(t, x, xd)``, checked: ``n`` finite real numbers (a controller that returns
    complex numbers, booleans, objects or another shape is named in one line, never converted)."""
    raw = u(t, x, xd)
    try:
        value = np.asarray(raw)
    except (TypeError, ValueError):   # ragged lists
        value = np.asarray(None)
    if value.dtype.kind not in "iuf" or value.shape != (n,) or not np.all(np.isfinite(value)):
        what = (f"{value.dtype} values" if value.dtype.kind not in "iuf" else
                f"shape {value.shape}" if value.shape != (n,) else "NaN or inf")
        text = " ".join(repr(raw).split())
        raise PkmError(f"the actuator forces u(t, x, xd) at t = {t:.6g} s must be {n} finite real numbers, got "
                       f"{what}: {text[:120]}{'…' if len(text) > 120 else ''} (from {_name(u)})")
    return value.astype(float, copy=False)


def _name(u) -> str:
    """How an error names the input ``u``: its function's or class's name."""
    return getattr(u, "__qualname__", None) or type(u).__qualname__


def translational_axes(robot):
    """For a translational task space, the platform axis (0–2) of each task coordinate; else None."""
    if robot._rot:
        return None
    axes = np.array(["xyz".index(c[1]) for c in robot.task.components], dtype=np.int64)
    if tuple(3 + axes) != tuple(robot._packed().dp_static):  # V_t = P_pᵀ V_p selects the same components
        return None
    return axes


def piecewise_cubic(u, t0, t1):
    """``(tb, uc)`` of :func:`pkm.kernels.forward._input` for a constant or a :class:`Table` input
    over ``[t0, t1]``; None for any other input (a controller)."""
    if isinstance(u, Constant):
        return np.array([t0, t1]), np.concatenate([np.zeros((3, 1, len(u.value))), u.value[None, None, :]])
    if not isinstance(u, Table):
        return None
    u.require_span(t0, t1)
    if u._spline is not None:
        return np.ascontiguousarray(u._spline.x), np.ascontiguousarray(u._spline.c)
    slope = np.diff(u.U, axis=0) / np.diff(u.t)[:, None]
    zero = np.zeros_like(slope)
    return u.t.copy(), np.stack([zero, zero, slope, u.U[:-1]])


#: Steps of one numba RK4 call (:func:`rk4_numba`, :mod:`pkm.sim.batch`): between two calls a progress bar
#: advances (the Delta: ~8 ms of steps against ~2 µs of the call itself).
CHUNK_STEPS = 1000


def rk4_chunk(k, km, robot, axes, local0, pp, s_begin, s_end, T, Y, theta, rates, scratch, u):
    """Passes ``s_begin … s_end − 1`` of the numba RK4 (:func:`pkm.kernels.forward.rk4_run`, rows relative
    to ``s_begin``) on the scratch of the forward kernel ``k`` (:class:`pkm.sim.forward.ForwardKernel`)
    with the packed model ``km`` of ``robot`` (a robot of ``k``'s structure), its task axes and
    ``local0`` (:func:`translational_axes`), forces from the piecewise cubic ``pp``; status in ``k.status``."""
    tb, uc = pp
    rk4_run(s_begin, s_end, len(T) - 1, T, *km, robot.R0, local0, axes, tb, uc, k.g0, *k.passes, *k.work, k.general,
            *k.args, k.jik, robot._act_limb.astype(np.int64), robot._act_var.astype(np.int64), PREDICT_LIMIT, Y, theta,
            rates, scratch, u, k.status)


def rk4_numba(rhs: TaskRhs, T, y0, pp, progress=None):
    """The whole RK4 run over the step ends ``T`` in numba (:func:`pkm.kernels.forward.rk4_run`), in
    calls of :data:`CHUNK_STEPS` steps (the same bits as one call), forces from the piecewise cubic
    ``pp``; returns ``Y`` (len(T), 2δ_p + 1). The IK starts from ``rhs``'s branch; the joint
    coordinates at the step ends are kept in ``rhs.theta``. ``progress``: called with the time
    reached after each chunk."""
    k = rhs.kernel
    n = len(T) - 1
    L, nmax = k.th.shape
    T = np.ascontiguousarray(T, dtype=float)
    Y, theta = np.empty((n + 1, len(y0))), np.empty((n + 1, L, nmax))
    Y[0] = y0
    rates, scratch, u = np.zeros((2, L, nmax)), np.zeros((6, len(y0))), np.zeros(rhs.n)
    robot = rhs.robot
    st = k.status
    st[:] = (-1, 0, 0, 0)
    k.passes[3][0] = rhs.Wee[0]  # the end-effector wrench (pass 0's row; the unit passes' stay zero)
    for a in range(0, n + 1, CHUNK_STEPS):
        b = min(a + CHUNK_STEPS, n + 1)
        rk4_chunk(k, k.km, robot, rhs._axes, rhs._local0, pp, a, b, T, Y[a:b + 1], theta[a:b], rates, scratch, u)
        if st[0] != 0:
            break
        if progress is not None:
            progress(float(T[min(b, n)]))
    k.chord = False
    if st[0] != 0:
        s = int(st[1])
        raise rk4_error(robot, st, k.args, T[s], Y[s, :rhs.d])
    rhs.nfev += 4 * n + 1
    rhs.theta = theta
    return Y


def degenerate_hint(robot) -> str:
    """What a singularity of the task form means for ``robot`` (:attr:`TaskRhs.DEGENERATE`)."""
    if robot.n_act > robot.task_dof:  # redundant actuation: no actuator form to hand the motion to
        return TaskRhs.DEGENERATE.replace("form='auto' passes through", "redundant actuation: the actuator "
                                          "coordinates cannot carry the motion on")
    return TaskRhs.DEGENERATE


def rk4_error(robot, status, args, t, x) -> PkmError:
    """The one-line error of a failed numba RK4 (kernel ``status``, solver ``args``), its last good state
    ``x`` at time ``t``."""
    try:
        raise_status(robot, status, args, when=f"t = {t:.6g} s (x = {fmt_array(x)}, in the RK4 step from there)")
    except SingularityError as exc:
        exc.args = (f"{exc}: {degenerate_hint(robot)}",) + exc.args[1:]
        return exc
    except IKError as exc:
        exc.args = (f"{exc}: the step left the workspace (near a singularity a fixed step may jump past it; a "
                    "smaller dt or an adaptive method stops at it)",) + exc.args[1:]
        return exc


def dissipative(robot) -> bool:
    """Whether any joint of the robot has friction (:attr:`pkm.description.model.TreeModel.joint_terms`)."""
    return any(l.tree.joint_terms is not None and np.any(np.asarray(l.tree.joint_terms)[:, 1:3] != 0.0)
               for l in robot.limbs)


def dissipation(robot, thd) -> float:
    """The power the joints' friction dissipates at the limbs' tree-variable rates ``thd`` (L, n_max)
    (:func:`pkm.algorithms.dynamics.dissipated_power`; 0 without friction)."""
    out = 0.0
    for k, limb in enumerate(robot.limbs):
        if limb.tree.joint_terms is not None:
            out += dissipated_power(limb.tree, thd[k, :limb.n])
    return out

