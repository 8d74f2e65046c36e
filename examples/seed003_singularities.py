"""Seed 003 (Huang, Yan, Jeng & Cheing, "Constrained multibody dynamics avoiding kinematic
singularities") with the joint-reaction formulation of pkm's absolute-coordinate engine
(:mod:`pkm.absolute.joint_reactions`): its claim demonstrated on a passage through a rank loss of the
constraint Jacobian, and its motor-driven 3-(RR)S platform (§12, Figs. 10–11,
examples/rrs3_platform.toml) with an account of why the paper's printed times cannot be reproduced.

1. The passage (``--case passage``). Seed 003's 3-(RR)S run crosses no constraint singularity
   (σ_min/σ_max of Φ_q P_int stays ≥ 4.7e-2), so the seed's point is shown on a mechanism that has
   one: a planar parallelogram four-bar (:func:`pkm.absolute.examples.parallelogram`: two cranks on
   revolutes, a coupler on spherical joints, gravity) turning through its flat configuration — the
   branch point of seed 003's Fig. 1 linkages, where ``Φ_q P_int`` (16 rows) drops to rank 15. It
   starts there (σ_min/σ_max ≈ 0), passes the other flat configuration θ = π and comes back to
   θ = 2π; a second run lands a step exactly on θ = π in mid-motion (bisection). Printed, measured:

   * the multiplier formulation ``[[M, Φ_qᵀ], [Φ_q, 0]] [q̈; λ] = [f; γ]`` refuses the start: its
     matrix is singular (condition > 1e16; also at the node landed on θ = π, σ_min/σ_max 2e-10);
     pkm's multiplier schemes that are made to run drop the dependent row (generalized-α: the dropped
     joint violated by 1e-7 within three 2-ms steps) or solve by least squares (index-1 RK45 +
     projection: energy error 4.4e-4, the same at rtol 1e-8 and 1e-10); 1e-3 rad away both are as
     good as usual (1e-16; 2e-10 and 1e-12);
   * the joint reactions pass, 0.7 s through θ = 0, π and 2π: joints held to 1e-12 (1.7e-11 in the
     step from the landed node), energy to 2.5e-5 (O(Δt²) at Δt = 1 ms, no jump at the singular
     configurations), the revolutes' forces bounded (≤ 199 N) and within 3e-5 of the analytic ones
     of the parallelogram motion (:func:`~pkm.absolute.examples.parallelogram_forces`; 1.7e-3 at
     the two end nodes, whose reactions are O(Δt) off). Figure: docs/seed003_passage.png.

   What makes it pass, and what the paper claims, are not the same (module doc of
   :mod:`pkm.absolute.joint_reactions`, tests/test_seed003_passage.py): the paper's regularising term
   ``Φ_qq κ`` makes the step matrix's condition grow like 1/δ at a distance δ from the singular
   configuration, where the KKT matrix's grows like 1/δ²; at δ = 0 the step matrix is singular too
   (the reactions' self-stress), but its equations stay consistent along the motion, so the
   minimum-norm reactions hold the joints — the reactions are statically indeterminate there, the
   motion is not.

2. The 3-(RR)S platform (``--case platform``). Constant 10 N·m on the three motors (J7–J9, positive
   about the file's axes; the opposite sense gives the mirror motion and the same v_z), gravity
   −9.81 m/s² along z (the paper gives none), from rest in the tabulated configuration, 2 s at
   Δt = 1 ms. Printed: the events of the motion — where the platform passes the base plane and v_z
   has its sharp extrema (the paper's "kinks" of v_z at 0.76, 1.32 and 1.72 s), and along the motion
   the smallest relative singular values of

   * ``Φ_q P_int`` (the joints: a rank loss is a constraint singularity, where the Lagrange form fails),
   * the actuator-locked Jacobian (type II: where actuator coordinates fail),
   * the tilt–heave task map (ω_x, ω_y, v_z of the motions: where pkm's minimal-coordinate engine in
     these task coordinates fails; it is singular at the start),

   the joints' residual, the step matrix's condition, and optionally (``--compare T``) the agreement
   with the index-1 DAE integrated by RK45 with projection (pkm.absolute.standard.projected_ode) up
   to T.

   Why the paper's kink times (0.76, 1.32, 1.72 s) cannot be reproduced. pkm finds the sharp extrema
   of v_z at 0.883, 1.356 and 1.925 s, where the platform passes the base plane (0.869, 1.361,
   1.925 s; an independent Lagrange-multiplier transcription of the same tables agrees with pkm to
   6e-5 m), and no uniform time scale maps one set onto the other (ratios 0.86, 0.97, 0.89; the
   paper's intervals shrink, 0.56 then 0.40 s, ours grow, 0.47 then 0.57 s). The times depend on
   data the paper does not give and on data it gives inconsistently (numbers in
   tests/test_seed003_passage.py::test_seed_platform_data_are_inconsistent; the kinks of the other
   readings with ``--case platform --dt 2e-3 --data …``):

   * the legs (5 kg, 0.78 m between their joints) have a transverse moment of 0.7 kg·m², 2.8 times a
     uniform bar's m L²/12 = 0.25 and 92 % of the largest any mass between the two joints can have
     (m L²/4 = 0.76): with uniform legs the kinks move to 0.814, 1.250, 1.776 s (at Δt = 2 ms, where
     the data as printed give 0.882, 1.356, 1.926 s);
   * the platform's (2.5, 5, 2.5) has I_y = I_x + I_z exactly — a lamina in the vertical x–z plane —
     while its three ball joints span a horizontal triangle (all at z = 0.71); read as a horizontal
     plate, (2.5, 2.5, 5), the kinks move to 1.038 and 1.588 s (no third within 2 s; with uniform
     legs too, 0.980 and 1.498 s);
   * the rotor shafts (1 kg, moments 0.01 axial and 0.1 across) would have to be 1.07-m rods, ten
     times the 0.10 m between their joints — harmless here: a shaft only turns about its motor axis,
     and the kinks do not move when its moments across are made consistent (0.0059);
   * J7 and J8 are printed swapped and L4's I_y as "01" (corrected in the file); the step is 0.002 s
     in the text and "20 ms" in the figure; gravity, the initial state and the torque sense are not
     given — without gravity the first kink is at 1.128 s and there is no second within 2 s.

   So the printed times belong to data that are not the printed ones; which ones cannot be told from
   the paper. What is reproduced is the kind of motion: the platform falls through the base plane
   with sharp extrema of v_z where the legs pass their level position.

    python examples/seed003_singularities.py [--case both|passage|platform] [--plot FILE.png]
        [--passage-plot FILE.png] [--compare 0.8] [--dt 1e-3] [--torques 10 10 10]
        [--data printed|uniform-legs|horizontal-platform|consistent-shafts|no-gravity]
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

import pkm
from pkm.absolute.examples import crank_angle, parallelogram, parallelogram_forces
from pkm.absolute.joint_reactions import JointReactions, actuated_jacobian, efforts_force
from pkm.absolute.loader import load_spec as absolute_model
from pkm.absolute.standard import GeneralizedAlpha, projected_ode
from pkm.description.robotfile import load_spec

ROBOT = Path(__file__).resolve().parent / "rrs3_platform.toml"


def ratios(model, q):
    """Smallest/largest singular value of Φ_q P_int, the actuator-locked Jacobian and the
    tilt–heave task map at q."""
    system = model.system
    G = system.jacobian(q)[6 * len(system.bodies):] @ system.internal_null_space(q)
    _, s, Vt = np.linalg.svd(G)
    k = list(model.bodies).index("L7")
    task = Vt[G.shape[0]:].T[[6 * k, 6 * k + 1, 6 * k + 5]]
    out = [s[-1] / s[0]]
    for A in (actuated_jacobian(model, q), task):
        sv = np.linalg.svd(A, compute_uv=False)
        out.append(sv[-1] / sv[0])
    return out


def closure_ratio(system, q):
    """σ_min/σ_max of the joints' Jacobian Φ_q P_int."""
    G = system.jacobian(q)[6 * len(system.bodies):] @ system.internal_null_space(q)
    s = np.linalg.svd(G, compute_uv=False)
    return s[-1] / s[0]


def passage(args):
    """Part 1 of the module doc: the parallelogram four-bar through its flat configurations."""
    ex = parallelogram()
    system, potential = ex.system, ex.potential
    force = lambda t, q, v: -potential.gradient(q)
    f0 = force(0.0, ex.q0, ex.v0)
    print(f"passage: {ex.name}, {ex.data['rate']:g} rad/s from its flat configuration, gravity; "
          f"σ_min/σ_max of Φ_q P_int at the start {closure_ratio(system, ex.q0):.1e}")
    try:
        system.accelerations(ex.q0, ex.v0, f0)
        print("  multiplier formulation (index-1 KKT): solved")
    except pkm.SingularityError as e:
        print(f"  multiplier formulation (index-1 KKT): {e}")
    for angle, where in ((0.0, "from the flat configuration"), (1e-3, "1e-3 rad away")):
        other = parallelogram(angle=angle)
        ga = GeneralizedAlpha(other.system, other.q0, other.potential).integrate(other.q0, other.v0, 2e-3, 3)
        drift = [projected_ode(other.system, other.q0, other.v0, 0.01, 3, other.potential, rtol=rtol,
                               atol=1e-2 * rtol).energy_drift() for rtol in (1e-8, 1e-10)]
        print(f"  {where}: generalized-α (dependent row dropped) max|Φ| {np.max(ga.constraint_residual):.1e} "
              f"in 3 steps of 2 ms; index-1 RK45 + projection (least squares where singular) energy error "
              f"{drift[0]:.1e} (rtol 1e-8), {drift[1]:.1e} (rtol 1e-10)")
    jr = JointReactions(system, force=force)
    steps = int(round(0.7 / args.dt))
    tr = jr.integrate(ex.q0, ex.v0, args.dt, steps)
    theta = np.unwrap(crank_angle(tr.q))
    energy = np.array([system.kinetic_energy(v) + potential.energy(q) for q, v in zip(tr.q, tr.v)])
    ratios = np.array([closure_ratio(system, q) for q in tr.q])
    names, W = tr.info["joints"], tr.info["wrenches"]
    F = W[:, names.index("R1"), 3:]
    ref = parallelogram_forces(ex, theta)[0]
    err = np.linalg.norm(F - ref, axis=1)
    scale = np.max(np.linalg.norm(ref, axis=1))
    print(f"  joint reactions: {steps} steps of {args.dt:g} s, crank angle 0 → {theta[-1]:.2f} rad; max|Φ| "
          f"{np.max(tr.constraint_residual):.1e}, energy error {np.max(np.abs(energy - energy[0])) / energy[0]:.1e}, "
          f"revolute force ≤ {np.max(np.linalg.norm(F, axis=1)):.1f} N, off the analytic by ≤ "
          f"{np.max(err[1:-1]) / scale:.1e} (inner nodes), {np.max(err) / scale:.1e} (all)")
    for k in (1, 2):
        n = int(np.argmin(np.abs(theta - k * np.pi)))
        print(f"    θ = {k}π passed near t = {tr.t[n]:.3f} s, σ_min/σ_max there {ratios[n]:.1e}")
    # land a step on θ = π in mid-motion and go on from there
    start = parallelogram(angle=np.pi - 0.05)
    jr2 = JointReactions(start.system, force=lambda t, q, v: -start.potential.gradient(q))
    event = lambda q: np.sin(crank_angle(q))
    t, q, v, Q = 0.0, start.q0, start.v0, np.zeros(jr2.unknowns)
    while np.sign(event(jr2.step(t, q, v, Q, args.dt)[0])) == np.sign(event(q)):
        q, v, Q, _, _ = jr2.step(t, q, v, Q, args.dt)
        t += args.dt
    h, qs, vs, _, _, _ = jr2.land(t, q, v, Q, args.dt, event)
    try:
        start.system.accelerations(qs, vs, -start.potential.gradient(qs))
        kkt = "solved"
    except pkm.SingularityError:
        kkt = "singular"
    on = jr2.integrate(qs, vs, args.dt, 30, t0=t + h)
    print(f"  landed on θ = π at t = {t + h:.6f} s (σ_min/σ_max {closure_ratio(start.system, qs):.1e}): multiplier "
          f"formulation {kkt}; joint reactions go on 30 steps, max|Φ| {np.max(on.constraint_residual):.1e}")
    if args.passage_plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(3, 1, figsize=(8, 8), sharex=True)
        ax[0].semilogy(tr.t, np.maximum(ratios, 1e-17))
        ax[0].set_ylabel("σ_min/σ_max of Φ_q P_int")
        ax[0].set_title("parallelogram four-bar through its flat configurations (θ = 0, π, 2π): joint reactions")
        ax[1].plot(tr.t, np.linalg.norm(F, axis=1), label="|force| R1 (joint reactions)")
        ax[1].plot(tr.t, np.linalg.norm(ref, axis=1), "k:", label="analytic")
        ax[1].set_ylabel("N")
        ax[1].legend()
        ax[2].plot(tr.t, (energy - energy[0]) / energy[0], label="energy error (relative)")
        ax[2].plot(tr.t, tr.constraint_residual, label=f"max|Φ| (≤ {np.max(tr.constraint_residual):.0e})")
        ax[2].set_xlabel("t (s)")
        ax[2].legend()
        fig.tight_layout()
        fig.savefig(args.passage_plot, dpi=110)
        print("wrote", args.passage_plot)


#: ``--data``: readings of the seed's data other than the file's (module doc, part 2), as edits of it.
READINGS = {
    "printed": [],
    "uniform-legs": [("inertia = [0.07, 0.7, 0.7, 0, 0, 0]", "inertia = [0.07, 0.253, 0.253, 0, 0, 0]")],
    "horizontal-platform": [("inertia = [2.5, 5, 2.5, 0, 0, 0]", "inertia = [2.5, 2.5, 5, 0, 0, 0]")],
    "consistent-shafts": [("inertia = [0.01, 0.1, 0.1, 0, 0, 0]", "inertia = [0.01, 0.0059, 0.0059, 0, 0, 0]")],
    "no-gravity": [("gravity = [0, 0, -9.81]", "gravity = [0, 0, 0]")],
}


def platform_spec(reading: str):
    """The robot file's spec with one reading of the seed's data (:data:`READINGS`) applied."""
    if not READINGS[reading]:
        return load_spec(ROBOT)
    import tempfile

    text = ROBOT.read_text()
    for old, new in READINGS[reading]:
        assert text.count(old) >= 1, old
        text = text.replace(old, new)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"rrs3_{reading}.toml"
        path.write_text(text)
        return load_spec(path)


def platform(args):
    """Part 2 of the module doc: the seed's 3-(RR)S platform under its motor torques."""
    model = absolute_model(platform_spec(args.data))
    print(f"3-(RR)S platform, the seed's data read as: {args.data}")
    system = model.system
    force = efforts_force(model, args.torques)
    q0, v0 = model.reference, np.zeros(system.n)
    try:  # pkm's minimal-coordinate engine refuses the file's tilt–heave task at load (see the file)
        pkm.load(ROBOT)
        print("pkm (minimal coordinates, tilt–heave task): the file loads")
    except pkm.RobotFileError as e:
        print(f"pkm (minimal coordinates, tilt–heave task): {e}")
    robot = pkm.load(ROBOT, check=False)
    try:
        robot.inverse_kinematics(robot.x_ref, np.zeros(3))
        print("pkm (minimal coordinates, tilt–heave task): IK at the start is regular")
    except pkm.SingularityError as e:
        print(f"pkm (minimal coordinates, tilt–heave task) at the start: {e}")

    jr = JointReactions(system, force=force)
    steps = int(round(args.duration / args.dt))
    tr = jr.integrate(q0, v0, args.dt, steps)
    k = list(model.bodies).index("L7")
    t, z, vz = tr.t, tr.q[:, 12 * k + 2], tr.v[:, 12 * k + 2]
    az = np.gradient(vz, t)
    print(f"{tr.scheme}: {steps} steps of {args.dt:g} s, {jr.unknowns} reaction unknowns; max|Φ| "
          f"{np.max(tr.constraint_residual):.1e}, Newton iterations {np.mean(tr.iterations):.2f}, step matrix "
          f"condition ≤ {np.nanmax(tr.condition):.3g}, velocity matrix ≤ {np.max(tr.info['velocity_condition']):.3g}")
    crossings = t[np.flatnonzero(np.sign(z[1:]) != np.sign(z[:-1]))]
    peaks = [n for n in range(1, len(t) - 1) if abs(vz[n]) > abs(vz[n - 1]) and abs(vz[n]) >= abs(vz[n + 1])
             and abs(vz[n]) > 2.0]
    print("platform through the base plane (z = 0) at t =", ", ".join(f"{c:.3f}" for c in crossings), "s")
    print("sharp extrema of v_z (paper: kinks at 0.76, 1.32, 1.72 s):",
          ", ".join(f"{t[n]:.3f} s ({vz[n]:+.2f} m/s)" for n in peaks))
    every = max(1, int(round(0.01 / args.dt)))
    ts = t[::every]
    r = np.array([ratios(model, q) for q in tr.q[::every]])
    dets = np.array([np.linalg.det(actuated_jacobian(model, q)) for q in tr.q])
    type2 = t[np.flatnonzero(np.sign(dets[1:]) != np.sign(dets[:-1]))]
    print("type-II singular configurations crossed (actuator-locked det changes sign) at t =",
          ", ".join(f"{c:.3f}" for c in type2) or "none", "s")
    for name, col in (("Φ_q P_int", 0), ("actuator-locked Jacobian", 1), ("tilt–heave task map", 2)):
        n = int(np.argmin(r[:, col]))
        print(f"  smallest σ_min/σ_max of the {name}: {r[n, col]:.2e} at t = {ts[n]:.2f} s")
    if args.compare > 0.0:
        from pkm.absolute.standard import projected_ode

        m = int(round(args.compare / 0.1))
        ref = projected_ode(system, q0, v0, 0.1, m, force=force, rtol=1e-10, atol=1e-12)
        idx = np.round(ref.t / args.dt).astype(int)
        for tn, a, b, c, d in zip(ref.t, tr.q[idx], ref.q, tr.v[idx], ref.v):
            print(f"  t = {tn:.1f} s: |Δq| {np.max(np.abs(a - b)):.2e}, |Δv| {np.max(np.abs(c - d)):.2e} "
                  f"(joint reactions vs index-1 RK45 rtol 1e-10 + projection)")
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        names = tr.info["joints"]
        W = tr.info["wrenches"]
        fig, ax = plt.subplots(4, 1, figsize=(8, 10), sharex=True)
        ax[0].plot(t, vz, label="v_z (m/s)")
        ax[0].plot(t, z, label="z (m)")
        for c in crossings:
            ax[0].axvline(c, color="0.7", lw=0.8)
        for c in (0.76, 1.32, 1.72):
            ax[0].axvline(c, color="r", lw=0.8, ls=":")
        ax[0].set_title(f"3-(RR)S platform, motors {args.torques} N·m, gravity (red dotted: the paper's kinks)")
        ax[0].legend()
        ax[1].plot(t, az)
        ax[1].set_ylabel("a_z (m/s²)")
        for col, name in enumerate(("Φ_q P_int", "actuator-locked", "tilt–heave task map")):
            ax[2].semilogy(ts, r[:, col], label=name)
        ax[2].set_ylabel("σ_min / σ_max")
        ax[2].legend()
        for j in ("J1", "J4", "J7"):
            ax[3].plot(t, np.linalg.norm(W[:, names.index(j), 3:], axis=1), label=f"|force| {j}")
        ax[3].plot(t, np.linalg.norm(W[:, names.index("J7"), :3], axis=1), label="|moment| J7 (N·m)")
        ax[3].set_ylabel("reaction on the child (N)")
        ax[3].set_xlabel("t (s)")
        ax[3].legend()
        fig.tight_layout()
        fig.savefig(args.plot, dpi=110)
        print("wrote", args.plot)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--case", choices=("both", "passage", "platform"), default="both")
    ap.add_argument("--plot", help="write the platform's figure to this PNG file")
    ap.add_argument("--passage-plot", help="write the passage's figure to this PNG file")
    ap.add_argument("--compare", type=float, default=0.0, help="compare with projected_ode up to this time (s)")
    ap.add_argument("--dt", type=float, default=1e-3)
    ap.add_argument("--duration", type=float, default=2.0)
    ap.add_argument("--torques", type=float, nargs=3, default=[10.0, 10.0, 10.0],
                    help="motor torques J7 J8 J9 in N·m (10 -10 10 crosses type-II singularities)")
    ap.add_argument("--data", choices=tuple(READINGS), default="printed",
                    help="the platform's data as printed (the file) or another reading of the seed's tables")
    args = ap.parse_args()
    if args.case in ("both", "passage"):
        passage(args)
    if args.case in ("both", "platform"):
        platform(args)


if __name__ == "__main__":
    main()
