"""Joint limits of a robot file: the joint key ``limits`` (docs/robot-file-format.md, "Limits").

``limits = { range = [lo, hi] }`` on a 1-DOF joint (R, H: the angle in rad, or ``range_deg``; P:
the stroke in the file's length unit, converted to metres like every length), ``ranges = [[lo, hi],
…]`` (or ``ranges_deg``) on a multi-DOF joint in its axis order (C: angle then stroke; U: two
angles; S: three), ``cone_deg`` (or ``cone``, rad) on a U or S joint, and ``velocity`` (rad/s or
length unit/s) on an actuated joint. A bound may be ``inf``/``-inf`` (TOML): that side is free.

**The cone** of a U or S joint limits its tilt: the angle between a direction ``d`` as carried by
the child body and the same direction as carried by the parent body, both equal to ``d`` at the
reference configuration. pkm models the joint as the axis chain ``R(q) = exp(a₁q₁) exp(a₂q₂) …``
(parent → child, :mod:`pkm.description.model`), and the tilt is ``∠(d, R(q) d)``. The default
``d`` is ``a₁ × a₂`` (normalised), perpendicular to the first two axes: for a U joint the
direction of the cross-piece's normal, the shaft direction of a Cardan joint — with orthogonal
axes its tilt is ``arccos(cos q₁ cos q₂)``; for an S joint written with its last axis along the
link (``a₃ = ±a₁ × a₂``, as the hexapod's) the tilt of the link out of its reference direction,
whatever its spin ``q₃``. ``cone_axis = [x, y, z]`` gives another ``d`` (a direction in the file's
frame — the limb's construction frame for limb joints; mapped to each mount with the joint).
The cone is computed from the bodies' rotations, so it applies to cut joints too.

Limits of limb joints apply to every mount (a mirrored mount's joint variables describe the
mirror image, so the same ranges hold). :class:`JointLimits` is the parsed, SI form;
:func:`parse_limits` reads and checks one joint's table (one-line
:class:`~pkm.errors.RobotFileError` naming the entry).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from pkm.description.fileformat import _Ctx, _direction, _evaluated, _kind, _sub, _table

LIMIT_KEYS = ("range", "range_deg", "ranges", "ranges_deg", "cone", "cone_deg", "cone_axis", "velocity")
#: The joint variables' kinds per joint type (as pkm.description.model.AXIS_KINDS).
_KINDS = {"R": "R", "P": "P", "H": "H", "C": "RP", "U": "RR", "S": "RRR"}


@dataclass(frozen=True)
class JointLimits:
    """One joint's limits in SI units: ``ranges`` (dof, 2) per joint variable in the joint's axis
    order (±inf where a side is free; None: no range), ``cone`` the largest tilt of a U/S joint
    [rad] (None: none) about ``cone_axis`` (a unit direction in the file's frame, None: ``a₁ × a₂``),
    ``velocity`` the largest speed of an actuated joint [rad/s or m/s] (None: none)."""

    ranges: np.ndarray | None = None
    cone: float | None = None
    cone_axis: np.ndarray | None = None
    velocity: float | None = None

    def mapped(self, M: np.ndarray) -> "JointLimits":
        """These limits on a limb instance mounted by ``M`` (:func:`pkm.description.spec.mount_limb`):
        the cone axis mapped as a direction (its sign does not matter), the rest unchanged."""
        if self.cone_axis is None:
            return self
        d = M @ self.cone_axis
        return JointLimits(self.ranges, self.cone, d / np.linalg.norm(d), self.velocity)


def _bound(ctx: _Ctx, value, entry: str, scale: float) -> float:
    """A range bound: a number or expression, ``inf``/``-inf`` for a free side (never NaN)."""
    x = _evaluated(ctx, value, entry, "a number (or inf/-inf for no bound)")
    if math.isnan(x):
        ctx.fail(entry, "NaN is not a bound (inf or -inf leave a side free)")
    return x * scale


def _pair(ctx: _Ctx, value, entry: str, scale: float, unit: str) -> np.ndarray:
    if not isinstance(value, list) or len(value) != 2:
        ctx.fail(entry, f"expected [lo, hi] ({unit}), got {_kind(value) if not isinstance(value, list) else f'{len(value)} values'}")
    lo, hi = (_bound(ctx, v, f"{entry}[{k}]", scale) for k, v in enumerate(value))
    if not lo < hi:
        ctx.fail(entry, f"needs lo < hi, got [{lo / scale:g}, {hi / scale:g}] {unit}")
    return np.array([lo, hi])


def parse_limits(ctx: _Ctx, value, entry: str, jtype: str, actuated: bool) -> JointLimits:
    """The ``limits`` table of a joint of type ``jtype`` at ``entry`` (e.g. ``limb.joints[1] ("P")``)."""
    where = _sub(entry, "limits")
    table = _table(ctx, value, where, LIMIT_KEYS)
    if not table:
        ctx.fail(where, f"empty limits table (give one of {', '.join(LIMIT_KEYS)})")
    kinds = _KINDS[jtype]
    length = "m" if ctx.scale == 1.0 else "mm"
    units = {"R": ("rad", 1.0), "H": ("rad", 1.0), "P": (length, ctx.scale)}
    deg = math.pi / 180.0
    ranges = None
    for key in ("range", "range_deg", "ranges", "ranges_deg"):
        if key not in table:
            continue
        at = _sub(where, key)
        if ranges is not None:
            ctx.fail(at, "give one of range, range_deg, ranges, ranges_deg")
        single = key.startswith("range_") or key == "range"
        if single and len(kinds) != 1:
            ctx.fail(at, f"a {jtype} joint has {len(kinds)} variables: give 'ranges' (one [lo, hi] per axis, "
                         f"in axis order{', angle then stroke' if jtype == 'C' else ''})")
        if not single and len(kinds) == 1:
            ctx.fail(at, f"a {jtype} joint has one variable: give '{key.replace('ranges', 'range')}'")
        if key.endswith("_deg") and "P" in kinds:
            ctx.fail(at, f"a {jtype} joint's {'stroke' if jtype == 'P' else 'second variable'} is a length, not an "
                         f"angle: give '{key.removesuffix('_deg')}' ({'rad and ' if jtype == 'C' else ''}{length})")
        items = [table[key]] if single else table[key]
        if not single and (not isinstance(items, list) or len(items) != len(kinds)):
            ctx.fail(at, f"expected {len(kinds)} pairs [lo, hi] (one per axis of the {jtype} joint), got "
                         f"{len(items) if isinstance(items, list) else _kind(items)}")
        rows = []
        for k, (item, kind) in enumerate(zip(items, kinds)):
            unit, scale = ("deg", deg) if key.endswith("_deg") else units[kind]
            rows.append(_pair(ctx, item, at if single else f"{at}[{k}]", scale, unit))
        ranges = np.array(rows)
    cone = None
    if "cone" in table or "cone_deg" in table:
        key = "cone_deg" if "cone_deg" in table else "cone"
        at = _sub(where, key)
        if "cone" in table and "cone_deg" in table:
            ctx.fail(at, "give 'cone' (rad) or 'cone_deg', not both")
        if jtype not in ("U", "S"):
            ctx.fail(at, f"a cone limits a U or S joint's tilt, not a {jtype} joint's (give range)")
        cone = _bound(ctx, table[key], at, deg if key == "cone_deg" else 1.0)
        if not 0.0 < cone < math.pi:
            ctx.fail(at, f"the cone's half-angle must lie between 0 and 180° (exclusive), got {cone / deg:g}°")
    axis = None
    if "cone_axis" in table:
        if cone is None:
            ctx.fail(_sub(where, "cone_axis"), "'cone_axis' needs a 'cone_deg' (or 'cone')")
        axis = _direction(ctx, table["cone_axis"], _sub(where, "cone_axis"))
    velocity = None
    if "velocity" in table:
        at = _sub(where, "velocity")
        if not actuated:
            ctx.fail(at, "velocity limits are for actuated joints (this one is passive)")
        velocity = _bound(ctx, table["velocity"], at, units[kinds[0]][1])
        if not 0.0 < velocity < math.inf:
            ctx.fail(at, f"must be a finite speed > 0 ({units[kinds[0]][0]}/s), got {velocity / units[kinds[0]][1]:g}")
    return JointLimits(ranges=ranges, cone=cone, cone_axis=axis, velocity=velocity)
