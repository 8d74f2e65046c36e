"""Motor sizing (issue 29 item 3): the drives' motor-side load over a cycle against their ratings.

For each actuator with a drive (:mod:`pkm.description.drives`), from the inverse dynamics' motor torque
``τ_m(t)`` and speed ``ω_m(t)`` (``result.tau_motor``, ``result.speed_motor``) over the cycle:

* peak ``max_t |τ_m|`` and RMS ``sqrt(1/T ∫ τ_m² dt)`` torque, peak ``max_t |ω_m|`` and RMS speed (the
  integral by the trapezoidal rule over the samples);
* the **envelope** in the torque–speed plane, simple and stated: a continuous region ``|τ_m| ≤ τ_rated``
  (thermal: judged by the RMS torque) and a peak region ``|τ_m| ≤ τ_peak``, ``|ω_m| ≤ ω_max`` (every
  operating point must lie in it); the RMS speed is judged against ``ω_rated``. Each criterion whose rating
  the file gives is checked (a missing rating checks nothing); its margin is ``1 − value / limit``
  (0.25: 25 % to spare; negative: exceeded by that fraction), the motor's margin is the least of them and
  it passes when that is ≥ 0. Real servo curves narrow the peak torque above the rated speed (voltage
  limit); this envelope does not model that — keep a margin there;
* :func:`smallest_cycle_time`: the least cycle time of a pick-and-place (or any trajectory with a
  ``cycle_time`` or ``duration``, its samples per cycle kept) at which every motor passes, by bisection
  (the inertial torques scale ~1/T², speeds ~1/T, gravity not at all, so failing is monotone in T for a
  motion scaled in time).
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from pkm.errors import InputError, PkmError
from pkm.trajectory.base import require_resolved

__all__ = ["MotorCheck", "check_motors", "size", "smallest_cycle_time", "peak_gaps", "CRITERIA", "PEAK_GAP"]

#: :func:`size` warns where a motor's peak torque or speed may lie more than this above its largest sample.
PEAK_GAP = 0.01

#: (name, result attribute, rating attribute) of the sizing criteria, in report order.
CRITERIA = (("peak torque", "peak_torque", "peak_torque"), ("RMS torque", "rms_torque", "rated_torque"),
            ("peak speed", "peak_speed", "max_speed"), ("RMS speed", "rms_speed", "rated_speed"))


@dataclass(frozen=True)
class MotorCheck:
    """One motor over the cycle: the load (N·m, rad/s), the margins per criterion (``margins``: name →
    ``1 − value/limit``, only criteria with a rating), the least margin and pass/fail."""

    name: str
    peak_torque: float
    rms_torque: float
    peak_speed: float
    rms_speed: float
    margins: dict
    margin: float
    passed: bool

    @property
    def binding(self) -> str | None:
        """The criterion with the least margin (None without ratings)."""
        return min(self.margins, key=self.margins.get) if self.margins else None


def _rms(y, t):
    """RMS of the columns of ``y`` over ``t`` (trapezoidal; the mean of the samples for one sample)."""
    peak = np.max(np.abs(y), axis=0)
    scale = np.where(peak > 0.0, peak, 1.0)          # (y/scale)² cannot overflow
    z = (y / scale) ** 2
    if len(t) < 2 or not t[-1] > t[0]:
        return scale * np.sqrt(np.mean(z, axis=0))
    integral = np.sum(0.5 * (z[1:] + z[:-1]) * np.diff(t)[:, None], axis=0)   # trapezoidal rule
    return scale * np.sqrt(integral / (t[-1] - t[0]))


def check_motors(drives, tau_motor, speed_motor, t) -> list[MotorCheck]:
    """A :class:`MotorCheck` per actuator with a drive (``drives.has_drive``), from motor torques and speeds
    (N, n_act) at times ``t`` (N,)."""
    tau, w, t = (np.asarray(a, dtype=float) for a in (tau_motor, speed_motor, t))
    load = {"peak_torque": np.max(np.abs(tau), axis=0), "rms_torque": _rms(tau, t),
            "peak_speed": np.max(np.abs(w), axis=0), "rms_speed": _rms(w, t)}
    out = []
    for a, name in enumerate(drives.names):
        if not drives.has_drive[a]:
            continue
        margins = {}
        for crit, value, rating in CRITERIA:
            limit = float(getattr(drives, rating)[a])
            if np.isfinite(limit):
                margins[crit] = 1.0 - float(load[value][a]) / limit
        margin = min(margins.values()) if margins else float("nan")
        out.append(MotorCheck(name, *(float(load[k][a]) for k in load), margins, margin,
                              bool(margins) and margin >= 0.0))
    return out


def size(robot, traj, **options):
    """Inverse dynamics of ``robot`` along ``traj`` (a :class:`pkm.trajectory.Trajectory`) and the motor
    checks: ``(result, [MotorCheck, …])``. ``options`` go to ``robot.inverse_dynamics``. A robot without
    drives, or a trajectory whose samples do not resolve its motion (:func:`pkm.trajectory.base.require_resolved`:
    sampled at its stops alone it reported no motion and "all motors pass"), is a one-line :class:`pkm.PkmError`;
    a motor's peak that may lie more than :data:`PEAK_GAP` above its largest sample (:func:`peak_gaps`) a
    RuntimeWarning."""
    if robot.drives is None or not np.any(robot.drives.has_drive):
        raise PkmError(f"{robot.spec.source}: no actuated joint has a drive table (drive = {{ gear_ratio = …, "
                       f"rated_torque = …, peak_torque = …, max_speed = … }}): nothing to size")
    require_resolved(traj, f"{robot.name}: sizing")
    res = robot.inverse_dynamics(traj.x, traj.xd, traj.xdd, t=traj.t, **options)
    checks = check_motors(robot.drives, res.tau_motor, res.speed_motor, traj.t)
    gaps = {(n, what): g for what, y in (("torque", res.tau_motor), ("speed", res.speed_motor))
            for n, g, has in zip(robot.drives.names, peak_gaps(y), robot.drives.has_drive) if has}
    (name, what), gap = max(gaps.items(), key=lambda item: item[1])
    if gap > PEAK_GAP:
        warnings.warn(f"{robot.name}: the peak {what} of {name} falls between the samples, ~{100 * gap:.2g} % above "
                      f"the largest sample (a parabola through it and its neighbours): the sizing judges the "
                      f"samples: use a smaller dt", RuntimeWarning, stacklevel=2)
    return res, checks


def peak_gaps(y) -> np.ndarray:
    """Per column of ``y`` (N, m) (uniform samples): how far its peak ``max |y|`` may lie above the largest sample,
    relative to it — the vertex of the parabola through that sample and its two neighbours (0 at either end of
    the samples, or where they do not bend down). The Delta's pick-and-place: 5.8 % at 101 samples (the peak
    torque of limb 2 6.5 % above the sample), 0.6 % at 301 (0.56 %)."""
    y = np.asarray(y, dtype=float)
    out = np.zeros(y.shape[1])
    for j in range(y.shape[1]):
        k = int(np.argmax(np.abs(y[:, j])))
        if 0 < k < y.shape[0] - 1 and y[k, j] != 0.0:
            a, b, c = np.sign(y[k, j]) * y[k - 1:k + 2, j]
            bend = a - 2.0 * b + c
            if bend < 0.0:
                out[j] = -(a - c) ** 2 / (8.0 * bend) / b
    return out


def _span_key(spec: dict) -> str:
    if "cycle_time" in spec:
        return "cycle_time"
    if "duration" in spec:
        return "duration"
    raise InputError(f"a {spec.get('type')} trajectory has no cycle time or duration to scale")


def scaled(spec: dict, T: float) -> dict:
    """The trajectory dict ``spec`` run in time ``T`` with as many samples (a sine's period scaled alike)."""
    key = _span_key(spec)
    T0 = float(spec[key])
    intervals = max(1, round(T0 / float(spec["dt"])))
    out = dict(spec, **{key: T, "dt": T / intervals})
    if "period" in spec:
        out["period"] = float(spec["period"]) * T / T0
    return out


def passes(robot, spec: dict, names, **options) -> tuple[bool, list[MotorCheck]]:
    """Whether every motor passes along the trajectory dict ``spec`` (task coordinate ``names``)."""
    from pkm.trajectory import from_spec

    _, checks = size(robot, from_spec(spec, names), **options)
    return all(c.passed for c in checks), checks


def require_ratings(robot, what: str) -> None:
    """A one-line :class:`pkm.PkmError` when no drive of ``robot`` has a rating to judge against (``what`` follows)."""
    if robot.drives is None or not any(np.any(np.isfinite(getattr(robot.drives, r))) for _, _, r in CRITERIA):
        raise PkmError(f"{robot.spec.source}: the drives give no ratings (rated_torque, peak_torque, rated_speed, "
                       f"max_speed): {what}")


def smallest_cycle_time(robot, spec: dict, *, rel_tol: float = 1e-3, max_doublings: int = 40, **options):
    """The least cycle time (``cycle_time`` or ``duration`` of the trajectory dict ``spec``, samples per
    cycle kept) at which every motor passes, to ``rel_tol`` by bisection from ``spec``'s own: returns
    ``(T, checks at T)``. Raises :class:`pkm.PkmError` when the motors fail even at ``2^max_doublings``
    times the start (a static load beyond the rated torque, or a motor without ratings), and where a
    cycle time fails for another reason (IK, singularity) the error of that run."""
    if not (isinstance(rel_tol, float) and 1e-9 <= rel_tol < 0.5):
        raise InputError(f"rel_tol must be a float in [1e-9, 0.5), got {rel_tol!r}")
    require_ratings(robot, "no cycle time can be judged")
    names = robot.task.coordinate_names()
    T = float(spec[_span_key(spec)])
    ok, checks, said = _judged(robot, scaled(spec, T), names, options)
    lo, hi, best, told = (None, T, checks, said) if ok else (T, None, None, [])
    for _ in range(max_doublings):
        if lo is not None and hi is not None:
            break
        T = T / 2 if ok else T * 2
        ok, checks, said = _judged(robot, scaled(spec, T), names, options)
        if ok:
            hi, best, told = T, checks, said
        else:
            lo = T
    if hi is None:
        raise PkmError(f"the motors fail at every cycle time up to {T:g} s (binding: "
                       f"{', '.join(f'{c.name} {c.binding}' for c in checks if not c.passed)}): a load that does "
                       f"not fall with the cycle time (gravity, friction) exceeds a rating")
    if lo is None:
        raise PkmError(f"the motors pass even at {hi:g} s, 2^-{max_doublings} of the cycle time: no torque limit "
                       "is met (check the ratings)")
    while (hi - lo) > rel_tol * hi:
        mid = 0.5 * (lo + hi)
        ok, checks, said = _judged(robot, scaled(spec, mid), names, options)
        if ok:
            hi, best, told = mid, checks, said
        else:
            lo = mid
    for w in told:   # the warnings of the run at the cycle time found, not of every bisection step
        warnings.warn(w.message, w.category, stacklevel=2)
    return hi, best


def _judged(robot, spec, names, options):
    """:func:`passes` with its warnings caught: ``(ok, checks, warnings)``."""
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        ok, checks = passes(robot, spec, names, **options)
    return ok, checks, said
