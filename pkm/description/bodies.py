"""Robot-file bodies: mass, centre of mass and inertia given directly or from primitive shapes and a
material (``bodies[i]``, ``platform``, ``limb.bodies[i]``).
"""
from __future__ import annotations

import math

import numpy as np

from pkm.description.fileformat import (
    _Ctx,
    _direction,
    _frame,
    _item,
    _kind,
    _matrix,
    _name,
    _names,
    _pose,
    _positive,
    _string,
    _sub,
    _table,
    _tables,
    _vector,
)
from pkm.description.inertia import (
    box_inertia,
    box_volume,
    cylinder_inertia,
    cylinder_volume,
    inertia_problem,
    sphere_inertia,
    sphere_volume,
)
from pkm.description.spec import BodySpec

BODY_KEYS = ("name", "mass", "com", "inertia", "shape", "frame")
SHAPE_KEYS = {
    "cylinder": ("type", "diameter", "radius", "from", "to", "length", "axis", "center", "density", "material"),
    "box": ("type", "size", "center", "density", "material"),
    "sphere": ("type", "diameter", "radius", "center", "density", "material"),
}


# ====================================================================== bodies
def _bodies(ctx: _Ctx, value, entry: str, reserved: dict[str, str]) -> list[BodySpec]:
    """Parse an array of body tables; names must be unique and differ from ``reserved``."""
    seen = dict(reserved)
    out = []
    for i, table in enumerate(_tables(ctx, value, entry)):
        where = _item(entry, i, table)
        body = _body(ctx, table, where)
        if body.name in reserved:
            ctx.fail(_sub(where, "name"), f"body name '{body.name}' is already used by {reserved[body.name]}")
        if body.name in seen:
            ctx.fail(_sub(where, "name"), f"duplicate body name '{body.name}' (also {seen[body.name]})")
        seen[body.name] = where
        out.append(body)
    return out


def _body(ctx: _Ctx, value, entry: str, default_name: str | None = None) -> BodySpec:
    table = _table(ctx, value, entry, BODY_KEYS, required=() if default_name else ("name",))
    name = _name(ctx, table.get("name", default_name), _sub(entry, "name"))
    R, origin = _frame(ctx, table["frame"], _sub(entry, "frame")) if "frame" in table else (np.eye(3), None)
    if "shape" in table:
        for key in ("com", "inertia"):
            if key in table:
                ctx.fail(entry, f"give either 'shape' or '{key}', not both (the shape determines it)")
        mass = _positive(ctx, table["mass"], _sub(entry, "mass"), "mass") if "mass" in table else None
        mass, com, inertia_world, shape = _shape(ctx, table["shape"], _sub(entry, "shape"), R, origin, mass)
        inertia = R.T @ inertia_world @ R
        where = _sub(entry, "shape")
    else:
        for key in ("mass", "com", "inertia"):
            if key not in table:
                ctx.fail(entry, f"missing required key '{key}' (a body needs 'shape', or 'mass', 'com' and 'inertia')")
        mass = _positive(ctx, table["mass"], _sub(entry, "mass"), "mass")
        com = _vector(ctx, table["com"], _sub(entry, "com"), length=True)
        inertia = _inertia_tensor(ctx, table["inertia"], _sub(entry, "inertia"))
        shape, where = None, _sub(entry, "inertia")
    if not math.isfinite(mass):
        ctx.fail(_sub(entry, "shape"), "mass is not finite (numbers too large)")
    problem = inertia_problem(inertia)
    if problem:
        ctx.fail(where, problem)
    inertia = 0.5 * inertia + 0.5 * inertia.T   # (I + I^T) / 2 overflows near the largest floats
    frame = _pose(R, com if origin is None else origin)
    return BodySpec(name=name, frame=frame, mass=float(mass), com=com, inertia=inertia, shape=shape)


def _inertia_tensor(ctx: _Ctx, value, entry: str) -> np.ndarray:
    """A 3×3 list or ``[Ixx, Iyy, Izz, Ixy, Ixz, Iyz]``, in kg·(length unit)², returned in kg·m²."""
    if isinstance(value, (list, tuple)) and len(value) == 6:
        v = _vector(ctx, value, entry, n=6)
        tensor = np.array([[v[0], v[3], v[4]], [v[3], v[1], v[5]], [v[4], v[5], v[2]]])
    elif isinstance(value, (list, tuple, np.ndarray)) and len(value) == 3:
        tensor = _matrix(ctx, value, entry)
    else:
        ctx.fail(entry, "expected a 3x3 array or 6 numbers [Ixx, Iyy, Izz, Ixy, Ixz, Iyz]")
    return tensor * ctx.scale**2


def _shape(ctx: _Ctx, value, entry: str, R: np.ndarray, origin, mass: float | None):
    """Mass, centre of mass, inertia (about the COM, world axes) and SI description of a shape.

    ``R`` and ``origin`` (None if not given) are the body frame's rotation and origin.
    """
    if not isinstance(value, dict):
        ctx.fail(entry, f"expected a table, got {_kind(value)}")
    if "type" not in value:
        ctx.fail(entry, "missing required key 'type'")
    kind = _string(ctx, value["type"], _sub(entry, "type"))
    if kind not in SHAPE_KEYS:
        ctx.fail(_sub(entry, "type"), f"unknown shape type '{kind}' (expected one of cylinder, box, sphere)")
    table = _table(ctx, value, entry, SHAPE_KEYS[kind])
    geometry = {"cylinder": _cylinder, "box": _box, "sphere": _sphere}[kind]
    try:
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            shape, volume, unit_inertia = geometry(ctx, table, entry, R, origin)
    except OverflowError:  # a Python float power beyond 1e308
        volume = math.inf
    if not (math.isfinite(volume) and volume > 0.0 and np.all(np.isfinite(unit_inertia))):
        ctx.fail(entry, f"the {kind}'s size is out of range: its volume ({volume:.3g} m^3) or inertia is "
                        f"not a positive finite number")
    density = _density(ctx, table, entry, shape)
    if mass is None:
        if density is None:
            ctx.fail(entry, "give 'density' or 'material' (or the body's 'mass')")
        mass = density * volume
        if not (math.isfinite(mass) and mass > 0.0):
            ctx.fail(entry, f"density x volume = {density:.3g} kg/m^3 x {volume:.3g} m^3 is not a positive "
                            f"finite mass")
    shape.update(density=mass / volume, volume=volume)
    return mass, shape["center"], mass * unit_inertia, shape


def _center(ctx: _Ctx, table: dict, entry: str, origin) -> np.ndarray:
    """``center`` of a shape, defaulting to the body frame origin."""
    if "center" in table:
        return _vector(ctx, table["center"], _sub(entry, "center"), length=True)
    if origin is None:
        ctx.fail(entry, f"the {table['type']} has no position: give 'center' or the body's 'frame.origin'")
    return origin.copy()


def _cylinder(ctx: _Ctx, table: dict, entry: str, R: np.ndarray, origin):
    """Description, volume and unit-mass inertia (world axes) of a cylinder: from + to, or length + axis."""
    radius = _radius(ctx, table, entry)
    if "from" in table or "to" in table:
        for key in ("length", "axis", "center"):
            if key in table:
                ctx.fail(entry, f"give either 'from' + 'to' or 'length' + 'axis', not '{key}' with 'from'/'to'")
        for key in ("from", "to"):
            if key not in table:
                ctx.fail(entry, f"missing required key '{key}' (a cylinder needs both 'from' and 'to')")
        start = _vector(ctx, table["from"], _sub(entry, "from"), length=True)
        end = _vector(ctx, table["to"], _sub(entry, "to"), length=True)
        length = float(np.linalg.norm(end - start))
        if length <= 0.0:
            ctx.fail(entry, "cylinder 'from' and 'to' coincide (zero length)")
        axis, center = (end - start) / length, 0.5 * (start + end)
    else:
        for key in ("length", "axis"):
            if key not in table:
                ctx.fail(entry, f"missing required key '{key}' (a cylinder needs 'from' + 'to' or 'length' + 'axis')")
        length = _positive(ctx, table["length"], _sub(entry, "length"), "length", length=True)
        axis = _direction(ctx, table["axis"], _sub(entry, "axis"))
        center = _center(ctx, table, entry, origin)
        start, end = center - 0.5 * length * axis, center + 0.5 * length * axis
    shape = {"type": "cylinder", "radius": radius, "length": length, "axis": axis, "center": center,
             "from": start, "to": end}
    return shape, cylinder_volume(radius, length), cylinder_inertia(1.0, radius, length, axis)


def _box(ctx: _Ctx, table: dict, entry: str, R: np.ndarray, origin):
    """Description, volume and unit-mass inertia (world axes) of a box with edges along the body axes."""
    if "size" not in table:
        ctx.fail(entry, "missing required key 'size'")
    size = _vector(ctx, table["size"], _sub(entry, "size"), length=True)
    if np.any(size <= 0.0):
        ctx.fail(_sub(entry, "size"), "box edge lengths must be positive")
    shape = {"type": "box", "size": size, "center": _center(ctx, table, entry, origin)}
    return shape, box_volume(size), R @ box_inertia(1.0, size) @ R.T


def _sphere(ctx: _Ctx, table: dict, entry: str, R: np.ndarray, origin):
    """Description, volume and unit-mass inertia of a sphere."""
    radius = _radius(ctx, table, entry)
    shape = {"type": "sphere", "radius": radius, "center": _center(ctx, table, entry, origin)}
    return shape, sphere_volume(radius), sphere_inertia(1.0, radius)


def _radius(ctx: _Ctx, table: dict, entry: str) -> float:
    given = [k for k in ("diameter", "radius") if k in table]
    if len(given) != 1:
        ctx.fail(entry, "give exactly one of 'diameter' and 'radius'")
    value = _positive(ctx, table[given[0]], _sub(entry, given[0]), given[0], length=True)
    return value / 2.0 if given[0] == "diameter" else value


def _density(ctx: _Ctx, table: dict, entry: str, shape: dict) -> float | None:
    if "density" in table and "material" in table:
        ctx.fail(entry, "give either 'density' or 'material', not both")
    if "density" in table:
        return _positive(ctx, table["density"], _sub(entry, "density"), "density")
    if "material" in table:
        material = _string(ctx, table["material"], _sub(entry, "material"))
        if material not in ctx.materials:
            ctx.fail(_sub(entry, "material"), f"unknown material '{material}' (known: "
                                              f"{_names(sorted(ctx.materials), limit=20)}; add it to [materials])")
        shape["material"] = material
        return ctx.materials[material]
    return None
