"""Plots of inverse-dynamics results (the paper's Fig. 16 style).

:func:`plot_actuators` draws actuator torques and actuator angles against time, one line per
actuator, in two stacked panels.  It builds a :class:`matplotlib.figure.Figure` directly (no
``pyplot``, no global state), so it never opens a window and works on machines without a
display; saving goes through matplotlib's Agg renderer.  In a Jupyter notebook the returned
figure is shown when it is the last expression of a cell.

>>> import numpy as np
>>> from types import SimpleNamespace
>>> t = np.linspace(0.0, 1.0, 11)
>>> res = SimpleNamespace(tau=np.column_stack([np.sin(t), np.cos(t)]), q_act=np.zeros((11, 2)),
...                       actuator_names=["limb1/1", "limb2/1"])
>>> fig = plot_actuators(res, t, title="demo")
>>> [ax.get_ylabel() for ax in fig.axes]
['actuator torque [N·m]', 'actuator angle [rad]']
>>> [line.get_label() for line in fig.axes[0].get_lines()]
['limb1/1', 'limb2/1']
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from pkm.plotting.mechanism import animate, mechanism, show_robot

__all__ = ["plot_actuators", "plot_simulation", "show_robot", "mechanism", "animate"]


def plot_actuators(result, t, path=None, title=None, *, degrees: bool = False):
    """Two panels against time ``t``: actuator torques [N·m] (top) and actuator angles (bottom).

    ``result`` is a :class:`pkm.algorithms.manipulator.DynamicsResult` (anything with ``tau`` and ``q_act``
    of shape (N, n_act) and ``actuator_names``); ``t`` the (N,) sample times in s.  Angles are
    plotted in rad, or in degrees with ``degrees=True`` (the axis label says which).  With
    ``path`` the figure is also saved there (format from the suffix, e.g. ``.png``; 100 dpi).
    Returns the :class:`matplotlib.figure.Figure`.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    t = np.asarray(t, dtype=float).reshape(-1)
    tau = np.asarray(result.tau, dtype=float)
    q = np.asarray(result.q_act, dtype=float)
    if tau.shape != q.shape or tau.ndim != 2 or tau.shape[0] != t.size:
        raise ValueError(f"tau {tau.shape} and q_act {q.shape} must both be (N, n_act) with N = len(t) = {t.size}")
    names = list(result.actuator_names)
    if degrees:
        q = np.degrees(q)

    fig = Figure(figsize=(8.0, 6.0), layout="constrained")
    FigureCanvasAgg(fig)
    ax_tau, ax_q = fig.subplots(2, 1, sharex=True)
    for k, name in enumerate(names):
        ax_tau.plot(t, tau[:, k], label=name)
        ax_q.plot(t, q[:, k], label=name)
    ax_tau.set_ylabel("actuator torque [N·m]")
    ax_q.set_ylabel(f"actuator angle [{'deg' if degrees else 'rad'}]")
    ax_q.set_xlabel("time t [s]")
    for ax in (ax_tau, ax_q):
        ax.grid(True, alpha=0.3)
        ax.legend(loc="best", fontsize="small")
    if title:
        fig.suptitle(title)
    if path is not None:
        fig.savefig(Path(path), dpi=100)
    return fig


def plot_simulation(sim, names, path=None, title=None):
    """Three panels against time: actuator angles, task coordinates, and the energy error
    E − E(0) − W of a :class:`pkm.sim.simulate.SimulationResult`; saved to ``path`` if given.
    Returns the figure."""
    import matplotlib

    if path is not None:
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(3, 1, figsize=(8, 8), sharex=True)
    for k, name in enumerate(sim.actuator_names):
        axes[0].plot(sim.t, sim.q_act[:, k], label=name)
    axes[0].set_ylabel("actuator angle [rad]")
    for k, name in enumerate(names):
        axes[1].plot(sim.t, sim.x[:, k], label=name)
    axes[1].set_ylabel("task coordinate [m]")
    axes[2].plot(sim.t, sim.energy_error)
    axes[2].set_ylabel("E − E(0) − W [J]")
    axes[2].set_xlabel("time t [s]")
    for ax in axes[:2]:
        ax.legend(loc="best", fontsize="small")
    for ax in axes:
        ax.grid(True, alpha=0.3)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=100)
        plt.close(fig)
    return fig
