"""Saving a stacked time plot (:func:`pkm.plotting.plot_actuators`) with fixed margins, checked.

The figures are built with matplotlib's constrained layout, which fits the margins to the labels
when the figure is drawn: ~30 ms of CPU of the ~0.15 s that plotting and saving the README main
job's figure takes (two passes over every axis's ticks and texts before the draw itself), ~4 % of
the whole cached run.
:func:`save_stacked` first saves with fixed margins (:data:`MARGINS`) that hold the usual labels
and keeps that file only if, as drawn, nothing is clipped or runs into anything else
(:func:`fits`: every panel's tight box — tick labels, axis labels, offset texts, legend — and the
title lie inside the figure and apart from each other); otherwise it saves again with the
constrained layout (y tick labels wider than ~6 characters, a title of two lines). The figure
keeps its constrained layout afterwards, so it is shown or saved again as it was before.
"""
from __future__ import annotations

#: Fixed margins [in]: left (the y label and y tick labels of up to ~6 characters, "−10000"),
#: right (half the last x tick label), bottom (x tick labels and label), top (a one-line title;
#: :data:`TOP_UNTITLED` without one) and the gap between panels (room for a panel's offset text,
#: "1e6", above it). For the main job's 10 × 7 in figure the constrained layout chose 0.76, 0.04,
#: 0.47, 0.29 and 0.13 in.
MARGINS = {"left": 0.85, "right": 0.15, "bottom": 0.5, "top": 0.45, "gap": 0.25}
TOP_UNTITLED = 0.2
#: Pixels a box may reach past the figure's edge or into another box (antialiasing, rounding).
TOLERANCE = 1.0


def fits(fig, renderer) -> bool:
    """Whether, in ``fig`` as last drawn with ``renderer``, every axes' tight box (its ticks, tick
    labels, axis labels, offset texts, title and legend) and every figure text (the suptitle) lies
    inside the figure, and no two of them overlap."""
    boxes = [ax.get_tightbbox(renderer) for ax in fig.axes if ax.get_visible()]
    boxes += [t.get_window_extent(renderer) for t in fig.texts if t.get_visible() and t.get_text()]
    if any(b is None for b in boxes):
        return False
    f, tol = fig.bbox, TOLERANCE
    if any(b.x0 < f.x0 - tol or b.y0 < f.y0 - tol or b.x1 > f.x1 + tol or b.y1 > f.y1 + tol for b in boxes):
        return False
    shrunk = [b.padded(-tol / 2) for b in boxes]
    return not any(shrunk[i].overlaps(shrunk[j]) for i in range(len(shrunk)) for j in range(i))


def fixed_margins(fig) -> dict:
    """:meth:`~matplotlib.figure.Figure.subplots_adjust` arguments for :data:`MARGINS` on ``fig``
    (its size, its number of stacked panels, whether it has a title)."""
    width, height = fig.get_size_inches()
    n = max(1, len(fig.axes))
    m = MARGINS
    top = m["top"] if any(t.get_text() for t in fig.texts) else TOP_UNTITLED
    panel = (height - m["bottom"] - top - (n - 1) * m["gap"]) / n
    return {"left": m["left"] / width, "right": 1.0 - m["right"] / width, "bottom": m["bottom"] / height,
            "top": 1.0 - top / height, "hspace": m["gap"] / panel}


def save_stacked(fig, path) -> str:
    """:func:`pkm.plotting.style.save` of ``fig`` (stacked panels in one column, built with the
    constrained layout) with :func:`fixed_margins` if the drawn figure :func:`fits`, else with its
    constrained layout. Returns which: ``"fixed"`` or ``"constrained"``. The figure keeps its layout
    engine and resolution."""
    from pkm.plotting.style import DPI, save

    engine, dpi = fig.get_layout_engine(), fig.dpi
    try:
        fig.set_layout_engine(None)
        if fig.get_layout_engine() is not None:   # matplotlibrc's figure.autolayout: its engine, as it was
            fig.set_layout_engine(engine)
            save(fig, path)
            return "constrained"
        fig.subplots_adjust(**fixed_margins(fig))
        fig.set_dpi(DPI)   # drawn at the saved resolution: fits() measures what was saved
        save(fig, path)
        if fits(fig, fig.canvas.get_renderer()):
            return "fixed"
        fig.set_layout_engine(engine)
        save(fig, path)
        return "constrained"
    finally:
        fig.set_layout_engine(engine)
        fig.set_dpi(dpi)
