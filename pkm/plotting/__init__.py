"""Plots of inverse-dynamics results (the paper's Fig. 16 style).

:func:`plot_actuators` draws actuator torques and actuator angles against time, one line per
actuator, in two stacked panels.  It builds a :class:`matplotlib.figure.Figure` directly (no
``pyplot``, no global state), so it never opens a window and works on machines without a
display; saving goes through matplotlib's Agg renderer.  In a Jupyter notebook the returned
figure is shown when it is the last expression of a cell.  Prismatic actuators are labelled as
forces [N] and positions [m] (``kinds``); legends name actuators as "limb1, joint 1" rather than
pkm's internal "limb1/1", and every line has its own style and markers, so that curves that
coincide (the limbs of a symmetric robot on a symmetric motion) stay visible.

>>> import numpy as np
>>> from types import SimpleNamespace
>>> t = np.linspace(0.0, 1.0, 11)
>>> res = SimpleNamespace(tau=np.column_stack([np.sin(t), np.cos(t)]), q_act=np.zeros((11, 2)),
...                       actuator_names=["limb1/1", "limb2/1"])
>>> fig = plot_actuators(res, t, title="demo")
>>> [ax.get_ylabel() for ax in fig.axes]
['actuator torque [N·m]', 'actuator angle [rad]']
>>> [line.get_label() for line in fig.axes[0].get_lines()]
['limb1, joint 1', 'limb2, joint 1']
>>> fig = plot_actuators(res, t, kinds=["P", "P"])
>>> [ax.get_ylabel() for ax in fig.axes]
['actuator force [N]', 'actuator position [m]']
"""

from __future__ import annotations

import numpy as np

from pkm.errors import InputError
from pkm.plotting.layout import save_stacked
from pkm.plotting.mechanism import animate, mechanism, show_robot
from pkm.plotting.style import FIGSIZE, axis_labels, check_kinds, display_name, save, styled

__all__ = ["plot_actuators", "plot_simulation", "show_robot", "mechanism", "animate", "display_name"]

def plot_actuators(result, t, path=None, title=None, *, degrees: bool = False, kinds=None, labels=None):
    """Two panels against time ``t``: actuator forces/torques (top) and positions/angles (bottom).

    ``result`` is a :class:`pkm.algorithms.manipulator.DynamicsResult` (anything with ``tau`` and ``q_act``
    of shape (N, n_act) and ``actuator_names``); ``t`` the (N,) sample times in s.  ``kinds``: each
    actuator's kind, ``"R"`` (torque [N·m], angle) or ``"P"`` (force [N], position [m]), as
    :attr:`pkm.Robot.actuator_kinds` gives them (default all ``"R"``).  Angles are plotted in rad,
    or in degrees with ``degrees=True`` (the axis label says which).  With ``path`` the figure is
    also saved there (format from the suffix, e.g. ``.png``; :data:`pkm.plotting.style.DPI` dpi).
    With drives (``result.tau_motor`` not None) a middle panel shows the motor torques.
    ``labels``: the actuators' legend labels (e.g. :func:`pkm.plotting.style.joint_labels` of the
    robot: "limb1, joint 1 (arm)"; default: their names as :func:`display_name` shows them).
    Returns the :class:`matplotlib.figure.Figure`.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    if not all(hasattr(result, a) for a in ("tau", "q_act", "actuator_names")):
        raise InputError(f"result must have tau, q_act and actuator_names (an inverse-dynamics result), "
                         f"got {type(result).__name__}")
    try:
        t = np.asarray(t, dtype=float).reshape(-1)
        tau = np.asarray(result.tau, dtype=float)
        q = np.asarray(result.q_act, dtype=float).copy()
    except (TypeError, ValueError):
        raise InputError("t, result.tau and result.q_act must be arrays of real numbers") from None
    if tau.shape != q.shape or tau.ndim != 2 or tau.shape[0] != t.size:
        raise InputError(f"tau {tau.shape} and q_act {q.shape} must both be (N, n_act) with N = len(t) = {t.size}")
    if not np.all(np.isfinite(t)):
        raise InputError("t must be finite times")
    names = list(result.actuator_names)
    kinds = check_kinds(kinds, len(names))
    shown = _labels(labels, names)
    if degrees:
        for k, kind in enumerate(kinds):
            if kind != "P":
                q[:, k] = np.degrees(q[:, k])
    force_label, position_label, suffix = axis_labels(kinds, degrees)

    motor = getattr(result, "tau_motor", None)   # drives: the motor torques in a panel of their own
    if motor is not None and np.shape(motor) != tau.shape:
        raise InputError(f"result.tau_motor {np.shape(motor)} must have the shape of tau {tau.shape}")
    panels = 2 if motor is None else 3
    fig = Figure(figsize=(FIGSIZE[0], FIGSIZE[1] * (6 + 2 * (panels - 2)) / 6), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(panels, 1, sharex=True)
    ax_tau, ax_q = axes[0], axes[-1]
    for k, name in enumerate(names):
        label = shown[k] + suffix[k]
        ax_tau.plot(t, tau[:, k], label=label, **styled(k, t.size))
        ax_q.plot(t, q[:, k], label=label, **styled(k, t.size))
        if motor is not None:
            axes[1].plot(t, np.asarray(motor, dtype=float)[:, k], label=shown[k], **styled(k, t.size))
    ax_tau.set_ylabel(force_label if motor is None else force_label.replace("actuator", "joint-side"))
    if motor is not None:
        axes[1].set_ylabel("motor torque [N·m]")
    ax_q.set_ylabel(position_label)
    ax_q.set_xlabel("time t [s]")
    for ax in axes:
        ax.grid(True, alpha=0.3)
        ax.legend(loc="best", fontsize="small")
    if title:
        fig.suptitle(title)
    if path is not None:
        save_stacked(fig, path)   # fixed margins where they fit (faster), else the constrained layout
    return fig


def _labels(labels, names) -> list[str]:
    if labels is None:
        return [display_name(n) for n in names]
    labels = [str(v) for v in labels]
    if len(labels) != len(names):
        raise InputError(f"labels must name the {len(names)} actuators, got {len(labels)}")
    return labels


def plot_simulation(sim, names, path=None, title=None, *, kinds=None, reference=None, labels=None):
    """Panels against time: actuator positions/angles, actuator forces/torques (the simulation's
    input ``sim.tau``), task coordinates, with ``reference`` = ``(t_ref, x_ref)`` (a trajectory the
    simulation tracks, e.g. computed-torque control) the tracking error x − x_ref (x_ref
    interpolated linearly at ``sim.t``), and the energy error E − E(0) − W of a
    :class:`pkm.sim.simulate.SimulationResult`; saved to ``path`` if given. ``kinds`` as in
    :func:`plot_actuators`, ``labels`` too. Returns the figure (Agg, no window)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    kinds = check_kinds(kinds, len(sim.actuator_names))
    shown = _labels(labels, sim.actuator_names)
    force_label, position_label, suffix = axis_labels(kinds)
    t = np.asarray(sim.t)
    error = None
    if reference is not None:
        t_ref, x_ref = (np.asarray(a, dtype=float) for a in reference)
        if x_ref.ndim != 2 or x_ref.shape != (t_ref.size, len(names)) or t_ref.size < 2:
            raise InputError(f"reference must be (t (M,), x (M, {len(names)})) with M >= 2, got "
                             f"{t_ref.shape} and {x_ref.shape}")
        error = np.column_stack([np.asarray(sim.x)[:, k] - np.interp(t, t_ref, x_ref[:, k])
                                 for k in range(len(names))])
    panels = 4 if error is None else 5
    fig = Figure(figsize=(FIGSIZE[0], FIGSIZE[1] * (2 + 2 * panels) / 6), layout="constrained")
    FigureCanvasAgg(fig)
    axes = list(fig.subplots(panels, 1, sharex=True))
    for k, name in enumerate(sim.actuator_names):
        axes[0].plot(t, sim.q_act[:, k], label=shown[k] + suffix[k], **styled(k, t.size))
        axes[1].plot(t, np.asarray(sim.tau)[:, k], label=shown[k] + suffix[k], **styled(k, t.size))
    axes[0].set_ylabel(position_label)
    axes[1].set_ylabel(force_label)
    rot = any(str(n).startswith("r") for n in names)
    for k, name in enumerate(names):
        unit = "rad" if str(name).startswith("r") else "m"
        axes[2].plot(t, sim.x[:, k], label=f"{name} [{unit}]", **styled(k, t.size))
        if error is not None:
            axes[3].plot(t, error[:, k], label=f"{name} − {name}_ref [{unit}]", **styled(k, t.size))
    axes[2].set_ylabel("task coordinate [m, rad]" if rot else "task coordinate [m]")
    if error is not None:
        axes[3].set_ylabel("tracking error [m, rad]" if rot else "tracking error [m]")
    axes[-1].plot(t, sim.energy_error)
    axes[-1].set_ylabel("E − E(0) − W [J]")
    axes[-1].set_xlabel("time t [s]")
    for ax in axes[:-1]:
        ax.legend(loc="best", fontsize="small")
    for ax in axes:
        ax.grid(True, alpha=0.3)
    if title:
        fig.suptitle(title)
    if path is not None:
        save(fig, path)
    return fig
