"""Seed 003's motor-driven 3-(RR)S platform (Huang, Yan, Jeng & Cheing, §12, Figs. 10–11) simulated
with the joint-reaction formulation of pkm's absolute-coordinate engine
(:mod:`pkm.absolute.joint_reactions`), examples/rrs3_platform.toml.

Constant 10 N·m on the three motors (J7–J9, positive about the file's axes; the opposite sense gives
the mirror motion and the same v_z), gravity −9.81 m/s² along z (the paper gives none), from rest
in the tabulated configuration, 2 s at Δt = 1 ms. Printed: the events of the motion — where the
platform passes the base plane and v_z has its sharp extrema (the paper's "kinks" of v_z at 0.76,
1.32 and 1.72 s), and along the motion the smallest relative singular values of

* ``Φ_q P_int`` (the joints: a rank loss is a constraint singularity, where the Lagrange form fails),
* the actuator-locked Jacobian (type II: where actuator coordinates fail),
* the tilt–heave task map (ω_x, ω_y, v_z of the motions: where pkm's minimal-coordinate engine in
  these task coordinates fails; it is singular at the start),

the joints' residual, the step matrix's condition, and optionally (``--compare T``) the agreement
with the index-1 DAE integrated by RK45 with projection (pkm.absolute.standard.projected_ode) up
to T.

    python examples/seed003_singularities.py [--plot FILE.png] [--compare 0.8] [--dt 1e-3] [--torques 10 10 10]
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

import pkm
from pkm.absolute.joint_reactions import JointReactions, actuated_jacobian, efforts_force
from pkm.absolute.loader import load_spec as absolute_model
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


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--plot", help="write the figure to this PNG file")
    ap.add_argument("--compare", type=float, default=0.0, help="compare with projected_ode up to this time (s)")
    ap.add_argument("--dt", type=float, default=1e-3)
    ap.add_argument("--duration", type=float, default=2.0)
    ap.add_argument("--torques", type=float, nargs=3, default=[10.0, 10.0, 10.0],
                    help="motor torques J7 J8 J9 in N·m (10 -10 10 crosses type-II singularities)")
    args = ap.parse_args()

    model = absolute_model(load_spec(ROBOT))
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


if __name__ == "__main__":
    main()
