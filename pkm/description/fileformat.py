"""Value checks of the robot-file reader: tables, names, numbers, vectors, directions and frames,
each failing with a one-line ``FILE: ENTRY: what`` :class:`~pkm.errors.RobotFileError`.
"""
from __future__ import annotations

import difflib
import math
import numbers
from itertools import combinations

import numpy as np

from pkm.description.expr import ExprError, evaluate
from pkm.description.inertia import (
    MATERIALS,
)
from pkm.errors import RobotFileError

#: Length unit names and their value in metres.
UNITS = {"m": 1.0, "mm": 1e-3}
#: Tolerance for unit-vector orthogonality, rotation matrices and degenerate joint axes.
TOL = 1e-9

FRAME_KEYS = ("origin", "x", "y", "z", "axis", "angle", "angle_deg", "rotation")


# ====================================================================== basic values
#: Largest length accepted in a robot file [m] (a joint point, a frame origin, a shape's size, a
#: trajectory's position): a thousand kilometres, far beyond any machine, far below the ~1e154 m
#: whose squares (inertias, |p|²) overflow. A point at 1e308 m passed and gave NaN downstream.
MAX_LENGTH = 1e6


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


#: Characters a name may not contain: they would break a CSV column (names become CSV headers such
#: as ``q_limb1/1``) or a one-line message. Control characters are refused as well.
NAME_FORBIDDEN = {",": "a comma", '"': "a double quote", "\n": "a line break", "\r": "a line break"}


def _name(ctx: _Ctx, value, entry: str) -> str:
    name = _string(ctx, value, entry)
    if not name.strip():
        ctx.fail(entry, "empty name")
    if "/" in name:
        ctx.fail(entry, f"'/' is not allowed in names ('{name}')")
    for char, what in NAME_FORBIDDEN.items():
        if char in name:
            ctx.fail(entry, f"{what} is not allowed in names ({name!r}: names become CSV column headers); "
                            f"rename it, e.g. with '_'")
    if any(ord(c) < 32 or ord(c) == 127 for c in name):
        ctx.fail(entry, f"control characters are not allowed in names ({name!r}); rename it")
    return name


def _bool(ctx: _Ctx, value, entry: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        ctx.fail(entry, f"expected true or false, got {_kind(value)}")
    return bool(value)


def _evaluated(ctx: _Ctx, value, entry: str, expected: str = "a number or an expression string") -> float:
    """A number or an expression string (of the file's parameters) as a float, not yet checked."""
    if _is_number(value):
        return float(value)
    if isinstance(value, str):
        try:
            return evaluate(value, ctx.params)
        except ExprError as exc:
            ctx.fail(entry, str(exc))
    ctx.fail(entry, f"expected {expected}, got {_kind(value)}")


def _number(ctx: _Ctx, value, entry: str, length: bool = False) -> float:
    """A number or expression string as a finite float; ``length=True`` converts to metres."""
    x = _evaluated(ctx, value, entry)
    if not math.isfinite(x):
        ctx.fail(entry, "not a finite number")
    if length and not abs(x * ctx.scale) <= MAX_LENGTH:
        ctx.fail(entry, f"{x * ctx.scale:g} m is out of range (lengths up to {MAX_LENGTH:g} m; beyond, poses, "
                        f"inertias and their products overflow)")
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
    # scale by the largest component first: |v| of e.g. [0, -1e308, 1e308] overflows to inf, and
    # v / inf would be a zero "unit" axis
    scale = float(np.max(np.abs(v)))
    if scale < 1e-12:
        ctx.fail(entry, "zero-length axis")
    u = v / scale
    return u / float(np.linalg.norm(u))    # 1 <= |u| <= sqrt(3): no overflow, no underflow


def _pose(R: np.ndarray, origin) -> np.ndarray:
    A = np.eye(4)
    A[:3, :3] = R
    A[:3, 3] = origin
    return A


def _inverse_pose(A: np.ndarray) -> np.ndarray:
    R, p = A[:3, :3], A[:3, 3]
    return _pose(R.T, -R.T @ p)


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
