"""Many simulations at once (issue 32.2): :func:`simulate_batch`, behind :meth:`pkm.robot.Robot.simulate_batch`.

Each member of a batch is the task form's fixed-step RK4 (paper eq. 129–130, ``V_t = ẋ``) entirely in
numba, :func:`pkm.kernels.forward.rk4_run` — the run ``robot.simulate(u, t_span, x0, xd0,
method="RK4", form="task", dt=dt)`` takes, to the same bits (the same kernel calls on the same
inputs) — with its own initial state, its own forces (a constant or a table: a piecewise cubic,
:func:`pkm.sim.task.piecewise_cubic`) and its own robot (payload or parameter variations: robots
of one structure, e.g. ``Robot(spec.with_payload(m))``; a Monte Carlo of a pick-and-place under
model error).

**Cores.** The members are shared out to ``threads`` Python threads that take the next member as
they finish one; ``rk4_run`` releases the GIL, so the threads run on separate cores, each on its
own scratch (a :class:`pkm.sim.forward.ForwardKernel`). (A numba ``prange`` over the members,
``benchmarks/bench_batch_sim.py --prange``, runs the kernel at the same speed but needs a compile of
its own with ``parallel=True``, 17 s on first use, and the kernel's scratch stacked per numba thread;
the thread pool reuses the compiled, cached kernel, and its extra ~11 % is the members' health.)
**Lanes** (the default where :mod:`pkm.sim.batch_lanes` applies: limbs with a constant H or general ones, e.g. the 3R[2US]): ``W`` members
per call in SIMD lanes, the calls on the threads; ``lanes=False`` (or ``PKM_BATCH_LANES=0``): one per call.

**Bounded memory.** A member runs in chunks of :data:`pkm.sim.task.CHUNK_STEPS` steps into its
thread's buffers; what is kept is decimated: every ``every``-th step and the last (``t``),
with ``x``, ``ẋ``, the actuator positions and rates, the actuator work ``w``, and the health
there: the energy error ``E − E(0) − w`` (``E = T + V`` body by body from the joint rates, as
:class:`pkm.sim.outputs.Energy`, independent of the mass matrix the integration used) and the
largest loop-closure residual. Memory: ``B × len(t) × (2 δ_p + 2 n_act + 3)`` floats plus
the threads' buffers, whatever the number of steps.

**Health per member.** ``status``: ``"ok"``, ``"ik-failure"`` (a stage's IK failed: the member left
the workspace), ``"singular"`` (a limb's ``L_p``/``G_y`` above ``max_condition``, ``M_t`` singular,
or a singularity crossed), ``"limit"`` (a joint beyond the robot file's limits at an output),
``"nonfinite"`` (a state overflowed) or ``"inaccurate"`` (its energy balance off by more than
:data:`pkm.sim.simulate.ENERGY_TOLERANCE` of its energy scale, where :meth:`pkm.robot.Robot.simulate` warns: the steps
too large for the motion; a member at ``dt`` = 0.02 s had 65 % of its energy wrong and said "ok"); ``t_fail`` the time of the last good state (NaN when ok) and
``message`` the one-line error :meth:`pkm.robot.Robot.simulate` raises for that run. A failing member's
outputs after its failure are NaN (a ``"limit"`` or ``"inaccurate"`` member keeps them: the motion as integrated,
not valid past ``t_fail``) and its status says so; the other members are untouched. An
``"ok"`` member never holds a NaN.
"""
from __future__ import annotations

import os
import sys
import threading
from dataclasses import dataclass, field

import numpy as np

from pkm.algorithms.limb import SINGULARITY_THRESHOLD
from pkm.algorithms.limits import check_limits
from pkm.description.taskspace import _real
from pkm.errors import IKError, InputError, LimitError, PkmError, fmt_array
from pkm.kernels.batch import blocks, platform_states
from pkm.kernels.forward import CROSSED, SINGULAR_A
from pkm.kernels.inverse_dynamics import IK_FAILED, LOOP_FAILED
from pkm.kernels.state_outputs import energies_closure, forest
from pkm.sim import task as _task
from pkm.sim.forward import ForwardKernel, forward_dynamics
from pkm.sim.inputs import Constant, Table, actuator_input, check_solver_options, check_span
from pkm.sim.outputs import Energy, energy_status
from pkm.sim.payload import with_payload
from pkm.sim.simulate import ENERGY_TOLERANCE
from pkm.sim.task import dissipative, piecewise_cubic, rk4_chunk, rk4_error, translational_axes

STATUS = ("ok", "ik-failure", "singular", "limit", "nonfinite", "inaccurate")
#: Most memory [bytes] of a batch's kept outputs (as :data:`pkm.workspace.MAX_BYTES` for a map).
MAX_BYTES = 2_000_000_000


@dataclass
class BatchResult:
    """The members' motions at the kept output times ``t`` (K,): ``x``, ``xd`` (B, K, δ_p), ``q_act``,
    ``qd_act`` (B, K, n_act), the actuator ``work`` (B, K), ``energy_error`` = E − E(0) − work (B, K),
    ``closure`` (B, K): the largest loop-closure residual of any limb; per member ``status`` (B,)
    (:data:`STATUS`), ``t_fail`` (B,) the time of the last good state of a failed member (NaN when
    ok), ``message`` (B,) its one-line error ('' when ok); ``steps`` per member, ``threads`` used.
    A failed member's rows after its failure are NaN (a ``"limit"`` member's are kept, not valid past ``t_fail``)."""

    t: np.ndarray
    x: np.ndarray
    xd: np.ndarray
    q_act: np.ndarray
    qd_act: np.ndarray
    work: np.ndarray
    energy_error: np.ndarray
    closure: np.ndarray
    status: np.ndarray
    t_fail: np.ndarray
    message: list
    steps: int
    threads: int
    actuator_names: list = field(default_factory=list)
    #: (B,) each member's energy scale: the largest of |E|, its kinetic energy and |work| over its outputs.
    energy_scale: np.ndarray | None = None

    @property
    def ok(self) -> np.ndarray:
        """(B,) bool: the members that ran to the end."""
        return self.status == "ok"

    def health(self) -> str:
        """One line: members ok and failed (by status), largest energy error and closure of the ok ones."""
        counts = ", ".join(f"{int(np.sum(self.status == s))} {s}" for s in STATUS[1:] if np.any(self.status == s))
        ok = self.ok
        err = np.abs(self.energy_error[ok]).max(initial=0.0)
        clo = self.closure[ok].max(initial=0.0)
        return (f"RK4 batch: {len(self.status)} members ({int(ok.sum())} ok{', ' + counts if counts else ''}), "
                f"{self.steps} steps each on {self.threads} threads; energy error max {err:.3e} J, loop closure "
                f"max {clo:.2e} (ok members)")


def simulate_batch(robot, u, t_span, x0=None, xd0=None, *, dt, robots=None, payloads=None, every=1, start=None,
                   gravity=None, threads=None, progress=None, limits=True, max_condition=None, lanes=None,
                   **solver) -> BatchResult:
    """Simulate ``B`` members at once (module docstring): the task form's RK4 with step ``dt`` over
    ``t_span = (t0, t1)``, each member's state, forces and robot from

    * ``u``: the forces of every member (a constant: a number or (n_act,) array, ``"zero"``,
      ``"hold"`` (each member's own holding forces at its ``x0``), a :class:`pkm.sim.inputs.Table` or
      a torque CSV), or one per member: a list of those, or a (B, n_act) array of constants;
    * ``x0``, ``xd0``: (δ_p,) for every member or (B, δ_p) (defaults ``x_ref`` and rest);
    * ``robots``: None (``robot`` for every member) or B robots of ``robot``'s structure (limbs,
      joints, actuators; masses, inertias and lengths may differ), e.g. payload variations;
    * ``payloads``: None or B masses [kg] (a parameter array), each a point mass at the platform
      frame's origin added to its member's robot (``spec.with_payload``, as ``pkm … --payload``; only
      the platform's inertia changes, so a member costs no robot of its own).

    ``B`` is the common length of the per-member arguments (each 1 or B, else a one-line
    :class:`pkm.InputError`). ``every``: keep every ``every``-th step (and the last); ``start``:
    each limb's tree variables on the branch (default each robot's reference configuration);
    ``gravity``: None (each member under its own robot's ``spec.gravity``) or 3 numbers for every
    member; ``threads``: Python threads (default: the usable cores); ``progress``: None (a bar on stderr
    when it is a terminal), True/False, or a callable ``progress(done, total)`` of member steps;
    ``limits``: a joint beyond its limits at a kept output fails that member (``"limit"``);
    ``max_condition``: as :func:`pkm.sim.simulate.simulate` (default its ``MAX_CONDITION``);
    ``lanes``: None (default: ``W`` members per call in SIMD lanes where :mod:`pkm.sim.batch_lanes` applies,
    ``PKM_BATCH_LANES=0`` off), False (every member on the scalar kernel), True or a width 2, 4, 8;
    ``solver``: ``tol``, ``max_iter``, ``singularity_threshold`` of the IK."""
    from pkm.sim.simulate import MAX_CONDITION, _output_times

    unknown = [k for k in solver if k not in ("tol", "max_iter", "singularity_threshold")]
    if unknown:
        raise InputError(f"simulate_batch: unknown keyword {unknown[0]!r} (accepted: dt, robots, payloads, every, start, gravity, "
                         "threads, progress, limits, max_condition, lanes, tol, max_iter, singularity_threshold)")
    check_solver_options("task", solver, simulate_batch)
    if gravity is not None:
        g = _real(gravity, "gravity")
        if g.shape != (3,) or not np.all(np.isfinite(g)):
            raise InputError(f"gravity must be None or 3 finite numbers, got shape {g.shape}")
        gravity = g
    solver = {k: v for k, v in solver.items() if k != "threads"}
    max_condition = MAX_CONDITION if max_condition is None else max_condition
    if isinstance(max_condition, bool) or not isinstance(max_condition, (int, float, np.number)) \
            or not max_condition >= 1:
        raise InputError(f"max_condition must be a number >= 1, got {max_condition!r}")
    robot.spec.check_actuation()
    if not (robot._closed and translational_axes(robot) is not None) or dissipative(robot):
        raise InputError(f"simulate_batch runs the task form's RK4 in numba: a translational, twist-closed task space "
                         f"without joint friction; {robot.name} needs robot.simulate")
    t0, t1 = check_span(t_span)
    T = _output_times("RK4", t0, t1, dt, None)
    n = len(T) - 1
    if isinstance(every, (bool, np.bool_)) or not isinstance(every, (int, np.integer)) or every < 1:
        raise InputError(f"every must be a whole number of steps >= 1, got {every!r}")
    every = int(min(every, n + 1))   # beyond the steps: the first and the last state (10**30 is no index)
    if not isinstance(limits, (bool, np.bool_)):
        raise InputError(f"limits must be True or False, got {limits!r}")
    members = _Members(robot, u, x0, xd0, robots, payloads, t0, t1, start, gravity, solver)
    B = members.B
    from pkm.sim.batch_lanes import LaneRunner, plan
    width, units = plan(robot, lanes, solver, members)   # lane calls (W members at most) and single members
    threads = _threads(threads, len(units))
    keep = np.unique(np.concatenate([np.arange(0, n + 1, every), [n]]))
    d, na = robot.task_dof, robot.n_act
    K = len(keep)
    need = 8.0 * B * K * (2 * d + 2 * na + 3)   # the kept outputs (module docstring, "Bounded memory")
    if need > MAX_BYTES:
        raise InputError(f"the batch keeps {B} members × {K} outputs, {need / 2 ** 30:.3g} GiB (at most "
                         f"{MAX_BYTES / 2 ** 30:.3g} GiB): keep every k-th step (every), a shorter run or fewer members a call")
    out = BatchResult(t=T[keep], x=np.full((B, K, d), np.nan), xd=np.full((B, K, d), np.nan),
                      q_act=np.full((B, K, na), np.nan), qd_act=np.full((B, K, na), np.nan),
                      work=np.full((B, K), np.nan), energy_error=np.full((B, K), np.nan),
                      closure=np.full((B, K), np.nan), status=np.array(["ok"] * B, dtype=object),
                      t_fail=np.full(B, np.nan), message=[""] * B, steps=n, threads=threads,
                      actuator_names=list(robot.actuator_names), energy_scale=np.full(B, np.nan))
    solver["singularity_threshold"] = min(solver.get("singularity_threshold", SINGULARITY_THRESHOLD),
                                          float(max_condition))
    bar = _progress(progress, B * (n + 1))
    queue = iter(units)
    lock, errors = threading.Lock(), []

    def work():
        try:
            lane, runner = _Lane(robot, gravity, solver, T, keep, members), None
            while True:
                with lock:
                    g = next(queue, None)
                if g is None:
                    return
                if len(g) == 1:
                    lane.run(g[0], out, limits, bar)
                    continue
                runner = runner or LaneRunner(robot, gravity, solver, T, keep, members, width)
                runner.run(g, out, limits, bar, lane, _NoBar())
        except BaseException as exc:   # noqa: BLE001 — re-raised in the calling thread
            errors.append(exc)

    try:
        if threads == 1:
            work()
        else:
            pool = [threading.Thread(target=work, daemon=True) for _ in range(threads)]
            for th in pool:
                th.start()
            for th in pool:
                th.join()
    finally:
        bar.close()
    if errors:
        raise errors[0]
    energy_status(out, ENERGY_TOLERANCE)
    out.status = out.status.astype(str)
    return out


class _Members:
    """The per-member inputs, checked and broadcast: ``B``; per member its robot (index into
    ``robots``), initial state ``y0`` (B, 2δ_p + 1) and piecewise cubic (index into ``tables``)."""

    def __init__(self, robot, u, x0, xd0, robots, payloads, t0, t1, start, gravity, solver):
        d = robot.task_dof
        sizes = {}
        if robots is not None:
            if not isinstance(robots, (list, tuple, np.ndarray)) or len(robots) == 0:
                raise InputError(f"robots must be a non-empty list of robots, got {type(robots).__name__}")
            for i, r in enumerate(robots):
                _same_structure(robot, r, i)
            sizes["robots"] = len(robots)
        if payloads is not None:
            masses = np.atleast_1d(_real(payloads, "payloads"))
            if masses.ndim != 1 or masses.size == 0 or not np.all(np.isfinite(masses) & (masses >= 0.0)):
                raise InputError(f"payloads must be masses >= 0 kg, one per member (B,), got shape {masses.shape}")
            sizes["payloads"] = len(masses)
        X0 = self._states(robot, x0, robot.x_ref, "x0", sizes, True)
        XD0 = self._states(robot, xd0, np.zeros(d), "xd0", sizes, False)
        per_member = _per_member(u, robot.n_act)
        if per_member is not None:
            sizes["u"] = len(per_member)
        lengths = {v for v in sizes.values() if v != 1}
        if len(lengths) > 1:
            raise InputError("the per-member arguments must have one length B (or 1): got "
                             + ", ".join(f"{k} {v}" for k, v in sizes.items()))
        self.B = B = lengths.pop() if lengths else 1
        if B == 0:
            raise InputError("a batch needs at least one member: " + ", ".join(f"{k} holds {v}" for k, v in sizes.items()))
        self.robots = list(robots) if robots is not None else [robot]
        self.robot_of = np.arange(B) if len(self.robots) == B else np.zeros(B, dtype=int)
        if payloads is not None:   # each member's robot with its payload (one variant per robot and mass)
            variants, index = {}, np.empty(B, dtype=int)
            for b in range(B):
                base = self.robots[self.robot_of[b]]
                mass = float(masses[b if len(masses) == B else 0])
                key = (id(base), mass)
                if key not in variants:
                    variants[key] = (len(variants), with_payload(base, mass))
                index[b] = variants[key][0]
            self.robots = [v for _, v in sorted(variants.values(), key=lambda v: v[0])]
            self.robot_of = index
        self.x0, self.xd0 = np.broadcast_to(X0, (B, d)).copy(), np.broadcast_to(XD0, (B, d)).copy()
        self.start = start
        for r in self.robots:
            r._check_start(start)
        inputs = per_member if per_member is not None else [u]
        self.tables, self.table_of, self.failed = [], np.zeros(B, dtype=int), {}
        cache = {}
        for b in range(B):
            ub = inputs[b if len(inputs) == B else 0]
            if isinstance(ub, str) and ub == "hold":   # each member's own holding forces
                r = self.robots[self.robot_of[b]]
                try:
                    hold = forward_dynamics(r, self.x0[b], np.zeros(d), np.zeros(r.n_act), None, gravity,
                                            start=start, **solver).bias[0]
                except PkmError as exc:   # this member cannot start (its x0 out of reach): it alone fails
                    self.failed[b] = ("ik-failure" if isinstance(exc, IKError) else "singular", str(exc))
                    continue
                key = None
                uf = Constant(hold)
            else:
                key = id(ub)
                if key in cache:
                    self.table_of[b] = cache[key]
                    continue
                uf = actuator_input(robot, ub)
            if not isinstance(uf, (Constant, Table)):
                raise InputError("simulate_batch runs constant or tabulated forces in numba (a number, an (n_act,) "
                                 "array, 'zero', 'hold', a Table or a torque CSV); a controller needs robot.simulate")
            if isinstance(uf, Table) and uf.U.shape[1] != robot.n_act:   # (the kernel would read past its columns)
                raise InputError(f"u{'' if per_member is None else f'[{b}]'}: a torque table of {uf.U.shape[1]} columns "
                                 f"for {robot.n_act} actuators ({', '.join(robot.actuator_names)})")
            self.tables.append(piecewise_cubic(uf, t0, t1))
            self.table_of[b] = len(self.tables) - 1
            if key is not None:
                cache[key] = self.table_of[b]

    @staticmethod
    def _states(robot, v, default, name, sizes, coordinates):
        if v is None:
            return default[None]
        a = np.atleast_2d(_real(v, name))
        if a.ndim != 2:
            raise InputError(f"{name} must be (δ_p,) or (B, δ_p) task coordinates, got shape {np.shape(v)}")
        robot._check_x(a, name, coordinates)
        sizes[name] = a.shape[0]
        return a


def _per_member(u, n_act):
    """The list of per-member inputs in ``u``, or None for one input shared by every member."""
    if isinstance(u, np.ndarray) and u.ndim == 2:
        return list(u)
    if isinstance(u, (list, tuple)) and len(u) and not all(isinstance(v, (int, float, np.number)) for v in u):
        if all(isinstance(v, (list, tuple, np.ndarray)) for v in u) and np.ndim(u[0]) == 1:
            return [np.asarray(v) for v in u]
        return list(u)
    return None


def _same_structure(robot, other, i):
    """A one-line InputError unless ``other`` (robots[i]) has ``robot``'s structure (the kernel's layout)."""
    if not hasattr(other, "_packed") or not hasattr(other, "spec"):
        raise InputError(f"robots[{i}] must be a robot, got {type(other).__name__}")
    a, b = robot._packed(), other._packed()
    same = (a.mi.shape == b.mi.shape and np.array_equal(a.mi, b.mi) and np.array_equal(a.lay, b.lay)
            and a.mf.shape == b.mf.shape and tuple(a.d_static) == tuple(b.d_static)
            and tuple(a.dp_static) == tuple(b.dp_static) and list(robot.actuator_names) == list(other.actuator_names)
            and other._closed and np.array_equal(translational_axes(other), translational_axes(robot))
            and not dissipative(other))
    if not same:
        raise InputError(f"robots[{i}] ({other.name}) does not have the structure of {robot.name} (limbs, joints, "
                         "actuators, task space): a batch varies parameters, not mechanisms")


def _threads(threads, B):
    if threads is None:
        try:
            threads = len(os.sched_getaffinity(0))
        except AttributeError:   # not Linux
            threads = os.cpu_count() or 1
    elif isinstance(threads, (bool, np.bool_)) or not isinstance(threads, (int, np.integer)) or threads < 1:
        raise InputError(f"threads must be a whole number >= 1, got {threads!r}")
    return int(max(1, min(threads, B)))


class _NoBar:
    def update(self, k):
        pass

    def close(self):
        pass


class _CallbackBar:
    """``fn(done, total)`` after each chunk of any thread (one at a time)."""

    def __init__(self, fn, total):
        self.fn, self.total, self.n, self.lock = fn, total, 0, threading.Lock()

    def update(self, k):
        with self.lock:
            self.n += k
            self.fn(self.n, self.total)

    def close(self):
        pass


def _progress(progress, total):
    """A bar of the member steps: tqdm on stderr (``progress`` True, or None at a terminal), a callable's, or none."""
    if callable(progress):
        return _CallbackBar(progress, total)
    if progress is not None and not isinstance(progress, (bool, np.bool_)):
        raise InputError(f"progress must be None, True, False or a callable (done, total), got {progress!r}")
    if progress is None:
        progress = bool(getattr(sys.stderr, "isatty", lambda: False)())
    if not progress:
        return _NoBar()
    from tqdm import tqdm

    bar = tqdm(total=total, unit="step", desc="simulate_batch", file=sys.stderr, dynamic_ncols=True, leave=True,
               unit_scale=True)
    locked = _CallbackBar(lambda done, _: bar.update(done - bar.n), total)
    locked.close = bar.close
    return locked


class _Lane:
    """One thread's scratch: a forward kernel, the chunk buffers, and the members it runs."""

    def __init__(self, robot, gravity, solver, T, keep, members):
        self.k = ForwardKernel(robot, gravity, hold=False, **solver)
        self.gravity = gravity   # None: each member under its own robot's gravity
        self.T, self.keep, self.m = T, keep, members
        L, nmax = self.k.th.shape
        d = robot.task_dof
        c = _task.CHUNK_STEPS
        self.Y, self.theta = np.empty((c + 1, 2 * d + 1)), np.empty((c, L, nmax))
        self.rates, self.scratch, self.u = np.zeros((2, L, nmax)), np.zeros((6, 2 * d + 1)), np.zeros(robot.n_act)
        self.energies = {}

    def run(self, b, out, limits, bar):
        """Member ``b`` into row ``b`` of ``out``."""
        m, k, T, keep = self.m, self.k, self.T, self.keep
        if b in m.failed:
            out.status[b], out.message[b] = m.failed[b]
            out.t_fail[b] = T[0]
            bar.update(len(T))
            return
        r = m.robots[m.robot_of[b]]
        pp = m.tables[m.table_of[b]]
        axes, local0 = translational_axes(r), r.R0.T @ r.r0
        d, n = r.task_dof, len(T) - 1
        self.use_gravity(r)
        k.th[:] = 0.0
        for i, th in enumerate(r._check_start(m.start)):
            k.th[i, :len(th)] = th
        self.rates[:] = 0.0
        self.scratch[:] = 0.0
        k.status[:] = (-1, 0, 0, 0)
        Y, theta = self.Y, self.theta
        Y[0, :d], Y[0, d:2 * d], Y[0, 2 * d] = m.x0[b], m.xd0[b], 0.0
        L, nmax = theta.shape[1:]
        rows, thetas = [], np.empty((len(keep), L, nmax))
        j = 0   # the next kept output
        c = _task.CHUNK_STEPS
        for a in range(0, n + 1, c):
            e = min(a + c, n + 1)
            rk4_chunk(k, r._packed(), r, axes, local0, pp, a, e, T, Y, theta, self.rates, self.scratch, self.u)
            last = int(k.status[1]) if k.status[0] != 0 else e   # the passes done (their states at T[a … last − 1])
            while j < len(keep) and keep[j] < last:
                rows.append(Y[keep[j] - a].copy())
                thetas[j] = theta[keep[j] - a]
                j += 1
            if k.status[0] != 0:
                out.status[b] = _status(int(k.status[0]))
                out.t_fail[b] = T[last]
                out.message[b] = str(rk4_error(r, k.status, k.args, T[last], Y[last - a, :d]))
                bar.update(n + 1 - a)
                break
            bar.update(e - a)
            if e <= n:
                Y[0] = Y[e - a]
        k.chord = False
        if rows:
            self._outputs(b, r, np.array(rows), thetas[:len(rows)], out, limits)

    def use_gravity(self, r):   # the kernel under member robot r's gravity (or the batch's gravity=)
        self.k.g0[:] = r.spec.gravity if self.gravity is None else self.gravity

    def _outputs(self, b, r, Yk, thetas, out, limits):
        """The kept rows of member ``b``: states, actuator coordinates and rates, energy error, closure."""
        self.use_gravity(r)
        d, K = r.task_dof, Yk.shape[0]
        X, XD, W = Yk[:, :d], Yk[:, d:2 * d], Yk[:, 2 * d]
        bad = ~np.isfinite(Yk).all(axis=1)
        if bad.any():   # an overflow: the rows from there on are not a state
            K = int(np.argmax(bad))
            out.status[b], out.t_fail[b] = "nonfinite", out.t[max(K - 1, 0)]
            out.message[b] = (f"the state overflowed after t = {out.t[max(K - 1, 0)]:.6g} s (x = "
                              f"{fmt_array(Yk[K, :d])}): too large for float64")
            X, XD, W, thetas = X[:K], XD[:K], W[:K], thetas[:K]
            if K == 0:
                return
        fk = self.k   # the joint rates at the kept states (IK from the run's own solutions)
        Cd, Vp, _ = platform_states(r, X, XD, np.zeros_like(X))
        L, nmax = thetas.shape[1:]
        res = blocks((K, L, nmax), (K, L, nmax), (K, L, nmax), (K, d), (K, r.n_act), (K, r.n_act, d))
        res[0][:] = thetas
        U = np.zeros((K, r.n_act))
        Wee = np.zeros((K, 6))
        saved = fk.km
        fk.km = r._packed()
        try:
            fk.run(Cd, Vp, Wee, U, res, theta_given=True, X=X)
        except PkmError as exc:   # a kept state the run passed (not expected): the member fails, not the batch
            out.status[b], out.t_fail[b], out.message[b] = "singular", out.t[0], f"at a kept output: {exc}"
            return
        finally:
            fk.km, fk.chord = saved, False
        th, thd = res[0], res[1]
        key = id(r)
        if key not in self.energies:   # (the Energy's g0 is the kernel's: the member's gravity)
            self.energies[key] = Energy(r, fk.g0), forest(r, nmax)
        energy, trees = self.energies[key]
        kin, pot, closure = energies_closure(trees, th, thd, fk.g0)   # the limbs' trees, all K states in numba
        kp, pp = energy.platform(Cd, Vp)
        E = (kin + kp) + (pot + pp)
        act = r._act_limb, r._act_var
        qa, qda = th[:, act[0], act[1]], thd[:, act[0], act[1]]
        if limits and out.status[b] == "ok":
            try:
                check_limits(r, [th[:, i, :l.n] for i, l in enumerate(r.limbs)], X, qda, t=out.t[:K])
            except LimitError as exc:
                out.status[b], out.t_fail[b], out.message[b] = "limit", exc.time, str(exc)
        out.x[b, :K], out.xd[b, :K], out.work[b, :K] = X, XD, W
        out.q_act[b, :K], out.qd_act[b, :K] = qa, qda
        out.energy_error[b, :K], out.closure[b, :K] = E - E[0] - W, closure
        out.energy_scale[b] = max(float(np.abs(E).max()), float(np.abs(kin + kp).max()), float(np.abs(W).max()), 1e-300)


def _status(code: int) -> str:
    """The member status of a failed kernel status code."""
    if code in (IK_FAILED, LOOP_FAILED):
        return "ik-failure"
    if code in (SINGULAR_A, CROSSED) or code > 0:
        return "singular"
    return "nonfinite"
