"""The integration loops of :mod:`pkm.sim`: scipy's adaptive solvers stepped by hand (as
``solve_ivp`` does) and the classical fixed-step RK4, both with outputs at given times and a
*watch* that may end the run at an event it locates.

The watch (:mod:`pkm.sim.switching`) sees every accepted step ``(t_old, y_old) → (t, y)`` with
its dense output and answers None (go on) or an event ``(t_e, reason, y_e)``, ``t_e`` in this
step or the one before: located by root finding on the dense output (as scipy's ``events``), so
where a run switches coordinates or stops does not depend on the steps the integrator happened
to take. The loop then writes the outputs up to ``t_e`` (later ones are written again by what
follows) and returns the state there. A step whose evaluation fails (a
:class:`pkm.PkmError` from the right-hand side, e.g. an IK with no solution beyond a singularity)
is handed to the watch too (``watch.failed``): it may end the segment at the last accepted state
instead of raising.

Step collapse: near a singularity the equations grow stiff and an adaptive step shrinks; the run
stops with :class:`pkm.SingularityError` where the step has fallen below :data:`COLLAPSE` of the
largest step taken so far *and* below ``MIN_STEP`` of the span — relative to the run's own steps,
so that a run started at rest, whose first step is scipy's guess of 1e-6 s, is not taken for one
that collapsed.
"""
from __future__ import annotations

import numpy as np

from pkm.errors import PkmError, SingularityError

#: Smallest adaptive step, relative to the span, below which a collapse (:data:`COLLAPSE`) stops
#: the run.
MIN_STEP = 1e-6
#: A step below this fraction of the largest accepted step so far has collapsed.
COLLAPSE = 1e-6
#: Relative step of the finite-difference Jacobian of the implicit method (:func:`jacobian`).
JAC_STEP = 1e-6
#: Most accepted steps of one adaptive run; after :data:`PROJECT_AFTER` steps a run whose recent
#: steps would need more than that to reach its end stops at once, naming the step (a hexapod
#: launched at 1e6 m/s took steps of 4e-9 s: 2.5 million for 0.01 s, hours, never an error).
MAX_ADAPTIVE_STEPS = 100_000
PROJECT_AFTER = 1000
#: A step whose evaluation fails (an IK that cannot follow a trial step) is tried again from the last
#: accepted state with an eighth of the step, this many times, before the failure counts.
RETRIES = 4


class Segment:
    """The end of one integration: ``k`` the next output index not yet written, ``t``, ``y`` the
    state reached, ``event`` None (``t1`` reached), the watch's reason or the exception of a failed
    evaluation, ``nsteps`` the accepted steps."""

    def __init__(self, k, t, y, event=None, nsteps=0):
        self.k, self.t, self.y, self.event, self.nsteps = k, t, y, event, nsteps


def adaptive(rhs, method, t0, t1, y0, T, k, record, *, rtol, atol, max_step, span, watch=None) -> Segment:
    """Integrate ``y' = rhs(t, y)`` from ``(t0, y0)`` towards ``t1`` with scipy's ``method``; call
    ``record(k, T[k], y(T[k]))`` for every output time from ``T[k]`` on as it is reached (``T[k] ≤
    t0``: the start itself). ``rhs.accept(t, y)``, if any (the joint form's projection), sees each
    accepted state after its outputs and returns the state to go on from; ``rhs.FIRST_STEP`` (relative to
    the span), if any, replaces scipy's guess of the first step. See the module docstring for
    ``watch`` and the step collapse."""
    from scipy import integrate

    first = getattr(rhs, "FIRST_STEP", None)
    first = {} if first is None else {"first_step": min(first * span, max_step)}
    solver = None

    def finite_rhs(t, y):  # an overflowing state (x + h·ẋ with |ẋ| ~ 1e308) is reported, not evaluated
        if not (np.isfinite(t) and np.all(np.isfinite(y))):
            after = t0 if solver is None else solver.t
            raise PkmError(f"the integration diverged after t = {after:.6g} s: the state overflowed (initial "
                           f"velocities, forces or gains too large for the motion)")
        return rhs(t, y)

    while k < len(T) and T[k] <= t0:
        record(k, T[k], y0)
        k += 1
    if method == "Radau":  # implicit: its Newton iteration needs a Jacobian the IK's rounding cannot spoil
        first["jac"] = lambda t, y: jacobian(finite_rhs, t, y)
    try:
        solver = getattr(integrate, method)(finite_rhs, t0, y0, t1, rtol=rtol, atol=atol, max_step=max_step, **first)
    except PkmError as exc:
        if watch is None or not watch.failed(exc):
            raise
        return Segment(k, t0, y0, exc)
    accept = getattr(rhs, "accept", None)
    hmax, nsteps, recent, retries = 0.0, 0, [], 0
    while solver.status == "running":
        t_old, y_old = solver.t, solver.y.copy()
        try:
            message = solver.step()
        except PkmError as exc:
            if watch is None:
                raise
            watch.restore()  # the failed evaluation left its IK start elsewhere
            h = getattr(solver, "h_abs", None) or (t1 - t_old)
            if retries < RETRIES and h > MIN_STEP * span:  # a trial step too large for the IK to follow?
                retries += 1
                solver = getattr(integrate, method)(finite_rhs, t_old, y_old, t1, rtol=rtol, atol=atol,
                                                    max_step=max_step, **dict(first, first_step=h / 8.0))
                continue
            if not watch.failed(exc):
                raise
            return Segment(k, t_old, y_old, exc, nsteps)
        retries = 0
        if solver.status == "failed":
            raise PkmError(f"the integration stopped at t = {solver.t:.6g} s: {message}")
        nsteps += 1
        hmax = max(hmax, solver.t - t_old)
        recent = recent[-99:] + [solver.t - t_old]
        if nsteps >= PROJECT_AFTER and solver.status == "running" and np.mean(recent) > 1e-3 * hmax and (
                nsteps + (t1 - solver.t) / max(np.mean(recent), 1e-300) > MAX_ADAPTIVE_STEPS):  # (steps not
            # collapsing towards a singularity, which the watch and the collapse check name as such)
            raise PkmError(f"at t = {solver.t:.6g} s ({rhs.where(solver.y)}): the integration takes steps of "
                           f"{np.mean(recent):.2e} s and would need more than {MAX_ADAPTIVE_STEPS} of them to reach "
                           f"t = {t1:.6g} s: the motion is too fast for the run (initial velocities, forces or gains too "
                           f"large?); shorten the run or check the inputs")
        dense = solver.dense_output()
        event = None if watch is None else watch.check(t_old, y_old, solver.t, solver.y, dense)
        t_end = solver.t if event is None else event[0]
        while k < len(T) and T[k] <= t_end:
            record(k, T[k], dense(T[k]))
            k += 1
        if event is not None:  # (an event in the step before: its later outputs are written again)
            y_end = event[2] if event[2] is not None else (y_old if t_end == t_old else dense(t_end))
            return Segment(min(k, int(np.searchsorted(T, t_end, side="right"))), t_end, y_end, event[1], nsteps)
        if solver.status == "running" and solver.step_size < COLLAPSE * hmax and solver.step_size < MIN_STEP * span:
            raise SingularityError(f"at t = {solver.t:.6g} s ({rhs.where(solver.y)}): the integrator's step fell to "
                                   f"{solver.step_size:.2e} s (from {hmax:.2e} s): {rhs.DEGENERATE}")
        if accept is not None:  # after the outputs (the integrated states), restart from the projected one
            y = accept(solver.t, solver.y)
            if y is not solver.y:
                solver.y = y
                if solver.status == "running":
                    solver.f = rhs(solver.t, y)  # the first stage
    return Segment(k, solver.t, solver.y, None, nsteps)


def jacobian(f, t, y, rel=JAC_STEP):
    """``∂f/∂y`` by central differences with steps of ``rel · max(1, |y_i|)``: the right-hand sides
    solve an IK to a tolerance and start it from the last solution, so they are smooth only down to
    ~1e-12, where scipy's own differences (steps of ~1e-8) would see the rounding and an implicit
    method's Newton iteration fail at rest (steps collapsing to 1e-12 s)."""
    y = np.asarray(y, dtype=float)
    J = np.empty((len(y), len(y)))
    for i in range(len(y)):
        h = rel * max(1.0, abs(y[i]))
        e = np.zeros(len(y))
        e[i] = h
        J[:, i] = (np.asarray(f(t, y + e)) - np.asarray(f(t, y - e))) / (2.0 * h)
    f(t, y)  # the last evaluation at y itself: the IK's start stays where the solver is
    return J


class _Diverged(PkmError):
    """An RK4 state (a stage's or a step's) overflowed: no watch takes it for a failed evaluation."""


def _finite(y, t):
    with np.errstate(over="ignore", invalid="ignore"):
        ok = bool(np.all(np.isfinite(y)))
    if not ok:
        raise _Diverged(f"the integration diverged after t = {t:.6g} s: the state overflowed (initial "
                        f"velocities, forces or gains too large for the motion, or a step too large)")
    return y


def rk4(rhs, T, k, y, record, watch=None) -> Segment:
    """Classical RK4 over the step ends ``T`` from ``T[k]`` (state ``y``, its output written unless
    ``k == 0``), one right-hand side a
    call (any input), every step's end an output (``record`` and ``rhs.accept`` as for
    :func:`adaptive`; the next step starts from the state ``accept`` returns). ``watch``: checked
    at every step end (an event ends the segment there: a fixed step has no dense output to
    locate it in) and on a failed evaluation (the segment ends at the step's start, to be taken
    again in other coordinates)."""
    if k == 0:
        record(0, T[0], y)
    accept = getattr(rhs, "accept", None)
    n = len(T) - 1
    nsteps = 0
    while k < n:
        t, h = T[k], T[k + 1] - T[k]
        try:   # a stage's state that overflowed is reported, not evaluated (as adaptive's finite_rhs)
            k1 = rhs(t, y)
            k2 = rhs(t + 0.5 * h, _finite(y + 0.5 * h * k1, t))
            k3 = rhs(t + 0.5 * h, _finite(y + 0.5 * h * k2, t))
            k4 = rhs(t + h, _finite(y + h * k3, t))
        except _Diverged:
            raise
        except PkmError as exc:
            if watch is None or not watch.failed(exc):
                raise
            return Segment(k + 1, t, y, exc, nsteps)
        y_new = _finite(y + h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4), t)
        event = None if watch is None else watch.check(t, y, T[k + 1], y_new, None)
        if event is not None and event[0] <= t:  # the step crossed what it must not: taken again from t
            return Segment(k + 1, t, y, event[1], nsteps)
        record(k + 1, T[k + 1], y_new)
        nsteps += 1
        k += 1
        y = y_new if accept is None else accept(T[k], y_new)  # output: the integrated state
        if event is not None:
            return Segment(k + 1, T[k], y, event[1], nsteps)
    return Segment(k + 1, T[-1], y, None, nsteps)
