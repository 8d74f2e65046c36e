"""Heat maps of a :class:`pkm.workspace.WorkspaceMap` over a 2-D slice.

Three panels side by side: ``log10 cond_IK`` (type I, the limbs' ``L_p``), ``log10 cond_FK`` (type
II, ``J_IK`` with unit rows) and ``log10 cond_JIK``, over the two free coordinates; unreachable
points are grey with a small ``×``, reachable points beyond the robot file's joint limits carry a red
dot, the reachable region is outlined, and points where a
matrix could not be inverted at all (condition ``inf``) are drawn at the top of the colour scale.
"""
from __future__ import annotations

import numpy as np

from pkm.errors import PkmError

__all__ = ["plot_map", "PANELS"]

#: (attribute, title) of the panels.
PANELS = (("cond_IK", "type I: max cond(L_p) of the limbs"),
          ("cond_FK", "type II: cond(J_IK), rows normalised"),
          ("cond_JIK", "cond(J_IK) = cond(J_FK)"))
#: Top of the colour scale (log10) at most: pkm's singularity threshold is 1e6 (below, the panel's largest value).
LOG_MAX = 6.0


def plot_map(wmap, path=None, title: str | None = None):
    """Draw the map (which must be a 2-D slice, two free coordinates); save to ``path`` if given
    (format from its suffix). Returns the matplotlib Figure."""
    if len(wmap.free) != 2:
        raise PkmError(f"a plot needs a 2-D slice (two coordinates over ranges), this map has {len(wmap.free)} "
                       f"({', '.join(wmap.free)})")
    import matplotlib

    if path is not None:
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    (nx, ny), (ax_x, ax_y) = wmap.free, wmap.axes
    reach = wmap.grid(wmap.reachable)
    fig, axes = plt.subplots(1, len(PANELS), figsize=(5.2 * len(PANELS), 4.6), constrained_layout=True,
                             sharey=True)
    cmap = matplotlib.colormaps["viridis"].copy()
    cmap.set_bad("0.85")
    ux, uy = _unit(wmap, nx), _unit(wmap, ny)
    for ax, (key, label) in zip(axes, PANELS):
        with np.errstate(divide="ignore", invalid="ignore"):
            vals = np.log10(wmap.grid(getattr(wmap, key)))
        vals = np.where(np.isposinf(vals), LOG_MAX, vals)
        img = np.ma.masked_invalid(np.minimum(vals, LOG_MAX)).T  # rows: the second coordinate
        top = float(np.clip(img.max(), 1.0, LOG_MAX)) if img.count() else LOG_MAX
        mesh = ax.pcolormesh(ax_x, ax_y, img, cmap=cmap, vmin=0.0, vmax=top, shading="nearest")
        gx, gy = np.meshgrid(ax_x, ax_y, indexing="ij")
        ax.plot(gx[~reach], gy[~reach], "x", color="0.55", markersize=max(1.0, 120.0 / max(reach.shape)),
                markeredgewidth=0.6, linestyle="none")
        if reach.any() and (~reach).any():
            ax.contour(ax_x, ax_y, reach.T.astype(float), levels=[0.5], colors="k", linewidths=0.8)
        beyond = reach & ~wmap.grid(wmap.within)
        ax.plot(gx[beyond], gy[beyond], ".", color="tab:red", markersize=max(1.0, 150.0 / max(reach.shape)),
                linestyle="none")
        ax.set_title(label, fontsize=10)
        ax.set_xlabel(f"{nx} [{ux}]")
        ax.set_aspect("equal" if ux == uy else "auto")
        fig.colorbar(mesh, ax=ax, label="log10 condition number", shrink=0.85)
    axes[0].set_ylabel(f"{ny} [{uy}]")
    fixed = ", ".join(f"{k} = {v:.4g}" for k, v in wmap.fixed.items())
    n, r = len(wmap.reachable), int(wmap.reachable.sum())
    fig.suptitle(title or f"{wmap.robot_name}: singularity map" + (f" at {fixed}" if fixed else "") +
                 f" ({r}/{n} points reachable; grey ×: unreachable" +
                 (f"; red ·: beyond the joint limits, {int(wmap.within.sum())} within" if (reach & ~wmap.grid(wmap.within)).any()
                  else "") + ")", fontsize=11)
    if path is not None:
        fig.savefig(path, dpi=110)
        plt.close(fig)
    return fig


def _unit(wmap, name: str) -> str:
    return "rad" if name.startswith("r") and len(name) == 2 else "m"
