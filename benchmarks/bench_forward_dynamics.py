"""Forward-dynamics timings of pkm (issue 15): µs per right-hand-side evaluation (task form, one
state and batched; actuator form) and per fixed RK4 step, for the Delta, the IRSBot-2 and the
3R[2US] Delta, with the machine and versions. The peers of the issue (Pinocchio's
constraintDynamics and MuJoCo's mj_step on closed-loop Deltas) are not wired in yet.

    python benchmarks/bench_forward_dynamics.py [--repeats 5]
"""
from __future__ import annotations

import argparse
import platform
import time

import numpy as np

ROBOTS = ("delta_3rr2rrr.toml", "irsbot2.toml", "delta_3r2us.toml")


def best(f, repeats, inner):
    t = np.inf
    for _ in range(repeats):
        c = time.perf_counter()
        for _ in range(inner):
            f()
        t = min(t, (time.perf_counter() - c) / inner)
    return t


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args(argv)
    import numba

    import pkm
    from pkm.sim.actuator import ActuatorModel
    from pkm.sim.forward import forward_dynamics
    from pkm.trajectory import from_spec

    print(f"{platform.processor() or platform.machine()}, Python {platform.python_version()}, numpy "
          f"{np.__version__}, numba {numba.__version__}, threads 1")
    print(f"{'robot':<40}{'RHS task 1 state':>18}{'RHS task batch':>16}{'RHS actuator':>14}{'RK4 step':>10}")
    for name in ROBOTS:
        robot = pkm.load(f"robots/{name}")
        tr = from_spec(robot.spec.trajectory, robot.task.coordinate_names())
        res = robot.inverse_dynamics(tr.x, tr.xd, tr.xdd)
        start = [res.joints[l.name][0] for l in robot.limbs]
        x, xd, u = tr.x[0], tr.xd[0], res.tau[0]
        forward_dynamics(robot, x, xd, u, start=start, threads=1)  # compile
        one = best(lambda: forward_dynamics(robot, x, xd, u, start=start, threads=1), args.repeats, 50)
        n = 1000
        batch = best(lambda: forward_dynamics(robot, tr.x[:n], tr.xd[:n], res.tau[:n], start=start, threads=1),
                     args.repeats, 1) / n
        model = ActuatorModel(robot)
        model.thetas = start
        q, qd = res.q_act[0], res.qd_act[0]
        act = best(lambda: model.state(q, qd, robot.spec.gravity), args.repeats, 10)
        step = best(lambda: robot.simulate(u, (0.0, 0.01), x, xd, method="RK4", dt=0.01, start=start, threads=1),
                    args.repeats, 3)
        print(f"{robot.name[:38]:<40}{one * 1e6:>15.1f} µs{batch * 1e6:>13.2f} µs{act * 1e6:>11.0f} µs"
              f"{step * 1e3:>7.2f} ms")


if __name__ == "__main__":
    main()
