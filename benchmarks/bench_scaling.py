"""How pkm's costs grow: tree RNEA per body vs chain length n, PKM work per limb vs number of limbs L.

    python benchmarks/bench_scaling.py            # ≈ 1–2 min on a 2-core machine

A. Serial chains of n = 8, 16, …, 512 revolute joints with random axes and cylinder links
   (``peers.random_chain``, compiled with ``pkm.description.model.compile_tree``): pkm's tree RNEA
   (``relative_poses_into`` + ``rnea_into``, the numba kernels of pkm.algorithms.kinematics / pkm.algorithms.dynamics, run
   over a batch of random states in a numba loop), pkm's Python wrapper ``pkm.algorithms.dynamics.inverse_dynamics``
   per call, and Pinocchio's ``rnea`` per call from Python on a model built from the same data
   (checked against pkm to 1e-9 relative at every n). Reported: µs per body (time per evaluation / n).
   An O(n) algorithm gives a flat line.

B. A PKM with L = 2 … 16 identical R[2US] limbs (the 3R[2US] Delta's limb: 9 tree joints, one loop)
   mounted at 360°/L, translational task, on the paper's sine motion. ``robot.inverse_dynamics``
   needs as many actuators as task coordinates (L = 3), so what is timed is the per-limb work:
     * ``robot.inverse_kinematics(x, ẋ, ẍ)`` — pkm's Python path: every limb's Newton IK (eq. 95–96,
       warm-started) and velocity/acceleration IK (eq. 86–88), per sample; all L;
     * pkm's serial numba kernel (``pkm.kernels.inverse_dynamics.run_range``, what ``robot.inverse_dynamics(…, threads=1)``
       runs; an internal function, called directly, L ≥ 3): per limb IK + rates + limb RNEA +
       ``F̄ᵀH̄ᵀφ`` (eq. 144) for every limb, then the platform and a 3×3 solve that uses the first three
       limbs' actuators only (the others get no torque: a cost model of the per-limb work, not a
       redundantly actuated inverse dynamics).
   Reported: µs per limb and sample. Linear growth in L gives a flat line.

Writes ``benchmarks/results/<machine>-scaling.json`` and ``benchmarks/results/<machine>-scaling.png``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as C  # noqa: E402
import peers  # noqa: E402


def log(msg):
    print(msg, file=sys.stderr, flush=True)


# ------------------------------------------------------------------------------ A: chains
def bench_chains(ns, repeats, budget_bodies=200_000):
    from pkm.algorithms.dynamics import inverse_dynamics

    g0 = np.array([0.0, 0.0, -9.81])
    rows = []
    for n in ns:
        tree = peers.random_chain(n, seed=n)
        rng = np.random.default_rng(n)
        K = max(20, budget_bodies // n)
        Q = rng.uniform(-np.pi, np.pi, (K, n))
        QD = rng.normal(size=(K, n))
        QDD = rng.normal(size=(K, n))
        tau = np.empty((K, n))
        peers.rnea_batch(tree.parent, tree.X, tree.B, tree.M, Q[:1], QD[:1], QDD[:1], g0, tau[:1])
        t_kernel, c_kernel = (t / K for t in C.best_of(
            lambda: peers.rnea_batch(tree.parent, tree.X, tree.B, tree.M, Q, QD, QDD, g0, tau), repeats))
        Kw = min(K, 200)
        wargs = list(zip(Q[:Kw], QD[:Kw], QDD[:Kw]))
        t_wrap, c_wrap = C.per_call_loop(lambda q, qd, qdd: inverse_dynamics(tree, q, qd, qdd, g0), wargs, repeats)
        row = {"n": n, "states": K, "pkm_kernel_s": t_kernel, "pkm_kernel_cpu_s": c_kernel, "pkm_wrapper_s": t_wrap,
               "pkm_wrapper_cpu_s": c_wrap}
        if peers.have_pinocchio():
            import pinocchio as pin

            pt = peers.pinocchio_model([tree], g0)
            model, data = pt.model, pt.model.createData()
            pargs = [(model, data, q, qd, qdd) for q, qd, qdd in zip(Q, QD, QDD)]
            row["pin_rnea_s"], row["pin_rnea_cpu_s"] = C.per_call_loop(pin.rnea, pargs, repeats)
            ref = np.array([pin.rnea(model, data, Q[s], QD[s], QDD[s]) for s in range(min(K, 5))])
            row["pin_vs_pkm_max_rel_diff"] = float(np.max(np.abs(ref - tau[:len(ref)])) / np.max(np.abs(tau[:len(ref)])))
        rows.append(row)
        log(f"  n = {n:4d} (CPU time): pkm kernel {c_kernel / n * 1e9:.0f} ns/body, wrapper {c_wrap / n * 1e9:.0f} "
            "ns/body" + (f", Pinocchio {row['pin_rnea_cpu_s'] / n * 1e9:.0f} ns/body" if "pin_rnea_s" in row else ""))
    return rows


# ------------------------------------------------------------------------------ B: limbs
def _kernel_call(robot, X, XD, XDD):
    """A closure running pkm's batch kernel once, on one thread, on an L-limb robot (L ≥ task DOF).

    Mirrors ``pkm.kernels.batch.inverse_dynamics_batch`` with one chunk (what ``robot.inverse_dynamics(…,
    threads=1)`` runs: ``pkm.kernels.inverse_dynamics.run_range``) but without its n_act == δ_p check; no
    sample times, so every sample's IK starts from the previous sample (the first from the
    reference configuration)."""
    import pkm.kernels.batch as B
    from pkm.kernels.inverse_dynamics import Results, Samples, make_work, run_range
    from pkm.kernels.model import LAY_NMAX, LI_AFF

    km = robot._packed()
    N = X.shape[0]
    L, nmax = km.mi.shape[0], int(km.lay[LAY_NMAX])
    dp = robot.task_dof
    smp = Samples(*B.platform_states(robot, X, XD, XDD), np.zeros((N, 6)), np.zeros(N),
                  np.asarray(robot.spec.gravity, float))
    out = Results(np.zeros((N, L, nmax)), np.zeros((N, L, nmax)), np.zeros((N, L, nmax)), np.zeros((N, robot.n_act)),
                  np.zeros((N, robot.n_act, dp)), np.zeros((N, L, dp)), np.zeros((N, dp)))
    Cs = robot.continuation_poses(X[0])[:-1]
    work = [w[0] for w in make_work(km, 1)]
    general = None if km.mi[:, LI_AFF].all() else km.lay
    status = np.zeros(4)

    def call():
        run_range(0, N, *km, *smp, *out, *work, True, Cs, general, 1e-12, 50, np.inf, status)

    def checked():
        call()
        if status[0] != 0:
            raise RuntimeError(f"kernel status {status}")

    return checked


def bench_limbs(Ls, repeats, n_python, n_kernel):
    from pkm.trajectory import sine

    rows = []
    tmp = Path(tempfile.mkdtemp(prefix="pkm-limbs-"))
    kernel_note = None
    for L in Ls:
        robot = peers.multi_limb_robot(L, tmp)
        spec = robot.spec.trajectory
        tr = sine(spec["center"], spec["amplitude"], spec["period"], (n_kernel - 1) * spec["dt"], spec["dt"])
        X, XD, XDD = tr.x, tr.xd, tr.xdd
        robot.inverse_kinematics(X[:2], XD[:2], XDD[:2])
        sl = slice(0, n_python)

        def py():
            robot.inverse_kinematics(X[sl], XD[sl], XDD[sl])

        t_py, c_py = (t / n_python for t in C.best_of(py, repeats))
        row = {"L": L, "tree_joints_per_limb": robot.limbs[0].n, "python_ik_s_per_sample": t_py,
               "python_ik_cpu_s_per_sample": c_py, "python_samples": n_python}
        if L >= robot.task_dof and kernel_note is None:
            try:
                call = _kernel_call(robot, X, XD, XDD)
                call()
                t_k, c_k = C.best_of(call, repeats)
                row["kernel_s_per_sample"], row["kernel_cpu_s_per_sample"] = t_k / n_kernel, c_k / n_kernel
                row["kernel_samples"] = n_kernel
            except Exception as exc:  # internal API: may change under us
                kernel_note = f"kernel path unavailable: {type(exc).__name__}: {exc}"
                log("  " + kernel_note)
        rows.append(row)
        msg = f"  L = {L:2d} (CPU time): Python IK {c_py / L * 1e6:.0f} µs/limb"
        if "kernel_s_per_sample" in row:
            msg += f", kernel IK+ID {row['kernel_cpu_s_per_sample'] / L * 1e6:.1f} µs/limb"
        log(msg)
    return rows, kernel_note


# ------------------------------------------------------------------------------ plot
def plot(chains, limbs, path, title):
    """Log–log plot of CPU time per body (chains) and per limb (PKM); single thread."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullFormatter

    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.3))
    n = np.array([r["n"] for r in chains])
    a.loglog(n, [r["pkm_kernel_cpu_s"] / r["n"] * 1e9 for r in chains], "o-", label="pkm RNEA kernels (batched)")
    a.loglog(n, [r["pkm_wrapper_cpu_s"] / r["n"] * 1e9 for r in chains], "s--",
             label="pkm dynamics.inverse_dynamics() per call")
    if all("pin_rnea_s" in r for r in chains):
        a.loglog(n, [r["pin_rnea_cpu_s"] / r["n"] * 1e9 for r in chains], "^-", label="Pinocchio rnea() per call")
    a.set_xlabel("bodies n (serial chain, revolute joints)")
    a.set_ylabel("CPU time per body [ns]")
    a.set_title("tree inverse dynamics (RNEA): time per body")
    a.set_xticks(n, [str(x) for x in n])
    a.xaxis.set_minor_formatter(NullFormatter())
    a.grid(True, which="both", alpha=0.3)
    a.legend(fontsize=8)
    Ls = np.array([r["L"] for r in limbs])
    b.loglog(Ls, [r["python_ik_cpu_s_per_sample"] / r["L"] * 1e6 for r in limbs], "s--",
             label="robot.inverse_kinematics (Python): IK + rates")
    kr = [r for r in limbs if "kernel_s_per_sample" in r]
    if kr:
        b.loglog([r["L"] for r in kr], [r["kernel_cpu_s_per_sample"] / r["L"] * 1e6 for r in kr], "o-",
                 label="batch kernel (numba): IK + rates + limb dynamics")
    b.set_xlabel("limbs L (R[2US] limb, 9 tree joints, 1 loop)")
    b.set_ylabel("CPU time per limb and sample [µs]")
    b.set_title("PKM with L identical limbs: time per limb")
    b.set_xticks(Ls, [str(x) for x in Ls])
    b.xaxis.set_minor_formatter(NullFormatter())
    b.grid(True, which="both", alpha=0.3)
    b.legend(fontsize=8)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def o_n_targets(chains, lo=32, hi=512):
    """The issue's O(n) figures from part A (CPU time): the largest deviation of pkm's per-body time
    from its mean over ``lo ≤ n ≤ hi`` (target ≤ 0.25), and pkm ÷ Pinocchio at ``n = hi`` (≤ 1.5)."""
    per_body = {r["n"]: r["pkm_kernel_cpu_s"] / r["n"] for r in chains if lo <= r["n"] <= hi}
    out = {}
    if len(per_body) > 1:
        mean = sum(per_body.values()) / len(per_body)
        out[f"pkm per body, max deviation from the mean, n = {lo}…{hi}"] = max(abs(v / mean - 1) for v in per_body.values())
    top = next((r for r in chains if r["n"] == hi and "pin_rnea_cpu_s" in r), None)
    if top:
        out[f"pkm / Pinocchio per call at n = {hi}"] = top["pkm_kernel_cpu_s"] / top["pin_rnea_cpu_s"]
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--max-n", type=int, default=512, help="longest chain (powers of 2 from 8; default 512)")
    ap.add_argument("--limbs", type=int, nargs="+", default=[2, 3, 4, 6, 8, 12, 16])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--python-samples", type=int, default=30, help="samples for the Python IK path (default 30)")
    ap.add_argument("--kernel-samples", type=int, default=1000, help="samples for the kernel path (default 1000)")
    ap.add_argument("--machine", help="name prefix of the results files (default: from the CPU model)")
    args = ap.parse_args(argv)

    import numba

    numba.set_num_threads(1)  # per-body / per-limb costs on one thread
    t0 = time.perf_counter()
    cpu, vers = C.cpu_info(), C.versions()
    log(C.header("pkm scaling benchmark", cpu, vers))
    ns = [n for n in (8, 16, 32, 64, 128, 256, 512, 1024, 2048) if n <= args.max_n]
    log("A. serial chains")
    chains = bench_chains(ns, args.repeats)
    log("B. PKM with L limbs")
    limbs, kernel_note = bench_limbs(args.limbs, max(3, args.repeats // 2), args.python_samples, args.kernel_samples)

    print(C.header("pkm scaling benchmark", cpu, vers))
    def ns(r, key):
        return f"{r[key] / r['n'] * 1e9:.0f}" if key in r else "n/a"

    hdr = ["n", "pkm kernels", "(wall)", "pkm wrapper", "(wall)", "Pinocchio", "(wall)", "pin vs pkm", "states"]
    rows = [[r["n"], ns(r, "pkm_kernel_cpu_s"), ns(r, "pkm_kernel_s"), ns(r, "pkm_wrapper_cpu_s"), ns(r, "pkm_wrapper_s"),
             ns(r, "pin_rnea_cpu_s"), ns(r, "pin_rnea_s"),
             f"{r['pin_vs_pkm_max_rel_diff']:.0e}" if "pin_vs_pkm_max_rel_diff" in r else "n/a", r["states"]]
            for r in chains]
    print("A. tree RNEA on serial chains, ns per body: CPU time (wall time); 1 thread")
    print(C.table(rows, hdr))
    targets = o_n_targets(chains)
    for k, v in targets.items():
        print(f"{k}: {v:.3g}")

    def us(r, key, per_limb=True):
        return C.fmt_us(r[key] / (r["L"] if per_limb else 1)) if key in r else "n/a"

    hdr2 = ["L", "Python IK", "(wall)", "kernel IK+ID", "(wall)", "kernel per sample"]
    rows2 = [[r["L"], us(r, "python_ik_cpu_s_per_sample"), us(r, "python_ik_s_per_sample"),
              us(r, "kernel_cpu_s_per_sample"), us(r, "kernel_s_per_sample"), us(r, "kernel_cpu_s_per_sample", False)]
             for r in limbs]
    print("\nB. PKM with L identical R[2US] limbs, µs per limb and sample: CPU time (wall time); 1 thread")
    print(C.table(rows2, hdr2))
    if kernel_note:
        print(kernel_note)

    slug = args.machine or C.machine_slug(cpu)
    png = C.RESULTS / f"{slug}-scaling.png"
    C.RESULTS.mkdir(parents=True, exist_ok=True)
    plot(chains, limbs, png, f"{cpu.get('model_name')}, {cpu.get('usable_cpus')} CPUs; numba {vers['numba']}, "
                             f"pin {vers['pin']}")
    payload = {"benchmark": "bench_scaling", "date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "cpu": cpu,
               "versions": vers, "threads": 1, "chains": chains, "limbs": limbs, "kernel_note": kernel_note,
               "o_n_targets": targets,
               "table_chains_markdown": C.markdown_table(rows, hdr),
               "table_limbs_markdown": C.markdown_table(rows2, hdr2),
               "wall_time_s": time.perf_counter() - t0}
    js = C.write_json(C.RESULTS / f"{slug}-scaling.json", payload)
    print(f"\nwrote {js} and {png} (wall time {payload['wall_time_s']:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
