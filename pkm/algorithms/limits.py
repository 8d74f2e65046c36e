"""The robot file's joint limits (:mod:`pkm.description.limits`) checked on solved configurations:
every sample's tree variables (and actuator rates) at once, vectorised over the samples.

The consumers: :meth:`pkm.Robot.inverse_kinematics` and :meth:`pkm.Robot.inverse_dynamics` (a
:class:`pkm.LimitError` naming the first sample beyond a limit; ``limits=False`` skips it),
:func:`pkm.sim.simulate.simulate` (stops at the first output time beyond a limit), the workspace
maps (points beyond the limits marked apart from unreachable ones) and the sweeps (a per-point
status).

What is checked, per limb (:func:`limit_table`):

* a joint variable's range, in the file's variables: a joint the limb's spanning tree runs from
  child to parent (:func:`pkm.description.model.compile_tree` reverses its axis chain) has the
  tree variables ``θ = −q``. A rotation is compared modulo 2π where its range spans less than a
  turn (an angle, not a count of turns);
* a U or S joint's cone: the tilt ``∠(G_P d, G_C d)`` of the direction ``d`` (the world direction
  of the mounted joint) between its parent and child bodies, ``G_k = R_k(θ) R_k(0)ᵀ`` the bodies'
  rotations from their reference orientation, products of the tree's rotation axes (POE, eq. 1–2,
  146–147) — so cut joints are covered too;
* an actuator's speed ``|θ̇_act| ≤ velocity``.

A range on a cut joint (whose variables no pkm computation produces) is refused when the table is
built, naming the joint.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from pkm.errors import LimitError, RobotFileError, fmt_array

#: Samples whose body rotations (the cones) are formed at once.
BLOCK = 4096


@dataclass(frozen=True)
class _Range:
    limb: int
    var: int
    lo: float
    hi: float
    sign: float
    periodic: bool
    joint: str
    name: str
    unit: str


@dataclass(frozen=True)
class _Cone:
    limb: int
    parent: int
    child: int
    d: np.ndarray
    cone: float
    joint: str


@dataclass(frozen=True)
class _Speed:
    column: int
    vmax: float
    joint: str
    unit: str


@dataclass(frozen=True)
class LimitTable:
    """Every limit of a robot, resolved onto its limbs' tree variables and bodies."""

    ranges: tuple = ()
    cones: tuple = ()
    speeds: tuple = ()
    checks: tuple = field(default=())

    @property
    def empty(self) -> bool:
        return not self.checks


def limit_table(robot) -> LimitTable:
    """The robot's :class:`LimitTable` (built once, kept on the robot)."""
    table = getattr(robot, "_limit_table", None)
    if table is None:
        table = _build(robot)
        robot._limit_table = table
    return table


def _build(robot) -> LimitTable:
    spec = robot.spec
    ranges, cones, speeds = [], [], []
    for k, limb in enumerate(robot.limbs):
        tree, topo = limb.tree, limb.topology
        for j in topo.joints:
            lim = j.limits
            if lim is None:
                continue
            if j.name in topo.cuts:
                if lim.ranges is not None or lim.velocity is not None:
                    raise RobotFileError(spec.source, f"joint '{j.name}'.limits",
                                         f"'{j.name}' is the cut joint of its loop: its variables are not computed, "
                                         f"so only a cone can limit it; mark another joint of the loop 'cut = true' "
                                         f"or this one 'cut = false'")
            else:
                idx = [tree.variable_index(v) for v in j.variable_names()]
                sign = 1.0 if tree.body_names[max(idx)] == j.child else -1.0
                for i, (vi, vname) in enumerate(zip(idx, j.variable_names())):
                    if lim.ranges is None:
                        break
                    lo, hi = (float(v) for v in lim.ranges[i])
                    if not (math.isinf(lo) and math.isinf(hi)):
                        kind = tree.axis_kind[vi]
                        ranges.append(_Range(k, vi, lo, hi, sign, kind == "R" and hi - lo < 2 * math.pi, j.name, vname,
                                             "m" if kind == "P" else "rad"))
                if lim.velocity is not None:
                    col = next(c for c in range(robot.n_act)
                               if robot._act_limb[c] == k and robot._act_var[c] == idx[0])
                    speeds.append(_Speed(col, float(lim.velocity), j.name, "m" if j.type == "P" else "rad"))
            if lim.cone is not None:
                d = lim.cone_axis if lim.cone_axis is not None else np.cross(j.axes[0], j.axes[1])

                def body(name):
                    return -1 if name == spec.ground else tree.body_index(name)

                cones.append(_Cone(k, body(j.parent), body(j.child), d / np.linalg.norm(d), float(lim.cone), j.name))
    return LimitTable(tuple(ranges), tuple(cones), tuple(speeds), tuple(ranges) + tuple(cones) + tuple(speeds))


def _rotations(tree, th: np.ndarray) -> np.ndarray:
    """``G_k`` (N, n, 3, 3): every tree body's rotation from its reference orientation (POE)."""
    N, n = th.shape[0], tree.n
    G = np.empty((N, n, 3, 3))
    eye = np.broadcast_to(np.eye(3), (N, 3, 3))
    for i in range(n):
        Gp = eye if tree.parent[i] < 0 else G[:, tree.parent[i]]
        if tree.axis_kind[i] == "P":
            G[:, i] = Gp
            continue
        w = tree.Y[i, :3]
        K = np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])
        a = th[:, i][:, None, None]
        R = np.eye(3) + np.sin(a) * K + (1.0 - np.cos(a)) * (K @ K)   # Rodrigues, |w| = 1
        G[:, i] = Gp @ R
    return G


def evaluate(robot, thetas, qd_act=None):
    """``(values, beyond)``, both (N, C) for the C checks of :func:`limit_table` in order: each
    check's value per sample (the joint variable, the tilt angle, the actuator speed) and whether
    it is beyond its limit (False where the value is NaN, e.g. an unreachable map point).
    ``thetas``: each limb's tree variables (N, n_l) (a list, or an (N, L, n_max) array);
    ``qd_act`` (N, n_act) or None (speeds not checked)."""
    table = limit_table(robot)
    N = (thetas[0] if isinstance(thetas, (list, tuple)) else thetas[:, 0]).shape[0]
    th = [np.asarray(thetas[k] if isinstance(thetas, (list, tuple)) else thetas[:, k, :l.n])
          for k, l in enumerate(robot.limbs)]
    values = np.full((N, len(table.checks)), np.nan)
    beyond = np.zeros((N, len(table.checks)), dtype=bool)
    c = 0
    for r in table.ranges:
        v = r.sign * th[r.limb][:, r.var]
        with np.errstate(invalid="ignore"):
            out = (np.mod(v - r.lo, 2 * math.pi) > r.hi - r.lo) if r.periodic else ((v < r.lo) | (v > r.hi))
        values[:, c], beyond[:, c] = v, out
        c += 1
    for a in range(0, N, BLOCK):   # the rotations of one block of samples at a time: bounded memory
        G, b = {}, slice(a, min(a + BLOCK, N))
        for i, cn in enumerate(table.cones):
            if cn.limb not in G:
                G[cn.limb] = _rotations(robot.limbs[cn.limb].tree, th[cn.limb][b])
            Gl = G[cn.limb]
            dp = cn.d if cn.parent < 0 else Gl[:, cn.parent] @ cn.d
            dc = Gl[:, cn.child] @ cn.d
            cos = np.einsum("...i,...i->...", np.broadcast_to(dp, dc.shape), dc)
            # atan2 of |dp × dc| and dp·dc: accurate at small tilts, where arccos is not
            v = np.arctan2(np.linalg.norm(np.cross(np.broadcast_to(dp, dc.shape), dc), axis=-1), cos)
            with np.errstate(invalid="ignore"):
                values[b, c + i], beyond[b, c + i] = v, v > cn.cone
    c += len(table.cones)
    for sp in table.speeds:
        if qd_act is not None:
            v = np.asarray(qd_act)[:, sp.column]
            with np.errstate(invalid="ignore"):
                values[:, c], beyond[:, c] = v, np.abs(v) > sp.vmax
        c += 1
    return values, beyond


def describe(robot, index: int, value: float) -> tuple[str, str, tuple[float, float]]:
    """``(text, joint, range)`` of check ``index`` at ``value``: e.g. ``joint 'leg1/P' at 0.9 m,
    beyond its range [-0.79, 0.79] m``."""
    check = limit_table(robot).checks[index]
    if isinstance(check, _Range):
        var = f"'{check.name}'" if check.name == check.joint else f"'{check.joint}' (variable '{check.name}')"
        deg = f" ({math.degrees(value):.4g}°)" if check.unit == "rad" else ""
        return (f"joint {var} at {value:.6g} {check.unit}{deg} is beyond its range [{check.lo:.6g}, {check.hi:.6g}] "
                f"{check.unit}", check.name, (check.lo, check.hi))
    if isinstance(check, _Cone):
        return (f"joint '{check.joint}' tilts {math.degrees(value):.4g}°, beyond its cone of "
                f"{math.degrees(check.cone):.4g}°", check.joint, (0.0, check.cone))
    return (f"actuator '{check.joint}' moves at {value:.6g} {check.unit}/s, beyond its velocity limit "
            f"{check.vmax:.6g} {check.unit}/s", check.joint, (-check.vmax, check.vmax))


def first_violation(robot, thetas, qd_act=None):
    """``(sample, check index, value)`` of the first sample beyond a limit, or None."""
    if limit_table(robot).empty:
        return None
    values, beyond = evaluate(robot, thetas, qd_act)
    rows = np.flatnonzero(beyond.any(axis=1))
    if not len(rows):
        return None
    s = int(rows[0])
    c = int(np.flatnonzero(beyond[s])[0])
    return s, c, float(values[s, c])


def check_limits(robot, thetas, X, qd_act=None, t=None, first: int = 0) -> None:
    """Raise :class:`pkm.LimitError` at the first sample of task coordinates ``X`` (N, δ_p) whose
    tree variables ``thetas`` or actuator rates ``qd_act`` are beyond a limit: ``robot name: joint …
    beyond its range … at sample s (x = …)`` (``at x = …`` for one point; with times ``t``, ``at t =
    … s`` as a simulation names it, :attr:`LimitError.time`; ``first``: the index of the first row in the
    caller's samples, for the message)."""
    found = first_violation(robot, thetas, qd_act)
    if found is None:
        return
    s, c, value = found
    text, joint, rng = describe(robot, c, value)
    x = fmt_array(np.asarray(X)[s])
    if t is not None:
        where, time = f"at t = {float(t[s]):.6g} s (output sample {s + first}, x = {x})", float(t[s])
    else:
        where, time = (f"at x = {x}" if len(X) == 1 else f"at sample {s + first} (x = {x})"), None
    raise LimitError(f"{robot.name}: {text} {where}", joint=joint, value=value, range=rng,
                     sample=None if (len(X) == 1 and t is None) else s + first, kind=type(limit_table(robot).checks[c])
                     .__name__[1:].lower().replace("speed", "velocity"), time=time)
