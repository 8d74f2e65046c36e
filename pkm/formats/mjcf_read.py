"""Read an MJCF (MuJoCo's XML) as a :class:`RobotSpec`, through MuJoCo's own compiler.

The file is compiled by ``mujoco.MjModel.from_xml_path`` (the optional ``mujoco`` package, the
``export`` extra), so defaults, includes, ``childclass`` and inertias computed from geoms are
MuJoCo's own. The compiled model is placed at ``qpos0`` (``mj_kinematics``), which becomes pkm's
reference configuration (all joint variables zero; a joint's ``ref`` ≠ 0 shifts its variable to
``q − ref``, a note). From there it takes the URDF reader's path (:func:`.urdf_graph.build_document`):

* every body is a link at its world pose, with ``body_mass`` and the inertia ``body_inertia`` in the
  principal axes ``body_iquat`` at ``body_ipos``; the world body is the ground;
* a body without joints is welded to its parent (a fixed joint); ``hinge`` → R, ``slide`` → P at
  the joint's anchor and axis at qpos0 (``xanchor``, ``xaxis``); several joints of one body are
  applied in order (massless links between them), so hinges whose axes meet become one U or S
  joint; a ``ball`` → an S joint (three concurrent axes);
* ``<equality><weld>`` welds its two bodies into one (masses and inertias added: pkm has no 6-D cut
  joint, and the welded pair is rigid as the weld holds it); this also undoes
  :func:`pkm.export.mjcf.write_mjcf`'s platform split and cut chains;
  ``<connect>`` → an S cut joint at the anchor (pkm finds the limbs and cut joints from the graph);
  both must hold at qpos0 (MuJoCo's constraint violation ``efc_pos`` ≈ 0), else one-line refusal;
* an actuator on a joint (``actuator_trntype`` joint) marks the joint actuated (pkm's actuator
  forces are the joint forces: a ``gear`` ≠ 1 is a note);
* the platform and the task come from the side file ``ROBOT.pkm.toml`` (as for a URDF) or the
  options ``platform=`` (a body, or a site: its frame becomes the platform frame) and ``task=``;
  gravity from ``<option gravity>`` unless the side file gives one; '/', ',' and '"' in names
  (not allowed in pkm names) become '_'.

Free joints, joint/tendon/distance equalities, actuators on tendons or sites are refused in one
line; geoms' collision (contacts), tendons, joint damping/armature/friction/stiffness and
keyframes are one-line notes (pkm does not model them).
"""
from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np

from pkm.description.fileformat import MAX_LENGTH
from pkm.description.robotfile import parse_spec
from pkm.errors import RobotFileError

from .urdf_graph import TOL, _meet, build_document
from .urdf_read import _Reader, _side, side_paths


def _mujoco(path):
    try:
        import mujoco
    except ImportError:
        raise RobotFileError(path, "", "reading MJCF needs the mujoco package: pip install mujoco "
                                       "(or pip install \"pkm[export]\")") from None
    return mujoco


class _Warnings:
    """MuJoCo's warnings (e.g. a NaN in the XML) collected instead of printed and logged to
    ``MUJOCO_LOG.TXT`` in the working directory; any warning is a one-line refusal."""

    def __init__(self, r, mujoco):
        self.r, self.mujoco, self.got = r, mujoco, []

    def __enter__(self):
        self.old = self.mujoco.get_mju_user_warning()
        self.mujoco.set_mju_user_warning(self.got.append)
        return self

    def __exit__(self, *exc):
        self.mujoco.set_mju_user_warning(self.old)
        if self.got and exc[0] is None:
            self.r.fail("", f"MuJoCo warns: {' '.join(self.got[0].split())[:300]}")


def _compile(r: _Reader, mujoco):
    if not r.path.exists():
        r.fail("", "file not found")
    if r.path.is_dir():
        r.fail("", "is a directory, not an MJCF file")
    try:
        tag = ET.parse(r.path).getroot().tag
    except (ET.ParseError, OSError):
        tag = "mujoco"   # MuJoCo's own message below
    if tag != "mujoco":
        r.fail("", f"the root element is <{tag}>, expected <mujoco> (a URDF is read as ROBOT.urdf)")
    try:
        with _Warnings(r, mujoco):
            return mujoco.MjModel.from_xml_path(str(r.path))
    except Exception as exc:   # MuJoCo's compiler raises ValueError with its own (multi-line) text
        if isinstance(exc, RobotFileError):
            raise
        text = " ".join(str(exc).split())
        r.fail("", f"MuJoCo cannot compile the file: {text[:300]}")


def _clean(name: str) -> str:
    """A MuJoCo name as a pkm name: '/', ',', '"' and control characters become '_'."""
    return "".join("_" if c in '/,"' or ord(c) < 32 or ord(c) == 127 else c for c in name)


def _name(m, mujoco, obj, i, default):
    n = mujoco.mj_id2name(m, obj, i)
    return _clean(n) if n else default


def _pose(pos, mat):
    T = np.eye(4)
    T[:3, :3] = np.asarray(mat, float).reshape(3, 3)
    T[:3, 3] = pos
    return T


def _notes(r: _Reader, m, mujoco):
    jt = mujoco.mjtJoint
    if m.ngeom and np.any((m.geom_contype != 0) | (m.geom_conaffinity != 0)):
        r.notes.append("geoms' collision (contacts) is not modelled; bodies' mass and inertia are read as "
                       "MuJoCo computes them")
    if m.ntendon:
        r.notes.append(f"{m.ntendon} tendon(s) are ignored (pkm has no tendons)")
    if m.nkey:
        r.notes.append("keyframes are ignored (pkm's reference configuration is qpos0)")
    for what, arr in (("damping", m.dof_damping), ("armature", m.dof_armature),
                      ("frictionloss", m.dof_frictionloss), ("stiffness", m.jnt_stiffness)):
        if np.any(arr != 0):
            r.notes.append(f"joint {what} is ignored (pkm's joint terms are a 'drive' or 'friction' table "
                           f"of the robot file)")
    for j in range(m.njnt):
        if int(m.jnt_type[j]) == int(jt.mjJNT_FREE):
            r.fail(f"joint '{_name(m, mujoco, mujoco.mjtObj.mjOBJ_JOINT, j, f'joint{j}')}'",
                   "free joints are not supported (a floating base is not a parallel robot)")
    if np.any(m.body_mocapid >= 0):
        r.fail("", "mocap bodies are not supported (pkm's bodies move by joints)")


def _concurrent(r: _Reader, m, d, mujoco, b, bname, jname):
    """Several joints of one body are read only as one U or S joint: two or three hinges whose axes
    meet at one point (independent axes); anything else is refused in one line."""
    js = list(range(int(m.body_jntadr[b]), int(m.body_jntadr[b] + m.body_jntnum[b])))
    point = None
    if len(js) <= 3 and all(int(m.jnt_type[j]) == int(mujoco.mjtJoint.mjJNT_HINGE) for j in js):
        point = _meet(d.xanchor[js[0]], d.xaxis[js[0]], d.xanchor[js[1]], d.xaxis[js[1]])
        if point is not None and len(js) == 3:
            off = np.linalg.norm(np.cross(point - d.xanchor[js[2]], d.xaxis[js[2]]))
            if off > TOL * max(1.0, np.abs(point).max()) or abs(np.linalg.det(d.xaxis[js])) < 1e-9:
                point = None
    if point is None:
        r.fail(f"body '{bname[b]}'", f"its joints {', '.join(jname[j] for j in js)} are read only as one U or S "
                                     f"joint (two or three hinges whose axes meet at one point); give the other "
                                     f"joints bodies of their own")


def _tree(r: _Reader, m, d, mujoco):
    """Links, joints (URDF-reader dicts) and world frames of the compiled model at qpos0."""
    jt, B, J = mujoco.mjtJoint, mujoco.mjtObj.mjOBJ_BODY, mujoco.mjtObj.mjOBJ_JOINT
    bname = [_name(m, mujoco, B, b, f"body{b}") for b in range(m.nbody)]
    if len(set(bname)) != len(bname):
        r.fail("", "two bodies have the same name (after '/', ',', '\"' became '_')")
    links, frames, joints = {}, {}, []
    jname = {}
    for b in range(m.nbody):
        T = _pose(d.xpos[b], d.xmat[b])
        frames[bname[b]] = T
        R = T[:3, :3]
        Ri = np.asarray(d.ximat[b], float).reshape(3, 3)
        I = Ri @ np.diag(m.body_inertia[b]) @ Ri.T
        links[bname[b]] = dict(mass=float(m.body_mass[b]), com=R.T @ (d.xipos[b] - d.xpos[b]), inertia=R.T @ I @ R)
        if b == 0:
            continue
        prev = bname[m.body_parentid[b]]
        first, count = int(m.body_jntadr[b]), int(m.body_jntnum[b])
        for j in range(first, first + count):
            jname[j] = _name(m, mujoco, J, j, f"joint{j}")
        if count > 1:
            _concurrent(r, m, d, mujoco, b, bname, jname)
        for j in range(first, first + count):
            name = jname[j]
            kind = int(m.jnt_type[j])
            q0 = float(m.qpos0[m.jnt_qposadr[j]])
            limits = {}
            if kind in (int(jt.mjJNT_HINGE), int(jt.mjJNT_SLIDE)):
                if q0 != 0.0:
                    r.notes.append(f"joint '{name}': ref = {q0:g}; pkm's joint variable is q − ref (zero at qpos0)")
                if m.jnt_limited[j]:
                    lo, hi = (float(v) - q0 for v in m.jnt_range[j])
                    if lo < hi:
                        limits["range"] = [lo, hi]
                axes = [(name, "revolute" if kind == int(jt.mjJNT_HINGE) else "prismatic", d.xaxis[j])]
            else:   # ball: three concurrent axes (the body's x, y, z) fused into one S joint
                axes = [(f"{name}__{k + 1}", "revolute", R[:, k]) for k in range(3)]
            for n_, (sub, typ, axis) in enumerate(axes):
                child = f"{bname[b]}#{sub}"
                if child in links:
                    r.fail(f"joint '{name}'", f"the name {child!r} is taken by a body")
                Tj = T.copy()
                Tj[:3, 3] = d.xanchor[j]
                frames[child] = Tj
                links[child] = dict(mass=0.0, com=np.zeros(3), inertia=np.zeros((3, 3)))
                a = np.asarray(axis, float)
                joints.append(dict(name=sub, type=typ, parent=prev, child=child, axis=R.T @ a / np.linalg.norm(a),
                                   limits=limits if n_ == 0 else {}))
                prev = child
        joints.append(dict(name=f"{bname[b]}#weld", type="fixed", parent=prev, child=bname[b], axis=np.zeros(3),
                           limits={}))
    return links, joints, frames, bname, jname


def _equalities(r: _Reader, m, d, mujoco, bname):
    """URDF+-style loop joints: ``fixed`` for a weld, ``S`` for a connect, checked closed at qpos0."""
    eqt, O = mujoco.mjtEq, mujoco.mjtObj
    loops = []
    rows = {}
    for k in range(d.nefc):
        if int(d.efc_type[k]) == int(mujoco.mjtConstraint.mjCNSTR_EQUALITY):
            rows.setdefault(int(d.efc_id[k]), []).append(float(d.efc_pos[k]))
    scale = max(1.0, float(np.abs(d.xpos).max()))
    for e in range(m.neq):
        name = _name(m, mujoco, O.mjOBJ_EQUALITY, e, f"equality{e + 1}")
        entry = f"equality '{name}'"
        kind = int(m.eq_type[e])
        if kind not in (int(eqt.mjEQ_CONNECT), int(eqt.mjEQ_WELD)):
            r.fail(entry, "only <connect> and <weld> equality constraints are supported (pkm has no joint, "
                          "tendon or distance couplings)")
        if not m.eq_active0[e]:
            r.notes.append(f"{entry} is inactive (active=false) and ignored")
            continue
        site = int(m.eq_objtype[e]) == int(O.mjOBJ_SITE)
        o1, o2 = int(m.eq_obj1id[e]), int(m.eq_obj2id[e])
        b1, b2 = (int(m.site_bodyid[o]) for o in (o1, o2)) if site else (o1, o2)
        if kind == int(eqt.mjEQ_WELD) and float(m.eq_data[e, 10]) != 1.0:
            r.fail(entry, f"torquescale = {m.eq_data[e, 10]:g}: only a rigid weld (torquescale 1) is supported")
        gap = max((abs(v) for v in rows.get(e, [])), default=0.0)
        if gap > TOL * scale:
            r.fail(entry, f"is violated by {gap:.3g} at qpos0; pkm describes the robot assembled at its reference "
                          f"configuration")
        if site:
            P = _pose(d.site_xpos[o1], d.site_xmat[o1])
        else:
            P = _pose(d.xpos[b1], d.xmat[b1])
            P[:3, 3] = P[:3, :3] @ m.eq_data[e, :3] + P[:3, 3]
        if kind == int(eqt.mjEQ_CONNECT):
            P[:3, :3] = np.eye(3)
        ends = []
        for b in (b1, b2):
            Tb = _pose(d.xpos[b], d.xmat[b])
            ends.append((bname[b], np.linalg.solve(Tb, P)))
        loops.append(dict(name=name, type="fixed" if kind == int(eqt.mjEQ_WELD) else "S", pred=ends[0], succ=ends[1],
                          axis=np.array([1.0, 0.0, 0.0]), limits={}))
    return loops


def _actuated(r: _Reader, m, mujoco, jname) -> list[str]:
    out = []
    for a in range(m.nu):
        name = _name(m, mujoco, mujoco.mjtObj.mjOBJ_ACTUATOR, a, f"actuator{a + 1}")
        if int(m.actuator_trntype[a]) != int(mujoco.mjtTrn.mjTRN_JOINT):
            r.fail(f"actuator '{name}'", "only actuators on a joint are supported (pkm's actuators are joints)")
        j = int(m.actuator_trnid[a, 0])
        if int(m.jnt_type[j]) not in (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE)):
            r.fail(f"actuator '{name}'", f"acts on ball joint '{jname[j]}': pkm actuates hinge and slide joints")
        if int(m.body_jntnum[m.jnt_bodyid[j]]) > 1:
            r.fail(f"actuator '{name}'", f"acts on joint '{jname[j]}', one axis of a U or S joint (a body with "
                                         f"several joints): pkm actuates single hinge and slide joints")
        if float(m.actuator_gear[a, 0]) != 1.0:
            r.notes.append(f"actuator '{name}': gear {m.actuator_gear[a, 0]:g} is ignored (pkm's actuator forces "
                           f"are the joint's forces)")
        if jname[j] in out:
            r.fail(f"actuator '{name}'", f"joint '{jname[j]}' has two actuators")
        out.append(jname[j])
    return out


def _platform_frame(r: _Reader, m, d, mujoco, p, bname):
    """``(body name, world frame)`` of the platform named by a body or a site."""
    if not isinstance(p, str):
        r.fail("platform", f"platform must be a body or site name, got {p!r}")
    if _clean(p) in bname:
        b = bname.index(_clean(p))
        return p, _pose(d.xpos[b], d.xmat[b])
    s = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_SITE, p)
    if s < 0:
        r.fail("platform", f"platform {p!r} is not a body or site of the MJCF")
    return bname[int(m.site_bodyid[s])], _pose(d.site_xpos[s], d.site_xmat[s])


def mjcf_document(path, *, side=None, platform=None, task=None):
    """The robot-file table of an MJCF and the notes (lines) on what is not read; ``side`` defaults
    to ``ROBOT.pkm.toml`` beside the file; ``platform`` / ``task`` override it (module docstring)."""
    r = _Reader(path)
    mujoco = _mujoco(r.path)
    m = _compile(r, mujoco)
    _notes(r, m, mujoco)
    d = mujoco.MjData(m)
    d.qpos[:] = m.qpos0
    with _Warnings(r, mujoco):
        mujoco.mj_forward(m, d)
    if not (np.all(np.abs(d.xpos) <= MAX_LENGTH) and np.all(np.abs(d.xanchor) <= MAX_LENGTH)
            and np.isfinite(d.xmat).all() and np.isfinite(d.xaxis).all()):
        r.fail("", f"places a body or joint beyond {MAX_LENGTH:g} m from the origin (numbers too large)")
    links, joints, frames, bname, jname = _tree(r, m, d, mujoco)
    loops = _equalities(r, m, d, mujoco, bname)
    clos = {"closed_loop": [], "type": [], "name_mot": _actuated(r, m, mujoco, jname)}
    side_path = side_paths(r.path)[1]
    if side is None and side_path.exists():
        side = side_path
    extra = _side(r, side)
    if platform is not None:
        extra["platform"] = platform
    if task is not None:
        extra["task"] = {"type": task} if isinstance(task, str) else dict(task)
    for key, how in (("platform", "the platform body (or a site on it)"),
                     ("task", "the task type, e.g. task = \"translational\"")):
        if key not in extra:
            r.fail(key, f"an MJCF cannot say {how}: give it in {side_path.name} beside the file "
                        f"({key} = ...), as pkm.load(..., {key}=...) or pkm convert --{key}")
    pbody, pframe = _platform_frame(r, m, d, mujoco, extra["platform"], bname)
    extra["platform"] = pbody
    extra.setdefault("gravity", [float(g) for g in m.opt.gravity])
    doc = build_document(r, links, joints, frames, bname[0], clos, extra, loops)
    doc["name"] = extra.get("name", bytes(m.names).split(b"\0", 1)[0].decode("utf-8", "replace") or r.path.stem)
    for bt in doc["bodies"]:   # the platform's frame: the named body's or site's (inertia re-expressed)
        if bt["name"] == doc["platform"]:
            R0, Rp = np.array(bt["frame"]["rotation"]), pframe[:3, :3]
            Rr = Rp.T @ R0
            bt["inertia"] = (Rr @ np.array(bt["inertia"]) @ Rr.T).tolist()
            bt["frame"] = {"origin": list(pframe[:3, 3]), "rotation": Rp.tolist()}
    return doc, r.notes


def load_mjcf_spec(path, parameters=None, **options):
    """:class:`RobotSpec` of an MJCF robot (see :func:`mjcf_document`) and its notes."""
    if "closures" in options:
        raise RobotFileError(path, "closures", "an MJCF's loops are its <equality> elements (no closure YAML)")
    doc, notes = mjcf_document(path, **options)
    if parameters:
        raise RobotFileError(path, "parameters", "an MJCF robot has no [parameters] to override")
    return parse_spec(doc, path=path), notes
