"""Redundant actuation (paper Sec. 5, 8.2) on the planar 4-RPR beside the 3-RPR it extends.

Left: the 3-RPR's type-II map (cond of J_IK with unit rows) on the slice y = 0, x ±0.3 m,
rz ±1.5 rad: the band where its three leg lines meet (rz ≈ −60° at x = 0) is singular. Middle: the
4-RPR's (robots/planar_4rpr.toml: the same three legs plus a mirrored fourth) on the same slice and
colour scale: the band is gone. Right: the 4-RPR's leg forces along its default motion, the
minimum-norm forces (pseudoinverse of J_IKᵀ), with a preload of 20 N along the null space of J_IKᵀ
(internal forces: the same motion), and the least-peak distribution (a linear programme per sample).

    python examples/redundant_actuation.py [--out docs/redundant_workspace.png] [--resolution 61]
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

import pkm
from pkm.algorithms.distribution import min_peak
from pkm.trajectory import from_spec

ROBOTS = Path(__file__).resolve().parents[1] / "robots"
SLICE = {"x": (-0.3, 0.3), "rz": (-1.5, 1.5)}


def maps(resolution: int):
    """The type-II maps of the 3-RPR and the 4-RPR on :data:`SLICE` at y = 0."""
    return {f: pkm.workspace(pkm.load(ROBOTS / f), SLICE, resolution=resolution, fixed={"y": 0.0})
            for f in ("planar_3rpr.toml", "planar_4rpr.toml")}


def forces():
    """The 4-RPR's minimum-norm, preloaded and least-peak forces along its default motion."""
    robot = pkm.load(ROBOTS / "planar_4rpr.toml")
    tr = from_spec(robot.spec.trajectory, robot.task.coordinate_names())
    res = robot.inverse_dynamics(tr.x, tr.xd, tr.xdd, t=tr.t)
    pre = robot.inverse_dynamics(tr.x, tr.xd, tr.xdd, t=tr.t, preload=[20.0])
    return robot, tr.t, res.tau, pre.tau, min_peak(res.tau, res.null_space)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=None, help="save the figure (PNG)")
    ap.add_argument("--resolution", type=int, default=61)
    args = ap.parse_args(argv)
    m = maps(args.resolution)
    for f, w in m.items():
        print(f"{f}: largest cond(J_IK, unit rows) on the slice {w.cond_FK.max():.3g}, "
              f"median {np.median(w.cond_FK):.3g}")
    robot, t, tau, pre, peak = forces()
    print(f"4-RPR forces: peak |u| {np.abs(tau).max():.3g} N (minimum norm), {np.abs(pre).max():.3g} N "
          f"(20 N preload), {np.abs(peak).max():.3g} N (least peak)")
    if args.out is None:
        return 0
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(16, 4.6), constrained_layout=True)
    top = max(np.log10(w.cond_FK.max()) for w in m.values())
    for ax, (f, w) in zip(axes[:2], m.items()):
        (nx, ny), (ax_x, ax_y) = w.free, w.axes
        mesh = ax.pcolormesh(ax_x, ax_y, np.log10(w.grid(w.cond_FK)).T, vmin=0.0, vmax=top, shading="nearest")
        ax.set_title(f"{pkm.load(ROBOTS / f).name}: type II, log10 cond(J_IK)", fontsize=10)
        ax.set_xlabel(f"{nx} [{'rad' if nx.startswith('r') else 'm'}]")
        ax.set_ylabel(f"{ny} [{'rad' if ny.startswith('r') else 'm'}]")
    fig.colorbar(mesh, ax=axes[:2], label="log10 cond(J_IK), rows normalised", shrink=0.85)
    for k, name in enumerate(robot.actuator_names):
        line, = axes[2].plot(t, tau[:, k], label=f"{name}")
        axes[2].plot(t, pre[:, k], "--", color=line.get_color(), linewidth=0.9)
        axes[2].plot(t, peak[:, k], ":", color=line.get_color(), linewidth=0.9)
    axes[2].set_xlabel("t [s]")
    axes[2].set_ylabel("leg force [N]")
    axes[2].set_title("4-RPR forces: minimum norm (solid),\n20 N preload (dashed), least peak (dotted)", fontsize=9)
    axes[2].legend(fontsize=8)
    fig.suptitle("Redundant actuation removes the 3-RPR's type-II band (y = 0)", fontsize=11)
    fig.savefig(args.out, dpi=100)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
