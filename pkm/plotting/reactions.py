"""The joint reaction forces of ``pkm reactions`` (:mod:`pkm.absolute`): one panel per limb, one line
per joint (a Delta has 21 joints: 7 curves a panel instead of 21 in one)."""
from __future__ import annotations

import numpy as np

from pkm.errors import InputError
from pkm.plotting.style import DPI, FIGSIZE, display_name, save, styled


def group_by_limb(names) -> dict:
    """Joint names ``"limb/joint"`` grouped by their limb, in order of first appearance; names without
    a limb (``"/"``) in a group of their own, ``"other joints"``."""
    groups: dict = {}
    for k, name in enumerate(names):
        limb, sep, _ = str(name).rpartition("/")
        groups.setdefault(limb if sep else "other joints", []).append(k)
    return groups


def plot_reactions(t, F, names, path=None, title=None, *, labels=None):
    """|F| of each joint's reaction force against time ``t`` (N,): ``F`` (N, n_joints, ≥ 3) with the
    force in its first three components (N), ``names`` the joints (``"limb1/2"``: labelled
    "joint 2", the panel "limb1"). One panel per limb, sharing both axes, so that limbs compare at
    a glance. ``labels``: each joint's label (e.g. :func:`pkm.plotting.style.joint_labels`, "limb1,
    joint 2 (upper_link)"), shown without the panel's limb. Saved to ``path`` if given; returns the figure (Agg, no window)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    t = np.asarray(t, dtype=float).reshape(-1)
    F = np.asarray(F, dtype=float)
    names = list(names)
    if F.ndim != 3 or F.shape[:2] != (t.size, len(names)) or F.shape[2] < 3:
        raise InputError(f"F must be (N, {len(names)}, 6) with N = len(t) = {t.size}, got {F.shape}")
    groups = group_by_limb(names)
    shown = [display_name(n) for n in names] if labels is None else [str(v) for v in labels]
    if len(shown) != len(names):
        raise InputError(f"labels must name the {len(names)} joints, got {len(shown)}")
    n = len(groups)
    fig = Figure(figsize=(FIGSIZE[0], max(FIGSIZE[1] * 0.5, FIGSIZE[1] * (1 + 1.4 * n) / 6)), dpi=DPI,
                 layout="constrained")
    FigureCanvasAgg(fig)
    axes = np.atleast_1d(fig.subplots(n, 1, sharex=True, sharey=True))
    for ax, (limb, members) in zip(axes, groups.items()):
        for j, k in enumerate(members):
            label = shown[k].removeprefix(f"{limb}, ") if limb != "other joints" else shown[k]
            ax.plot(t, np.linalg.norm(F[:, k, :3], axis=1), label=label, **styled(j, t.size))
        ax.set_title(limb, fontsize="medium", loc="left")
        ax.set_ylabel("|F| [N]")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))   # beside the curves
    axes[-1].set_xlabel("time t [s]")
    if title:
        fig.suptitle(title)
    if path is not None:
        save(fig, path)
    return fig
