"""The result of a sweep: :class:`SweepResult`, its rows per grid point, arrays, CSV and plot.
"""
from __future__ import annotations

import csv
import itertools
from dataclasses import dataclass, field

from pkm.errors import InputError
from pkm.sweep.points import MASS_PREFIX

#: The columns of a sweep with time-optimal cycle times.
CYCLE_COLUMNS = ("cycle_time", "picks_per_minute", "cycle_limit")


# ====================================================================== result
@dataclass
class SweepResult:
    """Peak and RMS actuator torques (and, with ``cycle``, time-optimal cycle times) over a sweep grid.

    ``rows``: one dict per grid point, in grid order, keyed like the CSV columns
    (:meth:`columns`): the swept parameters, ``trajectory`` (its label), ``status`` (``ok``,
    ``limit`` (beyond a joint limit) or ``error``), ``peak_<actuator>`` and ``rms_<actuator>`` (SI: N·m, or N for a prismatic
    actuator; NaN on error), with ``cycle`` ``cycle_time`` [s], ``picks_per_minute`` and ``cycle_limit`` (the
    limit active at the most samples of the time-optimal motion), and ``message`` (the error, else empty).
    """

    robot: str
    robot_name: str
    parameter_names: list[str]
    parameter_values: dict[str, list]
    trajectory_labels: list[str]
    trajectories: list
    actuator_names: list[str]
    actuator_units: list[str]
    rows: list[dict]
    elapsed: float = 0.0
    runner: str = ""
    units: str = "m"
    seconds: list[float] = field(default_factory=list)
    cycle: bool = False   # rows with the time-optimal cycle time (sweep(time_optimal=True))

    # ------------------------------------------------------------------ facts
    @property
    def shape(self) -> tuple[int, ...]:
        """Grid shape: one axis per swept parameter, then the trajectories."""
        return (*(len(self.parameter_values[n]) for n in self.parameter_names), len(self.trajectory_labels))

    @property
    def n_ok(self) -> int:
        return sum(r["status"] == "ok" for r in self.rows)

    @property
    def n_failed(self) -> int:
        return len(self.rows) - self.n_ok

    def columns(self) -> list[str]:
        """Keys of a row: parameters, ``trajectory``, ``status``, ``peak_<a>`` …, ``rms_<a>`` …, ``message``."""
        return [*self.parameter_names, "trajectory", "status", *(f"peak_{a}" for a in self.actuator_names),
                *(f"rms_{a}" for a in self.actuator_names), *CYCLE_COLUMNS[:3 if self.cycle else 0], "message"]

    def csv_header(self) -> list[str]:
        """The CSV's header: :meth:`columns` with each actuator column's unit, ``peak_limb1/1 [N·m]``,
        ``rms_leg1/leg [N]`` (as the torque CSVs of ``pkm inverse-dynamics`` name them; readers
        strip the `` [unit]`` suffix: :func:`pkm.trajectory.files.column_name`)."""
        units = dict(zip(self.actuator_names, self.actuator_units))
        return [*self.parameter_names, "trajectory", "status", *(f"peak_{a} [{units[a]}]" for a in self.actuator_names),
                *(f"rms_{a} [{units[a]}]" for a in self.actuator_names),
                *("cycle_time [s]", "picks_per_minute [1/min]", "cycle_limit")[:3 if self.cycle else 0], "message"]

    def as_array(self, kind: str = "peak"):
        """``peak`` or ``rms`` torques as an array of shape ``shape + (n_actuators,)`` (NaN where a
        point failed): ``res.as_array("peak")[i, j, k, a]`` is actuator ``a`` at parameter values
        ``i, j`` and trajectory ``k``; ``cycle_time`` (a sweep with ``time_optimal``) of shape ``shape``."""
        import numpy as np

        if kind == "cycle_time" and self.cycle:   # shape + () : one cycle time per point
            return np.array([r["cycle_time"] for r in self.rows], dtype=float).reshape(self.shape)
        if kind not in ("peak", "rms"):
            raise InputError(f"kind must be 'peak' or 'rms'{' or cycle_time' if self.cycle else ''}, got {kind!r}")
        data = np.array([[r[f"{kind}_{a}"] for a in self.actuator_names] for r in self.rows], dtype=float)
        return data.reshape(*self.shape, len(self.actuator_names))

    # ------------------------------------------------------------------ output
    def to_csv(self, path) -> list[str]:
        """Write one row per grid point under :meth:`csv_header` (floats as ``repr``: exact float64
        round trip; the peak and RMS cells of a failed point are empty, never ``nan``: its status
        and message say why). Returns the header."""
        import math

        header = self.csv_header()

        def cell(v):
            if isinstance(v, float):
                return repr(v) if math.isfinite(v) else ""
            return v

        with open(path, "w", newline="") as fh:
            w = csv.writer(fh, lineterminator="\n")
            w.writerow(header)
            for row in self.rows:
                w.writerow([cell(row[c]) for c in self.columns()])
        return header

    def plot(self, path=None, title: str | None = None):
        """Peak |τ| (top) and RMS τ (middle) of the most loaded actuator (and, with cycle times, the
        time-optimal cycle time below them) against the first swept
        parameter (file units; kg for ``mass:…``), one line per combination of the other
        parameters and the trajectory (each its own line style and marker). Without swept
        parameters the x axis is the trajectory (its cycle time when every trajectory has a
        distinct one). Failed points leave gaps in their lines and are marked by red crosses at
        the bottom of both panels ("failed (n)" in the legend). Saved to
        ``path`` when given (format from the suffix); returns the matplotlib Figure (Agg, no
        window).
        """
        import numpy as np
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        axes = [(n, list(self.parameter_values[n])) for n in self.parameter_names]
        axes.append(("trajectory", list(self.trajectory_labels)))
        cycle = [t.get("cycle_time") if isinstance(t, dict) else None for t in self.trajectories]
        traj_values = cycle if None not in cycle and len(set(cycle)) == len(cycle) else None
        shape = self.shape
        # the most loaded actuator (NaN where the point failed)
        peak = self.as_array("peak").max(axis=-1) if self.actuator_names else np.full(shape, np.nan)
        rms = self.as_array("rms").max(axis=-1) if self.actuator_names else np.full(shape, np.nan)
        xi = 0  # the first swept parameter, else the trajectory axis
        x_name, x_vals = axes[xi]
        ticks = None
        if x_name == "trajectory":
            if traj_values is not None:
                x, x_label = np.array(traj_values, dtype=float), "cycle time [s]"
            else:
                x, x_label, ticks = np.arange(len(x_vals), dtype=float), "trajectory", list(x_vals)
        else:
            x = np.array(x_vals, dtype=float)
            x_label = f"{x_name} [kg]" if x_name.startswith(MASS_PREFIX) else \
                f"{x_name} (robot file parameter; lengths in {self.units})"
        order = np.argsort(x, kind="stable")
        others = [k for k in range(len(axes)) if k != xi]
        units = sorted(set(self.actuator_units)) or ["N·m"]
        unit = " / ".join(units)

        fig = Figure(figsize=(10.0, 7.0), layout="constrained")
        FigureCanvasAgg(fig)
        axs = fig.subplots(3 if self.cycle else 2, 1, sharex=True)
        ax_peak, ax_rms = axs[0], axs[1]
        cycle = self.as_array("cycle_time") if self.cycle else None
        failed_x = []   # x of every failed point, marked on both panels
        for n_line, combo in enumerate(itertools.product(*(range(shape[k]) for k in others))):
            index = [slice(None)] * len(shape)
            for k, j in zip(others, combo):
                index[k] = j
            parts = []
            for k, j in zip(others, combo):
                name, vals = axes[k]
                if len(vals) > 1:
                    parts.append(str(vals[j]) if name == "trajectory" else f"{name}={vals[j]:g}")
            label = ", ".join(parts) or None
            style = {"linestyle": ("-", "--", "-.", ":")[n_line % 4], "marker": "osD^v"[n_line % 5], "label": label}
            ax_peak.plot(x[order], peak[tuple(index)][order], **style)
            ax_rms.plot(x[order], rms[tuple(index)][order], **style)
            if cycle is not None:
                axs[2].plot(x[order], cycle[tuple(index)][order], **style)
            failed_x.extend(x[order][np.isnan(peak[tuple(index)][order])].tolist())
        if failed_x:   # at the bottom of each panel (no value to plot): red crosses, in the legend
            for ax in axs:
                ax.plot(failed_x, [0.03] * len(failed_x), linestyle="none", marker="x", color="red", markersize=9,
                        markeredgewidth=2, transform=ax.get_xaxis_transform(), label=f"failed ({len(failed_x)})")
        ax_peak.set_ylabel(f"peak |τ|, max over actuators [{unit}]")
        ax_rms.set_ylabel(f"RMS τ, max over actuators [{unit}]")
        if cycle is not None:
            axs[2].set_ylabel("time-optimal cycle [s]")
        axs[-1].set_xlabel(x_label)
        if ticks is not None:
            axs[-1].set_xticks(x, ticks, rotation=20, ha="right")
        for ax in axs:
            ax.grid(True, alpha=0.3)
        if any(line.get_label() and not line.get_label().startswith("_") for line in ax_peak.get_lines()):
            ax_peak.legend(fontsize="small", ncol=2 if len(ax_peak.get_lines()) > 6 else 1)
        fig.suptitle(title or f"{self.robot_name}: sweep of {len(self.rows)} points"
                     + (f" ({self.n_failed} failed)" if self.n_failed else ""))
        if path is not None:
            fig.savefig(path, dpi=150)
        return fig

    def summary(self, max_rows: int = 40) -> str:
        """A text table: one line per point with the largest peak and RMS over the actuators."""
        unit = " / ".join(sorted(set(self.actuator_units))) or "N·m"
        head = [*self.parameter_names, "trajectory", "status", f"peak|tau| [{unit}]", f"rms tau [{unit}]",
                *(["cycle [s]"] if self.cycle else []), ""]
        body = []
        for r in self.rows[:max_rows]:
            peaks = [r[f"peak_{a}"] for a in self.actuator_names]
            rmss = [r[f"rms_{a}"] for a in self.actuator_names]
            ok = r["status"] == "ok" and peaks
            message = r["message"] if len(r["message"]) <= 100 else r["message"][:99] + "…"
            body.append([*(f"{r[n]:g}" for n in self.parameter_names), r["trajectory"], r["status"],
                         f"{max(peaks):.4g}" if ok else "-", f"{max(rmss):.4g}" if ok else "-",
                         *([f"{r['cycle_time']:.4g}" if ok else "-"] if self.cycle else []), message])
        widths = [max(len(str(row[k])) for row in [head, *body]) for k in range(len(head))]
        lines = ["  ".join(str(c).ljust(w) for c, w in zip(row, widths)).rstrip() for row in [head, *body]]
        if len(self.rows) > max_rows:
            lines.append(f"… {len(self.rows) - max_rows} more rows")
        return "\n".join(lines)
