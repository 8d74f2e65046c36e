"""The motors' operating points in the torque–speed plane against their envelope (``pkm size --plot``).

One panel per motor with a drive: every sample's (motor speed, motor torque) as a line through the cycle,
the peak region ``|τ_m| ≤ τ_peak, |ω_m| ≤ ω_max`` (solid), the continuous region ``|τ_m| ≤ τ_rated,
|ω_m| ≤ ω_rated`` (dashed) and the RMS point (RMS speed, RMS torque) judged against the latter
(:mod:`pkm.sweep.sizing`). Matplotlib's Agg canvas, no window.
"""
from __future__ import annotations

import numpy as np

from pkm.errors import InputError
from pkm.plotting.style import display_name, save

__all__ = ["plot_envelope"]


def _box(ax, torque, speed, **style):
    """The rectangle |τ| ≤ torque, |ω| ≤ speed (an unbounded side drawn as a line where the other is given)."""
    if np.isfinite(torque) and np.isfinite(speed):
        ax.plot([-speed, speed, speed, -speed, -speed], [-torque, -torque, torque, torque, -torque], **style)
    elif np.isfinite(torque):
        ax.axhline(torque, **style)
        ax.axhline(-torque, **{k: v for k, v in style.items() if k != "label"})
    elif np.isfinite(speed):
        ax.axvline(speed, **style)
        ax.axvline(-speed, **{k: v for k, v in style.items() if k != "label"})


def plot_envelope(drives, tau_motor, speed_motor, checks, path=None, title=None):
    """Operating points of each motor with a drive (``drives``: :class:`pkm.description.drives.Drives`;
    ``tau_motor``, ``speed_motor`` (N, n_act); ``checks``: the :class:`pkm.sweep.sizing.MotorCheck` list, for
    the RMS points and the verdicts). Returns the figure; saved to ``path`` if given."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    tau = np.asarray(tau_motor, dtype=float)
    w = np.asarray(speed_motor, dtype=float)
    if tau.shape != w.shape or tau.ndim != 2 or tau.shape[1] != len(drives.names):
        raise InputError(f"tau_motor {tau.shape} and speed_motor {w.shape} must be (N, {len(drives.names)})")
    by_name = {c.name: c for c in checks}
    shown = [a for a, n in enumerate(drives.names) if n in by_name]
    if not shown:
        raise InputError("no motor to plot (no actuator has a drive)")
    fig = Figure(figsize=(4.2 * len(shown), 4.2), layout="constrained")
    FigureCanvasAgg(fig)
    axes = np.atleast_1d(fig.subplots(1, len(shown), squeeze=False)[0])
    for ax, a in zip(axes, shown):
        c = by_name[drives.names[a]]
        ax.plot(w[:, a], tau[:, a], ".-", ms=2, lw=0.6, color="C0", label="operating points")
        _box(ax, drives.peak_torque[a], drives.max_speed[a], color="C3", lw=1.5, label="peak region")
        _box(ax, drives.rated_torque[a], drives.rated_speed[a], color="C2", lw=1.2, ls="--", label="continuous region")
        ax.plot([c.rms_speed], [c.rms_torque], "kD", ms=6, label="RMS (speed, torque)")
        verdict = "pass" if c.passed else "FAIL"
        margin = "" if not np.isfinite(c.margin) else f", margin {100 * c.margin:.1f} % ({c.binding})"
        ax.set_title(f"{display_name(c.name)}: {verdict}{margin}", fontsize="small")
        ax.set_xlabel("motor speed [rad/s]")
        ax.set_ylabel("motor torque [N·m]")
        ax.grid(True, alpha=0.3)
        ax.legend(loc="best", fontsize="x-small")
    if title:
        fig.suptitle(title)
    if path is not None:
        save(fig, path)
    return fig
