"""Seeing the robot: the mechanism drawn in 3-D at a pose (stick figure), with matplotlib only.

:func:`mechanism` computes what is drawn — every tree joint's point on its axis, the sticks
between a body's joint and its children's joints and its cut-joint points, the base and platform
polygons — from the robot's data at the IK solution of a pose (so a hand-written geometry can be
checked by eye). :func:`show_robot` draws it on a :class:`matplotlib.figure.Figure` (no
``pyplot``, no window; saved through Agg), one colour per limb, with the joint axes on request.

A joint's point: for a revolute (or helical) joint the point of its axis nearest its moving body's
origin at the reference configuration, for a prismatic joint that origin itself; it is
fixed in the moving body ``i``, so at a configuration it is ``C_i(θ) A_i⁻¹ p_0`` (``A_i`` the
reference pose, ``C_i`` the forward kinematics, paper eq. 1–2). A cut joint's point is drawn from
both of its bodies: where the loops are closed the two coincide.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from pkm.description.model import reference_axes

__all__ = ["Mechanism", "mechanism", "show_robot", "animate"]


@dataclass
class Mechanism:
    """What :func:`show_robot` draws: ``x`` the task coordinates; per limb (name → array)
    ``joints`` (n, 3) the tree joints' points, ``axes`` (n, 3) their unit axes, ``sticks`` (m, 2, 3)
    the segments of the limb's bodies, ``cuts`` (c, 2, 3) each cut joint's point seen from body k
    and from body r; ``guides`` (g, 2, 3) each prismatic joint's guide (the ends of a segment along
    its axis, fixed in the joint's parent body, covering the joint's travel from the reference
    configuration with a margin); ``base`` (L, 3) the limbs' first joints where they are fixed to the
    ground (a prismatic first joint: its guide's reference point, not the moving carriage),
    ``platform`` (L, 3) the joints that carry the platform, ``tcp`` (3,) the platform frame's origin."""

    x: np.ndarray
    joints: dict = field(default_factory=dict)
    axes: dict = field(default_factory=dict)
    sticks: dict = field(default_factory=dict)
    cuts: dict = field(default_factory=dict)
    guides: dict = field(default_factory=dict)
    base: np.ndarray = None
    platform: np.ndarray = None
    tcp: np.ndarray = None


def _guides(tree, rel, P0, E0, J) -> np.ndarray:
    """The guide of each prismatic joint i: the line through its reference point along its axis,
    carried by its parent body (``rel`` of the parent, the ground's identity), from the reference
    point to the joint's point now, extended by a margin (a fifth of the travel, at least 0.3 of
    the limb's size) on both sides. Returns (g, 2, 3)."""
    size = max(float(np.ptp(J, axis=0).max()), 1e-3)
    out = []
    for i in range(tree.n):
        if tree.axis_kind[i] != "P":
            continue
        p = tree.parent[i]
        R, r = (np.eye(3), np.zeros(3)) if p < 0 else (rel[p, :3, :3], rel[p, :3, 3])
        g0, e = R @ P0[i] + r, R @ E0[i]
        d = float(e @ (J[i] - g0))
        margin = max(0.2 * abs(d), 0.3 * size)
        out.append((g0 + (min(0.0, d) - margin) * e, g0 + (max(0.0, d) + margin) * e))
    return np.array(out, dtype=float).reshape(-1, 2, 3)


def mechanism(robot, x=None, *, start=None, joints=None) -> Mechanism:
    """The drawing of ``robot`` at task coordinates ``x`` (default: the reference pose), its
    joints from the inverse kinematics (``start``: each limb's tree variables on the branch to
    draw) or, if given, ``joints`` (each limb's tree variables at ``x``, as the IK's ``joints``).
    Raises the IK's errors (:class:`pkm.IKError`, :class:`pkm.SingularityError`)."""
    from pkm.algorithms.kinematics import forward_kinematics

    x = robot.x_ref.copy() if x is None else robot._one_x(x, "x")
    if joints is None:
        sol = robot.inverse_kinematics(x, start=start, limits=False)
        joints = [sol.joints[limb.name][0] for limb in robot.limbs]
    m = Mechanism(x=x)
    base, plat = [], []
    for limb, theta in zip(robot.limbs, joints):
        tree = limb.tree
        C = forward_kinematics(tree, theta)
        P0, E0 = reference_axes(tree)
        Ainv = np.linalg.inv(tree.A)
        rel = C @ Ainv  # the motion of each body from the reference
        J = np.einsum("nij,nj->ni", rel[:, :3, :3], P0) + rel[:, :3, 3]
        m.joints[limb.name] = J
        m.axes[limb.name] = np.einsum("nij,nj->ni", rel[:, :3, :3], E0)
        sticks = [(J[tree.parent[i]], J[i]) for i in range(tree.n) if tree.parent[i] >= 0]
        cuts = []
        for loop in limb.loops:
            cut = loop.cut
            ends = []
            for body, d in ((cut.k, cut.d_k), (cut.r, cut.d_r)):
                point = d.copy() if body < 0 else C[body, :3, :3] @ d + C[body, :3, 3]
                ends.append(point)
                if body >= 0:
                    sticks.append((J[body], point))
            cuts.append(ends)
        m.sticks[limb.name] = np.array(sticks).reshape(-1, 2, 3)
        m.cuts[limb.name] = np.array(cuts).reshape(-1, 2, 3)
        m.guides[limb.name] = _guides(tree, rel, P0, E0, J)
        root = int(np.flatnonzero(tree.parent < 0)[0])
        base.append(P0[root])   # fixed in the ground: a revolute root's axis point, a prismatic root's guide point
        plat.append(J[limb.platform])
    m.base, m.platform = np.array(base), np.array(plat)
    m.tcp = robot.platform_pose(x)[:3, 3]
    return m


def show_robot(robot, x=None, *, start=None, path=None, axes=False, title=None, ax=None, drawing=None):
    """Draw ``robot`` at task coordinates ``x`` (default: the reference pose; see :func:`mechanism`):
    the limbs' sticks and joints (one colour per limb), cut joints (open circles, drawn from both
    bodies), base and platform polygons, the platform frame's origin; ``axes``: each joint's axis
    as a short arrow; each prismatic joint's guide as a wide pale bar along its axis. Returns the :class:`matplotlib.figure.Figure` (``ax``: draw into this 3-D
    axes instead); ``path``: save it (PNG, PDF, SVG by the suffix); ``drawing``: a
    :class:`Mechanism` already computed at ``x`` (then ``x`` and ``start`` are not used)."""
    from matplotlib.figure import Figure

    _check_path(path)
    m = mechanism(robot, x, start=start) if drawing is None else drawing
    if ax is None:
        fig = Figure(figsize=(7, 6), dpi=150)
        ax = fig.add_subplot(projection="3d")
    else:
        fig = ax.figure
    colours = [f"C{k % 10}" for k in range(len(robot.limbs))]
    pts = [m.base, m.platform, m.tcp[None]]
    for limb, colour in zip(robot.limbs, colours):
        J = m.joints[limb.name]
        for a, b in m.sticks[limb.name]:
            ax.plot(*np.array([a, b]).T, color=colour, lw=2, solid_capstyle="round")
        ax.plot(*J.T, ls="none", marker="o", ms=4, color=colour, label=limb.name, gid=f"joints:{limb.name}")
        for a, b in m.guides.get(limb.name, ()):   # prismatic guides: wide, pale, under the sticks
            ax.plot(*np.array([a, b]).T, color=colour, lw=6, alpha=0.25, solid_capstyle="butt",
                    gid=f"guides:{limb.name}")
        cuts = m.cuts[limb.name].reshape(-1, 3)
        if len(cuts):
            ax.plot(*cuts.T, ls="none", marker="o", ms=7, mfc="none", color=colour, gid=f"cuts:{limb.name}")
        if axes:
            scale = 0.05 * max(float(np.ptp(np.vstack([J, m.base, m.platform]), axis=0).max()), 1e-3)
            U = m.axes[limb.name] * scale
            ax.quiver(*J.T, *U.T, color=colour, lw=1)
        pts.append(J)
    for poly, colour, name in ((m.base, "0.3", "base"), (m.platform, "k", "platform")):
        if len(poly) > 1:
            closed = np.vstack([poly, poly[:1]])
            ax.plot(*closed.T, color=colour, lw=1.5 if name == "base" else 2.5, ls="--" if name == "base" else "-",
                    gid=name)
    ax.plot(*m.tcp, marker="*", ms=10, color="k", ls="none", gid="tcp", label="platform frame")
    allp = np.vstack(pts)
    centre, half = allp.mean(axis=0), max(float(np.ptp(allp, axis=0).max()) / 2, 1e-3) * 1.1
    ax.set_xlim(centre[0] - half, centre[0] + half)
    ax.set_ylim(centre[1] - half, centre[1] + half)
    ax.set_zlim(centre[2] - half, centre[2] + half)
    ax.set_box_aspect((1, 1, 1))
    ax.set_xlabel("X [m]")
    ax.set_ylabel("Y [m]")
    ax.set_zlabel("Z [m]")
    coords = ", ".join(f"{n} = {v:.4g}" for n, v in zip(robot.task.coordinate_names(), m.x))
    ax.set_title(title or f"{robot.name}\n{coords}", fontsize=9)
    ax.legend(loc="upper left", fontsize=7)
    if path is not None:
        fig.savefig(Path(path))
    return fig


def _check_path(path, animation=False):
    """A :class:`pkm.InputError` up front if ``path`` (None: nothing saved) is in a format that cannot
    be written here (:func:`pkm.plotting.style.format_problem`)."""
    from pkm.errors import InputError
    from pkm.plotting.style import format_problem

    problem = None if path is None else format_problem(path, animation=animation)
    if problem is not None:
        raise InputError(f"{path}: {problem}")


#: Most frames of an animation (each is a 3-D drawing; a GIF of 2000 frames is ~100 MB).
MAX_FRAMES = 2000


def animate(robot, x, t=None, *, tau=None, path=None, fps=20, start=None, frames=100, progress=None):
    """Animate ``robot`` along the task coordinates ``x`` (N, δ_p) at times ``t`` (default: the
    sample index): at most ``frames`` evenly spaced samples, each drawn as :func:`show_robot`
    draws one pose (the IK followed along the motion from ``start``), beside the actuator forces
    ``tau`` (N, n_act) against time with a cursor at the frame's time, if given. Returns the
    :class:`matplotlib.animation.FuncAnimation`; ``path``: save it (GIF through Pillow; MP4 needs
    ffmpeg) at ``fps`` frames per second, calling ``progress(k, n)`` (if given) as frame k of n is
    written. The mechanism takes the wider panel (three fifths of the figure beside the forces)."""
    from matplotlib.animation import FuncAnimation, PillowWriter
    from matplotlib.figure import Figure

    from pkm.description.taskspace import _real
    from pkm.errors import InputError

    _check_path(path, animation=True)
    X = robot._check_x(np.atleast_2d(_real(x, "x")), "x")
    N = X.shape[0]
    t = np.arange(N, dtype=float) if t is None else _real(t, "t")
    if t.shape != (N,) or not np.all(np.isfinite(t)):
        raise InputError(f"t must be {N} finite times (one per sample of x), got shape {t.shape}")
    if tau is not None and _real(tau, "tau").shape != (N, robot.n_act):
        raise InputError(f"tau must be ({N}, {robot.n_act}) actuator forces, got shape {np.shape(tau)}")
    if isinstance(frames, bool) or not isinstance(frames, (int, np.integer)) or not 1 <= frames <= MAX_FRAMES:
        raise InputError(f"frames must be an integer from 1 to {MAX_FRAMES}, got {frames!r}")
    if isinstance(fps, bool) or not isinstance(fps, (int, float, np.integer, np.floating)) or not 0.01 <= fps <= 1000:
        raise InputError(f"fps must be a number from 0.01 to 1000 frames per second, got {fps!r}")
    pick = np.unique(np.linspace(0, N - 1, min(frames, N)).round().astype(int))
    sol = robot.inverse_kinematics(X[pick], start=start, warm_start=True, limits=False)
    drawings = [mechanism(robot, X[s], joints=[sol.joints[l.name][k] for l in robot.limbs]) for k, s in enumerate(pick)]
    fig = Figure(figsize=(13 if tau is not None else 7.5, 7.5), dpi=100)
    grid = fig.add_gridspec(1, 2, width_ratios=(3, 2), left=0.0, right=0.97, bottom=0.1, top=0.95, wspace=0.12) \
        if tau is not None else fig.add_gridspec(1, 1, left=0.0, right=1.0, bottom=0.02, top=0.98)
    ax3 = fig.add_subplot(grid[0, 0], projection="3d")
    cursor = None
    if tau is not None:
        ax2 = fig.add_subplot(grid[0, 1])
        tau = np.asarray(tau, dtype=float)
        from pkm.plotting.style import axis_labels, joint_labels, styled

        force_label, _, suffix = axis_labels(robot.actuator_kinds)
        for a, label in enumerate(joint_labels(robot)):
            ax2.plot(t, tau[:, a], label=label + suffix[a], **styled(a, t.size))
        ax2.set_xlabel("t [s]")
        ax2.set_ylabel(force_label)
        ax2.legend(fontsize=7)
        cursor = ax2.axvline(t[0], color="k", lw=1)

    # one box for all frames: the view does not jump
    allp = np.vstack([p for m in drawings for p in [m.base, m.platform, m.tcp[None]] + list(m.joints.values())])
    centre, half = allp.mean(axis=0), max(float(np.ptp(allp, axis=0).max()) / 2, 1e-3) * 1.1

    def draw(k):
        ax3.clear()
        show_robot(robot, ax=ax3, drawing=drawings[k], title=f"{robot.name}\nt = {t[pick[k]]:.3f} s")
        for c, setter in zip(centre, (ax3.set_xlim, ax3.set_ylim, ax3.set_zlim)):
            setter(c - half, c + half)
        if cursor is not None:
            cursor.set_xdata([t[pick[k]], t[pick[k]]])
        return []

    anim = FuncAnimation(fig, draw, frames=len(pick), interval=1000 / fps, blit=False)
    anim.samples = pick  # the sample drawn in each frame
    if path is not None:
        if str(path).lower().endswith(".gif"):
            anim.save(str(path), writer=PillowWriter(fps=fps), progress_callback=progress)
        else:
            anim.save(str(path), fps=fps, progress_callback=progress)
    return anim
