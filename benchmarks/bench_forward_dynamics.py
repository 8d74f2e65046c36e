"""Forward-dynamics timings and accuracy (issue 15): pkm beside Pinocchio's ``constraintDynamics`` and
MuJoCo's ``mj_step`` on the closed-loop Delta, in the same run, interleaved.

pkm, for the Delta, the IRSBot-2 and the 3R[2US] Delta (µs, best of ``--repeats``):

* **RHS in RK4**: one right-hand side (forward dynamics at one state) inside the RK4 run in numba,
  i.e. a run's time over its ``4n + 1`` evaluations (no Python between them);
* **RHS from Python**: one call of the kernel at one state from Python
  (:class:`pkm.sim.forward.ForwardKernel`, preallocated: numba's dispatch of ~50 arguments included);
* **RHS batch**: per state of a batch of 1000 states of the paper's motion;
* **RHS actuator in RK4 / from Python**: one right-hand side of the actuator-coordinate form
  (paper 8.1.3: the assembly per call, warm-started) on its numba kernel
  (:mod:`pkm.kernels.actuator_form`), inside its numba RK4 run over the same steps and torque table
  as the task form's, and one kernel call from Python (:class:`pkm.sim.actuator_kernel.ActuatorKernel`);
  the ratio to the task form's "RHS in RK4" is printed (issue 32: ≤ 2);
* **RHS actuator, Python reference**: the same on the per-sample reference algorithms
  (:class:`pkm.sim.actuator.ActuatorModel`);
* **RHS joint in RK4 / from Python**: one right-hand side of the joint-coordinate form (paper
  8.1.2: eq. 133–134 at the state's own θ, no IK) on its numba kernel (:mod:`pkm.kernels.joint_form`),
  inside its numba RK4 run (without projections) over the same steps and table, and one kernel
  call from Python (:class:`pkm.sim.joint_kernel.JointKernel`);
* **RK4 step joint form, projected**: one step of the joint form's numba RK4 with the reference's
  acceptance (the J_IK check and the closure projection after every step);
* **RK4 step**: one step of the numba RK4 run.

Peers (only the Delta; each optional): one ``constraintDynamics`` call and one Pinocchio RK4 step,
``mj_step`` (Euler and RK4) and ``mj_forward``, built by :mod:`peers_forward` / :mod:`peers_mujoco`.
Each round times every candidate once, in turn, so that the VM's speed drift hits all alike.
Then the accuracy on the same motion (1 s of the paper's motion under pkm's inverse-dynamics
torques): the loop-closure residual and the drift of the platform from pkm's DOP853 solution,
for pkm's numba RK4 and each peer setting.

    python benchmarks/bench_forward_dynamics.py [--repeats 5] [--no-accuracy]
"""
from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

ROBOTS = ("delta_3rr2rrr.toml", "irsbot2.toml", "delta_3r2us.toml")


def cpu_best(f, inner):
    """Process-CPU µs per call of ``f`` over ``inner`` calls (one sample)."""
    c = time.process_time()
    for _ in range(inner):
        f()
    return (time.process_time() - c) / inner * 1e6


def pkm_candidates(robot):
    """pkm's timed callables ``{name: (f, inner, per)}`` (µs per call = time / per)."""
    from peers_forward import paper_motion

    from pkm.kernels.batch import platform_states
    from pkm.sim.actuator import ActuatorModel
    from pkm.sim.actuator_kernel import ActuatorKernel, rk4_actuator
    from pkm.sim.joint import JointModel
    from pkm.sim.joint_kernel import JointKernel, rk4_joint
    from pkm.sim.forward import ForwardKernel
    from pkm.sim.inputs import Table, actuator_input
    from pkm.sim.task import TaskRhs, piecewise_cubic, rk4_numba

    tr, res, start = paper_motion(robot)
    s = 300
    k = ForwardKernel(robot)
    k.set_start([res.joints[l.name][s] for l in robot.limbs])
    L, nmax = k.th.shape
    d, na = robot.task_dof, robot.n_act

    def arrays(a, b):
        Cd, Vp, _ = platform_states(robot, tr.x[a:b], tr.xd[a:b], tr.xdd[a:b])
        out = [np.zeros((b - a, L, nmax)) for _ in range(3)] + [np.zeros((b - a, d)), np.zeros((b - a, na)),
                                                                 np.zeros((b - a, na, d))]
        return Cd, Vp, np.zeros((b - a, 6)), np.ascontiguousarray(res.tau[a:b]), out

    one = arrays(s, s + 1)
    batch = arrays(0, 1000)
    for l, name in enumerate(robot.limbs):
        batch[4][0][:, l, :name.n] = res.joints[name.name][:1000]
    k.run(*one)
    k.run(*batch, theta_given=True)
    table = Table(tr.t, res.tau)
    rhs = TaskRhs(robot, actuator_input(robot, table), None, None, start, {}, np.inf)
    n = 100
    T = tr.t[:n + 1].copy()
    y0 = np.concatenate([tr.x[0], tr.xd[0], [0.0]])
    pp = piecewise_cubic(rhs.u, T[0], T[-1])

    def run():
        rhs.kernel.set_start(start)
        rk4_numba(rhs, T, y0, pp)

    run()
    kernel = ActuatorKernel(robot, None, np.asarray(robot.spec.gravity, dtype=float))
    th0 = [res.joints[l.name][0] for l in robot.limbs]
    ya0 = np.concatenate([res.q_act[0], res.qd_act[0], [0.0, 0.0]])

    def run_actuator():
        kernel.set_start(th0)
        rk4_actuator(kernel, T, ya0, pp)

    run_actuator()
    jk = JointKernel(robot, np.asarray(robot.spec.gravity, dtype=float), None, 1e6)
    yj0 = np.concatenate([np.concatenate(th0), tr.xd[0], [0.0]])
    theta_s = np.concatenate([res.joints[l.name][s] for l in robot.limbs])
    rk4_joint(jk, T, yj0, pp)
    jm = JointModel(robot)
    yj0[:len(theta_s)] = jm.project(yj0[:len(theta_s)])[0]   # sets jm.rank, the manifold's
    rk4_joint(jk, T, yj0, pp, rank=jm.rank)
    kernel.set_start([res.joints[l.name][s] for l in robot.limbs])
    kernel.run(res.q_act[s], res.qd_act[s], res.tau[s])
    model = ActuatorModel(robot)
    model.thetas = [res.joints[l.name][s] for l in robot.limbs]
    q, qd = res.q_act[s], res.qd_act[s]
    g = robot.spec.gravity
    return {"RHS in RK4": (run, 3, 4 * n + 1), "RHS from Python": (lambda: k.run(*one), 2000, 1),
            "RHS batch": (lambda: k.run(*batch, theta_given=True), 2, 1000),
            "RHS actuator in RK4": (run_actuator, 3, 4 * n + 1),
            "RHS actuator from Python": (lambda: kernel.run(q, qd, res.tau[s]), 2000, 1),
            "RHS actuator, Python reference": (lambda: model.state(q, qd, g), 20, 1),
            # 5 evaluations per step: 4 stages and the step end's (the reference's J_IK check, no projection)
            "RHS joint in RK4": (lambda: rk4_joint(jk, T, yj0, pp), 3, 5 * n),
            "RHS joint from Python": (lambda: jk.run(theta_s, tr.xd[s]), 2000, 1),
            "RK4 step joint form, projected": (lambda: rk4_joint(jk, T, yj0, pp, rank=jm.rank), 3, n),
            "RK4 step": (run, 3, n)}


def peer_candidates(robot):
    """The installed peers' timed callables on the Delta, as :func:`pkm_candidates`."""
    from peers_forward import PinocchioDeltaFD, have_pinocchio4, paper_motion, pkm_state
    from peers_mujoco import MujocoDelta, have_mujoco

    _, res, _ = paper_motion(robot)
    s = 300
    theta, thetad = pkm_state(robot, res, s)
    out = {}
    if have_pinocchio4():
        p = PinocchioDeltaFD(robot)
        pin = p.pin
        q, v = p.state(theta, thetad)
        tau = p.tau(res.tau[s])
        out[f"Pinocchio {pin.__version__} constraintDynamics"] = (
            lambda: pin.constraintDynamics(p.model, p.data, q, v, tau, p.constraints, p.cdatas, p.prox), 2000, 1)
        out["Pinocchio RK4 step (4 calls + Python)"] = (
            lambda: p.simulate(lambda t: res.tau[s], q, v, 1e-3, 1e-3, "rk4"), 200, 1)
    if have_mujoco():
        for integrator in ("Euler", "RK4"):
            mjd = MujocoDelta(robot, timestep=1e-4, integrator=integrator)
            mjd.set_state(theta, thetad, res.tau[s])
            mjd.mj.mj_forward(mjd.model, mjd.data)
            out[f"MuJoCo {mjd.mj.__version__} mj_step {integrator}"] = (
                lambda m=mjd: m.mj.mj_step(m.model, m.data), 200, 1)
        out[f"MuJoCo {mjd.mj.__version__} mj_forward"] = (lambda m=mjd: m.mj.mj_forward(m.model, m.data), 2000, 1)
    return out


def interleaved(candidates, repeats):
    """Best process-CPU µs per call of each candidate, timed round-robin ``repeats`` times."""
    best = {name: np.inf for name in candidates}
    for _ in range(repeats):
        for name, (f, inner, per) in candidates.items():
            best[name] = min(best[name], cpu_best(f, inner) / per)
    return best


def pkm_accuracy(robot):
    """pkm's numba RK4 (dt = 1 ms and 0.1 ms) on the peers' accuracy motion (:func:`peers_forward.reference_run`)."""
    from peers_forward import paper_motion, reference_run

    from pkm.sim.inputs import Table

    ref = reference_run(robot)
    tr, res, start = paper_motion(robot)
    rows = []
    for dt in (1e-3, 1e-4):
        sim = robot.simulate(Table(tr.t, res.tau), (0.0, 1.0), tr.x[0], tr.xd[0], method="RK4", dt=dt, start=start)
        every = int(round(0.01 / dt))
        drift = np.linalg.norm(sim.x[::every] - ref["x"], axis=1)
        rows.append(dict(peer="pkm", setting=f"task form, RK4 in numba dt={dt:g}", closure_max=float(sim.closure.max()),
                         closure_end=float(sim.closure[-1].max()), drift_max=float(drift.max()),
                         drift_end=float(drift[-1]), energy=float(np.abs(sim.energy_error).max())))
    return ref, rows


def _form_ratio(best, prefix):
    """The actuator and joint forms' RHS over the task form's, in the RK4 run and from Python (issue 32: ≤ 2)."""
    for form in ("actuator", "joint"):
        rk4 = best[f"{prefix}RHS {form} in RK4"] / best[prefix + "RHS in RK4"]
        py = best[f"{prefix}RHS {form} from Python"] / best[prefix + "RHS from Python"]
        print(f"  ratio {form} form / task form: RHS in RK4 {rk4:.2f}, from Python {py:.2f}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--no-accuracy", action="store_true")
    args = ap.parse_args(argv)
    import numba

    import pkm

    print(f"{platform.processor() or platform.machine()}, Python {platform.python_version()}, numpy "
          f"{np.__version__}, numba {numba.__version__}, 1 thread, process-CPU time, best of {args.repeats} "
          "interleaved rounds")
    delta = pkm.load("robots/delta_3rr2rrr.toml")
    cands = {f"pkm {k}": v for k, v in pkm_candidates(delta).items()}
    cands.update(peer_candidates(delta))
    best = interleaved(cands, args.repeats)
    print(f"\nclosed-loop Delta ({delta.name}):")
    for name, us in best.items():
        print(f"  {name:<48}{us:>10.2f} µs")
    _form_ratio(best, "pkm ")
    pin = [us for name, us in best.items() if name.endswith("constraintDynamics")]
    if pin:
        print(f"  ratio pkm RHS in RK4 / constraintDynamics: {best['pkm RHS in RK4'] / pin[0]:.2f}; "
              f"pkm RHS from Python / constraintDynamics: {best['pkm RHS from Python'] / pin[0]:.2f}")
    for name in ROBOTS[1:]:
        robot = pkm.load(f"robots/{name}")
        best = interleaved(pkm_candidates(robot), args.repeats)
        print(f"\n{robot.name}:")
        for key, us in best.items():
            print(f"  pkm {key:<44}{us:>10.2f} µs")
        _form_ratio(best, "")
    if args.no_accuracy:
        return
    from peers_forward import peer_accuracy

    ref, rows = pkm_accuracy(delta)
    rows += [r for r in peer_accuracy(delta, free_fall=False)]
    print(f"\naccuracy, 1 s of the paper's motion under pkm's ID torques (pkm's DOP853 run: loop closure "
          f"{ref['closure']:.1e}):")
    print(f"  {'peer':<10}{'setting':<62}{'closure max':>12}{'at 1 s':>10}{'drift max':>11}{'at 1 s':>10}")
    for r in rows:
        print(f"  {r['peer']:<10}{r['setting'][:60]:<62}{r['closure_max']:>12.1e}{r['closure_end']:>10.1e}"
              f"{r['drift_max']:>11.1e}{r['drift_end']:>10.1e}")


if __name__ == "__main__":
    main()
