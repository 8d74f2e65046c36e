"""Read a URDF (+ the Extended-URDF closure YAML + a small pkm side file) as a :class:`RobotSpec`.

pkm's description is the robot at its reference configuration (all joint variables zero) in world
coordinates (:mod:`pkm.description.spec`), so the reader places every link frame by composing the
joint origins from the root (``T_child = T_parent · origin``, origin = translation · Rz(y)Ry(p)Rx(r)):

* the root link is the ground; a ``fixed`` joint and a ``6d`` closure weld two links into one body
  (masses added, the inertia moved to the common centre of mass by the parallel-axis theorem, kept in
  the axes of the body closest to the root);
* ``revolute``/``continuous`` → R and ``prismatic`` → P through the child link's origin along
  ``R_child · axis``; ``limit lower/upper`` → ``limits.range`` (lower = upper = 0, URDF's default,
  is no range), ``velocity`` → ``limits.velocity`` of an actuated joint;
* a massless link between two revolute joints whose axes meet (2 → U) or three concurrent axes
  (two massless links, → S) becomes one U or S joint (a massless body has no dynamics, so the
  chain is exactly the multi-DOF joint; pkm bodies need a mass);
* a ``3d`` closure → an S joint at the frames' common origin (pkm chooses the cut joints as for a
  TOML file; the side file's ``cut_joints`` marks some, as ``cut = true`` does);
* ``<inertial>``: mass, centre of mass and the inertia resolved in the inertial frame's axes.

Things pkm does not model are one-line notes (visuals/collisions, ``dynamics``, transmissions);
things that would change the answer are refused in one line (mimic, floating and planar joints,
URDF+ ``<coupling>``, closures that are not closed at the reference configuration). URDF+ ``<loop>``
joints (:func:`_loops`) join their predecessor and successor links like any joint.
"""

from __future__ import annotations

import math
import tomllib
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np

from pkm.description.fileformat import MAX_LENGTH
from pkm.description.robotfile import parse_spec
from pkm.errors import RobotFileError

from .closures import read_closures
from .urdf_graph import build_document

#: Keys of the side file ``NAME.pkm.toml`` (passed on to the robot file's top level).
SIDE_KEYS = ("name", "description", "gravity", "platform", "task", "trajectory", "cut_joints")


def rpy_matrix(rpy) -> np.ndarray:
    """URDF's fixed-axis roll-pitch-yaw: ``R = Rz(yaw) Ry(pitch) Rx(roll)``."""
    r, p, y = rpy
    cr, sr, cp, sp, cy, sy = math.cos(r), math.sin(r), math.cos(p), math.sin(p), math.cos(y), math.sin(y)
    return np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                     [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                     [-sp, cp * sr, cp * cr]])


class _Reader:
    def __init__(self, path):
        self.path = Path(path)
        self.notes: list[str] = []

    def fail(self, entry, what):
        raise RobotFileError(self.path, entry, what)

    def floats(self, elem, attr, entry, n=3, default=None):
        text = elem.get(attr) if elem is not None else None
        if text is None:
            if default is None:
                self.fail(entry, f"missing attribute '{attr}'")
            return np.array(default, dtype=float)
        try:
            vals = [float(v) for v in text.split()]
        except ValueError:
            self.fail(entry, f"'{attr}' must be {n} numbers, got {text!r}")
        if len(vals) != n or not all(math.isfinite(v) for v in vals):
            self.fail(entry, f"'{attr}' must be {n} finite numbers, got {text!r}")
        return np.array(vals)

    def scalar(self, elem, attr, entry, default=None):
        return float(self.floats(elem, attr, entry, 1, None if default is None else [default])[0])

    def origin(self, elem, entry):
        o = elem.find("origin")
        T = np.eye(4)
        T[:3, :3] = rpy_matrix(self.floats(o, "rpy", entry + ".origin", default=[0, 0, 0]))
        T[:3, 3] = self.floats(o, "xyz", entry + ".origin", default=[0, 0, 0])
        return T


def _parse_xml(r: _Reader):
    try:
        root = ET.parse(r.path).getroot()
    except FileNotFoundError:
        r.fail("", "file not found")
    except IsADirectoryError:
        r.fail("", "is a directory, not a URDF file")
    except ET.ParseError as exc:
        r.fail("", f"XML syntax error: {exc}")
    except OSError as exc:
        r.fail("", f"cannot read file: {exc.strerror or exc}")
    if root.tag != "robot":
        r.fail("", f"the root element is <{root.tag}>, expected <robot>")
    return root


def _links(r: _Reader, root) -> dict:
    links, visual = {}, False
    for k, el in enumerate(root.findall("link")):
        name = el.get("name")
        if not name:
            r.fail(f"link[{k}]", "missing attribute 'name'")
        if name in links:
            r.fail(f"link '{name}'", "link name given twice")
        visual |= el.find("visual") is not None or el.find("collision") is not None
        mass, com, inertia = 0.0, np.zeros(3), np.zeros((3, 3))
        inert = el.find("inertial")
        if inert is not None:
            entry = f"link '{name}'.inertial"
            To = r.origin(inert, entry)
            mass = r.scalar(inert.find("mass"), "value", entry + ".mass")
            if mass < 0:
                r.fail(entry + ".mass", f"negative mass {mass:g}")
            I = inert.find("inertia")
            if I is None:
                r.fail(entry, "missing <inertia>")
            c = {a: r.scalar(I, a, entry + ".inertia", default=0.0) for a in ("ixx", "iyy", "izz", "ixy", "ixz", "iyz")}
            Ii = np.array([[c["ixx"], c["ixy"], c["ixz"]], [c["ixy"], c["iyy"], c["iyz"]], [c["ixz"], c["iyz"], c["izz"]]])
            com, inertia = To[:3, 3], To[:3, :3] @ Ii @ To[:3, :3].T   # in the link frame's axes
        links[name] = dict(mass=mass, com=com, inertia=inertia)
    if visual:
        r.notes.append("visual and collision geometry is not used (pkm models inertia and joints only)")
    for tag in ("transmission", "gazebo"):
        if root.find(tag) is not None:
            r.notes.append(f"<{tag}> elements are ignored (actuated joints come from the closure YAML's name_mot)")
    if root.find("coupling") is not None:
        r.fail("coupling", "URDF+ <coupling> elements (geared joints) are not supported: pkm has no coupled joints")
    return links


def _joints(r: _Reader, root, links) -> list[dict]:
    joints, names, parent_of = [], set(), {}
    for k, el in enumerate(root.findall("joint")):
        name, jtype = el.get("name"), el.get("type")
        entry = f"joint '{name}'" if name else f"joint[{k}]"
        if not name:
            r.fail(entry, "missing attribute 'name'")
        if name in names:
            r.fail(entry, "joint name given twice")
        names.add(name)
        if jtype in ("floating", "planar"):
            r.fail(entry, f"{jtype} joints are not supported (pkm's joints are R, P, H, C, U, S; a floating "
                          f"base is not a parallel robot)")
        if jtype not in ("revolute", "continuous", "prismatic", "fixed"):
            r.fail(entry, f"unknown joint type {jtype!r} (expected revolute, continuous, prismatic or fixed)")
        if el.find("mimic") is not None:
            r.fail(entry, "<mimic> is not supported (pkm has no coupled joints): remove it or model the coupling")
        if el.find("dynamics") is not None:
            r.notes.append(f"joint '{name}': <dynamics> damping/friction is ignored (pkm's friction is a "
                           f"'friction' or 'drive' table of the robot file)")
        pel, cel = el.find("parent"), el.find("child")
        parent = pel.get("link") if pel is not None else None
        child = cel.get("link") if cel is not None else None
        for what, link in (("parent", parent), ("child", child)):
            if not link:
                r.fail(entry, f"missing <{what} link=...>")
            if link not in links:
                r.fail(entry, f"{what} link {link!r} is not a link of the file")
        if child in parent_of:
            r.fail(entry, f"link {child!r} is the child of two joints ('{parent_of[child]}' and '{name}'): a URDF "
                          f"is a tree; close loops in the closure YAML")
        parent_of[child] = name
        axis, limits, lim = _axis_and_range(r, el, entry, jtype)
        if lim is not None and jtype != "fixed":
            vel = r.scalar(lim, "velocity", entry + ".limit", 0.0)
            if vel < 0:
                r.fail(entry + ".limit", f"negative velocity {vel:g}")
            if vel > 0:
                limits["velocity"] = vel
        joints.append(dict(name=name, type=jtype, parent=parent, child=child, origin=r.origin(el, entry),
                           axis=axis / np.linalg.norm(axis) if jtype != "fixed" else axis, limits=limits))
    return joints


def _axis_and_range(r: _Reader, el, entry: str, kind: str):
    """A joint's or loop's ``<axis xyz>`` (default x; not zero unless fixed), its ``<limit lower upper>``
    as ``{"range": [lo, hi]}`` (revolute and prismatic; none where lower = upper), and the ``<limit>``."""
    axis = r.floats(el.find("axis"), "xyz", entry + ".axis", default=[1, 0, 0])
    if kind != "fixed" and np.linalg.norm(axis) < 1e-12:
        r.fail(entry + ".axis", "zero axis")
    lim = el.find("limit")
    limits = {}
    if lim is not None and kind in ("revolute", "prismatic"):
        lo, hi = r.scalar(lim, "lower", entry + ".limit", 0.0), r.scalar(lim, "upper", entry + ".limit", 0.0)
        if lo > hi:
            r.fail(entry + ".limit", f"lower {lo:g} > upper {hi:g}")
        if lo < hi:
            limits["range"] = [lo, hi]
    return axis, limits, lim


LOOP_TYPES = {"revolute": "R", "continuous": "R", "prismatic": "P", "spherical": "S", "fixed": "fixed"}


def _loops(r: _Reader, root, links, names) -> list[dict]:
    """URDF+ loop joints: ``<loop name type>`` with ``<predecessor link=…>`` and ``<successor link=…>``
    (``name=`` is taken too), the joint frame on each given by ``<predecessor_origin>``/``<successor_origin>``
    or an ``<origin>`` inside ``<predecessor>``/``<successor>`` (default identity), ``<axis>`` in that
    frame, ``<limit>`` as a joint's."""
    out = []
    for k, el in enumerate(root.findall("loop")):
        name, kind = el.get("name"), el.get("type")
        entry = f"loop '{name}'" if name else f"loop[{k}]"
        if not name:
            r.fail(entry, "missing attribute 'name'")
        if name in names:
            r.fail(entry, "name given twice (joints and loops share names)")
        names.add(name)
        if kind not in LOOP_TYPES:
            r.fail(entry, f"unknown loop joint type {kind!r} (expected {', '.join(LOOP_TYPES)})")
        ends = {}
        for side in ("predecessor", "successor"):
            e = el.find(side)
            link = e.get("link") or e.get("name") if e is not None else None
            if not link:
                r.fail(entry, f"missing <{side} link=...>")
            if link not in links:
                r.fail(entry, f"{side} link {link!r} is not a link of the file")
            holder = el.find(f"{side}_origin")
            ends[side] = (link, r.origin(e, f"{entry}.{side}") if holder is None
                          else _origin_of(r, holder, f"{entry}.{side}_origin"))
        axis, limits, _ = _axis_and_range(r, el, entry, kind)
        out.append(dict(name=name, type=LOOP_TYPES[kind], pred=ends["predecessor"], succ=ends["successor"],
                        axis=axis / max(np.linalg.norm(axis), 1e-300), limits=limits))
    return out


def _origin_of(r: _Reader, elem, entry):
    T = np.eye(4)
    T[:3, :3] = rpy_matrix(r.floats(elem, "rpy", entry, default=[0, 0, 0]))
    T[:3, 3] = r.floats(elem, "xyz", entry, default=[0, 0, 0])
    return T


def _place(r: _Reader, links, joints):
    """World frame of every link at the reference configuration, and the root link."""
    roots = [n for n in links if n not in {j["child"] for j in joints}]
    if len(roots) != 1:
        r.fail("", f"expected one root link (the ground), found {len(roots)}: {', '.join(roots[:5]) or 'none'}")
    frames = {roots[0]: np.eye(4)}
    children = {}
    for j in joints:
        children.setdefault(j["parent"], []).append(j)
    todo = [roots[0]]
    while todo:
        p = todo.pop()
        for j in children.get(p, []):
            frames[j["child"]] = frames[p] @ j["origin"]
            if not np.all(np.abs(frames[j["child"]]) <= MAX_LENGTH):
                r.fail(f"joint '{j['name']}'.origin", f"places link {j['child']!r} beyond {MAX_LENGTH:g} m from the "
                                                      f"root (numbers too large)")
            todo.append(j["child"])
    lost = [n for n in links if n not in frames]
    if lost:
        r.fail("", f"links {', '.join(lost[:5])} are not connected to the root link {roots[0]!r} (a cycle of joints?)")
    return frames, roots[0]


def _side(r: _Reader, side) -> dict:
    if side is None:
        return {}
    side = Path(side)
    try:
        data = tomllib.loads(side.read_bytes().removeprefix(b"\xef\xbb\xbf").decode("utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise RobotFileError(side, "", f"cannot read the pkm side file: {exc}".replace("\n", " ")) from None
    bad = [k for k in data if k not in SIDE_KEYS]
    if bad:
        raise RobotFileError(side, bad[0], f"unknown key (a URDF's side file holds {', '.join(SIDE_KEYS)})")
    return data


def side_paths(path: Path) -> tuple[Path, Path]:
    """The closure YAML and the pkm side file looked for beside ``ROBOT.urdf``."""
    return path.with_suffix(".yaml"), path.with_suffix(".pkm.toml")


def urdf_document(path, *, closures=None, side=None, platform=None, task=None):
    """The robot-file table (as tomllib would give it) of a URDF, and the notes (lines) on what is not read.

    ``closures`` / ``side`` default to ``ROBOT.yaml`` / ``ROBOT.pkm.toml`` beside the file when they exist;
    ``platform`` (a link name) and ``task`` (a task type, or a ``[task]`` table) override the side file.
    """
    r = _Reader(path)
    root = _parse_xml(r)
    links = _links(r, root)
    joints = _joints(r, root, links)
    loops = _loops(r, root, links, {j["name"] for j in joints})
    frames, ground = _place(r, links, joints)
    yaml_path, side_path = side_paths(r.path)
    if closures is None and yaml_path.exists():
        closures = yaml_path
    if side is None and side_path.exists():
        side = side_path
    clos = read_closures(closures) if closures is not None else {"closed_loop": [], "type": [], "name_mot": []}
    extra = _side(r, side)
    if platform is not None:
        extra["platform"] = platform
    if task is not None:
        extra["task"] = {"type": task} if isinstance(task, str) else dict(task)
    for key, how in (("platform", "the platform link"), ("task", "the task type, e.g. task = \"translational\"")):
        if key not in extra:
            r.fail(key, f"a URDF cannot say {how}: give it in {side_path.name} beside the file "
                        f"({key} = ...), as pkm.load(..., {key}=...) or pkm convert --{key}")
    name = extra.get("name", root.get("name") or r.path.stem)
    doc = build_document(r, links, joints, frames, ground, clos, extra, loops)
    doc["name"] = name
    return doc, r.notes


def load_urdf_spec(path, parameters=None, **options):
    """:class:`RobotSpec` of a URDF robot (see :func:`urdf_document`) and its notes."""
    doc, notes = urdf_document(path, **options)
    if parameters:
        raise RobotFileError(path, "parameters", "a URDF robot has no [parameters] to override")
    return parse_spec(doc, path=path), notes
