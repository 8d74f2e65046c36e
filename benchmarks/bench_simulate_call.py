"""One simulation, the whole ``robot.simulate`` call (issue 32): a Delta pick-and-place cycle (0.5 s at 1 kHz,
RK4, every step an output) in each form, beside one MuJoCo ``rollout`` of the exported MJCF Delta under the
same torque table, in the same run, interleaved, one thread.

The cycle, its torque table and the initial state are :func:`bench_batch_sim.setup`'s (its first member, no
payload); MuJoCo is :func:`bench_batch_sim.run_mujoco` on one member at its "1ms" (timestep 1 ms, pkm's step)
and "stiff" settings (``pkm.export.mjcf.STIFF``). Reported per row: the call's wall and CPU time (best of
``--repeats``), µs per step, simulated seconds per wall second, the loop closure (pkm: the largest residual of
any limb's loops at the outputs; MuJoCo: its equality constraints' largest violation at the end) and, for pkm,
the energy balance's largest error (``|E − E(0) − W|``, J). A call's time includes its outputs (task
coordinates, actuator coordinates, tree variables, energies body by body and loop closure at every step):
``python benchmarks/bench_simulate_call.py --machine NAME`` writes ``results/NAME-simulate-call.json``.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from _common import RESULTS, cpu_info, header, machine_slug, markdown_table, versions, write_json
from bench_batch_sim import DT, T_CYCLE, run_mujoco, setup

FORMS = ("task", "actuator", "joint", "auto")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--repeats", type=int, default=5, help="rounds, each timing every row once in turn (5)")
    p.add_argument("--forms", nargs="+", default=list(FORMS), choices=FORMS)
    p.add_argument("--no-mujoco", action="store_true")
    p.add_argument("--machine")
    args = p.parse_args(argv)
    import numba

    numba.set_num_threads(1)
    cpu, vers = cpu_info(), versions()
    robot, tr, table, variants, which, X0, XD0 = setup(1, 0.0, [0.0])
    runs = {f: (lambda f=f: robot.simulate(table, (0.0, T_CYCLE), X0[0], XD0[0], method="RK4", dt=DT, form=f)) for f in args.forms}
    if not args.no_mujoco:
        try:
            import mujoco
            vers["mujoco"] = mujoco.__version__
            for setting in ("1ms", "stiff"):
                runs[f"mujoco {setting}"] = (lambda s=setting: run_mujoco(robot, table, variants, which, X0, XD0, s, 1,
                                                                          members_per_call=1))
        except ImportError:
            print("(mujoco not installed: pip install mujoco)")
    out = {k: f() for k, f in runs.items()}   # compile, and the results
    best = {k: (np.inf, np.inf) for k in runs}
    for _ in range(args.repeats):
        for k, f in runs.items():
            c0, t0 = time.process_time(), time.perf_counter()
            f()
            best[k] = min(best[k], (time.perf_counter() - t0, time.process_time() - c0))
    rows, record = [], {"cpu": cpu, "versions": vers, "repeats": args.repeats, "runs": []}
    for k, (wall, cpu_s) in best.items():
        if k.startswith("mujoco"):
            _, _, closure, _, opts, failed, nstep = out[k]
            steps, energy, what = nstep, "", f"MuJoCo rollout, timestep {opts['timestep']:g} s"
        else:
            sim = out[k]
            steps, closure = len(sim.t) - 1, float(sim.closure.max())
            energy = f"{float(np.abs(sim.energy_error).max()):.1e}"
            what = f"pkm robot.simulate, form={k!r} ({'numba' if sim.info.get('rk4_numba') else 'Python'} RK4)"
        record["runs"].append(dict(run=k, wall=wall, cpu=cpu_s, steps=steps, closure=closure, energy_error=energy))
        rows.append([what, steps, f"{wall * 1e3:.1f}", f"{cpu_s * 1e3:.1f}", f"{wall / steps * 1e6:.1f}",
                     f"{T_CYCLE / wall:.1f}", f"{closure:.0e}", energy])
    print(header(f"One simulation, the whole call: a Delta pick-and-place cycle ({T_CYCLE} s, dt = {DT} s)", cpu, vers))
    md = markdown_table(rows, ["run", "steps", "wall ms", "CPU ms", "µs per step (wall)", "sim s / wall s",
                               "loop closure max", "energy error max [J]"])
    print(md)
    path = write_json(RESULTS / f"{args.machine or machine_slug(cpu)}-simulate-call.json", record)
    print(f"\nwrote {path}")


if __name__ == "__main__":
    main()
