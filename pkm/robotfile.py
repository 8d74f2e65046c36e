"""Read robot files (TOML) into validated :class:`~pkm.spec.RobotSpec` objects.

The format is described in ``docs/robot-file-format.md``. :func:`load_spec` reads a file,
:func:`parse_spec` an already-parsed dict (tests, generated robots). Both check everything,
convert to SI units and either return a complete RobotSpec or raise
:class:`~pkm.errors.RobotFileError` with a one-line ``FILE: ENTRY: what`` message — never a
half-built result.

Entries in messages name the table path, e.g. ``bodies[1] ("arm").inertia``,
``limb.joints[0] ("1").parent`` or ``parameters.h``.
"""

from __future__ import annotations

import difflib
import math
import numbers
import re
import tomllib
from collections.abc import Mapping
from itertools import combinations
from pathlib import Path

import numpy as np

from pkm._expr import ExprError, ParameterError, evaluate, resolve_parameters
from pkm.errors import RobotFileError
from pkm.inertia import (
    MATERIALS,
    box_inertia,
    box_volume,
    cylinder_inertia,
    cylinder_volume,
    inertia_problem,
    sphere_inertia,
    sphere_volume,
)
from pkm.spec import JOINT_DOF, TWIST_COMPONENTS, BodySpec, JointSpec, LimbSpec, MountSpec, RobotSpec, TaskSpec, instance_name

__all__ = ["load_spec", "parse_spec"]

#: Length unit names and their value in metres.
UNITS = {"m": 1.0, "mm": 1e-3}
#: Tolerance for unit-vector orthogonality, rotation matrices and degenerate joint axes.
TOL = 1e-9

TOP_KEYS = ("name", "description", "units", "gravity", "ground", "platform", "bodies", "joints",
            "limb", "task", "trajectory", "materials", "parameters")
BODY_KEYS = ("name", "mass", "com", "inertia", "shape", "frame")
FRAME_KEYS = ("origin", "x", "y", "z", "axis", "angle", "angle_deg", "rotation")
SHAPE_KEYS = {
    "cylinder": ("type", "diameter", "radius", "from", "to", "length", "axis", "center", "density", "material"),
    "box": ("type", "size", "center", "density", "material"),
    "sphere": ("type", "diameter", "radius", "center", "density", "material"),
}
JOINT_KEYS = ("name", "type", "parent", "child", "point", "axis", "axes", "pitch", "actuated", "cut")
LIMB_KEYS = ("independent", "platform_frame", "bodies", "joints", "mounts")
TASK_TYPES = {
    "translational": ("vx", "vy", "vz"),
    "planar": ("wz", "vx", "vy"),
    "scara": ("wz", "vx", "vy", "vz"),
    "rotational": ("wx", "wy", "wz"),
    "select": None,
}
#: Keys of each trajectory type and their kind: point (3 lengths), length, length-or-point, time (> 0).
TRAJECTORY_KEYS = {
    "sine": {"center": "point", "amplitude": "point", "period": "time", "duration": "time", "dt": "time"},
    "line": {"start": "point", "end": "point", "duration": "time", "dt": "time"},
    "pick-place": {"start": "point", "lift": "length", "travel": "length-or-point", "cycle_time": "time",
                   "dt": "time"},
    "file": {"path": "path"},
}


# ====================================================================== entry points
def load_spec(path, parameters: dict | None = None) -> RobotSpec:
    """Read, validate and convert the robot file at ``path``; ``parameters`` overrides ``[parameters]``."""
    path = Path(path)
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError:
        raise RobotFileError(path, "", "file not found") from None
    except IsADirectoryError:
        raise RobotFileError(path, "", "is a directory, not a robot file") from None
    except UnicodeDecodeError:
        raise RobotFileError(path, "", "file is not UTF-8 text") from None
    except OSError as exc:
        raise RobotFileError(path, "", f"cannot read file: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise RobotFileError(path, "", _toml_message(str(exc))) from None
    return parse_spec(data, path=path, parameters=parameters)


def _toml_message(message: str) -> str:
    """Reword tomllib's ``what (at line L, column C)`` as ``TOML syntax error at line L, column C: what``."""
    m = re.fullmatch(r"(.*?)\s*\(at line (\d+), column (\d+)\)", message, re.S)
    if m:
        return f"TOML syntax error at line {m[2]}, column {m[3]}: {m[1]}"
    m = re.fullmatch(r"(.*?)\s*\(at end of document\)", message, re.S)
    if m:
        return f"TOML syntax error at end of document: {m[1]}"
    return f"TOML syntax error: {message}"


def parse_spec(data: dict, path=None, parameters: dict | None = None) -> RobotSpec:
    """Validate the parsed robot file ``data`` (as from ``tomllib``) and return its RobotSpec.

    ``path`` is used in messages and to resolve relative paths (trajectory files).
    """
    ctx = _Ctx(path)
    top = _table(ctx, data, "", TOP_KEYS, required=("name",))
    name = _string(ctx, top["name"], "name")
    description = _string(ctx, top.get("description", ""), "description")
    ctx.params = _parameters(ctx, top.get("parameters", {}), parameters)
    units = _string(ctx, top.get("units", "m"), "units")
    if units not in UNITS:
        ctx.fail("units", f"unknown units '{units}' (expected \"m\" or \"mm\")")
    ctx.scale = UNITS[units]
    gravity = _vector(ctx, top.get("gravity", [0.0, 0.0, -9.81]), "gravity")
    ctx.materials.update(_materials(ctx, top.get("materials", {})))
    ground = _name(ctx, top.get("ground", "ground"), "ground")

    bodies, platform_body = _platform_and_bodies(ctx, top, ground)
    platform = platform_body.name if platform_body is not None else None

    limb = _limb(ctx, top["limb"], ground, platform_body) if "limb" in top else None
    known = [ground] + [b.name for b in bodies]
    if limb is not None:
        known += [instance_name(m.name, b.name) for m in limb.mounts for b in limb.bodies]
    joints = _joints(ctx, top.get("joints", []), "joints", known)
    task = _task(ctx, top["task"]) if "task" in top else None
    trajectory = _trajectory(ctx, top["trajectory"]) if "trajectory" in top else None
    return RobotSpec(
        name=name, source=Path(path) if path is not None else None, units=units, gravity=gravity,
        ground=ground, platform=platform, bodies=tuple(bodies), joints=tuple(joints), limb=limb,
        task=task, trajectory=trajectory, parameters=dict(ctx.params), description=description,
    )


def _platform_and_bodies(ctx: _Ctx, top: dict, ground: str) -> tuple[list[BodySpec], BodySpec | None]:
    """The written-out bodies (a platform table first) and the platform body, if any."""
    bodies, platform = [], None
    reserved = {ground: "the ground"}
    if isinstance(top.get("platform"), dict):
        platform = _body(ctx, top["platform"], "platform", default_name="platform")
        if platform.name == ground:
            ctx.fail("platform.name", f"platform name '{ground}' is the ground's name")
        bodies.append(platform)
        reserved[platform.name] = "the platform"
    bodies += _bodies(ctx, top.get("bodies", []), "bodies", reserved)
    if "platform" in top and platform is None:
        wanted = top["platform"]
        if not isinstance(wanted, str):
            ctx.fail("platform", f"expected a table or the name of a body, got {_kind(wanted)}")
        platform = next((b for b in bodies if b.name == wanted), None)
        if platform is None:
            ctx.fail("platform", f"unknown body '{wanted}' (platform must be a table or the name of "
                                 f"a body in [[bodies]]; known: {_names(b.name for b in bodies)})")
    return bodies, platform


# ====================================================================== basic values
class _Ctx:
    """What the parsers share: file path (for messages), parameter values, length scale, materials."""

    def __init__(self, path):
        self.path = path
        self.params: dict[str, float] = {}
        self.scale = 1.0
        self.materials = dict(MATERIALS)

    def fail(self, entry: str, what: str):
        raise RobotFileError(self.path, entry, what)


def _sub(entry: str, key) -> str:
    return f"{entry}.{key}" if entry else str(key)


def _item(entry: str, index: int, table) -> str:
    name = table.get("name") if isinstance(table, dict) else None
    return f'{entry}[{index}] ("{name}")' if isinstance(name, str) else f"{entry}[{index}]"


def _names(names, limit: int = 8) -> str:
    names = list(names)
    text = ", ".join(f"'{n}'" for n in names[:limit])
    return (text + ", ...") if len(names) > limit else (text or "none")


def _kind(value) -> str:
    if isinstance(value, (bool, np.bool_)):
        return "a boolean"
    if _is_number(value):
        return "a number"
    kinds = {str: "a string", dict: "a table", list: "an array", tuple: "an array", np.ndarray: "an array"}
    return kinds.get(type(value), f"a {type(value).__name__}")


def _is_number(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def _table(ctx: _Ctx, value, entry: str, allowed, required=()) -> dict:
    """``value`` as a table with only ``allowed`` keys and all ``required`` ones."""
    if not isinstance(value, dict):
        ctx.fail(entry, f"expected a table, got {_kind(value)}")
    for key in value:
        if key not in allowed:
            hint = difflib.get_close_matches(str(key), allowed, n=1)
            ctx.fail(entry, f"unknown key '{key}'" + (f" (did you mean '{hint[0]}'?)" if hint else
                                                      f" (expected one of {', '.join(allowed)})"))
    for key in required:
        if key not in value:
            ctx.fail(entry, f"missing required key '{key}'")
    return value


def _tables(ctx: _Ctx, value, entry: str) -> list:
    """``value`` as an array of tables."""
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        ctx.fail(entry, f"expected an array of tables ([[{entry}]]), got {_kind(value)}")
    return value


def _string(ctx: _Ctx, value, entry: str) -> str:
    if not isinstance(value, str):
        ctx.fail(entry, f"expected a string, got {_kind(value)}")
    return value


def _name(ctx: _Ctx, value, entry: str) -> str:
    name = _string(ctx, value, entry)
    if not name.strip():
        ctx.fail(entry, "empty name")
    if "/" in name:
        ctx.fail(entry, f"'/' is not allowed in names ('{name}')")
    return name


def _bool(ctx: _Ctx, value, entry: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        ctx.fail(entry, f"expected true or false, got {_kind(value)}")
    return bool(value)


def _number(ctx: _Ctx, value, entry: str, length: bool = False) -> float:
    """A number or expression string as a finite float; ``length=True`` converts to metres."""
    if _is_number(value):
        x = float(value)
    elif isinstance(value, str):
        try:
            x = evaluate(value, ctx.params)
        except ExprError as exc:
            ctx.fail(entry, str(exc))
    else:
        ctx.fail(entry, f"expected a number or an expression string, got {_kind(value)}")
    if not math.isfinite(x):
        ctx.fail(entry, "not a finite number")
    return x * ctx.scale if length else x


def _positive(ctx: _Ctx, value, entry: str, what: str, length: bool = False) -> float:
    x = _number(ctx, value, entry, length)
    if x <= 0.0:
        ctx.fail(entry, f"{what} must be positive, got {x / ctx.scale if length else x:g}")
    return x


def _vector(ctx: _Ctx, value, entry: str, n: int = 3, length: bool = False) -> np.ndarray:
    if not isinstance(value, (list, tuple, np.ndarray)) or (isinstance(value, np.ndarray) and value.ndim != 1):
        ctx.fail(entry, f"expected an array of {n} numbers, got {_kind(value)}")
    if len(value) != n:
        ctx.fail(entry, f"expected an array of {n} numbers, got {len(value)} values")
    return np.array([_number(ctx, v, f"{entry}[{k}]", length) for k, v in enumerate(value)], dtype=float)


def _direction(ctx: _Ctx, value, entry: str) -> np.ndarray:
    """A 3-vector normalised to unit length (directions are unitless: never scaled)."""
    v = _vector(ctx, value, entry)
    norm = float(np.linalg.norm(v))
    if norm < 1e-12:
        ctx.fail(entry, "zero-length axis")
    return v / norm


def _pose(R: np.ndarray, origin) -> np.ndarray:
    A = np.eye(4)
    A[:3, :3] = R
    A[:3, 3] = origin
    return A


def _inverse_pose(A: np.ndarray) -> np.ndarray:
    R, p = A[:3, :3], A[:3, 3]
    return _pose(R.T, -R.T @ p)


# ====================================================================== parameters, materials
def _parameters(ctx: _Ctx, value, overrides) -> dict[str, float]:
    table = _table(ctx, value, "parameters", allowed=value.keys() if isinstance(value, dict) else ())
    defs = {}
    for key, val in table.items():
        if not (_is_number(val) or isinstance(val, str)):
            ctx.fail(_sub("parameters", key), f"expected a number or an expression string, got {_kind(val)}")
        defs[key] = val
    if overrides is not None:
        if not isinstance(overrides, Mapping):
            ctx.fail("parameters", f"overrides must be a dict, got {_kind(overrides)}")
        for key, val in overrides.items():
            if key not in defs:
                ctx.fail("parameters", f"unknown parameter '{key}' in overrides (the file defines {_names(defs)})")
            if not (_is_number(val) or isinstance(val, str)):
                ctx.fail(_sub("parameters", key), f"override must be a number or an expression, got {_kind(val)}")
            defs[key] = val
    try:
        return resolve_parameters(defs)
    except ParameterError as exc:
        ctx.fail(_sub("parameters", exc.name), str(exc))


def _materials(ctx: _Ctx, value) -> dict[str, float]:
    table = _table(ctx, value, "materials", allowed=value.keys() if isinstance(value, dict) else ())
    return {k: _positive(ctx, v, _sub("materials", k), "density") for k, v in table.items()}


# ====================================================================== frames
def _frame(ctx: _Ctx, value, entry: str) -> tuple[np.ndarray, np.ndarray | None]:
    """Rotation and origin (None if not given) of a ``frame`` table."""
    table = _table(ctx, value, entry, FRAME_KEYS)
    xyz = [k for k in "xyz" if k in table]
    axis_angle = [k for k in ("axis", "angle", "angle_deg") if k in table]
    methods = [m for m, used in (("x/y/z", xyz), ("axis + angle", axis_angle), ("rotation", "rotation" in table))
               if used]
    if len(methods) > 1:
        ctx.fail(entry, f"give the orientation by only one of x/y/z, axis + angle, rotation "
                        f"(got {' and '.join(methods)})")
    if xyz:
        R = _rotation_from_axes(ctx, table, entry, xyz)
    elif axis_angle:
        R = _rotation_from_axis_angle(ctx, table, entry)
    elif "rotation" in table:
        R = _rotation_matrix(ctx, table["rotation"], _sub(entry, "rotation"))
    else:
        R = np.eye(3)
    origin = _vector(ctx, table["origin"], _sub(entry, "origin"), length=True) if "origin" in table else None
    return R, origin


def _rotation_from_axes(ctx: _Ctx, table: dict, entry: str, given: list[str]) -> np.ndarray:
    if len(given) < 2:
        ctx.fail(entry, f"only '{given[0]}' given: give two or three of the axes x, y, z")
    axes = {k: _direction(ctx, table[k], _sub(entry, k)) for k in given}
    for a, b in combinations(given, 2):
        cos = abs(float(axes[a] @ axes[b]))
        if cos > TOL:
            ctx.fail(entry, f"frame axes {a} and {b} are not orthogonal (cos angle = {cos:.3g})")
    if "x" not in axes:
        axes["x"] = np.cross(axes["y"], axes["z"])
    elif "y" not in axes:
        axes["y"] = np.cross(axes["z"], axes["x"])
    elif "z" not in axes:
        axes["z"] = np.cross(axes["x"], axes["y"])
    elif float(np.cross(axes["x"], axes["y"]) @ axes["z"]) < 0.0:
        ctx.fail(entry, "frame axes x, y, z are left-handed")
    return np.column_stack([axes["x"], axes["y"], axes["z"]])


def _rotation_from_axis_angle(ctx: _Ctx, table: dict, entry: str) -> np.ndarray:
    if "axis" not in table:
        ctx.fail(entry, "an angle needs an 'axis'")
    given = [k for k in ("angle", "angle_deg") if k in table]
    if len(given) != 1:
        ctx.fail(entry, "give exactly one of 'angle' and 'angle_deg' with 'axis'")
    a = _direction(ctx, table["axis"], _sub(entry, "axis"))
    angle = _number(ctx, table[given[0]], _sub(entry, given[0]))
    if given[0] == "angle_deg":
        angle = math.radians(angle)
    K = np.array([[0.0, -a[2], a[1]], [a[2], 0.0, -a[0]], [-a[1], a[0], 0.0]])
    return np.eye(3) + math.sin(angle) * K + (1.0 - math.cos(angle)) * (K @ K)


def _matrix(ctx: _Ctx, value, entry: str) -> np.ndarray:
    if not isinstance(value, (list, tuple, np.ndarray)) or len(value) != 3:
        ctx.fail(entry, "expected a 3x3 array (three rows of three numbers)")
    return np.array([_vector(ctx, row, f"{entry}[{i}]") for i, row in enumerate(value)])


def _rotation_matrix(ctx: _Ctx, value, entry: str) -> np.ndarray:
    R = _matrix(ctx, value, entry)
    error = float(np.max(np.abs(R.T @ R - np.eye(3))))
    if error > TOL:
        ctx.fail(entry, f"rotation matrix is not orthonormal (max |R^T R - I| = {error:.3g})")
    if np.linalg.det(R) < 0.0:
        ctx.fail(entry, "rotation matrix has determinant -1 (a reflection, not a rotation)")
    return R


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
    inertia = 0.5 * (inertia + inertia.T)
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
    shape, volume, unit_inertia = geometry(ctx, table, entry, R, origin)
    density = _density(ctx, table, entry, shape)
    if mass is None:
        if density is None:
            ctx.fail(entry, "give 'density' or 'material' (or the body's 'mass')")
        mass = density * volume
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


# ====================================================================== joints
def _joints(ctx: _Ctx, value, entry: str, known_bodies) -> list[JointSpec]:
    """Parse an array of joint tables; joint names and joint-variable names must be unique."""
    known = list(dict.fromkeys(known_bodies))
    seen: dict[str, str] = {}
    variables: dict[str, str] = {}
    out = []
    for i, table in enumerate(_tables(ctx, value, entry)):
        where = _item(entry, i, table)
        joint = _joint(ctx, table, where, known)
        if joint.name in seen:
            ctx.fail(_sub(where, "name"), f"duplicate joint name '{joint.name}' (also {seen[joint.name]})")
        seen[joint.name] = where
        for var in joint.variable_names():
            if var in variables:
                ctx.fail(_sub(where, "name"), f"joint variable '{var}' clashes with one of {variables[var]}")
            variables[var] = where
        out.append(joint)
    return out


def _joint(ctx: _Ctx, value, entry: str, known: list[str]) -> JointSpec:
    table = _table(ctx, value, entry, JOINT_KEYS, required=("name", "type", "parent", "child"))
    name = _name(ctx, table["name"], _sub(entry, "name"))
    jtype = _string(ctx, table["type"], _sub(entry, "type"))
    if jtype not in JOINT_DOF:
        ctx.fail(_sub(entry, "type"), f"unknown joint type '{jtype}' (expected one of R, P, H, C, U, S)")
    ends = {}
    for key in ("parent", "child"):
        ends[key] = _string(ctx, table[key], _sub(entry, key))
        if ends[key] not in known:
            ctx.fail(_sub(entry, key), f"unknown body '{ends[key]}' (known: {_names(known)})")
    if ends["parent"] == ends["child"]:
        ctx.fail(_sub(entry, "child"), f"parent and child are the same body '{ends['child']}'")
    if "point" in table:
        point = _vector(ctx, table["point"], _sub(entry, "point"), length=True)
    elif jtype == "P":
        point = np.zeros(3)
    else:
        ctx.fail(entry, "missing required key 'point'")
    axes = _joint_axes(ctx, table, entry, jtype)
    if jtype == "H":
        if "pitch" not in table:
            ctx.fail(entry, "missing required key 'pitch' (an H joint needs a pitch, length per radian)")
        pitch = _number(ctx, table["pitch"], _sub(entry, "pitch"), length=True)
        if pitch == 0.0:
            ctx.fail(_sub(entry, "pitch"), "pitch of an H joint must be non-zero (use an R joint)")
    elif "pitch" in table:
        ctx.fail(_sub(entry, "pitch"), f"'pitch' is only for H joints, not {jtype}")
    else:
        pitch = 0.0
    actuated = _bool(ctx, table.get("actuated", False), _sub(entry, "actuated"))
    if actuated and jtype not in ("R", "P", "H"):
        ctx.fail(_sub(entry, "actuated"), f"only R, P and H joints can be actuated, not {jtype}")
    cut = _bool(ctx, table["cut"], _sub(entry, "cut")) if "cut" in table else None
    return JointSpec(name=name, type=jtype, parent=ends["parent"], child=ends["child"], point=point,
                     axes=axes, pitch=pitch, actuated=actuated, cut=cut)


def _joint_axes(ctx: _Ctx, table: dict, entry: str, jtype: str) -> np.ndarray:
    """The (dof, 3) unit axes of a joint of type ``jtype``."""
    if jtype in ("R", "P", "H", "C"):
        if "axes" in table:
            ctx.fail(_sub(entry, "axes"), f"a {jtype} joint has one 'axis', not 'axes'")
        if "axis" not in table:
            ctx.fail(entry, "missing required key 'axis'")
        axis = _direction(ctx, table["axis"], _sub(entry, "axis"))
        return np.vstack([axis] * JOINT_DOF[jtype])
    if "axis" in table:
        ctx.fail(_sub(entry, "axis"), f"a {jtype} joint has 'axes' (a list of {JOINT_DOF[jtype]}), not 'axis'")
    n = JOINT_DOF[jtype]
    if "axes" not in table:
        if jtype == "U":
            ctx.fail(entry, "missing required key 'axes' (a U joint needs two axes)")
        return np.eye(3)
    where = _sub(entry, "axes")
    value = table["axes"]
    if not isinstance(value, (list, tuple, np.ndarray)) or len(value) != n:
        ctx.fail(where, f"a {jtype} joint needs {n} axes, got {len(value) if isinstance(value, list) else _kind(value)}")
    axes = np.array([_direction(ctx, a, f"{where}[{k}]") for k, a in enumerate(value)])
    if jtype == "U" and np.linalg.norm(np.cross(axes[0], axes[1])) < TOL:
        ctx.fail(where, "the two axes of a U joint are parallel")
    if jtype == "S" and abs(np.linalg.det(axes)) < TOL:
        ctx.fail(where, "the three axes of an S joint are not linearly independent")
    return axes


# ====================================================================== limb
def _limb(ctx: _Ctx, value, ground: str, platform: BodySpec | None) -> LimbSpec:
    table = _table(ctx, value, "limb", LIMB_KEYS, required=("mounts",))
    reserved = {ground: "the ground"}
    if platform is not None:
        reserved[platform.name] = "the platform"
    bodies = _bodies(ctx, table.get("bodies", []), "limb.bodies", reserved)
    joints = _joints(ctx, table.get("joints", []), "limb.joints", list(reserved) + [b.name for b in bodies])

    A_p = platform.frame if platform is not None else np.eye(4)
    if "platform_frame" in table:
        R, origin = _frame(ctx, table["platform_frame"], "limb.platform_frame")
        A_p_prime = _pose(R, np.zeros(3) if origin is None else origin)
    else:
        A_p_prime = A_p.copy()

    mounts, seen = [], {}
    items = _tables(ctx, table["mounts"], "limb.mounts")
    if not items:
        ctx.fail("limb.mounts", "a limb needs at least one mount")
    for i, item in enumerate(items):
        where = _item("limb.mounts", i, item)
        item = _table(ctx, item, where, ("name", "frame"))
        name = _name(ctx, item.get("name", f"limb{i + 1}"), _sub(where, "name"))
        if name in seen:
            ctx.fail(_sub(where, "name"), f"duplicate mount name '{name}' (also {seen[name]})")
        seen[name] = where
        R, origin = _frame(ctx, item["frame"], _sub(where, "frame")) if "frame" in item else (np.eye(3), None)
        S_0 = _pose(R, np.zeros(3) if origin is None else origin)
        S_p = _inverse_pose(A_p) @ S_0 @ A_p_prime
        if not np.all(np.isfinite(S_p)):
            ctx.fail(_sub(where, "frame"), "platform mount is not finite (numbers too large)")
        mounts.append(MountSpec(name=name, base=S_0, platform=S_p))

    independent = ()
    if "independent" in table:
        value = table["independent"]
        if not isinstance(value, list):
            ctx.fail("limb.independent", f"expected an array of joint-variable names, got {_kind(value)}")
        variables = [v for j in joints for v in j.variable_names()]
        for k, var in enumerate(value):
            where = f"limb.independent[{k}]"
            _string(ctx, var, where)
            if var not in variables:
                ctx.fail(where, f"unknown joint variable '{var}' (the limb has {_names(variables, limit=20)})")
            if var in value[:k]:
                ctx.fail(where, f"joint variable '{var}' listed twice")
        independent = tuple(value)
    return LimbSpec(bodies=tuple(bodies), joints=tuple(joints), mounts=tuple(mounts),
                    platform_frame=A_p_prime, independent=independent)


# ====================================================================== task, trajectory
def _task(ctx: _Ctx, value) -> TaskSpec:
    table = _table(ctx, value, "task", ("type", "components"), required=("type",))
    kind = _string(ctx, table["type"], "task.type")
    if kind not in TASK_TYPES:
        ctx.fail("task.type", f"unknown task type '{kind}' (expected one of {', '.join(TASK_TYPES)})")
    if kind != "select":
        if "components" in table:
            ctx.fail("task.components", "'components' is only used with type = \"select\"")
        return TaskSpec(kind=kind, components=TASK_TYPES[kind])
    if "components" not in table:
        ctx.fail("task", "missing required key 'components' (with type = \"select\")")
    comps = table["components"]
    if not isinstance(comps, list) or not comps:
        ctx.fail("task.components", f"expected a non-empty array of names from {', '.join(TWIST_COMPONENTS)}")
    for k, comp in enumerate(comps):
        where = f"task.components[{k}]"
        _string(ctx, comp, where)
        if comp not in TWIST_COMPONENTS:
            ctx.fail(where, f"unknown component '{comp}' (expected one of {', '.join(TWIST_COMPONENTS)})")
        if comp in comps[:k]:
            ctx.fail(where, f"component '{comp}' listed twice")
    return TaskSpec(kind=kind, components=tuple(comps))


def _trajectory(ctx: _Ctx, value) -> dict:
    """The default trajectory as a dict: ``type`` plus SI floats/arrays (``path`` as a string)."""
    if not isinstance(value, dict):
        ctx.fail("trajectory", f"expected a table, got {_kind(value)}")
    if "type" not in value:
        ctx.fail("trajectory", "missing required key 'type'")
    kind = _string(ctx, value["type"], "trajectory.type")
    if kind not in TRAJECTORY_KEYS:
        ctx.fail("trajectory.type", f"unknown trajectory type '{kind}' (expected one of "
                                    f"{', '.join(TRAJECTORY_KEYS)})")
    keys = TRAJECTORY_KEYS[kind]
    table = _table(ctx, value, "trajectory", ("type", *keys), required=("type", *keys))
    out: dict = {"type": kind}
    for key, what in keys.items():
        where, val = _sub("trajectory", key), table[key]
        if what == "point" or (what == "length-or-point" and not _is_number(val) and not isinstance(val, str)):
            out[key] = _vector(ctx, val, where, length=True)
        elif what in ("length", "length-or-point"):
            out[key] = _number(ctx, val, where, length=True)
        elif what == "time":
            out[key] = _positive(ctx, val, where, key)
        else:
            path = Path(_string(ctx, val, where))
            if ctx.path is not None:
                path = Path(ctx.path).parent / path
            out[key] = str(path)
    _check_trajectory(ctx, out)
    return out


def _check_trajectory(ctx: _Ctx, traj: dict) -> None:
    """Consistency the trajectory generators rely on (pkm.trajectory), reported against the file."""
    span = {"sine": "duration", "line": "duration", "pick-place": "cycle_time"}.get(traj["type"])
    if span is not None:
        steps = traj[span] / traj["dt"]
        if abs(steps - round(steps)) > 1e-9 * max(1.0, steps):
            ctx.fail(f"trajectory.{span}", f"{traj[span]:g} s is not a whole multiple of dt = {traj['dt']:g} s")
    if traj["type"] == "pick-place":
        if traj["lift"] < 0:
            ctx.fail("trajectory.lift", "must not be negative (it is the height of the vertical moves)")
        travel = np.atleast_1d(traj["travel"])
        if travel.size == 3 and travel[2] != 0.0:
            ctx.fail("trajectory.travel", "must be horizontal (its z component must be 0)")
        if traj["lift"] == 0 and not np.any(travel):
            ctx.fail("trajectory", "lift and travel are both zero: the cycle does not move")
