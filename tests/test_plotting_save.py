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
