"""The result of :func:`pkm.time_optimal`: the trajectory, the cycle time, the active limits, the limit curve;
its CSV (:meth:`CycleResult.write_csv`, the format ``pkm inverse-dynamics --trajectory file`` reads)."""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from pkm.errors import BranchWarning, PkmError
from pkm.trajectory.base import Trajectory

__all__ = ["PieceProfile", "CycleResult"]

#: A limit counts as active where the motion uses it to within this fraction.
ACTIVE = 0.01
#: The result is refused where the recomputed motor torques or speeds exceed a limit by more than this.
OVERSHOOT = 1e-3
#: Where inside each step (fractions of its Δs) the use of the limits is measured besides its two ends.
BETWEEN = tuple(k / 8 for k in range(1, 8))
#: ... and in the steps where an actuator turns back (its gear's side and Coulomb friction flip there).
TURN = tuple(k / 32 for k in range(1, 32))
#: A warning where the use inside a step exceeds a limit by more than this (a grid too coarse for the path).
BETWEEN_WARN = 1e-2
#: An error where it exceeds one by more than this: not the discretisation's error (≤ 12 % at 48 points on the
#: Delta's and the IRSBot-2's pick-and-place routes) but something the samples do not see — the Delta's line at
#: z = −0.75 through a limb singularity used 189 % of a torque limit between the samples at 300 points, where
#: none of them came close enough for the condition check (at most other grid sizes a branch error).
BETWEEN_FAIL = 0.5


@dataclass(frozen=True, eq=False)
class PieceProfile:
    """One rest-to-rest path of the route: samples ``s`` (global) / ``s_local``, ``t``, ``sd``, ``sdd``, ``x``,
    ``xd``, ``xdd``; the grid ``grid_s`` with the maximum velocity curve ``mvc`` (ṡ_max of the static
    limits) and the controllable sets' upper end ``controllable``; outer ``iterations``; ``inserted``:
    indices of the switching samples added between grid points; ``between``: how ``s̈`` runs between samples,
    ``"constant"`` over each step (TOPP-RA: ``ṡ²`` linear in ``s``, the step's ``s̈`` the sample's at its start)
    or ``"linear"`` in ``s`` (the jerk-limited programme)."""

    path: object
    s: np.ndarray
    s_local: np.ndarray
    t: np.ndarray
    sd: np.ndarray
    sdd: np.ndarray
    x: np.ndarray
    xd: np.ndarray
    xdd: np.ndarray
    grid_s: np.ndarray
    mvc: np.ndarray
    controllable: np.ndarray
    iterations: int
    inserted: tuple
    between: str = "constant"


@dataclass(frozen=True, eq=False)
class CycleResult:
    """``trajectory`` (:class:`pkm.trajectory.Trajectory`: t, x, ẋ, ẍ at the samples); ``s``, ``sd``, ``sdd``
    (N,) the path parameter (continued across the route's paths) and its rates; ``cycle_time`` [s];
    ``picks_per_minute`` (60 · picks / cycle_time for a pick-and-place route — one pick per full cycle
    up–across–down–up–back–down — else None); ``tau_motor``, ``speed_motor`` (N, n_act) recomputed by
    ``robot.inverse_dynamics`` along the trajectory (motor side with drives, else joint side),
    ``torque_limit``, ``speed_limit`` (n_act,), ``ratio`` (N,) the largest use of any limit at each sample
    and ``active`` (N,) its name (``"torque <actuator> upper"``/``"lower"``, ``"speed <actuator>"``,
    ``"velocity <joint>"``); ``pieces`` (:class:`PieceProfile`) with the limit curves; ``jerk_limit`` the jerk limit
    of a jerk-limited result (else None) and ``jerk_ratio`` the largest sample jerk (:meth:`jerk`) over it.

    Between the samples the motion is each piece's (:attr:`PieceProfile.between`). ``end_ratio`` (N−1,) and
    ``end_active`` are the largest use and its limit at the END of each step (the state arriving at the next
    sample with the step's ``s̈``; for constant ``s̈`` it differs from the next sample's own): the limits hold
    at both ends of every step (refused beyond ``1 + OVERSHOOT``) and one is active at either end (bang–bang).
    ``between_ratio`` is the largest use inside the steps (at the fractions :data:`BETWEEN`, :data:`TURN` where an
    actuator turns back), at
    ``between_t``: the discretisation's own error, which shrinks as ``(Δs)²`` (a RuntimeWarning above
    ``1 + BETWEEN_WARN``: use more points)."""

    robot_name: str
    actuator_names: tuple
    side: str
    trajectory: Trajectory
    s: np.ndarray
    sd: np.ndarray
    sdd: np.ndarray
    cycle_time: float
    picks_per_minute: float | None
    tau_motor: np.ndarray
    speed_motor: np.ndarray
    torque_limit: np.ndarray
    speed_limit: np.ndarray
    ratio: np.ndarray
    active: tuple
    pieces: tuple
    end_ratio: np.ndarray | None = None
    end_active: tuple = ()
    between_ratio: float = float("nan")
    between_t: float = float("nan")
    jerk_limit: float | None = None
    jerk_ratio: float | None = None

    @property
    def t(self) -> np.ndarray:
        return self.trajectory.t

    @classmethod
    def assemble(cls, robot, route, pieces, limits, gains) -> "CycleResult":
        keep = [slice(None, -1)] * (len(pieces) - 1) + [slice(None)]   # a join is one sample (the next path's start)
        cat = {k: np.concatenate([getattr(p, k)[sl] for p, sl in zip(pieces, keep)])
               for k in ("t", "s", "sd", "sdd", "x", "xd", "xdd")}
        names = tuple(robot.task.coordinate_names())
        traj = Trajectory(t=cat["t"], x=cat["x"], xd=cat["xd"], xdd=cat["xdd"], names=names)
        res = robot.inverse_dynamics(traj.x, traj.xd, traj.xdd, t=traj.t, limits=False)   # checked below
        tau, speed = _sides(robot, limits, res)
        ratio, best, labels = _use(robot, tau, speed, res, limits)
        if float(np.max(ratio)) > 1.0 + OVERSHOOT:
            k = int(np.argmax(ratio))
            raise PkmError(f"{robot.name}: the time-optimal motion exceeds {labels[best[k]]} by "
                           f"{100 * (ratio[k] - 1):.2g} % at t = {traj.t[k]:.4g} s: use more points")
        end, end_at, between, between_at, t_between = _inside(robot, pieces, limits, np.asarray(res.qd_act), traj.t)
        if float(np.max(end)) > 1.0 + OVERSHOOT:
            k = int(np.argmax(end))
            raise PkmError(f"{robot.name}: the time-optimal motion exceeds {labels[end_at[k]]} by "
                           f"{100 * (end[k] - 1):.2g} % at the end of the step to t = {traj.t[k + 1]:.4g} s: "
                           f"use more points")
        if not between <= 1.0 + BETWEEN_FAIL:
            raise PkmError(f"{robot.name}: between the samples the time-optimal motion uses {labels[between_at]} up "
                           f"to {100 * between:.4g} % near t = {t_between:.4g} s: the samples miss what the path does "
                           f"there (a singularity between them?); try more points, or another path")
        if not between <= 1.0 + BETWEEN_WARN:
            warnings.warn(f"{robot.name}: between the samples the time-optimal motion uses {labels[between_at]} up "
                          f"to {100 * between:.4g} % near t = {t_between:.4g} s (the samples' steps too long for the "
                          f"path's dynamics there): use more points", RuntimeWarning, stacklevel=3)
        T = float(traj.t[-1])
        ppm = 60.0 * route.picks / T if route.picks else None
        return cls(robot_name=robot.name, actuator_names=tuple(robot.actuator_names), side=limits.side,
                   trajectory=traj, s=cat["s"], sd=cat["sd"], sdd=cat["sdd"], cycle_time=T, picks_per_minute=ppm,
                   tau_motor=tau, speed_motor=speed, torque_limit=limits.torque, speed_limit=limits.speed,
                   ratio=ratio, active=tuple(labels[b] for b in best), pieces=tuple(pieces), end_ratio=end,
                   end_active=tuple(labels[b] for b in end_at), between_ratio=between, between_t=t_between)

    def jerk(self) -> np.ndarray:
        """The trajectory's finite-difference jerk ``(ẍ_{k+1} − ẍ_k) / (t_{k+1} − t_k)`` (N−1, d) per task
        coordinate: what :func:`pkm.time_optimal`'s ``jerk`` limits."""
        tr = self.trajectory
        return np.diff(tr.xdd, axis=0) / np.diff(tr.t)[:, None]

    def active_counts(self) -> dict:
        """How many samples each limit is the active one at (sorted, most first)."""
        out: dict = {}
        for a in self.active:
            out[a] = out.get(a, 0) + 1
        return dict(sorted(out.items(), key=lambda kv: -kv[1]))

    def write_csv(self, path) -> None:
        """The trajectory as ``t, x…, xd…, xdd…`` (what ``pkm inverse-dynamics --trajectory file --file`` reads,
        non-uniform time steps as they are) and the path parameter's columns ``s, sd, sdd`` (read as one more
        coordinate where no names are given). ``pkm cycle`` writes it through :func:`pkm.cli.output.outputs`
        (a temporary file renamed: nothing half-written)."""
        tr = self.trajectory
        cols = ["t", *tr.names, *(n + "d" for n in tr.names), *(n + "dd" for n in tr.names), "s", "sd", "sdd"]
        data = np.column_stack([tr.t, tr.x, tr.xd, tr.xdd, self.s, self.sd, self.sdd])
        with open(path, "w", encoding="utf-8") as f:
            f.write(",".join(cols) + "\n")
            for row in data:
                f.write(",".join(repr(float(v)) for v in row) + "\n")


def _inside(robot, pieces, limits, qd, t):
    """The use of the limits inside the steps and at their ends: at each step's end ``(N−1,)`` and its limit's
    column; the largest inside, its column and time. Inside: at :data:`BETWEEN`, and in the steps where an actuator
    turns back (``qd`` the samples' actuator rates) at :data:`TURN` and then at the turn itself (:func:`_at_turns`:
    the gear's side flips there and Coulomb friction within ``coulomb_speed`` of it, a spike narrower than a
    32nd of a step on a coarse grid)."""
    turn = np.any(qd[:-1] * qd[1:] < 0.0, axis=1)
    first = np.cumsum([0] + [p.s.size - 1 for p in pieces])
    f = BETWEEN + (1.0,)
    steps = [np.flatnonzero(turn[a:b]) for a, b in zip(first[:-1], first[1:])]
    parts = [_step_states(p, f) for p in pieces] + [_step_states(p, TURN, k) for p, k in zip(pieces, steps)]
    out = _checked_states(robot, parts)
    use, col, _ = _use(robot, *_sides(robot, limits, out), out, limits)
    n = (first[-1]) * len(f)
    reg, rcol = use[:n].reshape(-1, len(f)), col[:n].reshape(-1, len(f))
    k, j = np.unravel_index(int(np.argmax(reg[:, :-1])), reg[:, :-1].shape)
    best = (float(reg[k, j]), int(rcol[k, j]), float(t[k] + BETWEEN[j] * (t[k + 1] - t[k])))
    if np.any(turn):
        q = np.asarray(out.qd_act)[n:].reshape(-1, len(TURN), qd.shape[1])
        where, fr = _at_turns(robot, q, qd, np.flatnonzero(turn))
        parts = [_step_states(p, fr[(where >= a) & (where < b)], where[(where >= a) & (where < b)] - a)
                 for p, a, b in zip(pieces, first[:-1], first[1:])]
        at = _checked_states(robot, parts)
        u2, c2, _ = _use(robot, *_sides(robot, limits, at), at, limits)
        u2, c2 = u2.reshape(fr.shape), c2.reshape(fr.shape)
        i, j = np.unravel_index(int(np.argmax(u2)), u2.shape)
        if u2[i, j] > best[0]:
            k = int(where[i])
            best = (float(u2[i, j]), int(c2[i, j]), float(t[k] + fr[i, j] * (t[k + 1] - t[k])))
    return reg[:, -1], rcol[:, -1], *best


def _checked_states(robot, parts):
    """Inverse dynamics of the states ``parts`` (lists of (x, ẋ, ẍ) concatenated): the steps' insides, then the turns
    — not one walk along the path, so the IK's continuation from one to the next (which keeps the branch) is not
    reported (a BranchWarning naming these internal samples); a branch change is an error."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BranchWarning)
        return robot.inverse_dynamics(*(np.concatenate(v) for v in zip(*parts)), limits=False,
                                      on_branch_change="raise")


def _at_turns(robot, q, qd, steps):
    """Where in the steps ``steps`` (their rates ``q`` at :data:`TURN`, ``qd`` at the samples) each actuator that
    turns back has the rates ``±{0, ¼, ½, 1, 2, 4} v_c`` on either side of the turn (``v_c`` its
    ``coulomb_speed``; the fractions interpolated linearly between the rates the step's points have there): the
    step of each (M,) and the fractions (M, 12)."""
    vc = np.full(qd.shape[1], 1e-3) if robot.drives is None else np.asarray(robot.drives.coulomb_speed, dtype=float)
    grid = np.array((0.0,) + TURN + (1.0,))
    levels = np.array([1e-9, 0.25, 0.5, 1.0, 2.0, 4.0])
    where, out = [], []
    for i, k in enumerate(steps):
        rates = np.vstack([qd[k], q[i], qd[k + 1]])
        for a in np.flatnonzero(qd[k] * qd[k + 1] < 0.0):
            r = rates[:, a]
            c = int(np.flatnonzero(r[:-1] * r[1:] <= 0.0)[0])     # the first bracket of the turn
            r0, r1 = r[c], r[c + 1]
            targets = np.concatenate([np.sign(r0) * levels * vc[a], np.sign(r1) * levels * vc[a]])
            f = grid[c] + (targets - r0) / (r1 - r0) * (grid[c + 1] - grid[c]) if r1 != r0 else np.full(12, grid[c])
            where.append(k)
            out.append(np.clip(f, 0.0, 1.0))
    return np.array(where, dtype=int), np.array(out).reshape(-1, 12)


def _step_states(p: PieceProfile, fractions, steps=None):
    """``(x, ẋ, ẍ)`` of piece ``p`` at ``fractions`` (F,) of each step (or of the steps ``steps``; or (steps, F) per
    step), in order; the motion
    between samples as ``p.between``: ``s̈`` constant (``ṡ² = x_k + 2 u_k σ``) or linear in ``s`` (``ṡ² = x_k +
    2 u_k σ + (u_{k+1} − u_k) σ²/Δ``) over the step's ``σ ∈ [0, Δ]``; at a fraction 1 the next sample's ``ṡ²``."""
    s, x, u = p.s_local, p.sd ** 2, p.sdd
    k = np.arange(s.size - 1) if steps is None else np.asarray(steps, dtype=int)
    f = np.array(fractions, dtype=float)   # (F,) for every step, or (steps, F)
    sig = (s[k + 1] - s[k])[:, None] * f
    du = (u[k + 1] - u[k])[:, None] if p.between == "linear" else np.zeros((k.size, 1))
    us = u[k, None] + du * f
    xs = np.where(f == 1.0, x[k + 1, None], x[k, None] + 2.0 * u[k, None] * sig + du * sig * f)
    X, D1, D2 = p.path.evaluate((s[k, None] + sig).ravel())
    xs, us = np.maximum(xs, 0.0).ravel(), us.ravel()
    return X, D1 * np.sqrt(xs)[:, None], D1 * us[:, None] + D2 * xs[:, None]


def _sides(robot, limits, res):
    """The torques and speeds the limits bound: motor side with drives, else joint side."""
    if robot.drives is not None and limits.side == "motor":
        return np.asarray(res.tau_motor), np.asarray(res.speed_motor)
    return np.asarray(res.tau), np.asarray(res.qd_act)


def _use(robot, tau, speed, res, limits):
    """The largest use of any limit per row, its column and the columns' labels."""
    ratios, labels = _ratios(robot, tau, speed, np.asarray(res.qd_act), limits)
    best = np.argmax(ratios, axis=1)
    return ratios[np.arange(len(best)), best], best, labels


def _ratios(robot, tau, speed, qd, limits):
    cols, labels = [], []
    for j, name in enumerate(robot.actuator_names):
        T = limits.torque[j]
        cols += [tau[:, j] / T, -tau[:, j] / T]
        labels += [f"torque {name} upper", f"torque {name} lower"]
        if np.isfinite(limits.speed[j]):
            cols.append(np.abs(speed[:, j]) / limits.speed[j])
            labels.append(f"speed {name}")
        if np.isfinite(limits.velocity[j]):
            cols.append(np.abs(qd[:, j]) / limits.velocity[j])
            labels.append(f"velocity {limits.velocity_names[j]}")
    return np.column_stack(cols), labels


#: A step whose ends' ``ṡ`` sum to less than this fraction of the path's largest ``ṡ`` crawls (its time ~1e6 × the
#: others'): the motion stops there (an error, as an exact zero), at a rounding error of the bounds.
STOP = 1e-6


def profile_times(s, x, length: float, *, floor: float, limits: str = "torque and speed limits",
                  small: str = "a speed or torque limit"):
    """``(ṡ, t)`` at the samples ``s`` of a profile with ``ṡ² = x`` on a path of ``length``: ``t`` from 0 by
    ``Δt = 2Δs/(ṡ_k + ṡ_{k+1})`` (exact for a constant s̈ in each step). One-line PkmErrors where the
    profile overflows, stops inside the path (``small`` names the likely culprit) or moves faster than
    ``floor`` (relative) per grid step (the ``limits`` unrealistic). A step whose ends' ``ṡ`` sum to less than
    :data:`STOP` of the largest is a stop too: the Delta with 400 W servos on 20 to 40 points came to ``ṡ = 2e-8``
    one sample before a rest point and crawled the last step in 1.7e6 to 2.2e6 s (its rows there allowed only
    that), a cycle time returned as a result. (A single sample at ``ṡ = 0`` between faster ones costs a finite
    time: a momentary stop, not an error.)"""
    sd = np.sqrt(x)
    denom = sd[:-1] + sd[1:]
    if not np.all(np.isfinite(x)):
        raise PkmError(f"the limits allow path speeds beyond floating point (give realistic {limits})")
    stop = np.flatnonzero(denom <= STOP * np.max(sd))
    if stop.size:
        k = int(stop[0])
        raise PkmError(f"the limits stop the motion inside the path (zero speed at s = {s[k]:.4g} of "
                       f"{length:.4g}): {small} too small, or too few points")
    t = np.concatenate([[0.0], np.cumsum(2.0 * np.diff(s) / denom)])
    if np.any(np.diff(t) <= floor * np.maximum(1.0, t[1:])):
        raise PkmError(f"the limits allow motions faster than {floor:g} s per grid step (give realistic {limits})")
    return sd, t

