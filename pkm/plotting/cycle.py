"""The time-optimal motion of ``pkm cycle`` (:func:`pkm.time_optimal`): the s–ṡ phase plane with the limit
curve, and each actuator's torque and speed against its limits. Matplotlib's Agg canvas, no window.

The result is read by its attributes (a :class:`pkm.planning.result.CycleResult`; this layer does not
import its peer ``pkm.planning``): ``pieces`` (each with ``s``, ``sd``, ``grid_s``, ``mvc``, ``controllable``),
``t``, ``tau_motor``, ``speed_motor``, ``torque_limit``, ``speed_limit``, ``actuator_names``, ``side``,
``cycle_time``, ``picks_per_minute``.
"""
from __future__ import annotations

import numpy as np

from pkm.plotting.style import display_name, save

__all__ = ["plot_cycle"]


def plot_cycle(result, path=None, title=None):
    """Three panels: the phase plane (path parameter s against ṡ: the profile, the maximum velocity curve
    of the torque and speed limits, the controllable sets' upper end), the torques and the speeds against
    time with their limits (dashed). Returns the figure; saved to ``path`` if given."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(9.0, 10.0))
    FigureCanvasAgg(fig)
    ax_p, ax_t, ax_w = fig.subplots(3, 1)
    top = 0.0
    for k, pc in enumerate(result.pieces):
        if np.any(np.isfinite(pc.controllable)):   # a jerk-limited profile has no controllable sets
            ax_p.plot(pc.grid_s, pc.controllable, color="tab:orange", lw=0.8,
                      label="controllable (upper end)" if k == 0 else None)
        mvc = np.where(np.isfinite(pc.mvc), pc.mvc, np.nan)
        ax_p.plot(pc.grid_s, mvc, color="k", lw=1.0, label="limit curve ṡ_max(s)" if k == 0 else None)
        ax_p.plot(pc.s, pc.sd, color="tab:blue", lw=1.4, label=("time-optimal ṡ(s)" if result.jerk_limit is None else
                  "jerk-limited time-optimal ṡ(s)") if k == 0 else None)
        top = max(top, float(np.nanmax(pc.sd)))
    ax_p.set_ylim(0.0, 1.6 * top if top > 0 else 1.0)
    ax_p.set_xlabel("path parameter s")
    ax_p.set_ylabel("ṡ [(unit of s)/s; m/s on a path in m]")
    ax_p.legend(loc="upper right", fontsize=8)
    ax_p.set_title("phase plane")
    side = "motor" if result.side == "motor" else "actuator"
    t = result.t
    for j, name in enumerate(result.actuator_names):
        line, = ax_t.plot(t, result.tau_motor[:, j], lw=1.0, label=display_name(name))
        ax_t.axhline(result.torque_limit[j], color=line.get_color(), ls="--", lw=0.8)
        ax_t.axhline(-result.torque_limit[j], color=line.get_color(), ls="--", lw=0.8)
        ax_w.plot(t, result.speed_motor[:, j], color=line.get_color(), lw=1.0, label=display_name(name))
        if np.isfinite(result.speed_limit[j]):
            ax_w.axhline(result.speed_limit[j], color=line.get_color(), ls="--", lw=0.8)
            ax_w.axhline(-result.speed_limit[j], color=line.get_color(), ls="--", lw=0.8)
    ax_t.set_ylabel(f"{side} torque [N·m or N]")
    ax_w.set_ylabel(f"{side} speed [rad/s or m/s]")
    ax_w.set_xlabel("t [s]")
    for ax in (ax_t, ax_w):
        ax.legend(loc="upper right", fontsize=8)
        ax.grid(alpha=0.3)
    head = f"cycle time {result.cycle_time:.4g} s"
    if result.picks_per_minute is not None:
        head += f", {result.picks_per_minute:.4g} picks/min"
    fig.suptitle(f"{title}\n{head}" if title else head)
    fig.tight_layout()
    if path is not None:
        save(fig, path)
    return fig
