"""Human-readable summary of a robot (``pkm info``)."""

from __future__ import annotations

import numpy as np



def robot_info(path) -> str:
    """A text report on the robot file at ``path``: bodies, joints, loops, DOF, masses."""
    from pkm.formats import load_robot_spec, warn_notes

    spec, notes = load_robot_spec(path)
    from pkm.description.freedom import check_task_mobility, ideal_constraint_note  # after loading: a bad file is
    from pkm.description.topology import mobility                                    # reported without importing scipy

    bodies, joints = spec.expanded()
    mob = mobility(spec)
    spec.check_actuation()             # as pkm.load does: one-line errors (exit 2 on the CLI)
    check_task_mobility(spec, mob)
    warn_notes(notes)                  # once the file loads: a refused file is one error line
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
    note = ideal_constraint_note(spec, mob)
    if note:
        lines.append(f"  {note}")
    if spec.platform is not None and spec.task is not None and (spec.limb is not None or mob.cycles > 0):
        lines.extend(_limb_report(spec))
    elif spec.platform is not None and spec.task is not None:   # a serial chain: its tool as the platform
        from pkm.robot import Robot

        lines.extend(_reference_report(Robot(spec)))
    act = [j.name for j in joints if j.actuated]
    lines.append(f"  actuated joints ({len(act)}): {', '.join(act) if act else 'none'}")
    if spec.task is not None and spec.platform is not None and len(act) > len(spec.task.components):
        lines.append(f"  redundant actuation: {len(act)} actuators for {len(spec.task.components)} task coordinates, "
                     f"degree of redundancy {len(act) - len(spec.task.components)} (forces by the pseudoinverse of "
                     "J_IK^T, paper Sec. 8.2)")
    lines.append("")
    lines.append(f"  {'body':<24}{'mass [kg]':>12}   centre of mass [m]")
    for b in bodies:
        com = "  ".join(f"{x:9.5f}" for x in b.com)
        lines.append(f"  {b.name:<24}{b.mass:12.6g}   {com}")
    lines.append("")
    lines.append(f"  {'joint':<16}{'type':<6}{'parent -> child':<40}{'variables'}")
    for j in joints:
        flags = [f for f, on in (("actuated", j.actuated), ("cut", j.cut)) if on]
        flags += ([f"drive n = {j.drive.gear_ratio:g}"] if j.drive is not None else []) + \
            (["friction"] if j.friction is not None else [])
        link = f"{j.parent} -> {j.child}"
        extra = f"  ({', '.join(flags)})" if flags else ""
        lines.append(f"  {j.name:<16}{j.type:<6}{link:<40}{', '.join(j.variable_names())}{extra}")
    return "\n".join(lines)


def _limb_report(spec) -> list[str]:
    """Per-limb counts (paper App. C): N_l, variables, n_l, γ_l, cut joints, δ_l; γ of the PKM."""
    from pkm.robot import Robot

    robot = Robot(spec)
    out = ["", f"  limbs: L = {len(robot.limbs)}"]
    out.append(f"  {'limb':<10}{'joints':>7}{'vars N_l':>10}{'tree n_l':>10}{'cycles':>8}{'DOF d_l':>9}   cut joints; generalized coordinates q")
    for limb in robot.limbs:
        topo = limb.topology
        q = ", ".join(limb.tree.variable_names[i] for i in limb.q_index)
        out.append(f"  {limb.name:<10}{len(topo.joints):>7}{limb.variables:>10}{limb.n:>10}{len(topo.cycles):>8}"
                   f"{limb.dof:>9}   cut: {', '.join(topo.cuts) or 'none'}; q = ({q})")
    gamma = sum(len(l.topology.cycles) for l in robot.limbs) + len(robot.limbs) - 1
    out.append(f"  fundamental cycles of the PKM: gamma = {gamma}   platform DOF: {robot.mobility().platform_dof}"
               f"   task space: {robot.task_dof} ({', '.join(robot.task.coordinate_names())})")
    out.extend(_branch_report(robot))
    return out


def _branch_report(robot) -> list[str]:
    """The reference branch (assembly mode) that IK and inverse dynamics follow by default."""
    out = ["  branch (assembly mode): the reference configuration's (every joint variable 0); a trajectory",
           "    follows its first sample's branch by continuation (another one: start= in the API;",
           "    a jump onto another branch gives a BranchWarning naming the sample)"]
    return out + _reference_report(robot)


def _reference_report(robot) -> list[str]:
    """The reference task coordinates, the actuators there, and a warning if that pose is singular."""
    from pkm.errors import PkmError, SingularityError

    out = []

    names = robot.task.coordinate_names()
    x_ref = ", ".join(f"{n} = {v:.6g}" for n, v in zip(names, robot.x_ref))
    out.append(f"  reference task coordinates (every joint variable 0): {x_ref} (m, rad; the default centre "
               f"of trajectories without one)")
    try:
        sol = robot.inverse_kinematics(robot.x_ref, limits=False)
    except SingularityError as exc:
        return out + [f"  warning: the reference configuration is singular ({exc}); inverse kinematics and dynamics "
                      f"start there, so they fail near it: move the joints' points or axes so that all joint "
                      f"variables 0 is a regular pose, or start trajectories elsewhere (start= in the API)"]
    except PkmError as exc:
        return out + [f"    at x_ref: no regular solution ({exc})"]
    x = np.array2string(robot.x_ref, precision=6)
    q = ", ".join(f"{n} {v:.6g}" for n, v in zip(sol.actuator_names, sol.q_act[0]))
    out.append(f"    at x_ref = {x}: actuators {q} (rad or m)")
    if robot.n_act == robot.task_dof:
        det = float(np.linalg.det(sol.J_IK[0]))
        out.append(f"    det J_IK = {det:.6g} (its sign changes where a limb crosses a singularity)")
    return out
