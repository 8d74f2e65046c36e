"""Time integration of the EOM in task coordinates (paper eq. 129–130), in
joint coordinates plus task velocity (8.1.2, :mod:`pkm.sim.joint`), in actuator coordinates
(8.1.3, :mod:`pkm.sim.actuator`), or — the default, ``form="auto"`` — in task coordinates handed
to actuator coordinates and back at located events where one set degenerates
(:mod:`pkm.sim.switching`), so that a run passes type-I and type-II singularities alike.

The state is ``(x, ẋ)`` (for a translational task space ``V_t = ẋ``), extended by the work
``w = ∫ (u·θ̇_act + W^EE·V_p) dt`` of the actuators and the end-effector wrench so that the energy balance ``E(t) − E(0) = w(t)`` is integrated to the
accuracy of the motion itself. Each right-hand side is one call of
:func:`pkm.sim.forward.forward_dynamics` (the batched inverse-dynamics kernel on ``δ_p + 1``
copies of the state); its IK starts from the previous evaluation's joint coordinates, so the
simulation stays on the branch of the initial state, and every loop is closed to the IK's
tolerance at every evaluation — there is no constraint drift to stabilise.

Methods: ``"RK45"``, ``"DOP853"``, ``"Radau"`` (scipy's adaptive solvers, stepped by
:mod:`pkm.sim.stepping`) and ``"RK4"`` (classical fixed step ``dt``). In the explicit forms a
configuration where their coordinates degenerate (unit-free condition numbers,
:mod:`pkm.sim.conditioning`) stops the run with :class:`pkm.SingularityError` naming the located
time; so does an IK failure (:class:`pkm.IKError`).

Health (in the result): total energy ``E = T + V`` (kinetic ``T`` body by body from the joint
rates, potential ``V`` from the bodies' centres of mass, independent of the mass matrix the
integration used), the work ``w`` of the actuators and the end-effector wrench, the energy error ``E − E(0) − w``, and each limb's
loop-closure residual.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

from pkm.algorithms.distribution import internal_part
from pkm.algorithms.limits import check_limits
from pkm.errors import AccuracyWarning, InputError, PkmError
from pkm.sim import rk4_forms
from pkm.sim.forward import forward_dynamics
from pkm.sim.inputs import (Constant, Table, actuator_input, check_options, check_solver_options, check_span,
                             check_times)
from pkm.sim.stepping import adaptive, rk4
from pkm.sim.task import TaskRhs, _name, dissipative, forces, piecewise_cubic, rk4_numba, translational_axes

METHODS = ("RK45", "DOP853", "Radau", "RK4")
#: Largest unit-free condition number (:mod:`pkm.sim.conditioning`) at which an explicit form goes
#: on: a limb's L_p for the task form, the forward kinematics for the actuator form.
MAX_CONDITION = 1e4
#: Largest energy-balance error, relative to the run's energy scale, without an AccuracyWarning.
ENERGY_TOLERANCE = 1e-3
#: Most output times of one run, and so most fixed RK4 steps (every step's end is an output; each
#: output costs a few hundred µs of energy bookkeeping, each RK4 step four right-hand sides).
MAX_OUTPUTS = 1_000_000
FORMS = ("auto", "task", "joint", "actuator")


@dataclass
class SimulationResult:
    """A simulated motion at the output times ``t`` (N,): task coordinates ``x``, velocities ``xd``
    and accelerations ``xdd`` (N, δ_p); actuator coordinates ``q_act``, rates ``qd_act`` and forces
    ``tau`` (N, n_act) in ``actuator_names`` order; every limb's tree variables ``joints[name]``
    (N, n_l); energies ``kinetic``, ``potential``, ``energy`` = T + V, the actuator ``work`` and
    ``energy_error`` = E − E(0) − work (N,); ``closure`` (N, L): each limb's largest loop-closure
    residual (the joint form: also its platform's mismatch, :mod:`pkm.sim.joint`); ``nfev``
    right-hand-side evaluations; ``info``: the joint form's projections; ``dissipated`` (N,): the
    energy the joints' friction dissipated since ``t0`` (joint terms, :mod:`pkm.description.model`;
    zeros without friction), so that ``energy_error = E − E(0) − work + dissipated``. Redundant actuation
    (``n_act > δ_p``): ``internal`` (N, n_act), the part of ``tau`` in the null space of ``J_IKᵀ``,
    which moves nothing (:func:`pkm.algorithms.distribution.internal_part`); None otherwise."""

    t: np.ndarray
    x: np.ndarray
    xd: np.ndarray
    xdd: np.ndarray
    q_act: np.ndarray
    qd_act: np.ndarray
    tau: np.ndarray
    joints: dict
    kinetic: np.ndarray
    potential: np.ndarray
    energy: np.ndarray
    work: np.ndarray
    energy_error: np.ndarray
    closure: np.ndarray
    actuator_names: list
    method: str
    form: str
    nfev: int
    info: dict = field(default_factory=dict)
    internal: np.ndarray | None = None
    dissipated: np.ndarray | None = None

    def health(self) -> str:
        """One line: energy drift relative to the largest energy scale, loop closure, evaluations and,
        where the coordinates changed, which carried the motion when."""
        scale = max(np.abs(self.energy).max(), np.abs(self.kinetic).max(), np.abs(self.work).max(), 1e-300)
        segments = self.info.get("segments", [])
        forms = ("; coordinates: " + ", ".join(f"{s['form']} {s['t0']:.6g}–{s['t1']:.6g} s" for s in segments)
                 if len(segments) > 1 else "")
        return (f"{self.method}, {len(self.t)} outputs, {self.nfev} evaluations; energy error max "
                f"{np.abs(self.energy_error).max():.3e} J ({np.abs(self.energy_error).max() / scale:.2e} relative); "
                f"loop closure max {self.closure.max(initial=0.0):.2e}"
                + (f"; friction dissipated {self.dissipated[-1]:.4g} J" if self.dissipated is not None
                   and self.dissipated[-1] != 0.0 else "")
                + (f"; projection moved θ by at most {self.info['projection_max']:.2e}"
                   if "projection_max" in self.info else "") + forms)


def simulate(robot, u, t_span, x0=None, xd0=None, *, form="auto", method="DOP853", rtol=1e-9, atol=1e-12,
             dt=None, t_eval=None, start=None, wrench=None, gravity=None, max_step=None,
             max_condition=MAX_CONDITION, project=True, limits=True, progress=None, **solver) -> SimulationResult:
    """Integrate the robot's motion under actuator forces ``u`` over ``t_span = (t0, t1)``.

    ``u``: see :func:`pkm.sim.inputs.actuator_input` (a constant, ``"zero"``, ``"hold"``, a table,
    a CSV path or a controller ``u(t, x, xd)``). ``x0``, ``xd0``: initial task coordinates
    (default ``x_ref``) and velocity (default 0); ``start``: each limb's tree variables on the
    branch to simulate (default: the reference configuration's). ``method`` in :data:`METHODS`
    with ``rtol``/``atol`` (adaptive) or ``dt`` (``"RK4"``: the fixed step; the adaptive methods:
    the output spacing, default 1/200 of the span); ``t_eval`` overrides the output times.
    ``solver``: ``tol``, ``max_iter``, ``singularity_threshold`` of the IK. ``form``:

    * ``"auto"`` (default): task coordinates, handed to actuator coordinates where a limb nears its
      singularity (type I) and back where the forward kinematics would degenerate (type II), at
      located events (:mod:`pkm.sim.switching`): passes through both kinds; ``result.info
      ["segments"]`` lists the coordinates of every stretch. A task space that is not twist-closed,
      and a redundantly actuated robot (whose actuator coordinates are not independent), run the
      task form alone.
    * ``"task"`` (task coordinates and velocity, paper 8.1.1; fast: the numba forward-dynamics
      kernel, and RK4 entirely in numba for constant or tabulated forces): stops at type I.
    * ``"joint"`` (all joint coordinates and the task velocity, paper 8.1.2, :mod:`pkm.sim.joint`,
      with a Newton projection onto the loop and platform closure after each step — ``project=False``
      skips it — reported in ``result.info``; translational task spaces).
    * ``"actuator"`` (actuator coordinates, paper 8.1.3, :mod:`pkm.sim.actuator`; twist-closed task
      spaces): passes through the limbs' IK singularities, stops at forward-kinematics ones.

    With ``method="RK4"`` and constant or tabulated forces the task form steps entirely in numba;
    so do the actuator and joint forms, checked against the
    Python stepping's singularity watch and stepped again in Python wherever it could stop or take
    another path, so that results and errors are the Python path's (:mod:`pkm.sim.rk4_forms`);
    ``result.info["rk4_numba"]`` says which ran. ``form="auto"`` steps in Python.

    ``max_step``: the largest step of the adaptive methods (default: the longest interval between
    outputs, so that an input that changes between two outputs is not stepped over).
    ``max_condition``: the explicit forms stop with :class:`pkm.SingularityError` naming the
    (located) time where their coordinates' unit-free condition number exceeds it — the task form
    a limb's ``L_p`` (type I), the actuator form the forward kinematics (type II),
    :mod:`pkm.sim.conditioning` — and ``"auto"`` where both coordinate sets do at once
    (:data:`MAX_CONDITION`; the numba RK4 of ``form="task"`` applies it to the kernel's 1-norm
    estimates of ``L_p`` and ``G_y``).
    ``limits`` (default True): the run stops with :class:`pkm.LimitError` naming the time at the
    first output time where a joint is beyond the robot file's limits (range, cone, actuator
    velocity; :mod:`pkm.algorithms.limits`) — no hard stop is modelled, the motion is not valid
    past it; located at the outputs (their spacing ``dt``), checked as they are reached in the
    task, actuator and auto forms and after the run in the joint form and the numba RK4.
    ``progress``: None or a callable, called with the simulated time reached as the run advances
    (a progress bar: after each chunk of the numba RK4, :data:`pkm.sim.task.CHUNK_STEPS`, else at
    every evaluation of the forces; adaptive methods may report a time again or an earlier one).
    """
    if form not in FORMS:
        raise InputError(f"form must be one of {', '.join(map(repr, FORMS))}, got {form!r}")
    if form in ("actuator", "joint") and robot.n_act > robot.task_dof:
        raise InputError(f"form={form!r} needs one actuator per task coordinate: with redundant actuation "
                         f"({robot.n_act} actuators for {robot.task_dof} task coordinates) the actuator coordinates are "
                         "not independent; use form='task' (or 'auto', which then stays in task coordinates)")
    if form == "actuator" and not robot._closed:
        raise InputError("the actuator form needs a twist-closed task space (V_p = P_p V_t)")
    if form == "joint" and dissipative(robot):
        raise InputError("the joint form does not integrate the energy friction dissipates; use form='task' or 'auto'")
    if form == "joint" and (robot._rot or wrench is not None):
        raise InputError("the joint form supports translational task spaces without end-effector wrench")
    if not project and form != "joint":
        raise InputError("project=False is an option of form='joint' (the other forms have no constraint drift)")
    if method not in METHODS:
        raise InputError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
    robot.spec.check_actuation()
    if not isinstance(limits, (bool, np.bool_)):
        raise InputError(f"limits must be True or False, got {limits!r}")
    t0, t1 = check_span(t_span)
    d = robot.task_dof
    check_solver_options(form, solver, simulate)
    check_options(rtol=rtol, atol=atol, dt=dt, max_step=max_step, max_condition=max_condition, project=project,
                  wrench=wrench, gravity=gravity)
    x0 = robot.x_ref.copy() if x0 is None else robot._one_x(x0, "x0").copy()
    xd0 = np.zeros(d) if xd0 is None else robot._one_x(xd0, "xd0", False).copy()
    hold = None
    if isinstance(u, str) and u == "hold":
        hold = forward_dynamics(robot, x0, np.zeros(d), np.zeros(robot.n_act), wrench, gravity, start=start,
                                **solver).bias[0]
    T = _output_times(method, t0, t1, dt, t_eval)
    uf = actuator_input(robot, u, hold)
    if isinstance(uf, Table):   # before integrating (an adaptive run had stopped at the table's end, after the work)
        uf.require_span(t0, t1)
    g0 = np.asarray(robot.spec.gravity if gravity is None else gravity, dtype=float)
    if max_step is None:  # not past an input's change between two outputs
        max_step = float(np.diff(np.concatenate([[t0], T, [t1]])).max(initial=0.0)) or np.inf
    if progress is not None and not callable(progress):
        raise InputError(f"progress must be None or a callable of the simulated time, got {type(progress).__name__}")
    numba = (form == "task" and method == "RK4" and robot._closed and translational_axes(robot) is not None
             and not dissipative(robot) and isinstance(uf, (Constant, Table)))
    # the actuator and joint forms' RK4 in numba, checked, else stepped in Python (pkm.sim.rk4_forms)
    fast = form in ("actuator", "joint") and method == "RK4" and rk4_forms.ENABLED and isinstance(uf, (Constant, Table))
    fields = None
    if fast and form == "actuator":
        fields = rk4_forms.actuator_run(robot, uf, T, x0, xd0, start, wrench, g0, solver, float(max_condition),
                                        limits, progress)
    if fast and form == "joint":
        rhs, y0 = _joint(robot, uf, t0, x0, xd0, start, wrench, gravity, max_condition, project, solver)
        fields = rk4_forms.joint_run(rhs, T, y0, uf, progress)
    if progress is not None and not numba:   # a Python loop: the forces' evaluations report the time
        uf = _Reporting(uf, progress)
    if fields is not None:
        result = SimulationResult(**fields)
    elif form == "joint":
        rhs, y0 = _joint(robot, uf, t0, x0, xd0, start, wrench, gravity, max_condition, project, solver)
        Y = np.empty((len(T), len(y0)))
        keep = _keeper(Y)
        if method == "RK4":
            rk4(rhs, T, 0, y0, keep)
        else:
            seg = adaptive(rhs, method, t0, t1, y0, T, 0, keep, rtol=rtol, atol=atol, max_step=max_step, span=t1 - t0)
            if seg.k < len(T):   # every output row written, never an uninitialised one returned
                raise PkmError(f"the integration ended at t = {seg.t:.6g} s before the output time {T[seg.k]:.6g} s")
        result = SimulationResult(**rhs.result(T, Y, method))
    elif form == "task" and method == "RK4" and robot._closed and translational_axes(robot) is not None:
        rhs = TaskRhs(robot, uf, wrench, gravity, start, solver, float(max_condition))
        pp = None if dissipative(robot) else piecewise_cubic(rhs.u, t0, t1)   # (numba's RK4: no friction)
        if pp is None:
            y0 = np.concatenate([x0, xd0, [0.0, 0.0]])
            Y = np.empty((len(T), len(y0)))
            rk4(rhs, T, 0, y0, _keeper(Y))
        else:
            Y = rk4_numba(rhs, T, np.concatenate([x0, xd0, [0.0]]), pp, progress)
        result = _result(robot, rhs, T, Y, method, form, start, wrench, gravity, solver)
    else:
        result = _monitored(robot, uf, form, method, T, t1, x0, xd0, start, wrench, gravity, g0, solver, rtol, atol,
                            max_step, float(max_condition), limits)
    if method == "RK4":   # which stepping ran (pkm.sim.rk4_forms)
        result.info.setdefault("rk4_numba", numba)
    if limits:
        check_limits(robot, [result.joints[l.name] for l in robot.limbs], result.x, result.qd_act, t=result.t)
    _check_energy(result)
    if robot.n_act > d:  # redundant actuation: the part of u that moves nothing (pkm.algorithms.distribution)
        J = robot.inverse_kinematics(result.x, result.xd, start=[result.joints[l.name][0] for l in robot.limbs],
                                     limits=False).J_IK
        result.internal = internal_part(J, result.tau)
    return result


def _joint(robot, uf, t0, x0, xd0, start, wrench, gravity, max_condition, project, solver):
    """The joint form's right-hand side and initial state (:func:`pkm.sim.joint.joint_rhs`) under the forces ``uf``."""
    from pkm.sim.joint import joint_rhs

    n_act = robot.n_act
    return joint_rhs(robot, lambda t, x, xd: forces(uf, t, x, xd, n_act), t0, x0, xd0, start=start, wrench=wrench,
                     gravity=gravity, max_condition=max_condition, project=project, solver=solver)


class _Reporting:
    """The forces ``u(t, x, xd)`` that report ``t`` to ``progress`` first (named as ``u`` in errors)."""

    def __init__(self, u, progress):
        self.u, self.progress = u, progress
        self.__qualname__ = _name(u)

    def __call__(self, t, x, xd):
        self.progress(float(t))
        return self.u(t, x, xd)


def _monitored(robot, uf, form, method, T, t1, x0, xd0, start, wrench, gravity, g0, solver, rtol, atol, max_step,
               max_condition, limits=True) -> SimulationResult:
    """The task, actuator and auto forms under the singularity monitor (:mod:`pkm.sim.switching`),
    outputs recorded as the integration reaches them (:mod:`pkm.sim.outputs`)."""
    from pkm.sim.actuator import ActuatorModel, ActuatorRhs
    from pkm.sim.outputs import Outputs
    from pkm.sim.switching import run

    outputs = Outputs(robot, len(T), g0)
    forms, nfev = {}, []
    if form in ("task", "auto"):
        task = TaskRhs(robot, uf, wrench, gravity, start, solver)
        forms["task"] = (task, lambda k, t, y: (outputs.task(k, t, y, task), limits and outputs.check_limits(k, t)))
        nfev.append(task)
    if form == "actuator" or (form == "auto" and robot._closed and robot.n_act == robot.task_dof):
        model = ActuatorModel(robot, wrench)
        act = ActuatorRhs(model, uf, g0)
        forms["actuator"] = (act, lambda k, t, y: (outputs.actuator(k, t, y, act),
                                                   limits and outputs.check_limits(k, t)))
        nfev.append(act)
    name, y0 = "task", np.concatenate([x0, xd0, [0.0, 0.0]])
    if form == "actuator":
        ik = {k: v for k, v in solver.items() if k != "threads"}
        sol = robot.inverse_kinematics(x0, xd0, start=start, limits=False, **ik)   # outputs are checked
        model.thetas = [sol.joints[l.name][0].copy() for l in robot.limbs]
        model.follow(x0)
        name, y0 = "actuator", np.concatenate([sol.q_act[0], sol.qd_act[0], [0.0, 0.0]])
    segments = []
    k = run(robot, T, method, forms, name, y0, t1=t1, rtol=rtol, atol=atol, max_step=max_step,
            max_condition=max_condition, mode="auto" if len(forms) == 2 else "stop", segments=segments)
    if k < len(T):   # every output row written, never an uninitialised one returned
        raise PkmError(f"the integration ended at t = {segments[-1]['t1']:.6g} s before the output time {T[k]:.6g} s")
    return SimulationResult(t=T, **outputs.fields(), method=method, form=form, nfev=sum(f.nfev for f in nfev),
                            info={"segments": segments})


def _keeper(Y):
    """A recorder ``(k, t, y)`` of the integration loops that keeps the state ``y`` as row ``k`` of ``Y``."""
    return lambda k, t, y: Y.__setitem__(k, y)


def _check_energy(result):
    """:class:`pkm.AccuracyWarning` when the energy balance of ``result`` is off by more than
    :data:`ENERGY_TOLERANCE` of its energy scale."""
    err = np.abs(result.energy_error)
    scale = max(np.abs(result.energy).max(), np.abs(result.kinetic).max(), np.abs(result.work).max(), 1e-300)
    if err.max() > ENERGY_TOLERANCE * scale:
        k = int(np.argmax(err > ENERGY_TOLERANCE * scale))
        warnings.warn(f"the energy balance fails from t = {result.t[k]:.6g} s: E − E(0) − W reaches "
                      f"{err.max():.3e} J ({err.max() / scale:.1e} of the energy scale {scale:.3e} J) with "
                      f"{result.method}: the steps are too large for this motion (near a singularity?); the "
                      "result is not to be trusted there", AccuracyWarning, stacklevel=4)


def _output_times(method, t0, t1, dt, t_eval):
    """The checked output times: an adaptive method's (``t_eval``, or every ``dt``, default 1/200
    of the span) or RK4's step ends (every ``dt``, the last step shortened to end at ``t1``)."""
    if method == "RK4":
        if isinstance(dt, (bool, str)) or not isinstance(dt, (int, float, np.integer, np.floating)) or not 0 < dt < np.inf:
            raise InputError(f"method 'RK4' needs a finite time step dt > 0, got {dt!r}")
        if not (t1 - t0) / dt <= MAX_OUTPUTS:
            raise InputError(f"RK4 with dt = {dt:.3g} s over {t1 - t0:.6g} s takes {(t1 - t0) / dt:.3g} steps, more than "
                             f"{MAX_OUTPUTS} (every step is an output): a larger dt, a shorter run or an adaptive method")
        if t_eval is not None:
            raise InputError("t_eval is for the adaptive methods; RK4 outputs every step")
        n = int(np.ceil((t1 - t0) / dt - 1e-9))
        T = t0 + dt * np.arange(n + 1)
        T[-1] = min(T[-1], t1)
        steps = np.diff(T)
        if not (np.all(steps > 0) and np.all(np.abs(steps[:-1] - dt) <= 1e-6 * dt)):   # lost in t0's rounding
            raise InputError(f"dt = {dt:.3g} s is lost against the times' size ({t0:.6g} … {t1:.6g} s, where float64 "
                             f"resolves {np.spacing(max(abs(t0), abs(t1))):.3g} s): start the run near t = 0")
        return T
    if t_eval is None:
        step = (t1 - t0) / 200 if dt is None else float(dt)
        if not (step > 0 and (t1 - t0) / step <= MAX_OUTPUTS):
            raise InputError(f"an output interval of {step:.3g} s over {t1 - t0:.6g} s gives more than "
                             f"{MAX_OUTPUTS} outputs")
        n = max(1, int(round((t1 - t0) / step)))
        t_eval = np.linspace(t0, t1, n + 1)
    return check_times(t_eval, t0, t1, MAX_OUTPUTS)


def _result(robot, rhs, T, Y, method, form, start, wrench, gravity, solver) -> SimulationResult:
    """The task form's outputs after a whole run (the numba RK4): one batched forward dynamics over
    the step ends for the joint coordinates, energies body by body and the loops' closure in one call
    (:meth:`pkm.sim.outputs.Energy.states`)."""
    from pkm.sim.outputs import Energy

    d, N = robot.task_dof, len(T)
    X, XD, W = Y[:, :d], Y[:, d:2 * d], Y[:, 2 * d]
    lost = Y[:, 2 * d + 1] if Y.shape[1] > 2 * d + 1 else np.zeros(N)   # numba's RK4: no friction
    U = np.array([forces(rhs.u, t, x, xd, robot.n_act) for t, x, xd in zip(T, X, XD)]).reshape(N, robot.n_act)
    fd = forward_dynamics(robot, X, XD, U, wrench, gravity, start=start, **solver)
    energy = Energy(robot, robot.spec.gravity if gravity is None else gravity)
    kin, pot, closure = energy.states(fd.theta, fd.thetad, X, XD)
    E = kin + pot
    return SimulationResult(t=T, x=X, xd=XD, xdd=fd.xdd, q_act=fd.q_act, qd_act=fd.qd_act, tau=U,
                            joints={l.name: fd.theta[:, k, :l.n].copy() for k, l in enumerate(robot.limbs)},
                            kinetic=kin, potential=pot, energy=E,
                            work=W, energy_error=E - E[0] - W + lost, closure=closure, dissipated=lost,
                            actuator_names=list(robot.actuator_names), method=method, form=form, nfev=rhs.nfev)
