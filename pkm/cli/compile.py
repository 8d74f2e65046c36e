"""``pkm compile``: compile (or load from numba's cache) every kernel the commands and the Python
API use, for the given robots or all of the repository's ``robots/``, so that the first real run
starts at once. CI and installers run it once, after ``pip install`` and as the user who runs pkm
(numba writes the cache beside the package, or in ``NUMBA_CACHE_DIR`` or the user's cache folder
where the package folder is read-only); later runs of any command load the compiled code from the
cache. A robot of the same shape as one compiled (the same ``δ_l``, ``δ_p`` and closures, see
``tests/test_startup.py``) needs nothing more. (The single-point commands, ``pkm eom``, ``ik``,
``info``, ``fk`` and ``show``, compile only what loading a robot compiles: they run the kernels'
source as Python, :mod:`pkm.lie.interpret`.)
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

#: The robot files of the repository (beside the package).
ROBOTS = Path(__file__).resolve().parents[2] / "robots"


def add_parser(sub) -> None:
    p = sub.add_parser("compile", help="compile all kernels once (numba caches them; run it after pip install)",
                       description="Compile (or load from the cache) the inverse-dynamics, forward-dynamics "
                                   "and EOM kernels for the given robot files (default: every file in robots/).")
    p.add_argument("robots", nargs="*", metavar="ROBOT", help="robot files (default: all in robots/)")
    p.set_defaults(func=run)


def warm(robot) -> None:
    """One call of each kernel path on ``robot``: inverse kinematics and dynamics along three samples
    on the scalar batch kernel (what trajectories shorter than
    :data:`pkm.kernels.batch.SIMD_MIN_SAMPLES` run) and in SIMD lanes (the longer ones, where the
    robot is supported), the EOM, the forward-dynamics RK4 kernel over two steps, the actuator
    form's and the joint form's kernels and RK4s, a batch of simulations in SIMD lanes, and the time-optimal
    planner's passes (``pkm cycle``; the same for every robot)."""
    import numpy as np

    from pkm.planning.reachability import reachability

    from pkm.sim.actuator_kernel import warm as warm_actuator_form
    from pkm.sim.joint_kernel import warm as warm_joint_form

    x = np.repeat(robot.x_ref[None, :], 3, axis=0)
    zero = np.zeros_like(x)
    robot.inverse_dynamics(x, zero, zero, t=np.arange(3) * 1e-3, simd=False)
    robot.inverse_dynamics(x, zero, zero, t=np.arange(3) * 1e-3, simd=True)   # the scalar kernel where unsupported
    robot.eom(robot.x_ref, np.zeros(robot.task_dof))
    if len(robot._rot) <= 1:   # forward dynamics needs accelerations: rotation about one axis at most
        robot.simulate("hold", (0.0, 2e-3), method="RK4", dt=1e-3)
    warm_actuator_form(robot)   # the actuator form's kernels (form="actuator", "auto")
    warm_joint_form(robot)   # the joint form's (form="joint")
    reachability(np.ones((2, 1)), np.zeros((2, 1)), -np.ones((2, 1)), np.ones(2), 0.1)   # s̈ ≤ 1, ṡ² ≤ 1
    width = batch_lanes(robot)
    if width:   # robot.simulate_batch's SIMD lanes (20–40 s to compile on a busy 2-core machine)
        robot.simulate_batch("hold", (0.0, 2e-3), np.repeat(robot.x_ref[None, :], width, axis=0), dt=1e-3,
                             threads=1, progress=False)


def batch_lanes(robot) -> int:
    """The SIMD width ``robot.simulate_batch`` runs ``robot``'s members with (0: it runs them on the
    scalar kernel, or it does not simulate this robot)."""
    from pkm.sim.batch_lanes import lanes_apply
    from pkm.sim.task import dissipative, translational_axes

    if not (robot._closed and translational_axes(robot) is not None) or dissipative(robot):
        return 0
    return lanes_apply(robot, None, {})


def run(args: argparse.Namespace) -> int:
    from pkm.errors import PkmError
    from pkm.robot import load

    paths = [Path(p) for p in args.robots] or sorted(ROBOTS.glob("*.toml"))
    if not paths:
        raise PkmError(f"no robot files given and none in {ROBOTS}")
    from pkm.cli.progress import progress_bar

    t_all = time.perf_counter()
    with progress_bar(len(paths), "compile", "robot", above=1) as bar:   # a bar for more than one robot
        for path in paths:
            t0 = time.perf_counter()
            robot = load(path)
            warm(robot)
            bar.write(f"{path}: kernels ready in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
            bar.update(1)
    print(f"pkm compile: {len(paths)} robot file(s) in {time.perf_counter() - t_all:.1f} s; later runs load the "
          f"kernels from numba's cache")
    return 0
