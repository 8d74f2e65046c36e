"""Read robot files (TOML) into validated :class:`~pkm.description.spec.RobotSpec` objects.

The format is described in ``docs/robot-file-format.md``. :func:`load_spec` reads a file,
:func:`parse_spec` an already-parsed dict (tests, generated robots). Both check everything,
convert to SI units and either return a complete RobotSpec or raise
:class:`~pkm.errors.RobotFileError` with a one-line ``FILE: ENTRY: what`` message — never a
half-built result.

Entries in messages name the table path, e.g. ``bodies[1] ("arm").inertia``,
``limb.joints[0] ("1").parent`` or ``parameters.h``.
"""

from __future__ import annotations

import math
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from pkm.description.bodies import _bodies, _body
from pkm.description.drives import joint_drive
from pkm.description.expr import ParameterError, resolve_parameters
from pkm.description.fileformat import (
    TOL,
    UNITS,
    _bool,
    _Ctx,
    _direction,
    _frame,
    _inverse_pose,
    _is_number,
    _item,
    _kind,
    _name,
    _names,
    _number,
    _pose,
    _positive,
    _string,
    _sub,
    _table,
    _tables,
    _vector,
)
from pkm.description.limits import parse_limits
from pkm.description.spec import (
    JOINT_DOF,
    TWIST_COMPONENTS,
    BodySpec,
    JointSpec,
    LimbSpec,
    MountSpec,
    RobotSpec,
    TaskSpec,
    instance_name,
)
from pkm.errors import RobotFileError

__all__ = ["load_spec", "parse_spec"]

TOP_KEYS = ("name", "description", "units", "gravity", "ground", "platform", "bodies", "joints",
            "limb", "task", "trajectory", "materials", "parameters")
JOINT_KEYS = ("name", "type", "parent", "child", "point", "axis", "axes", "pitch", "actuated", "cut",
              "drive", "friction", "limits")
LIMB_KEYS = ("independent", "platform_frame", "bodies", "joints", "mounts")
TASK_TYPES = {
    "translational": ("vx", "vy", "vz"),
    "planar": ("wz", "vx", "vy"),
    "scara": ("wz", "vx", "vy", "vz"),
    "rotational": ("wx", "wy", "wz"),
    "spatial": ("wx", "wy", "wz", "vx", "vy", "vz"),
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
#: Optional rotation keys of a trajectory (rotation vectors about the platform's reference orientation,
#: radians, or degrees with the suffix ``_deg``): the orientation part of a sine or a line.
TRAJECTORY_ROTATION_KEYS = {"sine": ("rotation_center", "rotation_amplitude"),
                            "line": ("start_rotation", "end_rotation")}


# ====================================================================== entry points
def load_spec(path, parameters: dict | None = None) -> RobotSpec:
    """Read, validate and convert the robot file at ``path``; ``parameters`` overrides ``[parameters]``."""
    path = Path(path)
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
        # a byte-order mark (Windows editors write one) is no TOML statement: "Invalid statement"
        data = tomllib.loads(raw.removeprefix(b"\xef\xbb\xbf").decode("utf-8"))
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
    except (RecursionError, MemoryError):  # tomllib parses nested arrays/tables recursively
        raise RobotFileError(path, "", "TOML arrays or inline tables nested too deeply (or the file is too "
                                       "large) to read; a robot file needs only a few levels") from None
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
            if isinstance(table[key], str):
                # a derived parameter (the platform's depth h = sqrt(c^2 - d^2)) set by hand breaks what the file
                # derives it for: h = 500 with rods of c = 1000 swept as an "ok" design with other torques
                ctx.fail(_sub("parameters", key), f"'{key}' is derived in the file ({key} = \"{table[key]}\"): "
                                                  f"override the parameters it is derived from, or edit the file")
            defs[key] = val
    try:
        return resolve_parameters(defs)
    except ParameterError as exc:
        ctx.fail(_sub("parameters", exc.name), str(exc))


def _materials(ctx: _Ctx, value) -> dict[str, float]:
    table = _table(ctx, value, "materials", allowed=value.keys() if isinstance(value, dict) else ())
    return {k: _positive(ctx, v, _sub("materials", k), "density") for k, v in table.items()}


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
    drive, friction = joint_drive(ctx, table, entry, jtype, actuated)
    limits = parse_limits(ctx, table["limits"], entry, jtype, actuated) if "limits" in table else None
    return JointSpec(name=name, type=jtype, parent=ends["parent"], child=ends["child"], point=point,
                     axes=axes, pitch=pitch, actuated=actuated, cut=cut, drive=drive, friction=friction,
                     limits=limits)


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
        item = _table(ctx, item, where, ("name", "frame", "mirror"))
        name = _name(ctx, item.get("name", f"limb{i + 1}"), _sub(where, "name"))
        if name in seen:
            ctx.fail(_sub(where, "name"), f"duplicate mount name '{name}' (also {seen[name]})")
        seen[name] = where
        R, origin = _frame(ctx, item["frame"], _sub(where, "frame")) if "frame" in item else (np.eye(3), None)
        S_0 = _pose(R, np.zeros(3) if origin is None else origin)
        mirror = ""
        if "mirror" in item:
            mirror = _string(ctx, item["mirror"], _sub(where, "mirror"))
            if mirror not in ("x", "y", "z"):
                ctx.fail(_sub(where, "mirror"), f"expected \"x\", \"y\" or \"z\" (the coordinate of the limb's "
                                                f"construction frame that the reflection negates), got '{mirror}'")
        D = np.eye(4)
        if mirror:
            D["xyz".index(mirror), "xyz".index(mirror)] = -1.0
        S_p = _inverse_pose(A_p) @ S_0 @ D @ A_p_prime  # improper with a mirror (a reflection)
        if not np.all(np.isfinite(S_p)):
            ctx.fail(_sub(where, "frame"), "platform mount is not finite (numbers too large)")
        mounts.append(MountSpec(name=name, base=S_0, platform=S_p, mirror=mirror))

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
    table = _table(ctx, value, "task", ("type", "components", "ideal_constraint"), required=("type",))
    kind = _string(ctx, table["type"], "task.type")
    if kind not in TASK_TYPES:
        ctx.fail("task.type", f"unknown task type '{kind}' (expected one of {', '.join(TASK_TYPES)})")
    if kind != "select":
        if "components" in table:
            ctx.fail("task.components", "'components' is only used with type = \"select\"")
        comps = TASK_TYPES[kind]
    else:
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
    ideal = _ideal_constraint(ctx, table.get("ideal_constraint", False), tuple(comps))
    return TaskSpec(kind=kind, components=tuple(comps), ideal=ideal)


def _ideal_constraint(ctx: _Ctx, value, comps: tuple[str, ...]) -> tuple[str, ...]:
    """``task.ideal_constraint``: ``true`` (every twist component outside the task), ``false``, or
    a non-empty array of twist components outside the task, as a tuple in :data:`TWIST_COMPONENTS` order."""
    where = "task.ideal_constraint"
    outside = [c for c in TWIST_COMPONENTS if c not in comps]
    if isinstance(value, bool):
        return tuple(outside) if value else ()
    if not isinstance(value, list) or not value:
        ctx.fail(where, f"expected true, false or a non-empty array of twist components outside the task space "
                        f"({', '.join(outside) or 'none'}), got {_kind(value)}")
    for k, comp in enumerate(value):
        at = f"{where}[{k}]"
        _string(ctx, comp, at)
        if comp not in TWIST_COMPONENTS:
            ctx.fail(at, f"unknown component '{comp}' (expected one of {', '.join(TWIST_COMPONENTS)})")
        if comp in comps:
            ctx.fail(at, f"'{comp}' is a task component (the actuators control it), so no ideal constraint can "
                         f"hold it: list components outside the task space ({', '.join(outside) or 'none'})")
        if comp in value[:k]:
            ctx.fail(at, f"component '{comp}' listed twice")
    return tuple(c for c in TWIST_COMPONENTS if c in value)


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
    rot_keys = TRAJECTORY_ROTATION_KEYS.get(kind, ())
    optional = tuple(k + sfx for k in rot_keys for sfx in ("", "_deg"))
    table = _table(ctx, value, "trajectory", ("type", *keys, *optional), required=("type", *keys))
    out: dict = {"type": kind}
    for key in rot_keys:
        if key in table and key + "_deg" in table:
            ctx.fail(_sub("trajectory", key), f"give '{key}' (radians) or '{key}_deg', not both")
        for sfx, unit in (("", 1.0), ("_deg", np.pi / 180.0)):
            if key + sfx in table:
                out[key] = unit * _vector(ctx, table[key + sfx], _sub("trajectory", key + sfx))
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
        if not math.isfinite(steps):   # 1e308 / 0.01 or 1 / 5e-324: round() would raise OverflowError
            ctx.fail(f"trajectory.{span}", f"{traj[span]:g} s / dt = {traj['dt']:g} s is too many samples "
                                           f"(the ratio overflows)")
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
