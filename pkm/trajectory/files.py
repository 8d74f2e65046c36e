"""Trajectories from files: the CSV format ``t, x…, xd…, xdd…`` (:func:`read_csv`) and a robot file's
``[trajectory]`` table (:func:`from_spec`).
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Sequence

import numpy as np

from pkm.errors import InputError

from pkm.trajectory.base import _ROTATIONS, _WORLD_AXES, Trajectory, _columns, _finite, _vector
from pkm.trajectory.laws import line, pick_place, sine

#: Smallest time step a trajectory CSV may have, relative to max(1, |t|) (s).
MIN_STEP = 1e-9


# ====================================================================== CSV
def _base_name(column: str) -> str:
    if column.endswith("dd"):
        return column[:-2]
    if column.endswith("d"):
        return column[:-1]
    return column


def csv_lines(path, what: str) -> tuple[Path, list]:
    """``(path, lines)``: a CSV file's lines that hold something, as ``(line number, text)`` (blank lines and
    ``#`` comments skipped; a spreadsheet's byte-order mark is no part of the first column's name). An
    unreadable or non-UTF-8 file is a one-line :class:`pkm.InputError` naming it (``what``: the kind of file).
    Every CSV reader of pkm (trajectories, torque tables, identification data, path waypoints) starts here."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise InputError(f"{path}: cannot read {what}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not a text (UTF-8) CSV file: byte {exc.object[exc.start]:#04x} at offset "
                         f"{exc.start}") from None
    return path, [(k + 1, ln) for k, ln in enumerate(text.splitlines()) if ln.strip() and not ln.lstrip().startswith("#")]


def check_header(path, line: int, header, among=None) -> None:
    """A one-line :class:`pkm.InputError` for an empty column name in ``header`` (line ``line`` of ``path``)
    or a column named twice (only among the names ``among`` if given: other columns are ignored)."""
    if among is None and any(not c for c in header):
        raise InputError(f"{path}: line {line}: empty column name in the header")
    dup = sorted({c for c in header if header.count(c) > 1 and (among is None or c in among)})
    if dup:   # which of them is meant?
        raise InputError(f"{path}: line {line}: duplicate column {dup[0]!r}")


#: The unit suffixes a CSV column may carry (``"tau_limb1/1 [N·m]"``, as pkm writes them): SI units only. pkm
#: reads every value as SI, so a column in another unit is refused rather than read as if it were SI (a log in kN
#: read as N identified masses 1000× too small; times in ms gave a viscous friction 1000× too large).
SI_UNITS = frozenset({"s", "m", "rad", "N", "N·m", "Nm", "N*m", "N.m", "N m", "m/s", "rad/s", "m/s²", "m/s^2",
                      "rad/s²", "rad/s^2", "N/m", "N·m/rad", "kg", "1", "-", ""})


def column_name(path, line: int, cell: str) -> str:
    """A CSV header cell without its unit suffix (``"tau_limb1/1 [N·m]"`` → ``"tau_limb1/1"``); a unit that is not
    one of :data:`SI_UNITS` (ms, mm, deg, kN, N·mm …) is a one-line :class:`pkm.InputError` naming the column."""
    h = cell.strip()
    if h.endswith("]") and "[" in h:
        unit = h[h.rindex("[") + 1:-1].strip()
        h = h[:h.rindex("[")].rstrip()
        if unit not in SI_UNITS:
            raise InputError(f"{path}: line {line}: column {h!r} is in {unit!r}: pkm reads SI units (s, m, rad, N, "
                             f"N·m): convert the column")
    return h


def read_csv(path, names: Sequence[str] | None = None) -> Trajectory:
    """Read a trajectory CSV (``t, x…, xd…, xdd…`` with a header line).

    ``names`` selects the coordinates (the file may hold more columns, and in any order); every
    one of ``t``, ``name``, ``name + "d"``, ``name + "dd"`` must be present — or only ``t`` and the
    positions, whose rates and accelerations are then those of a cubic spline through them
    (:func:`_differentiated`).  Without ``names``
    the coordinates are inferred from the header (column names with a trailing ``d``/``dd``
    stripped, in order of first appearance) and all of them are read.  Blank lines and lines
    starting with ``#`` are skipped.  Times must increase by more than :data:`MIN_STEP` ×
    max(1, |t|) from row to row.  Any defect raises a :class:`pkm.InputError` (a ValueError) naming the file
    (and the column or line).

    >>> import tempfile, pathlib
    >>> tmp = tempfile.TemporaryDirectory()
    >>> path = pathlib.Path(tmp.name) / "m.csv"
    >>> _ = path.write_text("t,x,z,xd,zd,xdd,zdd\\n0,0,0,0,0,0,0\\n0.5,1,2,0,0,0,0\\n")
    >>> tr = read_csv(path)
    >>> tr.names, tr.x.tolist()
    (('x', 'z'), [[0.0, 0.0], [1.0, 2.0]])
    >>> read_csv(path, names=["z"]).x.tolist()
    [[0.0], [2.0]]
    >>> read_csv(path, names=["x", "y"])
    Traceback (most recent call last):
    ...
    pkm.errors.InputError: ...m.csv: missing column 'y' ...
    >>> tmp.cleanup()
    """
    path, rows = csv_lines(path, "trajectory file")
    if not rows:
        raise InputError(f"{path}: empty trajectory file (expected a header line t,x,…)")
    header_line, header = rows[0][0], [c.strip() for c in rows[0][1].split(",")]
    check_header(path, header_line, header)
    if names is None:
        names = []
        for c in header:
            b = _base_name(c)
            if c != "t" and b and b not in names:
                names.append(b)
    names = tuple(names)
    if not names:
        raise InputError(f"{path}: no coordinate columns (expected t,x,…,xd,…,xdd,…)")
    # positions only (no rate or acceleration column at all): differentiated by a cubic spline below
    positions_only = all(n in header and n + "d" not in header and n + "dd" not in header for n in names)
    columns = ["t", *names] if positions_only else _columns(names)
    for col in columns:
        if col not in header:
            raise InputError(f"{path}: missing column {col!r} (give every coordinate's rate …d and acceleration "
                             f"…dd, or positions only: then pkm differentiates them with a cubic spline)")
    index = [header.index(c) for c in columns]
    data = np.empty((len(rows) - 1, len(index)))
    for r, (lineno, row_text) in enumerate(rows[1:]):
        fields = row_text.split(",")
        if len(fields) != len(header):
            raise InputError(f"{path}: line {lineno}: {len(fields)} values, expected {len(header)} "
                             f"(one per header column)")
        for j, k in enumerate(index):
            try:
                v = float(fields[k])
            except ValueError:
                raise InputError(f"{path}: line {lineno}: column {header[k]!r}: not a number: "
                                 f"{fields[k].strip()!r}") from None
            if not math.isfinite(v):
                raise InputError(f"{path}: line {lineno}: column {header[k]!r}: {v} is not finite")
            data[r, j] = v
    if data.shape[0] == 0:
        raise InputError(f"{path}: no data rows after the header")
    t = data[:, 0]
    if t.size > 1:
        # strictly increasing, by steps that are not lost against t itself: differences of nearly
        # equal times (or denormal steps) would make the rates and step ratios NaN or inf downstream
        step, floor = np.diff(t), MIN_STEP * np.maximum(1.0, np.abs(t[1:]))
        bad = np.flatnonzero(~(step > floor))
        if bad.size:
            k = int(bad[0])
            lines = [lineno for lineno, _ in rows[1:]]
            raise InputError(f"{path}: line {lines[k + 1]}: times must be strictly increasing by more than "
                             f"{MIN_STEP:g} x max(1, |t|) per row, got t = {float(t[k])!r} then {float(t[k + 1])!r} s")
    d = len(names)
    if positions_only:
        data = _differentiated(path, data)
    try:
        return Trajectory(t=data[:, 0], x=data[:, 1:1 + d], xd=data[:, 1 + d:1 + 2 * d],
                          xdd=data[:, 1 + 2 * d:], names=names)
    except ValueError as exc:
        raise InputError(f"{path}: {exc}") from None


def _differentiated(path, data: np.ndarray) -> np.ndarray:
    """``[t, x…]`` → ``[t, x…, ẋ…, ẍ…]``: rates and accelerations of an interpolating cubic spline
    through the positions (not-a-knot ends: exact for cubic motions; the accelerations are
    continuous and piecewise linear, so sample a motion finely enough for its accelerations)."""
    from scipy.interpolate import CubicSpline

    if data.shape[0] < 4:
        raise InputError(f"{path}: a positions-only trajectory needs at least 4 rows to be differentiated, got "
                         f"{data.shape[0]} (or give the rates …d and accelerations …dd)")
    t = data[:, 0]
    with np.errstate(all="ignore"):
        try:
            spline = CubicSpline(t, data[:, 1:], axis=0)
            out = np.column_stack([data, spline(t, 1), spline(t, 2)])
        except ValueError:   # scipy: "`dydx` must contain only finite values"
            out = np.full((1, 1), np.nan)
    if not np.all(np.isfinite(out)):
        raise InputError(f"{path}: the positions' rates or accelerations overflow when differentiated (positions "
                         f"up to {np.max(np.abs(data[:, 1:])):.3g}, time steps from {np.min(np.diff(t)):.3g} s): "
                         f"give values in SI units (m, rad, s) or the rates …d and accelerations …dd")
    return out


# ====================================================================== robot files
_SPEC_KEYS = {
    "sine": ("center", "amplitude", "period", "duration", "dt"),
    "line": ("start", "end", "duration", "dt"),
    "pick-place": ("start", "lift", "travel", "cycle_time", "dt"),
    "file": ("path",),
}


def from_spec(traj: dict, task_names: Sequence[str] = ("x", "y", "z")) -> Trajectory:
    """The default trajectory of a robot file, in the task coordinates ``task_names``.

    ``traj`` is the validated dict :func:`pkm.description.robotfile.load_spec` stores in
    ``RobotSpec.trajectory`` (SI units; ``type`` is ``sine``, ``line``, ``pick-place`` or
    ``file``).  Its vectors are 3-D world vectors; the task coordinates ``x``, ``y``, ``z`` select
    their components (``task_names`` as from :meth:`pkm.description.spec.TaskSpec.coordinate_names`).

    * Positions (``center``, ``start``) may have any value in a world axis the task does not
      control (the robot's fixed offset); displacements (``amplitude``, ``end − start``,
      ``travel``) must be 0 there, else the motion could not be followed -- ValueError.
    * Rotational task coordinates (``rx``, ``ry``, ``rz``, the rotation vector about the reference
      orientation) follow ``rotation_center`` + ``rotation_amplitude``·sin (``sine``) or move
      rest-to-rest from ``start_rotation`` to ``end_rotation`` with the same quintic law (``line``)
      where the table gives them (radians), else they are held at 0 (the reference orientation);
      a rotation in an axis the task does not control is a ValueError. A task with no translational
      coordinate needs these keys (its ``center``/``start`` are then unused).
    * ``pick-place`` lifts along world +z (a ``z`` task coordinate is required); a scalar
      ``travel`` is along world x.
    * ``file`` reads the CSV at ``path`` with :func:`read_csv`, taking the columns named by
      ``task_names`` (the file may hold more).

    >>> from pkm.description.robotfile import load_spec
    >>> spec = load_spec("robots/irsbot2.toml")
    >>> tr = from_spec(spec.trajectory, spec.task.coordinate_names())
    >>> tr.names, tr.x.shape
    (('x', 'z'), (1001, 2))
    """
    if not isinstance(traj, dict):
        raise InputError(f"trajectory must be a dict (RobotSpec.trajectory), got {type(traj).__name__}")
    kind = traj.get("type")
    if kind not in _SPEC_KEYS:
        raise InputError(f"unknown trajectory type {kind!r} (expected one of {', '.join(_SPEC_KEYS)})")
    missing = [k for k in _SPEC_KEYS[kind] if k not in traj]
    if missing:
        raise InputError(f"{kind} trajectory: missing key {missing[0]!r}")
    names = (task_names,) if isinstance(task_names, str) else tuple(task_names)
    if not names:
        raise InputError("no task coordinate names given")
    unknown = [n for n in names if n not in _WORLD_AXES and n not in _ROTATIONS]
    if unknown:
        raise InputError(f"unknown task coordinate {unknown[0]!r} (expected x, y, z, rx, ry, rz)")
    if kind == "file":
        return read_csv(traj["path"], names=names)

    trans = tuple(n for n in names if n in _WORLD_AXES)
    rots = tuple(n for n in names if n in _ROTATIONS)
    rot_keys = {"sine": ("rotation_center", "rotation_amplitude"), "line": ("start_rotation", "end_rotation")}.get(kind)
    rotating = rot_keys is not None and any(k in traj for k in rot_keys)
    if not trans and not rotating:
        raise InputError(f"a {kind} trajectory moves the platform's position, but the task "
                         f"coordinates {', '.join(names)} have no translation")
    idx = [_WORLD_AXES[n] for n in trans]
    dropped = [a for a in range(3) if a not in idx]

    def world(key):
        return _vector(traj[key], f"{kind} trajectory {key}", 3)

    def displacement(v, what):
        for a in dropped:
            if v[a] != 0:
                raise InputError(f"{kind} trajectory {what} has a non-zero {'xyz'[a]} component "
                                 f"({v[a]!r}), but the task coordinates are {', '.join(names)}")
        return v[idx]

    def rotation(key):
        v = _vector(traj[key], f"{kind} trajectory {key}", 3) if key in traj else np.zeros(3)
        for a in range(3):
            if v[a] != 0 and _ROTATIONS[a] not in rots:
                raise InputError(f"{kind} trajectory {key} has a non-zero {_ROTATIONS[a]} component ({v[a]!r}), "
                                 f"but the task coordinates are {', '.join(names)}")
        return v[[_ROTATIONS.index(n) for n in rots]]

    if kind == "sine":
        c, a = world("center")[idx], displacement(world("amplitude"), "amplitude")
        if rotating:
            c, a = np.concatenate([c, rotation("rotation_center")]), np.concatenate([a, rotation("rotation_amplitude")])
        tr = sine(c, a, traj["period"], traj["duration"], traj["dt"], names=trans + rots if rotating else trans)
    elif kind == "line":
        p0, p1 = world("start"), world("end")
        displacement(p1 - p0, "end - start")
        p0, p1 = p0[idx], p1[idx]
        if rotating:
            p0, p1 = np.concatenate([p0, rotation("start_rotation")]), np.concatenate([p1, rotation("end_rotation")])
        tr = line(p0, p1, traj["duration"], traj["dt"], names=trans + rots if rotating else trans)
    else:
        if "z" not in trans:
            raise InputError(f"a pick-place trajectory lifts along z, but the task coordinates "
                             f"are {', '.join(names)}")
        travel = traj["travel"]
        if np.ndim(travel) == 0:
            travel = [_finite(travel, "pick-place trajectory travel"), 0.0, 0.0]
        travel = displacement(_vector(travel, f"{kind} trajectory travel", 3), "travel")
        tr = pick_place(world("start")[idx], traj["lift"], travel, traj["cycle_time"], traj["dt"],
                        vertical_axis=trans.index("z"), names=trans)
    if tr.names == names:
        return tr
    # Task order; rotational coordinates without a motion are held at 0.
    out = {key: np.zeros((len(tr), len(names))) for key in ("x", "xd", "xdd")}
    for col, n in enumerate(names):
        if n in tr.names:
            j = tr.names.index(n)
            for key in out:
                out[key][:, col] = getattr(tr, key)[:, j]
    return Trajectory(t=tr.t, names=names, **out)
