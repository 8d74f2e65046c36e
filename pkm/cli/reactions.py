"""``pkm reactions ROBOT [trajectory options] --out CSV [--plot PNG]``: joint reaction forces along a
trajectory, from the absolute-coordinate formulation (:mod:`pkm.absolute.loader`): the motion's
actuator angles, rates and accelerations from pkm's inverse dynamics prescribe the drives, and
each joint's wrench is its multipliers' (for sizing bearings).

The assembly mode is pkm's: each sample's absolute configuration is assembled from the bodies'
poses of pkm's IK solution (:func:`ik_configuration`) and must stay on it (``on_branch``), so the two
formulations describe the same mechanism; where the absolute model cannot (a false zero, another
mode, drives that leave DOF free) the command refuses in one line instead of writing another
mechanism's forces."""
from __future__ import annotations

import argparse

from pkm.errors import PkmError


def ik_poses(robot, joints: dict, s: int) -> dict:
    """Every real body's frame pose (name → 4×4) at sample ``s`` of pkm's tree variables ``joints``
    (limb name → (N, n_l), as ``DynamicsResult.joints``), by the limb trees' kinematics."""
    from pkm.algorithms.kinematics import forward_kinematics

    poses = {}
    for limb in robot.limbs:
        C = forward_kinematics(limb.tree, joints[limb.name][s])
        for k, name in enumerate(limb.tree.body_names):
            if not limb.tree.virtual[k]:
                poses[name] = C[k]
    return poses


def ik_configuration(robot, model, joints: dict, s: int):
    """Absolute coordinates (``model``'s ``q``) of pkm's IK solution at sample ``s`` (the poses of
    :func:`ik_poses`). This is the glue between the two layers: the absolute-coordinate layer
    (beside ``algorithms``) gets pkm's branch as data."""
    poses = ik_poses(robot, joints, s)
    missing = [name for name in model.bodies if name not in poses]
    if missing:
        raise PkmError(f"{robot.name}: the bodies {missing} of the absolute-coordinate model are in no limb of pkm's "
                       f"model, so its IK solution does not place them")
    return model.coordinates(poses)


def add_parser(sub) -> argparse.ArgumentParser:
    from pkm.cli.options import add_trajectory_options

    p = sub.add_parser(
        "reactions", help="joint reaction forces and moments along a trajectory (absolute coordinates; CSV, plot)",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Joint reactions along the robot file's default trajectory (or the one set by the options, as for "
                    "inverse-dynamics), at --samples evenly spaced samples.",
        epilog="""\
Every joint of the file (cut joints included) is a constraint between its two bodies in absolute
coordinates; the actuated joints are driven along the motion's actuator angles, and the joint
wrenches follow from the constraint multipliers. Redundant rows (a parallelogram's) carry no
force: their share goes to the other rows, so such joints' forces are one statically admissible
distribution, not unique. Each sample is assembled from pkm's IK solution (its branch, so the
torques are inverse-dynamics'); where the absolute model cannot stay on it (another assembly mode,
drives that leave the platform free) the command stops with one error line.

The --out CSV has one row per sample: t, then per joint F_<joint>_x, _y, _z [N] and
M_<joint>_x, _y, _z [N·m]: the wrench the joint exerts on its child body, world axes, moment about
the joint point; tau_<actuator> [N·m or N] the actuator torques or forces (as inverse-dynamics
computes them).

example: pkm reactions robots/delta_3rr2rrr.toml --samples 50 --out reactions.csv --plot reactions.png""")
    p.add_argument("robot", help="path to a robot file (TOML)")
    add_trajectory_options(p)
    p.add_argument("--samples", type=int, default=50, help="number of evenly spaced samples (default 50)")
    p.add_argument("--out", metavar="CSV", help="write the reactions to CSV")
    p.add_argument("--plot", metavar="PNG", help="plot each joint's force magnitude against time, one panel per limb")
    p.set_defaults(func=_cmd_reactions)
    return p


#: Show a progress bar above this many samples (each takes about a second: the absolute model's
#: instantaneous solution, :mod:`pkm.absolute`).
PROGRESS_ABOVE = 5


def _cmd_reactions(args: argparse.Namespace) -> int:
    import numpy as np

    from pkm.absolute.loader import load_spec
    from pkm.cli.options import check_outputs, load_trajectory
    from pkm.cli.output import outputs
    from pkm.robot import load

    check_outputs(args)
    if not 1 <= args.samples <= 10_000:
        raise PkmError(f"--samples must be between 1 and 10000, got {args.samples}")
    robot = load(args.robot)
    if robot.drives is not None or robot.friction is not None:   # the absolute model has rigid, lossless joints
        raise PkmError(f"{args.robot}: pkm reactions models rigid joints without drives and friction; this robot "
                       "file has drive/friction tables (remove them for the rigid-body reactions)")
    traj = load_trajectory(robot, args)
    res = robot.inverse_dynamics(traj.x, traj.xd, traj.xdd, t=traj.t)   # fast: the reactions below take the time
    model = load_spec(robot.spec)
    missing = [a.name for a in model.actuators if a.name not in robot.actuator_names]
    if missing:
        raise PkmError(f"{robot.name}: the drives {missing} match no actuator of {robot.actuator_names}")
    order = [robot.actuator_names.index(a.name) for a in model.actuators]
    pick = np.unique(np.linspace(0, len(traj.t) - 1, min(args.samples, len(traj.t))).round().astype(int))
    names = list(model.joints)
    F = np.empty((len(pick), len(names), 6))
    tau = np.empty((len(pick), len(model.actuators)))
    from pkm.cli.progress import progress_bar

    with progress_bar(len(pick), "joint reactions", "sample", above=PROGRESS_ABOVE) as bar:
        for r, s in enumerate(pick):
            th, thd, thdd = (a[s, order] for a in (res.q_act, res.qd_act, res.qdd_act))
            q0 = ik_configuration(robot, model, res.joints, s)
            tau[r], q, _, _, lam, sysd = model.solve_instant(th, thd, thdd, q0, on_branch=True)
            W = sysd.reactions(q, lam)
            for k, name in enumerate(names):
                w_child = W[name][1]
                F[r, k] = np.concatenate([w_child[3:], w_child[:3]])  # (force; moment)
            bar.update(1)
    t = traj.t[pick]
    with outputs(args.out, args.plot) as out:
        if args.out is not None:
            units = robot.actuator_units
            header = ["t"] + [f"{c}_{n}_{a}" for n in names for c in ("F", "M") for a in "xyz"] + \
                [f"tau_{a.name} [{units[i][0]}]" for a, i in zip(model.actuators, order)]
            rows = np.column_stack([t, F.reshape(len(pick), -1), tau])
            with open(out[args.out], "w") as fh:
                fh.write(",".join(header) + "\n")
                for row in rows:
                    fh.write(",".join(repr(float(v)) for v in row) + "\n")
        if args.plot is not None:
            from pkm.plotting.reactions import plot_reactions
            from pkm.plotting.style import joint_labels

            plot_reactions(t, F, names, path=out[args.plot], title=f"{robot.name}: joint reaction forces",
                           labels=joint_labels(robot, names))
    peak = np.linalg.norm(F[..., :3], axis=2).max(axis=0)
    k = int(np.argmax(peak))
    print(f"{robot.name}: joint reactions at {len(pick)} samples of {traj.t[-1] - traj.t[0]:.6g} s "
          f"({len(names)} joints, {len(model.report.removed)} redundant rows carry no force); largest joint force {peak[k]:.4g} N in {names[k]}.")
    return 0
