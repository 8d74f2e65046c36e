"""From the placed URDF tree and its closures to the robot-file table (bodies and joints in world
coordinates at the reference configuration): welds (fixed joints, 6d closures), U/S joints from
massless chains of concurrent revolute axes, S cut joints from 3d closures (see :mod:`.urdf_read`)."""

from __future__ import annotations

import numpy as np

#: Closure frames must coincide at the reference configuration to this (m; rad); axes meet to it.
TOL = 1e-9


def _weld(group: list[str], frames, links, depth) -> dict:
    """Mass, centre of mass and inertia (about it, in the frame of the member closest to the root)."""
    head = min(group, key=lambda n: (links[n]["mass"] <= 0.0, depth[n], group.index(n)))
    R0 = frames[head][:3, :3]
    mass = sum(links[n]["mass"] for n in group)
    coms = {n: frames[n][:3, :3] @ links[n]["com"] + frames[n][:3, 3] for n in group}
    com = sum(links[n]["mass"] * coms[n] for n in group) / mass if mass > 0 else frames[head][:3, 3].copy()
    inertia = np.zeros((3, 3))
    for n in group:
        Rn = R0.T @ frames[n][:3, :3]
        d = R0.T @ (coms[n] - com)
        inertia += Rn @ links[n]["inertia"] @ Rn.T + links[n]["mass"] * (d @ d * np.eye(3) - np.outer(d, d))
    return dict(name=head, mass=mass, com=com, inertia=inertia, frame=frames[head])


def build_document(r, links, joints, frames, ground, clos, extra, loops=()) -> dict:
    depth = {ground: 0}
    children = {}
    for j in joints:
        children.setdefault(j["parent"], []).append(j)
    todo = [ground]
    while todo:
        p = todo.pop()
        for j in children.get(p, []):
            depth[j["child"]] = depth[p] + 1
            todo.append(j["child"])
    # --- welds: union-find over fixed joints and 6d closures
    up = {n: n for n in links}

    def find(n):
        while up[n] != n:
            up[n] = up[up[n]]
            n = up[n]
        return n

    for j in joints:
        if j["type"] == "fixed":
            up[find(j["child"])] = find(j["parent"])
    spheres = []
    for k, ((a, b), kind) in enumerate(zip(clos["closed_loop"], clos["type"])):
        entry = f"closed_loop[{k}]"
        for f in (a, b):
            if f not in links:
                r.fail(entry, f"frame {f!r} is not a link of the URDF (closure frames are links, usually joined "
                              f"by a fixed joint to the body they mark)")
        Ta, Tb = frames[a], frames[b]
        gap = float(np.linalg.norm(Ta[:3, 3] - Tb[:3, 3]))
        if gap > TOL * max(1.0, np.abs(Ta[:3, 3]).max()):
            r.fail(entry, f"frames {a!r} and {b!r} are {gap:.3g} m apart at the reference configuration (all "
                          f"joints zero); pkm describes the robot assembled there: move them together")
        if kind == "6d":
            turn = float(np.linalg.norm(Ta[:3, :3].T @ Tb[:3, :3] - np.eye(3)))
            if turn > TOL:
                r.fail(entry, f"6d closure: frames {a!r} and {b!r} differ in orientation at the reference "
                              f"configuration ({turn:.3g}); a 6d closure welds them")
            if find(a) == find(b):
                r.fail(entry, f"frames {a!r} and {b!r} are on the same body already")
            up[find(b)] = find(a)
        else:
            name = a[:-3] if a.endswith("__A") and b == a[:-3] + "__B" else f"closure{k + 1}"
            spheres.append((name, a, b, Ta[:3, 3]))
    placed_loops = []
    for lp in loops:   # URDF+ loop joints: the two joint frames must coincide at the reference configuration
        entry = f"loop '{lp['name']}'"
        Ta, Tb = frames[lp["pred"][0]] @ lp["pred"][1], frames[lp["succ"][0]] @ lp["succ"][1]
        gap = float(np.linalg.norm(Ta[:3, 3] - Tb[:3, 3]))
        turn = float(np.linalg.norm(Ta[:3, :3].T @ Tb[:3, :3] - np.eye(3)))
        if gap > TOL * max(1.0, np.abs(Ta[:3, 3]).max()) or turn > TOL:
            r.fail(entry, f"the joint frames on {lp['pred'][0]!r} and {lp['succ'][0]!r} differ by {gap:.3g} m and "
                          f"{turn:.3g} in orientation at the reference configuration (all joints zero); pkm "
                          f"describes the robot assembled there")
        if lp["type"] == "fixed":
            if find(lp["pred"][0]) == find(lp["succ"][0]):
                r.fail(entry, "joins two links that are one body already")
            up[find(lp["succ"][0])] = find(lp["pred"][0])
        else:
            placed_loops.append((lp, Ta))
    groups = {}
    for n in links:
        groups.setdefault(find(n), []).append(n)
    body = {}
    for members in groups.values():
        members.sort(key=lambda n: list(links).index(n))
        w = _weld(members, frames, links, depth)
        for n in members:
            body[n] = w
    gname = body[ground]["name"]
    # --- moving joints as pkm joints (world point and axes at the reference configuration)
    motors = set(clos["name_mot"])
    names = {j["name"] for j in joints} | {lp["name"] for lp in loops}
    for m in motors:
        if m not in names:
            r.fail("name_mot", f"actuated joint {m!r} is not a joint of the URDF")
    moving = []
    for j in joints:
        if j["type"] == "fixed":
            if j["name"] in motors:
                r.fail("name_mot", f"joint {j['name']!r} is fixed and cannot be actuated")
            continue
        P, C = body[j["parent"]]["name"], body[j["child"]]["name"]
        if P == C:
            r.fail(f"joint '{j['name']}'", f"joins two links welded into one body ({j['parent']!r}, "
                                           f"{j['child']!r}) by fixed joints or 6d closures")
        T = frames[j["child"]]
        moving.append(dict(name=j["name"], type="P" if j["type"] == "prismatic" else "R", parent=P, child=C,
                           point=T[:3, 3].copy(), axes=[T[:3, :3] @ j["axis"]], limits=j["limits"],
                           actuated=j["name"] in motors))
    for lp, Ta in placed_loops:
        P, C = body[lp["pred"][0]]["name"], body[lp["succ"][0]]["name"]
        if P == C:
            r.fail(f"loop '{lp['name']}'", "joins two links welded into one body")
        moving.append(dict(name=lp["name"], type=lp["type"], parent=P, child=C, point=Ta[:3, 3].copy(),
                           axes=None if lp["type"] == "S" else [Ta[:3, :3] @ lp["axis"]], limits=lp["limits"],
                           actuated=lp["name"] in motors))
    massless = {w["name"] for w in body.values() if w["mass"] <= 0.0 and w["name"] != gname}
    moving = _chains(r, moving, massless)
    left = massless & ({m["parent"] for m in moving} | {m["child"] for m in moving})
    if left:
        n = sorted(left)[0]
        r.fail(f"link '{n}'", "has no mass: pkm bodies need a mass and an inertia (a massless link is read only "
                              "between revolute joints whose axes meet: a U or S joint)")
    for name, a, b, point in spheres:
        if body[a]["name"] == body[b]["name"]:
            r.fail("closed_loop", f"frames {a!r} and {b!r} are on the same body")
        moving.append(dict(name=name, type="S", parent=body[a]["name"], child=body[b]["name"], point=point,
                           axes=None, limits={}, actuated=False))
    for c in extra.pop("cut_joints", []):
        hit = [m for m in moving if m["name"] == c]
        if not hit:
            r.fail("cut_joints", f"{c!r} is not a moving joint of the URDF")
        hit[0]["cut"] = True
    doc = {k: v for k, v in extra.items()}
    doc["units"] = "m"
    doc["ground"] = gname
    if "platform" in doc:
        p = doc["platform"]
        if not isinstance(p, str) or p not in body:
            r.fail("platform", f"platform {p!r} is not a link of the URDF")
        doc["platform"] = body[p]["name"]
    used = {w["name"]: w for w in body.values() if w["name"] != gname and w["name"] not in massless}
    doc["bodies"] = [{"name": w["name"], "mass": w["mass"], "com": list(w["com"]), "inertia": w["inertia"].tolist(),
                      "frame": {"origin": list(w["frame"][:3, 3]), "rotation": w["frame"][:3, :3].tolist()}}
                     for w in used.values()]
    for w in used.values():
        if w["mass"] <= 0.0:
            r.fail(f"link '{w['name']}'", "has no mass: pkm bodies need a mass and an inertia")
    doc["joints"] = [_joint_table(m) for m in moving]
    return doc


def _joint_table(m) -> dict:
    t = {"name": m["name"], "type": m["type"], "parent": m["parent"], "child": m["child"], "point": list(m["point"])}
    if m["axes"] is not None:
        if len(m["axes"]) == 1:
            t["axis"] = list(m["axes"][0])
        else:
            t["axes"] = [list(a) for a in m["axes"]]
    if m["actuated"]:
        t["actuated"] = True
    if m.get("cut"):
        t["cut"] = True
    lim = dict(m["limits"])
    if not m["actuated"]:
        lim.pop("velocity", None)
    if lim:
        t["limits"] = lim
    return t


def _meet(p1, a1, p2, a2):
    """The common point of two lines (p, a), or None."""
    n = np.cross(a1, a2)
    if np.linalg.norm(n) < 1e-9:
        return None
    A = np.array([a1, -a2]).T
    s, *_ = np.linalg.lstsq(A, p2 - p1, rcond=None)
    x1, x2 = p1 + s[0] * a1, p2 + s[1] * a2
    scale = max(1.0, np.abs(p1).max(), np.abs(p2).max())
    return (x1 + x2) / 2 if np.linalg.norm(x1 - x2) <= TOL * scale else None


def _chains(r, moving, massless):
    """Fuse R joints through massless links into U (two axes that meet) and S (three concurrent) joints."""
    changed = True
    while changed:
        changed = False
        for m in sorted(massless):
            into = [j for j in moving if j["child"] == m]
            out = [j for j in moving if j["parent"] == m]
            if len(into) != 1 or len(out) != 1 or into[0]["type"] not in "RU" or out[0]["type"] not in "RU":
                continue
            a, b = into[0], out[0]
            if a["actuated"] or b["actuated"] or len(a["axes"]) + len(b["axes"]) > 3:
                continue
            if a["type"] == "R" and b["type"] == "R":
                point = _meet(a["point"], a["axes"][0], b["point"], b["axes"][0])
            else:   # a U joint and a third axis through its centre (either order): an S joint
                u, s = (a, b) if a["type"] == "U" else (b, a)
                off = np.linalg.norm(np.cross(u["point"] - s["point"], s["axes"][0]))
                point = u["point"] if off <= TOL * max(1.0, np.abs(u["point"]).max()) else None
            if point is None:
                continue
            axes = a["axes"] + b["axes"]
            if len(axes) == 3 and abs(np.linalg.det(np.array(axes))) < 1e-9:
                continue
            base = a["name"][:-3] if a["name"].endswith("__1") else a["name"]
            fused = dict(name=base, type="U" if len(axes) == 2 else "S", parent=a["parent"], child=b["child"],
                         point=point, axes=axes, limits={}, actuated=False)
            if a["limits"].get("range") or b["limits"].get("range"):
                r.notes.append(f"joint '{base}': the ranges of its revolute axes are not kept on the {fused['type']} joint")
            moving = [fused if j is a else j for j in moving if j is not b]   # in a's place: file order kept
            changed = True
            break
    return moving
