"""Human-readable summary of a robot (``pkm info``)."""

from __future__ import annotations

import numpy as np

from pkm.robotfile import load_spec
from pkm.topology import mobility


def robot_info(path) -> str:
    """A text report on the robot file at ``path``: bodies, joints, loops, DOF, masses."""
    spec = load_spec(path)
    bodies, joints = spec.expanded()
    mob = mobility(spec)
    lines = [f"{spec.name}", f"  file: {spec.source}"]
    if spec.description:
        lines.append(f"  {spec.description}")
    task = f"{spec.task.kind} ({', '.join(spec.task.coordinate_names())})" if spec.task else "none"
    lines.append(f"  ground: {spec.ground}   platform: {spec.platform or 'none'}   task space: {task}")
    lines.append(f"  gravity: {np.array2string(spec.gravity, precision=4)} m/s^2")
    if spec.limb is not None:
        names = ", ".join(m.name for m in spec.limb.mounts)
        lines.append(f"  representative limb mounted {len(spec.limb.mounts)} times: {names}")
    total = sum(b.mass for b in bodies)
    lines.append(f"  bodies: {len(bodies)} (total mass {total:.6g} kg)   joints: {len(joints)}")
    lines.append(f"  joint variables: {mob.variables}   fundamental cycles: {mob.cycles}")
    platform = f", platform DOF {mob.platform_dof}" if mob.platform_dof is not None else ""
    lines.append(f"  DOF at the reference configuration: {mob.dof}{platform}")
    act = [j.name for j in joints if j.actuated]
    lines.append(f"  actuated joints ({len(act)}): {', '.join(act) if act else 'none'}")
    lines.append("")
    lines.append(f"  {'body':<24}{'mass [kg]':>12}   centre of mass [m]")
    for b in bodies:
        com = "  ".join(f"{x:9.5f}" for x in b.com)
        lines.append(f"  {b.name:<24}{b.mass:12.6g}   {com}")
    lines.append("")
    lines.append(f"  {'joint':<16}{'type':<6}{'parent -> child':<40}{'variables'}")
    for j in joints:
        flags = [f for f, on in (("actuated", j.actuated), ("cut", j.cut)) if on]
        link = f"{j.parent} -> {j.child}"
        extra = f"  ({', '.join(flags)})" if flags else ""
        lines.append(f"  {j.name:<16}{j.type:<6}{link:<40}{', '.join(j.variable_names())}{extra}")
    return "\n".join(lines)
