"""The inverse-dynamics command's options for redundantly actuated robots (paper Sec. 8.2):
``--weights``, ``--preload`` and ``--distribution`` (:mod:`pkm.algorithms.distribution`)."""

from __future__ import annotations

import argparse

from pkm.errors import InputError


def add_redundancy_options(parser: argparse.ArgumentParser) -> None:
    """``--weights W…``, ``--preload Z…`` and ``--distribution {min-norm,min-peak}``."""
    parser.add_argument("--weights", nargs="+", type=float, metavar="W", default=None,
                        help="redundant actuation: one positive weight per actuator; the forces minimise "
                             "sum(W_i u_i^2) (default: all 1, the minimum-norm forces)")
    parser.add_argument("--preload", nargs="+", type=float, metavar="Z", default=None,
                        help="redundant actuation: internal preload, one number per null-space direction "
                             "(u = u_W + N z; the CSV's null<k>_ columns are N)")
    parser.add_argument("--distribution", choices=("min-norm", "min-peak"), default="min-norm",
                        help="redundant actuation: min-norm (weighted pseudoinverse of J_IK^T, continuous) or "
                             "min-peak (per sample the preload of least max |u_i|, a linear programme; not "
                             "continuous in general)")


def check_redundancy_options(robot, args, n: int) -> None:
    """The options' one-line errors before any work starts (no progress bar before the error)."""
    from pkm.algorithms.distribution import check_preload, check_weights

    check_weights(args.weights, robot.n_act)
    check_preload(args.preload, n, robot.redundancy)
    if args.distribution != "min-norm" and robot.redundancy == 0:
        raise InputError("--distribution needs redundant actuation (more actuators than task coordinates); "
                         f"{robot.name} has one actuator per task coordinate")
    if args.distribution == "min-peak" and (args.weights is not None or args.preload is not None):
        raise InputError("--distribution min-peak chooses the preload itself: drop --weights and --preload")


def distribute_note(robot, result, args) -> str:
    """Apply ``--distribution min-peak`` to ``result`` (in place) and return the summary's sentence on
    the redundancy ("" for a non-redundant robot); the options checked by :func:`check_redundancy_options`."""
    r = robot.redundancy
    if r == 0:
        return ""
    how = "weighted " if args.weights is not None else ""
    if args.distribution == "min-peak":
        from pkm.algorithms.distribution import min_peak

        result.tau[...] = min_peak(result.tau, result.null_space)
        return (f" Redundant actuation ({robot.n_act} actuators for {robot.task_dof} task coordinates, degree {r}): "
                "the forces of least peak per sample (linear programme).")
    pre = " plus the preload" if args.preload is not None else ""
    return (f" Redundant actuation ({robot.n_act} actuators for {robot.task_dof} task coordinates, degree {r}): "
            f"the {how}minimum-norm forces{pre} (pseudoinverse of J_IK^T, paper Sec. 8.2).")
