"""Write a robot as a pkm robot file (TOML): every body and joint written out in world coordinates
at the reference configuration, SI units (``units = "m"``), limb instances as ``mount_name``."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import numpy as np

from pkm.errors import InputError


def flat_names(spec):
    """Bodies and joints of the expanded robot with ``mount/name`` written ``mount_name`` (URDF and
    robot-file names allow no '/'); a clash is refused."""
    bodies, joints = spec.expanded()
    seen = {spec.ground}
    def flat(n):
        return n.replace("/", "_")
    for n in [b.name for b in bodies] + [j.name for j in joints]:
        f = flat(n)
        if f != n and f in seen | {b.name for b in bodies} | {j.name for j in joints}:
            raise InputError(f"cannot name {n!r} as {f!r} in the exported file: that name is taken")
        seen.add(f)
    return ([replace(b, name=flat(b.name)) for b in bodies],
            [replace(j, name=flat(j.name), parent=flat(j.parent), child=flat(j.child)) for j in joints])


def _value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, (int, float, np.floating, np.integer)):
        f = float(v)
        return repr(f) if math.isfinite(f) else ("inf" if f > 0 else "-inf")
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{json.dumps(k)} = {_value(x)}" for k, x in v.items()) + " }"
    return "[" + ", ".join(_value(x) for x in list(v)) + "]"


def dumps(doc: dict) -> str:
    """TOML text of a robot-file table: scalars and inline values first, then arrays of tables."""
    lines, arrays, tables = [], [], []
    for k, v in doc.items():
        if isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
            arrays.append((k, v))
        elif isinstance(v, dict):
            tables.append((k, v))
        else:
            lines.append(f"{k} = {_value(v)}")
    for k, v in tables:
        lines += ["", f"[{k}]"] + [f"{kk} = {_value(vv)}" for kk, vv in v.items()]
    for k, items in arrays:
        for item in items:
            lines += ["", f"[[{k}]]"] + [f"{kk} = {_value(vv)}" for kk, vv in item.items()]
    return "\n".join(lines) + "\n"


def _task(spec) -> dict:
    t = spec.task
    out = {"type": t.kind}
    if t.kind == "select":
        out["components"] = list(t.components)
    if t.ideal:
        out["ideal_constraint"] = list(t.ideal)
    return out


def trajectory_table(spec) -> dict:
    """The default trajectory as a robot-file table (SI values; a file's path made absolute)."""
    out = {}
    for k, v in spec.trajectory.items():
        if k == "path":
            from pathlib import Path

            v = str(Path(v).resolve())
        out[k] = [float(x) for x in v] if isinstance(v, np.ndarray) else v
    return out


def _limits(j) -> dict:
    lim, out = j.limits, {}
    if lim.ranges is not None:
        if j.dof == 1:
            out["range"] = [float(x) for x in lim.ranges[0]]
        else:
            out["ranges"] = [[float(x) for x in r] for r in lim.ranges]
    if lim.cone is not None:
        out["cone"] = float(lim.cone)
        if lim.cone_axis is not None:
            out["cone_axis"] = [float(x) for x in lim.cone_axis]
    if lim.velocity is not None:
        out["velocity"] = float(lim.velocity)
    return out


def _drive(d) -> dict:
    keys = ("gear_ratio", "rotor_inertia", "viscous", "coulomb", "coulomb_speed", "efficiency",
            "rated_torque", "peak_torque", "rated_speed", "max_speed")
    return {k: float(getattr(d, k)) for k in keys if hasattr(d, k) and getattr(d, k) is not None}


def spec_document(spec) -> dict:
    """The robot-file table of ``spec`` with every body and joint written out (no [limb], no parameters)."""
    bodies, joints = flat_names(spec)
    doc = {"name": spec.name}
    if spec.description:
        doc["description"] = spec.description
    doc.update(units="m", gravity=[float(x) for x in spec.gravity], ground=spec.ground)
    if spec.platform is not None:
        doc["platform"] = spec.platform
    if spec.task is not None:
        doc["task"] = _task(spec)
    if spec.trajectory is not None:
        doc["trajectory"] = trajectory_table(spec)
    doc["bodies"] = [{"name": b.name, "mass": float(b.mass), "com": [float(x) for x in b.com],
                      "inertia": b.inertia.tolist(),
                      "frame": {"origin": [float(x) for x in b.frame[:3, 3]], "rotation": b.frame[:3, :3].tolist()}}
                     for b in bodies]
    out = []
    for j in joints:
        t = {"name": j.name, "type": j.type, "parent": j.parent, "child": j.child,
             "point": [float(x) for x in j.point]}
        if j.type in ("U", "S"):
            t["axes"] = j.axes.tolist()
        else:
            t["axis"] = [float(x) for x in j.axes[0]]
        if j.type == "H":
            t["pitch"] = float(j.pitch)
        if j.actuated:
            t["actuated"] = True
        if j.cut is not None:
            t["cut"] = bool(j.cut)
        if j.drive is not None:
            t["drive"] = _drive(j.drive)
        if j.friction is not None:
            t["friction"] = _drive(j.friction)
        if j.limits is not None and _limits(j):
            t["limits"] = _limits(j)
        out.append(t)
    doc["joints"] = out
    return doc


def toml_text(spec) -> tuple[str, list[str]]:
    """The robot file of ``spec`` as TOML text, and notes on what it does not keep."""
    notes = []
    head = f"# {spec.name}: written out by pkm convert (world frame, reference configuration, SI units)\n"
    return head.replace("\n", " ").rstrip() + "\n" + dumps(spec_document(spec)), notes
