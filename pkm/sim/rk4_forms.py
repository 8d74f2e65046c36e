"""The fixed-step RK4 of the actuator form (paper 8.1.3) and of the joint form (8.1.2) entirely in
numba for forces of time alone (a constant or a table: :func:`pkm.sim.task.piecewise_cubic`), as
the task form's (:func:`pkm.sim.task.rk4_numba`), with the same results and the same errors as the
Python-stepped RK4 of :func:`pkm.sim.simulate.simulate` (issue 32.1).

**Why "run, check, else step in Python".** The Python stepping watches for singularities and
stops with a located one-line :class:`pkm.SingularityError`: the actuator form where the forward
kinematics' unit-free condition number ``kappa_II`` (:mod:`pkm.sim.conditioning`) at a step end
exceeds ``max_condition`` or det J_IK changes sign between step ends (a type-II singularity
jumped, :class:`pkm.sim.switching.ActuatorWatch`), the joint form where J_IK's condition number
at any evaluation exceeds it or a row of J_IK turns within a step
(:meth:`pkm.sim.joint.JointRhs.accept`). Its right-hand sides also hand a state the kernel gives up
on to the per-sample reference (near a singularity), which goes on or raises its own error. Rather
than reproduce each message and each fallback inside numba, a run here is taken by the kernels
first and *checked*; wherever the Python stepping could have stopped or taken another path, the
driver returns None and :func:`pkm.sim.simulate.simulate` steps the whole run in Python again, so
that the error, its located time and any fallback are exactly the Python path's:

* the actuator form (:func:`actuator_run`): the numba RK4 (:func:`pkm.sim.actuator_kernel.rk4_actuator`)
  failing anywhere (assembly, singular ``M_a``, a non-finite state), or at any step end — every
  RK4 step end is an output, evaluated anyway for the energy bookkeeping
  (:meth:`pkm.sim.outputs.Outputs.actuator`, which also gives the limbs' ``L_p``) — ``kappa_II``
  above ``(1 − MARGIN) · max_condition`` or det J_IK's sign changed from the last step end's with
  no limb within ``(1 + MARGIN)`` of :data:`pkm.sim.switching.K_SWITCH` of its own singularity
  (through zero, not through ∞: the watch's "crossed") — the Python watch checks exactly these
  states, at the same step ends (here all step ends' condition numbers at once,
  :meth:`pkm.sim.conditioning.Conditioning.many`, then read in step order with the limits);
* the joint form (:func:`joint_run`, with the projection or without it, ``project=False``): the numba RK4
  with the reference's step acceptance (:func:`pkm.kernels.joint_projection.joint_rk4_projected`) failing
  anywhere: a limb's ``G_y``/``L_p`` beyond the kernel's threshold (where the Python path's kernel
  hands over to the reference), J_IK's condition number above ``(1 − MARGIN) · max_condition`` at
  any stage or step end (the kernel's own check, :data:`~pkm.kernels.joint_projection.ILL_JIK`),
  a row of J_IK turned, a projection (``project=True``) that does not converge; or the outputs' evaluation
  (:meth:`pkm.sim.joint.JointRhs.result`) raising.

:data:`MARGIN` keeps a state whose condition number differs from the Python path's by the
runs' rounding (~1e-12 relative) on the Python side of the limit. A run that passes is the same
RK4 on the same right-hand sides (equal to the Python path's to ~1e-12); its outputs, energies
and closure come from the same bookkeeping as the Python path's. Limits (:mod:`pkm.algorithms.limits`)
are checked at the outputs in the same order as the Python stepping does (the actuator form: at
each step end after its singularity check; the joint form: after the run, in ``simulate``).
``result.info["rk4_numba"]`` tells which path ran. ``progress``: called after every chunk of
:data:`pkm.sim.task.CHUNK_STEPS` steps (each chunk one kernel call, the next going on from its
last state: the same steps).
"""
from __future__ import annotations

import numpy as np

from pkm.errors import PkmError
from pkm.kernels.joint_projection import joint_rk4_projected
from pkm.sim import task
from pkm.sim.joint_kernel import projection_work
from pkm.sim.task import piecewise_cubic

#: Runs whose condition numbers come within this fraction of ``max_condition`` are stepped in
#: Python (module docstring): the two paths' states differ by rounding, their verdicts must not.
MARGIN = 1e-6
#: False: every run steps in Python (the tests compare the two paths).
ENABLED = True


def actuator_run(robot, uf, T, x0, xd0, start, wrench, g0, solver, max_condition, limits, progress):
    """The actuator form's RK4 over the step ends ``T`` in numba under the constant or tabulated
    forces ``uf``, set up as :func:`pkm.sim.simulate._monitored` does; the fields of a
    :class:`pkm.sim.simulate.SimulationResult`, or None where the Python stepping must run instead
    (module docstring). Raises :class:`pkm.LimitError` as the Python stepping would."""
    from pkm.sim.actuator import ActuatorModel, ActuatorRhs
    from pkm.sim.actuator_kernel import rk4_actuator
    from pkm.sim.conditioning import Conditioning
    from pkm.sim.outputs import Outputs
    from pkm.sim.switching import K_SWITCH

    try:
        model = ActuatorModel(robot, wrench)
        act = ActuatorRhs(model, uf, g0)
        if act.kernel is None:
            return None
        ik = {k: v for k, v in solver.items() if k != "threads"}
        sol = robot.inverse_kinematics(x0, xd0, start=start, limits=False, **ik)
        model.thetas = [sol.joints[l.name][0].copy() for l in robot.limbs]
        model.follow(x0)
        y0 = np.concatenate([sol.q_act[0], sol.qd_act[0], [0.0, 0.0]])
        pp = piecewise_cubic(uf, T[0], T[-1])
        kernel = act.kernel
        kernel.set_start(model.thetas)
        n = len(T) - 1
        Y, theta = np.empty((n + 1, len(y0))), np.empty((n + 1,) + kernel.th.shape)
        Y[0] = y0
        for a in range(0, n, task.CHUNK_STEPS):
            b = min(a + task.CHUNK_STEPS, n)
            Y[a:b + 1], theta[a:b + 1] = rk4_actuator(kernel, T[a:b + 1], Y[a], pp)
            if progress is not None:
                progress(float(T[b]))
    except PkmError:
        return None
    if not np.all(np.isfinite(Y)):
        return None
    N = len(T)
    outputs = Outputs(robot, N, g0)
    cond = Conditioning(robot)
    limit = (1.0 - MARGIN) * max_condition
    Ls = [np.empty((N, 6, l.dof)) for l in robot.limbs]
    for s in range(N):
        model.thetas = [theta[s, j, :l.n].copy() for j, l in enumerate(robot.limbs)]
        try:
            outputs.actuator(s, T[s], Y[s], act)   # the Python stepping's evaluation there: its L_p too
        except PkmError:
            return None
        for j, L in enumerate(model.Ls):
            Ls[j][s] = L
    kappa_I, kappa_II, signs = cond.many(Ls)   # the watch's checks at every step end, in the stepping's order:
    last = None   # det J_IK's sign at the last step end
    for s in range(N):
        kI, kII, sign = kappa_I[s], kappa_II[s], signs[s]
        if not kII <= limit:
            return None
        if last and sign and sign != last and not kI >= (1.0 + MARGIN) * K_SWITCH:   # the watch's "crossed"
            return None
        last = sign
        if limits:
            outputs.check_limits(s, T[s])
    segment = {"form": "actuator", "t0": float(T[0]), "t1": float(T[-1]), "steps": n, "end": None}
    return dict(t=T, **outputs.fields(), method="RK4", form="actuator", nfev=4 * n + 1,
                info={"segments": [segment], "rk4_numba": True})


def joint_run(rhs, T, y0, uf, progress):
    """The joint form's RK4 (with projections where ``rhs.do_project``) over the step ends ``T`` in numba
    under the constant or tabulated forces ``uf``, for the right-hand side ``rhs``
    (:class:`pkm.sim.joint.JointRhs`, on its kernel) from ``y0``; the fields of a :class:`pkm.sim.simulate.SimulationResult`,
    or None where the Python stepping must run instead (module docstring; ``rhs`` is then to be
    built anew)."""
    from pkm.sim.joint import PROJECT_ITER, PROJECT_TOL

    k, model = rhs.kernel, rhs.model
    if k is None or (rhs.do_project and model.rank is None):
        return None
    robot = model.robot
    try:
        tb, uc = piecewise_cubic(uf, T[0], T[-1])
    except PkmError:
        return None
    n, ny, dp, na = len(T) - 1, len(y0), robot.task_dof, robot.n_act
    T = np.ascontiguousarray(T, dtype=float)
    Y, proj = np.empty((n + 1, ny)), np.zeros((n, 3))
    Y[0] = y0
    scratch, J0, u, st = np.zeros((6, ny)), np.zeros((na, dp)), np.zeros(na), k.status
    jw = np.zeros((na + dp, dp))
    work = projection_work(k)
    start = np.ascontiguousarray(y0, dtype=float)
    limit = (1.0 - MARGIN) * rhs.max_condition
    for a in range(0, n, task.CHUNK_STEPS):
        b = min(a + task.CHUNK_STEPS, n)
        Yc = np.empty((b - a + 1, ny))
        st[:] = (-1, 0, 0, 0)
        joint_rk4_projected(b - a, T[a:b + 1], start, tb, uc, *k.args(), *k.scratch(),
                            int(model.rank) if rhs.do_project else 0, *work,
                            PROJECT_TOL, PROJECT_ITER, J0, proj[a:b], Yc, scratch, u, st, float(limit), a > 0, jw,
                            rhs.do_project)
        if st[0] != 0:
            return None
        Y[a + 1:b + 1] = Yc[1:]
        start = scratch[5].copy()   # the projected state after the chunk's last step
        if progress is not None:
            progress(float(T[b]))
    if not np.all(np.isfinite(Y)):
        return None
    rhs.nfev += 4 * n
    if rhs.do_project:
        rhs.projections = [(float(T[s + 1]), proj[s, 0], proj[s, 1], proj[s, 2]) for s in range(n)]
    try:
        fields = rhs.result(T, Y, "RK4")
    except PkmError:
        return None
    fields["info"]["rk4_numba"] = True
    return fields
