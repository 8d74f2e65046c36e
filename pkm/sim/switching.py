"""Simulation through singularities by changing coordinates (``form="auto"``), and the
singularity monitor of the explicit task and actuator forms.

A PKM's two sets of minimal coordinates degenerate in different places (paper Sec. 3.4, 8.1;
:mod:`pkm.sim.conditioning`): the task coordinates where a limb's ``L_p`` loses rank (type I, e.g.
the Delta's arms stretched: there ``x(t)`` turns back while the arms swing on, so the IK must
change its branch), the actuator coordinates where the forward kinematics does (type II: the
passive joints can move with the actuators held; there ``θ_act(t)`` may turn back while the
platform moves on). Neither is a singularity of the mechanism's motion itself, which is smooth in
both. ``form="auto"`` integrates in task coordinates (the fast numba kernel, regular at type II
since it never inverts J_IK: :mod:`pkm.kernels.forward`) and hands the motion to actuator
coordinates (paper 8.1.3, :mod:`pkm.sim.actuator`, regular at type I) where the task coordinates
lose their grip, and back:

* task → actuator where ``kappa_I > K_SWITCH`` and ``kappa_I > RATIO · kappa_II``;
* actuator → task where ``kappa_II > RATIO · kappa_I`` or ``kappa_I < K_BACK``.

Each switch is an event located on the integrator's dense output by root finding (scipy's
``brentq``; :mod:`pkm.sim.stepping`), not a step that happened to land there, so runs with
other tolerances, steps or a perturbed start switch at the same configuration; the state is
carried over exactly (the kernel's joint coordinates become the assembly's start and back: the
branch is kept), and so is the actuator work. An evaluation that fails in one form (an IK with
no solution past a fold, a step that jumped a singularity) ends the segment at the last accepted
state, which the other form takes over. A step of the actuator form across which det J_IK
changed sign through zero (type II jumped) is taken again in task coordinates. Where both
coordinate sets degenerate at once (``kappa`` of the current form above ``max_condition`` with no
better form to go to) the run stops with :class:`pkm.SingularityError` naming the time.

The explicit forms keep their coordinates: ``"task"`` stops where ``kappa_I`` reaches
``max_condition``, ``"actuator"`` where ``kappa_II`` does or a type-II singularity is crossed;
both name the located time.
"""
from __future__ import annotations

import numpy as np

from pkm.errors import IKError, PkmError, SingularityError, fmt_condition
from pkm.sim.conditioning import Conditioning
from pkm.sim.stepping import adaptive, rk4

#: Task → actuator coordinates where a limb's (unit-free) ``L_p`` condition number passes this
#: (~5× its value at the Delta's home, and an arm ~4° from stretched) …
K_SWITCH = 50.0
#: … and back where it falls below this (hysteresis: the two thresholds and :data:`RATIO`
#: keep a run from switching to and fro).
K_BACK = 25.0
#: A form is left for the other only where the other is this much better conditioned.
RATIO = 2.0


class _Watch:
    """Base of the watches: ``g(t, y) > 0`` is the event; :meth:`check` locates it."""

    def __init__(self, rhs, cond, mode, limit):
        self.rhs, self.cond, self.mode, self.limit = rhs, cond, mode, float(limit)
        self.kappa = (np.nan, np.nan)
        self.sign = None  # det J_IK's sign at the last accepted state
        self.g_last = None  # g there
        self.thetas = None  # and the joint coordinates there (the branch)
        self.prev = None  # the last step's samples of g: (t, g, its dense output)

    def restore(self):
        """Start the form's next IK (assembly) from the last accepted state's joint coordinates (after
        a failed evaluation left another start behind)."""
        if self.thetas is not None:
            self.rhs.restart(self.thetas)

    #: Whether the watch reads det J_IK's sign (:meth:`crossed`); else it is not formed (None).
    SIGN = False

    def _evaluate(self, t, y, sign=True):
        """``(kappa_I, kappa_II, sign det J_IK)`` at state ``y`` (one evaluation of the form); the sign None
        unless ``sign`` and the watch reads it (:data:`SIGN`: the pseudo-inverses it takes cost as much as
        the condition numbers)."""
        Ls = self.jacobians(t, y)
        k = self.cond.kappa(Ls)
        return k[0], k[1], self.cond.jik_sign(Ls) if sign and self.SIGN else None

    def g(self, t, y):
        try:
            kI, kII, _ = self._evaluate(t, y, sign=False)
        except PkmError:
            return np.inf
        self.kappa = (kI, kII)
        return self.value(kI, kII)

    def start(self, t, y):
        """The state a segment starts from: remembers its det J_IK sign and ``g``; returns ``g``."""
        kI, kII, self.sign = self._evaluate(t, y)
        self.thetas = self.current()
        self.kappa = (kI, kII)
        self.g_last = self.value(kI, kII)
        return self.g_last

    def check(self, t_old, y_old, t, y, dense):
        """After the accepted step ``(t_old, y_old) → (t, y)``: None, or ``(t_e, reason, y_e)`` (``y_e``
        None: the loop takes it from this step's dense output or ``y_old``). With a dense output
        the event is located by root finding; ``g`` is also sampled at each step's midpoint, and a
        local maximum of the samples (a singularity passed between them, where ``g`` peaks) is
        searched for its maximum over the neighbouring samples — this step's and the last one's
        dense output — so that a run whose step ends straddle a narrow singular passage does not
        miss it, and every run finds the same event."""
        kI, kII, sign = self._evaluate(t, y)
        self.thetas = self.current()
        g_new = self.value(kI, kII)
        crossed = self.crossed(sign, kI)
        self.sign = sign
        if crossed:
            return t_old, "crossed", None
        if dense is None:
            self.kappa = (kI, kII)
            return (t, "condition", None) if g_new > 0.0 else None
        from scipy.optimize import brentq, minimize_scalar

        prev = self.prev if self.prev is not None and self.prev[-1][0] == t_old else None
        samples = (prev[:-1] if prev else []) + [(t_old, self.g_last, dense)]
        t_mid = 0.5 * (t_old + t)
        samples += [(t_mid, self.g(t_mid, dense(t_mid)), dense), (t, g_new, dense)]
        self.prev = samples[-3:]
        self.kappa, self.g_last = (kI, kII), g_new

        def at(s):  # the dense output of the step holding s
            return next(d for ts, _, d in reversed(samples) if ts < s or ts == samples[0][0])(s)

        g = lambda s: self.g(s, at(s))  # noqa: E731
        lo, hi = None, None
        if g_new > 0.0:
            lo, hi = samples[-3][0], t  # the crossing is in this step (its midpoint or start below 0)
        else:
            for a, b, c in zip(samples, samples[1:], samples[2:]):  # a local maximum: search it
                if b[1] > a[1] and b[1] >= c[1] and np.isfinite(b[1]):
                    peak = minimize_scalar(lambda s: -g(s), bounds=(a[0], c[0]), method="bounded",
                                           options={"xatol": 1e-9 * (c[0] - a[0]) + 1e-15})
                    if -peak.fun > 0.0:
                        lo, hi = a[0], peak.x
                        break
        if lo is None:
            self.kappa = (kI, kII)
            return None
        if not g(lo) <= 0.0:
            return lo, "condition", at(lo)
        t_e = brentq(g, lo, hi, xtol=1e-9 * max(hi - lo, 1e-300) + 1e-15, rtol=1e-12)
        y_e = at(t_e)
        self.g(t_e, y_e)  # the kappas at the event, for messages
        return t_e, "condition", y_e

    def crossed(self, sign, kI) -> bool:
        return False

    def failed(self, exc) -> bool:
        """Whether a failed evaluation ends the segment (auto) rather than the run."""
        return self.mode == "auto" and isinstance(exc, (SingularityError, IKError))


class TaskWatch(_Watch):
    """The task form's watch: ``kappa_I`` (a limb's ``L_p``, type I)."""

    def jacobians(self, t, y):
        self._thetas = self.rhs.thetas(t, y)
        return self.cond.limb_jacobians(self._thetas)

    def current(self):
        return self._thetas

    def value(self, kI, kII):
        if self.mode == "auto":
            return min(np.log(kI / K_SWITCH), np.log(kI / (RATIO * kII)))
        return np.log(kI / self.limit)


class ActuatorWatch(_Watch):
    """The actuator form's watch: ``kappa_II`` (the forward kinematics, type II), and det J_IK's
    sign between accepted steps (a type-II singularity jumped over)."""

    SIGN = True

    def jacobians(self, t, y):
        self.rhs.thetas(t, y)
        return self.rhs.model.Ls

    def current(self):
        return [th.copy() for th in self.rhs.model.thetas]

    def value(self, kI, kII):
        if self.mode == "auto":
            return max(np.log(kII / (RATIO * kI)), np.log(K_BACK / kI))
        return np.log(kII / self.limit)

    def crossed(self, sign, kI) -> bool:
        # through zero, not through ∞: no limb near its own (type-I) singularity at this end
        return bool(self.sign and sign and sign != self.sign and kI < K_SWITCH)


def run(robot, T, method, forms, name, y0, *, t1, rtol, atol, max_step, max_condition, mode, segments):
    """Integrate over the output times ``T`` from ``y0``, a state of the form ``name``, in the
    ``forms`` given (``{"task": (TaskRhs, recorder), "actuator": (ActuatorRhs, recorder)}``, a
    recorder ``(k, t, y)`` writing output ``k``). ``mode="auto"`` switches between the forms,
    ``"stop"`` runs ``name`` alone and stops at its singularity. Appends one dict per segment to
    ``segments`` (form, start and end time, accepted steps, why it ended)."""
    cond = Conditioning(robot)
    span = t1 - T[0]
    t, k, y = T[0], 0, y0
    watches = {"task": TaskWatch, "actuator": ActuatorWatch}
    if mode == "auto" and name == "task" and "actuator" in forms:  # start in the better-conditioned coordinates
        if TaskWatch(forms["task"][0], cond, mode, max_condition).start(t, y) > 0.0:
            name, y = "actuator", _to_actuator(forms["task"][0], forms["actuator"][0], t, y)
    last_switch = None
    while True:
        fn, out = forms[name]
        watch = watches[name](fn, cond, mode, max_condition)
        if watch.start(t, y) > 0.0 and mode != "auto":
            _stop(name, t, watch, fn, y)
        if method == "RK4":
            seg = rk4(fn, T, max(k - 1, 0), y, out, watch)
        else:
            seg = adaptive(fn, method, t, t1, y, T, k, out, rtol=rtol, atol=atol, max_step=max_step, span=span,
                           watch=watch)
        segments.append({"form": name, "t0": float(t), "t1": float(seg.t), "steps": seg.nsteps,
                         "end": None if seg.event is None else _reason(seg.event, watch)})
        k, t, y = seg.k, seg.t, seg.y
        if seg.event is None:
            return k
        if isinstance(seg.event, PkmError):
            watch.restore()  # the failed evaluation left its IK start elsewhere
        other = "actuator" if name == "task" else "task"
        if mode != "auto":
            _stop(name, t, watch, fn, y, seg.event)
        if other not in forms or last_switch == t:
            if isinstance(seg.event, PkmError) and max(watch.kappa) < K_SWITCH:  # not a singularity: the cause
                raise seg.event
            _stop(name, t, watch, fn, y, seg.event if isinstance(seg.event, PkmError) else None, both=True)
        last_switch = t
        if name == "task":
            y = _to_actuator(forms["task"][0], forms["actuator"][0], t, y)
        else:
            y = _to_task(forms["task"][0], forms["actuator"][0], t, y)
        name = other


def _reason(event, watch):
    if isinstance(event, PkmError):
        return f"failed: {event}"
    return f"{event} (kappa_I {watch.kappa[0]:.3g}, kappa_II {watch.kappa[1]:.3g})"


def _to_actuator(task, act, t, y):
    """The actuator state of a task state: the kernel's joint coordinates (the branch) become the
    assembly's start."""
    d = task.d
    task.evaluate(t, y[:d], y[d:2 * d])
    th, thd = task.out[0][0], task.out[1][0]
    robot = task.robot
    model = act.model
    model.thetas = [th[k, :l.n].copy() for k, l in enumerate(robot.limbs)]
    model.follow(y[:d])
    qa, qda = th[robot._act_limb, robot._act_var], thd[robot._act_limb, robot._act_var]
    return np.concatenate([qa, qda, y[-2:]])   # the work and the dissipated energy carry over


def _to_task(task, act, t, y):
    """The task state of an actuator state: its assembly's joint coordinates become the IK start."""
    d = act.d
    model = act.model
    thetas, thd = model.state(y[:d], y[d:2 * d], act.gravity)[:2]
    x, xd = model.task_state(thetas, thd)
    task.restart(thetas)
    return np.concatenate([x, xd, y[-2:]])


def _stop(name, t, watch, rhs, y, event=None, both=False):
    """The :class:`pkm.SingularityError` that ends a run in ``name`` coordinates at ``t`` (or the
    failed evaluation's own error)."""
    if isinstance(event, PkmError) and not both:
        raise event
    kI, kII = watch.kappa
    where = rhs.where(y)
    if both:
        cause = f" ({event})" if isinstance(event, PkmError) else ""
        raise SingularityError(f"at t = {t:.6g} s ({where}): both the task coordinates (limb condition "
                               f"{fmt_condition(kI)}) and the actuator coordinates (forward-kinematics condition "
                               f"{fmt_condition(kII)}) degenerate here (a type-I and a type-II singularity at once, "
                               f"or the mechanism's own): no coordinates carry the motion on{cause}")
    if event == "crossed":
        raise SingularityError(f"before t = {t:.6g} s ({where}): the motion crossed a forward-kinematics (type-II) "
                               "singularity, where the actuator coordinates cannot follow it (det J_IK changed sign "
                               "through zero); form='auto' passes through")
    value, what = (kI, "a limb's platform Jacobian L_p") if name == "task" else (kII, "the forward kinematics")
    raise SingularityError(f"at t = {t:.6g} s ({where}): {what} is ill conditioned (condition number "
                           f"{fmt_condition(value)} > {watch.limit:.1e}, unit-free): {rhs.DEGENERATE}",
                           condition=value, threshold=watch.limit)
