"""Time integration of the EOM in task coordinates (paper eq. 129–130), in
joint coordinates plus task velocity (8.1.2, :mod:`pkm.sim.joint`) or in actuator coordinates
(8.1.3, :mod:`pkm.sim.actuator`).

The state is ``(x, ẋ)`` (for a translational task space ``V_t = ẋ``), extended by the actuator
work ``w = ∫ u·θ̇_act dt`` so that the energy balance ``E(t) − E(0) = w(t)`` is integrated to the
accuracy of the motion itself. Each right-hand side is one call of
:func:`pkm.sim.forward.forward_dynamics` (the batched inverse-dynamics kernel on ``δ_p + 1``
copies of the state); its IK starts from the previous evaluation's joint coordinates, so the
simulation stays on the branch of the initial state, and every loop is closed to the IK's
tolerance at every evaluation — there is no constraint drift to stabilise.

Methods: ``"RK45"``, ``"DOP853"``, ``"Radau"`` (:func:`scipy.integrate.solve_ivp`, adaptive) and
``"RK4"`` (classical fixed step ``dt``). A singular configuration (J_IK or a limb's ``L_p``
ill conditioned) stops the run with :class:`pkm.SingularityError` naming the time; so does an
IK failure (:class:`pkm.IKError`).

Health (in the result): total energy ``E = T + V`` (kinetic ``T`` body by body from the joint
rates, potential ``V`` from the bodies' centres of mass, independent of the mass matrix the
integration used), the actuator work ``w``, the energy error ``E − E(0) − w``, and each limb's
loop-closure residual.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

from pkm.algorithms.dynamics import kinetic_energy, potential_energy
from pkm.algorithms.manipulator import dynamics_trees, platform_inertia
from pkm.errors import AccuracyWarning, IKError, InputError, PkmError, SingularityError, fmt_array
from pkm.sim.forward import forward_dynamics
from pkm.sim.inputs import actuator_input, check_options, check_solver_options, check_times
from pkm.sim.task import TaskRhs, forces, piecewise_cubic, rk4_numba, translational_axes

METHODS = ("RK45", "DOP853", "Radau", "RK4")
#: Largest condition number of a limb's L_p or of J_IK at which the task-space form goes on (the
#: Delta falling from home with zero torque reaches it 6e-5 s before its arms are stretched).
MAX_CONDITION = 1e4
#: Smallest step of the adaptive methods, relative to the span: below it the run stops.
MIN_STEP = 1e-6
#: Largest energy-balance error, relative to the run's energy scale, without an AccuracyWarning.
ENERGY_TOLERANCE = 1e-3
#: Most output times, and most fixed RK4 steps, of one run (each output costs a few hundred µs of
#: energy bookkeeping, each RK4 step four right-hand sides).
MAX_OUTPUTS = 1_000_000
MAX_STEPS = 10_000_000
FORMS = ("task", "joint", "actuator")


@dataclass
class SimulationResult:
    """A simulated motion at the output times ``t`` (N,): task coordinates ``x``, velocities ``xd``
    and accelerations ``xdd`` (N, δ_p); actuator coordinates ``q_act``, rates ``qd_act`` and forces
    ``tau`` (N, n_act) in ``actuator_names`` order; every limb's tree variables ``joints[name]``
    (N, n_l); energies ``kinetic``, ``potential``, ``energy`` = T + V, the actuator ``work`` and
    ``energy_error`` = E − E(0) − work (N,); ``closure`` (N, L): each limb's largest loop-closure
    residual (the joint form: also its platform's mismatch, :mod:`pkm.sim.joint`); ``nfev``
    right-hand-side evaluations; ``info``: the joint form's projections."""

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

    def health(self) -> str:
        """One line: energy drift relative to the largest energy scale, loop closure, evaluations."""
        scale = max(np.abs(self.energy).max(), np.abs(self.kinetic).max(), np.abs(self.work).max(), 1e-300)
        return (f"{self.method}, {len(self.t)} outputs, {self.nfev} evaluations; energy error max "
                f"{np.abs(self.energy_error).max():.3e} J ({np.abs(self.energy_error).max() / scale:.2e} relative); "
                f"loop closure max {self.closure.max(initial=0.0):.2e}"
                + (f"; projection moved θ by at most {self.info['projection_max']:.2e}"
                   if "projection_max" in self.info else ""))


def simulate(robot, u, t_span, x0=None, xd0=None, *, form="task", method="DOP853", rtol=1e-9, atol=1e-12,
             dt=None, t_eval=None, start=None, wrench=None, gravity=None, max_step=None,
             max_condition=MAX_CONDITION, project=True, **solver) -> SimulationResult:
    """Integrate the robot's motion under actuator forces ``u`` over ``t_span = (t0, t1)``.

    ``u``: see :func:`pkm.sim.inputs.actuator_input` (a constant, ``"zero"``, ``"hold"``, a table,
    a CSV path or a controller ``u(t, x, xd)``). ``x0``, ``xd0``: initial task coordinates
    (default ``x_ref``) and velocity (default 0); ``start``: each limb's tree variables on the
    branch to simulate (default: the reference configuration's). ``method`` in :data:`METHODS`
    with ``rtol``/``atol`` (adaptive) or ``dt`` (``"RK4"``: the fixed step; the adaptive methods:
    the output spacing, default 1/200 of the span); ``t_eval`` overrides the output times.
    ``solver``: ``tol``, ``max_iter``, ``singularity_threshold`` of the IK. ``form``: ``"task"``
    (task coordinates and velocity, paper 8.1.1; fast: the numba forward-dynamics kernel, and RK4
    entirely in numba for constant or tabulated forces), ``"joint"`` (all joint coordinates and the
    task velocity, paper 8.1.2, :mod:`pkm.sim.joint`, with a Newton projection onto the loop and
    platform closure after each step — ``project=False`` skips it — reported in ``result.info``;
    translational task spaces) or ``"actuator"`` (actuator coordinates, paper 8.1.3,
    :mod:`pkm.sim.actuator`; passes through the limbs' IK singularities, stops at
    forward-kinematics ones; translational task spaces).
    ``max_step``: the largest step of the adaptive methods (default: the longest interval between
    outputs, so that an input that changes between two outputs is not stepped over).
    ``max_condition``: the task forms stop with :class:`pkm.SingularityError` naming the time where
    the condition number of a limb's ``L_p`` or of J_IK exceeds it (:data:`MAX_CONDITION`; the
    1-norm estimates of the inverse dynamics): near a limb's singularity the task-space EOM
    degenerate, and the integrator would only shrink its steps.
    """
    if form not in FORMS:
        raise InputError(f"form must be one of {', '.join(map(repr, FORMS))}, got {form!r}")
    if form == "actuator" and (robot._rot or wrench is not None):
        raise InputError("the actuator form supports translational task spaces without end-effector wrench")
    if not project and form != "joint":
        raise InputError("project=False is an option of form='joint' (the other forms have no constraint drift)")
    if method not in METHODS:
        raise InputError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
    robot.spec.check_actuation()
    try:
        t0, t1 = (float(v) for v in t_span)
    except (TypeError, ValueError):
        raise InputError(f"t_span must be two finite times t0 < t1, got {t_span!r}") from None
    if not (np.isfinite(t0) and np.isfinite(t1) and t1 > t0):
        raise InputError(f"t_span must be two finite times t0 < t1, got {t_span!r}")
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
    if form == "joint":
        from pkm.sim.joint import joint_rhs

        uf, n_act = actuator_input(robot, u, hold), robot.n_act
        rhs, y0 = joint_rhs(robot, lambda t, x, xd: forces(uf, t, x, xd, n_act), t0, x0, xd0, start=start,
                            wrench=wrench, gravity=gravity, max_condition=max_condition, project=project, solver=solver)
    elif form == "task":
        rhs = TaskRhs(robot, actuator_input(robot, u, hold), wrench, gravity, start, solver, float(max_condition))
        y0 = np.concatenate([x0, xd0, [0.0]])
    else:
        from pkm.sim.actuator import ActuatorModel

        sol = robot.inverse_kinematics(x0, xd0, start=start, **{k: v for k, v in solver.items() if k != "threads"})
        model = ActuatorModel(robot)
        model.thetas = [sol.joints[l.name][0].copy() for l in robot.limbs]
        rhs = _ActuatorRhs(model, actuator_input(robot, u, hold), robot.spec.gravity if gravity is None else
                           np.asarray(gravity, dtype=float))
        y0 = np.concatenate([sol.q_act[0], sol.qd_act[0], [0.0]])
    if method == "RK4":
        pp = piecewise_cubic(rhs.u, t0, t1) if form == "task" and translational_axes(robot) is not None else None
        record = _ActuatorOutputs(robot, rhs, len(T)) if form == "actuator" else None
        Y = _rk4(rhs, T, y0, record) if pp is None else rk4_numba(rhs, T, y0, pp)
    else:
        if max_step is None:  # not past an input's change between two outputs
            max_step = float(np.diff(np.concatenate([[t0], T, [t1]])).max(initial=0.0)) or np.inf
        record = _ActuatorOutputs(robot, rhs, len(T)) if form == "actuator" else None
        Y = _adaptive(rhs, method, t0, t1, y0, T, rtol, atol, max_step, record)
    if form == "actuator":
        result = record.result(T, Y, method)
    elif form == "joint":
        result = SimulationResult(**rhs.result(T, Y, method))
    else:
        result = _result(robot, rhs, T, Y, method, form, start, wrench, gravity, solver)
    _check_energy(result)
    return result


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
        if not (t1 - t0) / dt <= MAX_STEPS:
            raise InputError(f"RK4 with dt = {dt:.3g} s over {t1 - t0:.6g} s takes more than {MAX_STEPS} steps")
        if t_eval is not None:
            raise InputError("t_eval is for the adaptive methods; RK4 outputs every step")
        n = int(np.ceil((t1 - t0) / dt - 1e-9))
        T = t0 + dt * np.arange(n + 1)
        T[-1] = min(T[-1], t1)
        return T
    if t_eval is None:
        step = (t1 - t0) / 200 if dt is None else float(dt)
        if not (step > 0 and (t1 - t0) / step <= MAX_OUTPUTS):
            raise InputError(f"an output interval of {step:.3g} s over {t1 - t0:.6g} s gives more than "
                             f"{MAX_OUTPUTS} outputs")
        n = max(1, int(round((t1 - t0) / step)))
        t_eval = np.linspace(t0, t1, n + 1)
    return check_times(t_eval, t0, t1, MAX_OUTPUTS)


class _ActuatorRhs:
    """``y' = f(t, y)`` with ``y = (θ_act, θ̇_act, w)`` (paper 8.1.3, :mod:`pkm.sim.actuator`)."""

    DEGENERATE = ("the actuator-space equations of motion degenerate (M_a grows without bound: a "
                  "forward-kinematics, type-2, singularity of the mechanism)")

    def where(self, y):
        return f"q_act = {fmt_array(y[:self.d])}"

    def __init__(self, model, u, gravity):
        self.model, self.u, self.gravity = model, u, gravity
        self.d = model.robot.n_act
        self.nfev = 0

    def evaluate(self, t, q, qd):
        model = self.model
        try:
            thetas, thd, G, g, Ma, b, closure = model.state(q, qd, self.gravity)
        except IKError as exc:
            raise IKError(f"at t = {t:.6g} s: {exc}", residual=exc.residual, iterations=exc.iterations) from None
        x, xd = model.task_state(thetas, thd)
        u = forces(self.u, t, x, xd, self.d)
        try:
            qdd = np.linalg.solve(Ma, u - b)
        except np.linalg.LinAlgError:
            raise SingularityError(f"at t = {t:.6g} s: the actuator-space mass matrix M_a is singular (a "
                                   "forward-kinematics singularity of the mechanism)") from None
        self.nfev += 1
        kinetic = 0.5 * float(qd @ Ma @ qd)
        potential = sum(potential_energy(tree, thetas[k], self.gravity) for k, tree in enumerate(model.trees))
        return u, (qdd, thetas, thd, G @ qdd + g, kinetic, potential, closure)

    def __call__(self, t, y):
        d = self.d
        q, qd = y[:d], y[d:2 * d]
        u, out = self.evaluate(t, q, qd)
        return np.concatenate([qd, out[0], [float(u @ qd)]])


class _ActuatorOutputs:
    """The actuator form's outputs, evaluated as the integration reaches each output time: from the
    integration's current configuration, so that the assembly stays on its branch (assembling a
    later output from the initial configuration may find another assembly mode of the mechanism)."""

    def __init__(self, robot, rhs, N):
        self.robot, self.rhs = robot, rhs
        d, dt = robot.n_act, robot.task_dof
        self.X, self.XD, self.XDD = np.empty((N, dt)), np.empty((N, dt)), np.empty((N, dt))
        self.U, self.kin, self.pot, self.closure = np.empty((N, d)), np.empty(N), np.empty(N), np.empty((N, 1))
        self.joints = {l.name: np.empty((N, l.n)) for l in robot.limbs}

    def __call__(self, k, t, y):
        model, d = self.rhs.model, self.robot.n_act
        saved = model.thetas
        u, (qdd, thetas, thd, thdd, self.kin[k], self.pot[k], self.closure[k, 0]) = self.rhs.evaluate(t, y[:d],
                                                                                                       y[d:2 * d])
        self.rhs.nfev -= 1
        model.thetas = saved
        self.U[k] = u
        self.X[k], self.XD[k], self.XDD[k] = model.task_state(thetas, thd, thdd)
        for j, l in enumerate(self.robot.limbs):
            self.joints[l.name][k] = thetas[j]

    def result(self, T, Y, method) -> SimulationResult:
        d = self.robot.n_act
        E = self.kin + self.pot
        W = Y[:, 2 * d]
        return SimulationResult(t=T, x=self.X, xd=self.XD, xdd=self.XDD, q_act=Y[:, :d], qd_act=Y[:, d:2 * d],
                                tau=self.U, joints=self.joints, kinetic=self.kin, potential=self.pot, energy=E, work=W,
                                energy_error=E - E[0] - W, closure=self.closure,
                                actuator_names=list(self.robot.actuator_names), method=method, form="actuator",
                                nfev=self.rhs.nfev)


def _adaptive(rhs, method, t0, t1, y0, T, rtol, atol, max_step, record=None):
    """scipy's adaptive solver stepped by hand (as ``solve_ivp`` does), outputs at ``T`` from each
    step's dense output; a step size that collapses below ``MIN_STEP · (t1 − t0)`` stops the run
    (near a singularity the task-space EOM grow stiff long before J_IK's condition number grows:
    every row of J_IK grows alike when the Delta's three arms stretch together). ``record(k, T[k],
    Y[k])``, if given, is called as each output is reached. An ``rhs`` with an ``accept(t, y)`` (the
    joint form, :mod:`pkm.sim.joint`: checks and projection) sees each accepted state after the
    step's outputs; the solver goes on from the state it returns. Its ``FIRST_STEP`` (relative to
    the span), if any, replaces scipy's guess of the first step."""
    from scipy import integrate

    first = getattr(rhs, "FIRST_STEP", None)
    first = {} if first is None else {"first_step": min(first * (t1 - t0), max_step)}
    solver = None

    def finite_rhs(t, y):   # an overflowing state (x + h·ẋ with |ẋ| ~ 1e308) is reported, not evaluated
        if not (np.isfinite(t) and np.all(np.isfinite(y))):
            after = t0 if solver is None else solver.t
            raise PkmError(f"the integration diverged after t = {after:.6g} s: the state overflowed (initial "
                           f"velocities, forces or gains too large for the motion)")
        return rhs(t, y)

    solver = getattr(integrate, method)(finite_rhs, t0, y0, t1, rtol=rtol, atol=atol, max_step=max_step, **first)
    accept = getattr(rhs, "accept", None)
    Y = np.empty((len(T), len(y0)))
    k = 0
    while k < len(T) and T[k] <= t0:
        Y[k] = y0
        if record is not None:
            record(k, T[k], Y[k])
        k += 1
    while solver.status == "running":
        message = solver.step()
        if solver.status == "failed":
            raise PkmError(f"the integration stopped at t = {solver.t:.6g} s: {message}")
        if solver.t_old is not None and k < len(T):
            dense = None
            while k < len(T) and T[k] <= solver.t:
                dense = dense or solver.dense_output()
                Y[k] = dense(T[k])
                if record is not None:
                    record(k, T[k], Y[k])
                k += 1
        if solver.status == "running" and solver.step_size < MIN_STEP * (t1 - t0):
            raise SingularityError(f"at t = {solver.t:.6g} s ({rhs.where(solver.y)}): the integrator's step fell to "
                                   f"{solver.step_size:.2e} s: {rhs.DEGENERATE}")
        if accept is not None:  # after the outputs (the integrated states), restart from the projected one
            y = accept(solver.t, solver.y)
            if y is not solver.y:
                solver.y = y
                if solver.status == "running":
                    solver.f = rhs(solver.t, y)  # the first stage
    if k < len(T):   # every output row written, never an uninitialised one returned
        raise PkmError(f"the integration ended at t = {solver.t:.6g} s before the output time {T[k]:.6g} s")
    return Y


def _rk4(rhs, T, y0, record=None):
    """Classical RK4 over the step ends ``T``, one right-hand side a call (any input), every step's
    end an output; ``record`` and ``rhs.accept`` as for :func:`_adaptive` (the next step starts from
    the state ``accept`` returns)."""
    n = len(T) - 1
    Y = np.empty((n + 1, len(y0)))
    Y[0] = y = y0
    if record is not None:
        record(0, T[0], Y[0])
    accept = getattr(rhs, "accept", None)
    for k in range(n):
        t, h = T[k], T[k + 1] - T[k]
        k1 = rhs(t, y)
        k2 = rhs(t + 0.5 * h, y + 0.5 * h * k1)
        k3 = rhs(t + 0.5 * h, y + 0.5 * h * k2)
        k4 = rhs(t + h, y + h * k3)
        Y[k + 1] = y + h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
        if record is not None:
            record(k + 1, T[k + 1], Y[k + 1])
        y = Y[k + 1] if accept is None else accept(T[k + 1], Y[k + 1])  # output: the integrated state
    return Y


def _result(robot, rhs, T, Y, method, form, start, wrench, gravity, solver) -> SimulationResult:
    d, N = robot.task_dof, len(T)
    X, XD, W = Y[:, :d], Y[:, d:2 * d], Y[:, 2 * d]
    U = np.array([forces(rhs.u, t, x, xd, robot.n_act) for t, x, xd in zip(T, X, XD)]).reshape(N, robot.n_act)
    fd = forward_dynamics(robot, X, XD, U, wrench, gravity, start=start, **solver)
    trees = dynamics_trees(robot)
    g0 = robot.spec.gravity if gravity is None else np.asarray(gravity, dtype=float)
    p = robot.spec.body(robot.spec.platform)
    Mp = platform_inertia(robot)
    local_com = np.linalg.solve(p.frame[:3, :3], p.com - p.frame[:3, 3])
    kin, pot = np.empty(N), np.empty(N)
    closure = np.zeros((N, len(robot.limbs)))
    for s in range(N):
        Tk = Vk = 0.0
        for k, limb in enumerate(robot.limbs):
            th, thd = fd.theta[s, k, :limb.n], fd.thetad[s, k, :limb.n]
            Tk += kinetic_energy(trees[k], th, thd)
            Vk += potential_energy(trees[k], th, g0)
            closure[s, k] = float(np.max(np.abs(limb.constraint_residual(th)), initial=0.0))
        Cp = robot.platform_pose(X[s])
        Vp, _ = robot.platform_twist(X[s], XD[s])
        kin[s] = Tk + 0.5 * Vp @ Mp @ Vp
        pot[s] = Vk - p.mass * g0 @ (Cp[:3, :3] @ local_com + Cp[:3, 3])
    E = kin + pot
    return SimulationResult(t=T, x=X, xd=XD, xdd=fd.xdd, q_act=fd.q_act, qd_act=fd.qd_act, tau=U,
                            joints={l.name: fd.theta[:, k, :l.n].copy() for k, l in enumerate(robot.limbs)},
                            kinetic=kin, potential=pot, energy=E,
                            work=W, energy_error=E - E[0] - W, closure=closure,
                            actuator_names=list(robot.actuator_names), method=method, form=form, nfev=rhs.nfev)
