"""Batches of simulations (issue 32.2): many Delta pick-and-place cycles in one call, pkm's
``robot.simulate_batch`` beside MuJoCo's batched ``mujoco.rollout`` on the MJCF Delta that pkm
exports (``pkm.export.mjcf.write_mjcf``: the parallelograms and the platform closed by
``<connect>``/``<weld>`` equality constraints), driven by the same torque tables.

The cycle: ``pkm.trajectory.pick_place([0, 0, -1], lift 25 mm, travel 305 mm, 0.5 s)`` at 1 kHz on
``robots/delta_3rr2rrr.toml``; its inverse dynamics give the torque table (a cubic spline through the
1 kHz samples, :class:`pkm.sim.inputs.Table`). Members: ``--count`` cycles (default 1000) from
initial states perturbed about the cycle's first (σ = ``--sigma`` m in position, σ/s in velocity),
each carrying one of the payloads ``--payloads`` kg (point masses at the platform frame, the table
not compensating them: a model-error Monte Carlo). Every member runs 0.5 s of simulated time.

* pkm: the task form's RK4 at dt = 1 ms entirely in numba (:mod:`pkm.sim.batch`), members shared out
  to ``--threads`` threads (the kernel releases the GIL); kept every 100 steps: x, ẋ, actuator
  coordinates and rates, work, energy error (body-by-body energy), loop closure. Two rows each: the
  default, ``W`` members per call in SIMD lanes (:mod:`pkm.sim.batch_lanes`), and ``lanes=False``, one
  member per call of the scalar kernel (the thread path).
* MuJoCo: ``mujoco.rollout.rollout`` (its own thread pool: one MjData per thread) of the exported
  MJCF under the same table sampled at each MuJoCo step (held over the step), at two settings —
  "stiff": :data:`pkm.export.mjcf.STIFF` (timestep 0.1 ms, solref 0.2 ms critically damped, solimp
  d = 0.9999 over the whole width: the stiffest MuJoCo allows) and "1 ms": timestep 1 ms (pkm's step)
  with solref 2 ms; both Newton, 200 iterations, tolerance 1e-12 (:data:`pkm.export.mjcf.SOLVER`),
  Euler integrator; and "fine" (timestep 0.01 ms, solref 0.02 ms) on the one-thread subset only, to
  show how its closure falls with the step. Rolled out in chunks of members and of steps (the states of a chunk's end
  start the next), so its output memory stays bounded too.

Reported: simulated seconds per wall second (members × 0.5 s / wall time), each one's loop closure
(pkm: the largest residual of any limb's loops at the kept outputs; MuJoCo: the largest violation of
its equality constraints, ``efc_pos``, at every 0.1 s), the largest deviation of MuJoCo's final
platform position from pkm's (the same member), threads, the CPU (/proc/cpuinfo) and the load
average before and after. The machine may be shared: the load is recorded with the figures.
"""
from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np

from _common import RESULTS, ROOT, cpu_info, header, machine_slug, markdown_table, versions, write_json

T_CYCLE, DT = 0.5, 1e-3


def setup(count, sigma, payloads, seed=0, robot_file=ROOT / "robots" / "delta_3rr2rrr.toml"):
    import pkm
    from pkm.robot import Robot
    from pkm.sim.inputs import Table
    from pkm.trajectory import pick_place

    robot = pkm.load(robot_file)
    tr = pick_place([0.0, 0.0, -1.0], 0.025, 0.305, T_CYCLE, DT)
    tau = robot.inverse_dynamics(tr.x, tr.xd, tr.xdd).tau
    table = Table(tr.t, tau)
    variants = [Robot(robot.spec.with_payload(m)) if m else robot for m in payloads]
    rng = np.random.default_rng(seed)
    X0 = tr.x[0] + sigma * rng.standard_normal((count, 3))
    XD0 = tr.xd[0] + sigma * rng.standard_normal((count, 3))
    which = np.arange(count) % len(variants)
    return robot, tr, table, variants, which, X0, XD0


def run_pkm(robot, table, variants, which, X0, XD0, threads, lanes=None):
    members = [variants[i] for i in which]
    c0, t0 = time.process_time(), time.perf_counter()
    res = robot.simulate_batch(table, (0.0, T_CYCLE), X0, XD0, dt=DT, robots=members, every=100, threads=threads,
                               progress=False, lanes=lanes)
    return res, time.perf_counter() - t0, time.process_time() - c0


def mujoco_models(variants, setting):
    import mujoco

    from pkm.export.mjcf import STIFF, mjcf_string

    step = {"stiff": STIFF["timestep"], "1ms": 1e-3, "fine": 1e-5}[setting]
    opts = dict(STIFF, timestep=step, solref=(2 * step, 1.0))
    return [mujoco.MjModel.from_xml_string(mjcf_string(r, **opts)) for r in variants], opts


def run_mujoco(robot, table, variants, which, X0, XD0, setting, threads, members_per_call=100, steps_per_call=1000):
    """The rollout of every member; returns (wall, cpu, closure max, final platform positions, opts, failed)."""
    import mujoco
    from mujoco import rollout

    from pkm.export import multibody

    models, opts = mujoco_models(variants, setting)
    h = opts["timestep"]
    nstep = int(round(T_CYCLE / h))
    spec = mujoco.mjtState.mjSTATE_FULLPHYSICS
    m0 = models[0]
    nstate = mujoco.mj_stateSize(m0, spec)
    mb = multibody(robot)
    ik = robot.inverse_dynamics(X0, XD0, np.zeros_like(X0))   # every member's joint state (not timed)
    d0 = mujoco.MjData(m0)
    init = np.empty((len(X0), nstate))
    for b in range(len(X0)):
        q, v = mb.state({k: a[b] for k, a in ik.joints.items()}, {k: a[b] for k, a in ik.joints_d.items()})
        d0.qpos[:], d0.qvel[:], d0.time = q, v, 0.0
        mujoco.mj_forward(m0, d0)
        mujoco.mj_getState(m0, d0, init[b], spec)
    ctrl = np.array([table(k * h) for k in range(nstep)])[None]   # (1, nstep, nu), held over each step
    datas = [mujoco.MjData(m0) for _ in range(threads)]
    final = np.empty((len(X0), nstate))
    checkpoints = []
    c0, t0 = time.process_time(), time.perf_counter()
    for a in range(0, len(X0), members_per_call):
        e = min(a + members_per_call, len(X0))
        state = init[a:e]
        mods = [models[i] for i in which[a:e]]
        for s in range(0, nstep, steps_per_call):
            k = min(steps_per_call, nstep - s)
            out, _ = rollout.rollout(mods, datas, state, ctrl[:, s:s + k], nstep=k)
            state = out[:, -1].copy()
            checkpoints.append((a, e, state))
        final[a:e] = state
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    eq = None
    closure, failed = 0.0, np.zeros(len(X0), bool)
    pos = np.full((len(X0), 3), np.nan)
    d = mujoco.MjData(m0)
    for a, e, states in checkpoints:   # the equality constraints' violation at every chunk's end
        for i, st in enumerate(states):
            if not np.all(np.isfinite(st)):
                failed[a + i] = True
                continue
            mujoco.mj_setState(models[which[a + i]], d, st, spec)
            mujoco.mj_fwdPosition(models[which[a + i]], d)
            eq = d.efc_type == mujoco.mjtConstraint.mjCNSTR_EQUALITY
            closure = max(closure, float(np.abs(d.efc_pos[eq]).max()))
    for b in range(len(X0)):
        if np.all(np.isfinite(final[b])):
            mujoco.mj_setState(m0, d, final[b], spec)
            mujoco.mj_kinematics(m0, d)
            pos[b] = d.site("platform").xpos
    return wall, cpu, closure, pos, opts, failed, nstep


def prange_rows(robot, table, variants, which, X0, XD0, threads, pkm_end, record):
    """The kernel's share: a numba prange over the members against the thread pool (the scalar kernel,
    ``lanes=False``) with 2 kept rows and no limit check (the same members; best of 2 each, alternated)."""
    import numba

    import _batch_prange
    from pkm.sim.task import piecewise_cubic

    numba.set_num_threads(threads)
    T = DT * np.arange(int(round(T_CYCLE / DT)) + 1)
    pp = piecewise_cubic(table, 0.0, T_CYCLE)
    _batch_prange.run(robot, variants, which[:2], pp, T, X0[:2], XD0[:2])   # compile
    members = [variants[i] for i in which]
    best = {"prange": (np.inf, np.inf), "pool": (np.inf, np.inf)}
    for _ in range(2):
        c0, t0 = time.process_time(), time.perf_counter()
        final, codes = _batch_prange.run(robot, variants, which, pp, T, X0, XD0)
        best["prange"] = min(best["prange"], (time.perf_counter() - t0, time.process_time() - c0))
        c0, t0 = time.process_time(), time.perf_counter()
        res = robot.simulate_batch(table, (0.0, T_CYCLE), X0, XD0, dt=DT, robots=members, every=len(T), threads=threads,
                                   progress=False, limits=False, lanes=False)
        best["pool"] = min(best["pool"], (time.perf_counter() - t0, time.process_time() - c0))
    same = float(np.abs(final[:, :3] - res.x[:, -1]).max())
    n, out = len(X0), []
    for name, what in (("prange", "numba prange over members (kernel only, final state)"),
                       ("pool", "pkm simulate_batch, 2 kept rows, no limit check")):
        wall, cpu = best[name]
        record["runs"].append(dict(peer=name, threads=threads, members=n, wall=wall, cpu=cpu, rate=n * T_CYCLE / wall,
                                   prange_vs_pool_max_dx=same))
        out.append([what, threads, n, f"{wall:.2f}", f"{cpu:.2f}", f"{n * T_CYCLE / wall:.1f}",
                    f"{n * T_CYCLE / cpu:.1f}", "", f"{int(np.sum(codes == 0)) if name == 'prange' else int(res.ok.sum())}/{n}",
                    f"{same:.0e}" if name == "prange" else "0"])
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--count", type=int, default=1000, help="pick-and-place cycles (members) per call (1000)")
    p.add_argument("--threads", type=int, default=None, help="threads of both (default: the usable cores)")
    p.add_argument("--sigma", type=float, default=1e-3, help="initial-state perturbation [m, m/s] (1e-3)")
    p.add_argument("--payloads", type=float, nargs="+", default=[0.0, 0.02, 0.05], help="payload masses [kg]")
    p.add_argument("--single-count", type=int, default=None,
                   help="members of the one-thread runs (default count/10): the threads' scaling")
    p.add_argument("--no-mujoco", action="store_true")
    p.add_argument("--prange", action="store_true",
                   help="also the members as one numba prange (benchmarks/_batch_prange.py: the kernel alone, final "
                        "states) beside the thread pool keeping only the first and last states")
    p.add_argument("--settings", nargs="+", default=["stiff", "1ms", "fine"], choices=["stiff", "1ms", "fine"])
    p.add_argument("--robot", default=str(ROOT / "robots" / "delta_3rr2rrr.toml"),
                   help="robot file (default robots/delta_3rr2rrr.toml; a Delta of its workspace, e.g. "
                        "robots/delta_3r2us.toml: general limbs in lanes; MuJoCo needs its MJCF export)")
    p.add_argument("--machine")
    args = p.parse_args(argv)
    cpu, vers = cpu_info(), versions()
    threads = args.threads or cpu.get("usable_cpus", 1)
    try:
        import mujoco
        vers["mujoco"] = mujoco.__version__
    except ImportError:
        args.no_mujoco, vers["mujoco"] = True, None
    print(header(f"Batches of simulations: pick-and-place cycles (0.5 s at 1 kHz) of {args.robot}", cpu, vers))
    robot, tr, table, variants, which, X0, XD0 = setup(args.count, args.sigma, args.payloads, robot_file=args.robot)
    single = args.single_count or max(2, args.count // 10)
    # warm-up (compiles or loads the kernels: W members for the lanes), and the batch against one single run
    warm, _, _ = run_pkm(robot, table, variants, which[:8], X0[:8], XD0[:8], 1)
    run_pkm(robot, table, variants, which[:2], X0[:2], XD0[:2], 1, lanes=False)
    ref = variants[which[1]].simulate(table, (0.0, T_CYCLE), X0[1], XD0[1], method="RK4", form="task", dt=DT)
    same = float(np.abs(warm.x[1] - ref.x[::100]).max())
    rows, record = [], {"cpu": cpu, "versions": vers, "robot": args.robot, "count": args.count, "payloads": args.payloads,
                        "sigma": args.sigma, "batch_vs_single_max_dx": same, "runs": []}
    ends = {}
    for lanes, what in ((None, "pkm simulate_batch (RK4 1 ms, numba, SIMD lanes)"),
                        (False, "pkm simulate_batch (RK4 1 ms, numba, lanes=False)")):
        for k, n in ((threads, args.count), (1, single)):
            res, wall, cpuT = run_pkm(robot, table, variants, which[:n], X0[:n], XD0[:n], k, lanes=lanes)
            ok = res.ok
            closure = float(res.closure[ok].max(initial=0.0))
            energy = float(np.abs(res.energy_error[ok]).max(initial=0.0))
            ends.setdefault(n, {})[lanes] = res.x[:, -1]
            if lanes is None and n == args.count:
                full = res
            record["runs"].append(dict(peer="pkm" if lanes is False else "pkm-lanes", threads=k, members=n, wall=wall,
                                       cpu=cpuT, rate=n * T_CYCLE / wall, cpu_rate=n * T_CYCLE / cpuT, closure=closure,
                                       energy_error=energy, ok=int(ok.sum()),
                                       status={s: int(np.sum(res.status == s)) for s in set(res.status)}))
            rows.append([what, k, n, f"{wall:.2f}", f"{cpuT:.2f}", f"{n * T_CYCLE / wall:.1f}",
                         f"{n * T_CYCLE / cpuT:.1f}", f"{closure:.1e}", f"{int(ok.sum())}/{n}",
                         "0" if lanes is None else f"{np.nanmax(np.abs(ends[n][None] - ends[n][False])):.0e}"])
    ok = full.ok
    pkm_end = ends[args.count][None]
    if args.prange:
        rows += prange_rows(robot, table, variants, which, X0, XD0, threads, pkm_end, record)
    if not args.no_mujoco:
        for setting in args.settings:
            runs = ((threads, single),) if setting == "fine" else ((threads, args.count), (1, single))
            for k, n in runs:
                wall, cpuT, clo, pos, opts, failed, nstep = run_mujoco(robot, table, variants, which[:n], X0[:n],
                                                                       XD0[:n], setting, k)
                rate = n * T_CYCLE / wall
                both = ok[:n] & ~failed
                dev = float(np.abs(pos[both] - pkm_end[:n][both]).max(initial=0.0))
                what = f"MuJoCo rollout ({setting}: timestep {opts['timestep'] * 1e3:g} ms)"
                record["runs"].append(dict(peer="mujoco", setting=setting, options=opts, nstep=nstep, threads=k,
                                           members=n, wall=wall, cpu=cpuT, rate=rate, closure=clo,
                                           max_end_deviation_from_pkm=dev, failed=int(failed.sum())))
                rows.append([what, k, n, f"{wall:.2f}", f"{cpuT:.2f}", f"{rate:.1f}", f"{n * T_CYCLE / cpuT:.1f}",
                             f"{clo:.1e}", f"{n - int(failed.sum())}/{n}", f"{dev:.1e}"])
    try:
        record["load_average_at_end"] = list(os.getloadavg())
    except OSError:
        pass
    headers = ["run", "threads", "members", "wall s", "CPU s", "sim s / wall s", "sim s / CPU s", "loop closure max [m]",
               "members ok", "end x − pkm's [m]"]
    md = markdown_table(rows, headers)
    record["table"] = md
    print(md)
    print(f"\nbatch member 1 vs robot.simulate(method='RK4', form='task'): max |Δx| {same:.1e} m; load average "
          f"at start {cpu.get('load_average_at_start')}, at end {record.get('load_average_at_end')}")
    stem = Path(args.robot).stem
    suffix = "" if stem == "delta_3rr2rrr" else f"-{stem}"
    path = write_json(RESULTS / f"{args.machine or machine_slug(cpu)}-batch-sim{suffix}.json", record)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
