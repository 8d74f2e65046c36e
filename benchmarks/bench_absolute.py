"""The energy–momentum scheme of seed 002 (pkm.absolute) against standard schemes (issue 16):
milliseconds per step, and the energy drift over 1 s, on the six-body linkage, the gyro top and
the Delta robot (robots/delta_3rr2rrr.toml loaded by pkm.absolute.loader: 16 bodies, 192
coordinates, 12 dependent parallelogram rows; without gravity, motors free, coasting from home
with the platform at (0.2, 0.1, 0.1) m/s — a free fall would reach the stretched arms at 0.26 s,
where the constraint Jacobian loses rank and every index-1/index-3 scheme stops).

* **ms per step** (best of ``--repeats`` runs of 100 steps at Δt = 0.01, condition numbers off):
  the discrete null space method with seed 002's explicit null space matrices and with an SVD
  basis, the constrained scheme with multipliers (seed 002 eq. 10), pkm's index-3 generalized-α
  and — if installed — Exudyn's generalized-α (C++) on the same linkage and Delta (every joint a
  GenericJoint with the dependent axes released: peers_exudyn.absolute_system).
* **energy drift over 1 s** (``max |E − E₀| / E₀``) and the error — for the linkage of the
  configuration at 1 s against scipy's DOP853 (rtol 1e-11) on the index-1 form with projection, for
  the top of the centre of mass against the analytic precession — for each scheme and step: the
  energy–momentum scheme, generalized-α (ρ∞ = 0.9, Exudyn's default, and 0.5), the index-1 form by
  RK45 with projection, and Exudyn's generalized-α. "failed" where a scheme's Newton iteration gave
  up (the index-3 schemes' energy grows first).

BLAS runs on one thread (``OPENBLAS_NUM_THREADS=1`` etc., set before numpy is imported): on the
2-core test machines a multithreaded 100×100 solve took 3 ms instead of 0.07 ms.

    python benchmarks/bench_absolute.py [--repeats 3] [--quick] [--machine NAME]
"""
from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import RESULTS, cpu_info, header, machine_slug, markdown_table, table, versions, write_json  # noqa: E402

from pkm.absolute import examples as ex  # noqa: E402
from pkm.absolute.energy_momentum import ConvergenceError, EnergyMomentum  # noqa: E402
from pkm.absolute.standard import GeneralizedAlpha, projected_ode  # noqa: E402

T = 1.0


def delta_coasting():
    """The Delta in absolute coordinates as an :class:`~pkm.absolute.examples.Example`: zero
    gravity, consistent start at home with the platform velocity (0.2, 0.1, 0.1) m/s (the motors'
    rates from pkm's inverse kinematics); ``data["model"]`` is the loaded model (``.full`` has the
    dependent rows, for Exudyn)."""
    import pkm
    from pkm.absolute.forward import consistent_state
    from pkm.absolute.loader import load_spec
    from pkm.absolute.potentials import Gravity

    robot = pkm.load(Path(__file__).resolve().parents[1] / "robots" / "delta_3rr2rrr.toml")
    model = load_spec(robot.spec)
    ik = robot.inverse_kinematics(robot.x_ref, [0.2, 0.1, 0.1])
    q0, v0 = consistent_state(model, ik.q_act[0], ik.qd_act[0], model.reference)
    return ex.Example("Delta 3RR[2RR]R (coasting, g = 0)", model.system, q0, v0, Gravity(model.system, np.zeros(3)),
                      data={"model": model})


EXAMPLES = (ex.six_body_linkage, ex.gyro_top, delta_coasting)


def exudyn_run(e, dt, T, rho):
    """Exudyn on example ``e``: the linkage with its hand-released row, the robot from its model."""
    import peers_exudyn

    if "model" in e.data:
        m = e.data["model"]
        return peers_exudyn.absolute_system(m.full, e.q0, e.v0, np.zeros(3), dt, T, rho)
    return peers_exudyn.six_body(e, dt, T, rho)


def best_ms(run, steps, repeats):
    best = np.inf
    for _ in range(repeats):
        t0 = time.perf_counter()
        run()
        best = min(best, (time.perf_counter() - t0) / steps * 1e3)
    return best


def timings(repeats):
    import peers_exudyn

    rows = []
    for make in EXAMPLES:
        e = make()
        n = 100
        ga_dt = 0.001 if make is ex.gyro_top else 0.01     # the top needs a small step (see drifts)
        cases = [
            ("energy–momentum, null space (seed 002's P)", 0.01,
             EnergyMomentum(e.system, e.q0, e.potential, cut=e.cut, condition=False)),
            *([] if make is delta_coasting else [("energy–momentum, null space (SVD P)", 0.01, EnergyMomentum(
                e.system, e.q0, e.potential, cut=e.cut, null_space="numerical", condition=False))]),
            ("energy–momentum, constrained (eq. 10)", 0.01,
             EnergyMomentum(e.system, e.q0, e.potential, method="constrained", condition=False)),
            ("pkm generalized-α ρ∞ = 0.5", ga_dt, GeneralizedAlpha(e.system, e.q0, e.potential, rho_inf=0.5)),
        ]
        for name, dt, scheme in cases:
            try:
                ms = f"{best_ms(lambda: scheme.integrate(e.q0, e.v0, dt, n), n, repeats):.2f}"
            except ConvergenceError:
                ms = "failed"
            rows.append([e.name, name, f"{dt:g}", scheme.unknowns, ms])
        if make is not ex.gyro_top and peers_exudyn.available():
            for dt, rho in ((0.01, 0.5), (0.001, 0.9)):
                r = min((exudyn_run(e, dt, n * dt, rho) for _ in range(repeats)),
                        key=lambda r: r["ms_per_step"])
                rows.append([e.name, f"Exudyn generalized-α ρ∞ = {rho:g} (C++)", f"{dt:g}", r["unknowns"],
                             f"{r['ms_per_step']:.2f}" if r["ok"] else "failed"])
    return rows


def drifts(quick):
    import peers_exudyn

    out = []
    for make in EXAMPLES:
        e = make()
        ref = projected_ode(e.system, e.q0, e.v0, 0.01, int(round(T / 0.01)), e.potential, method="DOP853",
                            rtol=1e-8 if quick else 1e-11, atol=1e-10 if quick else 1e-13)
        steps = (0.01, 0.002) if quick else (0.01, 0.002, 0.001)

        def error(tr):
            if make is ex.gyro_top:   # the spin's phase makes |q − q_ref| wrap: the centre of mass instead
                return float(np.max(np.linalg.norm(tr.q[:, :3] - e.data["com"](tr.t), axis=1)))
            return float(np.max(np.abs(tr.q[-1] - ref.q[-1])))

        def record(scheme, dt, run):
            t0 = time.perf_counter()
            try:
                tr = run()
                ok, drift, err, closure = True, tr.energy_drift(), error(tr), float(tr.constraint_residual.max())
            except ConvergenceError:
                ok, drift, err, closure = False, np.nan, np.nan, np.nan
            out.append({"example": e.name, "scheme": scheme, "dt": dt, "ok": ok, "energy_drift": drift,
                        "q_error": err, "closure": closure, "seconds": time.perf_counter() - t0})

        for dt in steps:
            n = int(round(T / dt))
            record("energy–momentum (discrete null space)", dt, lambda: EnergyMomentum(
                e.system, e.q0, e.potential, cut=e.cut, condition=False).integrate(e.q0, e.v0, dt, n))
            for rho in (0.9, 0.5):
                record(f"pkm generalized-α ρ∞ = {rho:g}", dt, lambda: GeneralizedAlpha(
                    e.system, e.q0, e.potential, rho_inf=rho).integrate(e.q0, e.v0, dt, n))
            if make is not ex.gyro_top and peers_exudyn.available():
                for rho in (0.9, 0.5):
                    t0 = time.perf_counter()
                    r = exudyn_run(e, dt, T, rho)
                    out.append({"example": e.name, "scheme": f"Exudyn generalized-α ρ∞ = {rho:g}", "dt": dt,
                                "ok": r["ok"], "energy_drift": r["energy_drift"] if r["ok"] else np.nan,
                                "q_error": float(np.max(np.abs(r["q"][-1] - ref.q[-1]))) if r["ok"] else np.nan,
                                "closure": r["closure"] if r["ok"] else np.nan, "seconds": time.perf_counter() - t0,
                                "failed_at": None if r["ok"] else float(r["t"][-1])})
        record("index-1 RK45 (rtol 1e-8) + projection", 0.01, lambda: projected_ode(
            e.system, e.q0, e.v0, 0.01, int(round(T / 0.01)), e.potential))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="fewer steps, a coarser reference")
    ap.add_argument("--machine", default=None)
    args = ap.parse_args(argv)
    import peers_exudyn

    cpu, vers = cpu_info(), versions()
    vers["exudyn"] = peers_exudyn.available()
    print(header("pkm.absolute: energy–momentum scheme (seed 002) vs standard schemes", cpu, vers))
    print(f"exudyn {vers['exudyn'] or 'not installed (pip install exudyn): its rows are left out'}\n")
    t_rows = timings(args.repeats)
    t_head = ["example", "scheme", "Δt", "unknowns/step", "ms/step"]
    print("Time per step (best of %d runs of 100 steps)\n" % args.repeats + table(t_rows, t_head) + "\n")
    d = drifts(args.quick)
    d_head = ["example", "scheme", "Δt", "energy drift (1 s)", "error", "max |Φ|"]
    d_rows = [[r["example"], r["scheme"], f"{r['dt']:g}",
               f"{r['energy_drift']:.1e}" if r["ok"] else "failed" + (f" at t = {r['failed_at']:.2f}"
                                                                       if r.get("failed_at") else ""),
               f"{r['q_error']:.1e}" if r["ok"] else "", f"{r['closure']:.0e}" if r["ok"] else ""] for r in d]
    print(f"Energy drift over {T:g} s. Error: six-body, |q − q_ref| at {T:g} s against DOP853 (rtol "
          f"{1e-8 if args.quick else 1e-11:g}) with projection; top, max |φ − φ_analytic| of the centre of mass\n"
          + table(d_rows, d_head))
    slug = args.machine or machine_slug(cpu)
    path = write_json(RESULTS / f"{slug}-absolute.json", {
        "cpu": cpu, "versions": vers, "timings": [dict(zip(t_head, r)) for r in t_rows], "drifts": d,
        "markdown": markdown_table(t_rows, t_head) + "\n\n" + markdown_table(d_rows, d_head)})
    print(f"\nwritten {path}")


if __name__ == "__main__":
    main()
