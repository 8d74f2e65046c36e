"""How pkm saves its figures (:func:`pkm.plotting.style.save`) and lays them out: issue 32 point 4,
the plot of the README's main job made cheaper without making it worse — a PNG written with zlib's
run-length strategy holds the same pixels, and no text of a figure is clipped."""
from __future__ import annotations

import zlib
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from pkm.plotting import plot_actuators
from pkm.plotting.style import PNG_OPTIONS, save


def _result(n=201, n_act=3, scale=1.0, drives=False):
    t = np.linspace(0.0, 10.0, n)
    tau = scale * np.column_stack([np.sin(t + k) for k in range(n_act)])
    q = np.column_stack([np.cos(t + k) for k in range(n_act)])
    res = SimpleNamespace(tau=tau, q_act=q, actuator_names=[f"limb{k + 1}/1" for k in range(n_act)])
    if drives:
        res.tau_motor = tau / 10.0
    return res, t


def test_a_png_is_saved_run_length_encoded_with_the_same_pixels(tmp_path, monkeypatch):
    from matplotlib.figure import Figure
    from PIL import Image

    res, t = _result()
    fig = plot_actuators(res, t, title="demo")
    calls = []
    savefig = Figure.savefig

    def spy(self, fname, *args, **kwargs):
        if not hasattr(fname, "write"):   # not format_problem's probe into memory
            calls.append((Path(fname).name, kwargs.get("pil_kwargs")))
        return savefig(self, fname, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", spy)
    save(fig, tmp_path / "a.png")
    save(fig, tmp_path / "b.svg")   # not a Pillow format: no Pillow options (savefig would refuse them)
    monkeypatch.undo()
    assert calls == [("a.png", {"compress_type": zlib.Z_RLE}), ("b.svg", None)]
    assert PNG_OPTIONS == {"compress_type": zlib.Z_RLE}
    fig.savefig(tmp_path / "default.png", dpi=150)   # the default strategy: the same image
    a, b = (np.asarray(Image.open(tmp_path / name)) for name in ("a.png", "default.png"))
    assert a.shape == b.shape == (1050, 1500, 4)
    assert np.array_equal(a, b)


# ------------------------------------------------------------------ fixed margins (pkm.plotting.layout)
MAIN_TITLE = "3RR[2RR]R Delta (Müller 2024, Sec. 9): sine trajectory"
#: (result keywords, plot_actuators keywords) of figures whose texts must all stay inside the canvas.
VARIANTS = {
    "main job": ({}, {"title": MAIN_TITLE, "labels": [f"limb{k}, joint 1 (arm)" for k in (1, 2, 3)]}),
    "degrees": ({}, {"title": MAIN_TITLE, "degrees": True}),
    "drives, 3 panels": ({"drives": True}, {"title": "Delta with 400 W servos: pick-place trajectory"}),
    "forces, 6 legs": ({"n_act": 6, "scale": 1500.0},
                       {"title": "6-UPS hexapod: line trajectory", "kinds": ["P"] * 6}),
    "mixed kinds": ({"n_act": 2}, {"title": "RP robot", "kinds": ["R", "P"]}),
    "long title and labels": ({}, {"title": "A robot with a rather long name (a file in examples/): pick-place "
                                            "trajectory with a payload",
                                   "labels": [f"limb{k}, joint 1 (the upper arm of limb {k})" for k in (1, 2, 3)]}),
    "tiny values, offset text": ({"scale": 1e-7}, {"title": "small"}),
    "offset values": ({"offset": 1234.5}, {"title": "offset"}),
    "wide tick labels": ({"scale": -123456.7}, {"title": "large forces"}),
    "no title": ({}, {}),
}


def _variant(name, n=201):
    rk, pk = VARIANTS[name]
    rk = dict(rk)
    offset = rk.pop("offset", 0.0)
    res, t = _result(n=n, **rk)
    res.tau = res.tau + offset
    return res, t, pk


def _texts_outside(fig):
    """Texts of ``fig`` (as drawn now) reaching outside the canvas: axis labels, the tick labels
    inside the view limits, offset texts, titles, legend entries, figure texts."""
    fig.canvas.draw()
    r, f = fig.canvas.get_renderer(), fig.bbox
    texts = list(fig.texts)
    for ax in fig.axes:
        texts += [ax.xaxis.label, ax.yaxis.label, ax.xaxis.get_offset_text(), ax.yaxis.get_offset_text(), ax.title]
        for labels, locs, (lo, hi) in ((ax.get_xticklabels(), ax.get_xticks(), sorted(ax.get_xlim())),
                                       (ax.get_yticklabels(), ax.get_yticks(), sorted(ax.get_ylim()))):
            texts += [lab for lab, v in zip(labels, locs) if lo - 1e-9 * (hi - lo) <= v <= hi + 1e-9 * (hi - lo)]
        if ax.get_legend() is not None:
            texts += ax.get_legend().get_texts()
    out = []
    for text in texts:
        if text.get_visible() and text.get_text():
            e = text.get_window_extent(r)
            if e.x0 < f.x0 - 1 or e.y0 < f.y0 - 1 or e.x1 > f.x1 + 1 or e.y1 > f.y1 + 1:
                out.append(text.get_text())
    return out


def test_the_main_jobs_plot_is_saved_with_fixed_margins(tmp_path):
    from pkm.plotting.layout import save_stacked

    res, t, pk = _variant("main job", n=1001)
    fig = plot_actuators(res, t, **pk)
    engine, dpi = fig.get_layout_engine(), fig.dpi
    assert save_stacked(fig, tmp_path / "a.png") == "fixed"   # the cheaper layout (no constrained passes)
    assert fig.get_layout_engine() is engine and fig.dpi == dpi   # the figure as it was
    assert (tmp_path / "a.png").stat().st_size > 10_000


@pytest.mark.parametrize("name", list(VARIANTS))
def test_no_text_of_a_saved_actuator_plot_is_clipped(name, tmp_path):
    """Whatever the layout save_stacked chose, no text leaves the canvas: checked on the layout as
    saved (fixed margins redrawn at the saved resolution) and on the PNG itself, whose outermost
    pixels must all be background (a clipped text would touch the edge)."""
    from PIL import Image

    from pkm.plotting.layout import fixed_margins, save_stacked
    from pkm.plotting.style import DPI

    res, t, pk = _variant(name)
    fig = plot_actuators(res, t, **pk)
    how = save_stacked(fig, tmp_path / "a.png")
    img = np.asarray(Image.open(tmp_path / "a.png"))
    frame = np.concatenate([img[:2].reshape(-1, 4), img[-2:].reshape(-1, 4), img[:, :2].reshape(-1, 4),
                            img[:, -2:].reshape(-1, 4)])
    assert (frame == 255).all(), (name, how)
    if how == "fixed":
        fig.set_layout_engine(None)
        fig.subplots_adjust(**fixed_margins(fig))
        fig.set_dpi(DPI)
    assert _texts_outside(fig) == [], (name, how)
    if name in ("wide tick labels", "offset values"):
        assert how == "constrained"   # "−100000", "1233.25": wider than the fixed left margin holds
    elif name != "long title and labels":
        assert how == "fixed", name


def test_fits_finds_clipped_and_overlapping_texts():
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    from pkm.plotting.layout import fits

    def figure(**adjust):
        fig = Figure(figsize=(6.0, 4.0))
        FigureCanvasAgg(fig)
        axes = fig.subplots(2, 1, sharex=True)
        for ax in axes:
            ax.plot([0.0, 1.0], [0.0, 12345.0])
            ax.set_ylabel("actuator torque [N·m]")
        fig.suptitle("title")
        fig.subplots_adjust(**adjust)
        fig.canvas.draw()
        return fig

    good = dict(left=0.2, right=0.95, bottom=0.12, top=0.88, hspace=0.15)
    for bad in (dict(good, left=0.02),            # the y label and tick labels cut off on the left
                dict(good, top=0.99),              # the title on the top panel
                dict(good, bottom=0.01),           # the x tick labels and label cut off at the bottom
                dict(good, hspace=0.0)):           # the panels' boxes (tick marks) run into each other
        fig = figure(**bad)
        assert not fits(fig, fig.canvas.get_renderer()), bad
    fig = figure(**good)
    assert fits(fig, fig.canvas.get_renderer())
