"""Human-readable summary of a robot (``pkm info``)."""

from __future__ import annotations

from pkm.robotfile import load_spec


def robot_info(path) -> str:
    """A text report on the robot file at ``path``: bodies, joints, masses."""
    spec = load_spec(path)
    bodies, joints = spec.expanded()
    lines = [f"{spec.name}  ({spec.source})"]
    lines.append(f"bodies: {len(bodies)}   joints: {len(joints)}")
    for b in bodies:
        lines.append(f"  body {b.name:<24} mass {b.mass:10.6f} kg")
    for j in joints:
        lines.append(f"  joint {j.name:<23} {j.type} {j.parent} -> {j.child}{'  (actuated)' if j.actuated else ''}")
    return "\n".join(lines)
