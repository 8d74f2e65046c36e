"""Actuator forces for a simulation: ``u(t, x, xd)`` from a constant, a table, a CSV file or a
controller (paper Sec. 8.1: the ``u(t)`` of eq. 129)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from pkm.errors import InputError, PkmError


class Constant:
    """Constant actuator forces ``value`` (n_act,)."""

    def __init__(self, value):
        self.value = np.array(value, dtype=float)

    def __call__(self, t, x=None, xd=None):
        return self.value


class Table:
    """Actuator forces tabulated over time, ``U`` (M, n_act) at strictly increasing ``t`` (M,),
    interpolated by a not-a-knot cubic spline (exact for cubic histories, O(h⁴) otherwise).
    Outside ``[t[0], t[-1]]`` it is an error, not an extrapolation."""

    def __init__(self, t, U):
        from scipy.interpolate import CubicSpline

        self.t = np.asarray(t, dtype=float)
        self.U = np.asarray(U, dtype=float)
        if self.t.ndim != 1 or self.U.ndim != 2 or self.U.shape[0] != self.t.shape[0] or self.t.shape[0] < 2:
            raise InputError(f"a torque table needs times (M,) and forces (M, n_act), M >= 2; got {self.t.shape}, "
                             f"{self.U.shape}")
        if not (np.all(np.isfinite(self.t)) and np.all(np.isfinite(self.U))):
            raise InputError("a torque table must hold finite numbers")
        if not np.all(np.diff(self.t) > 0):
            raise InputError("the times of a torque table must increase strictly")
        self._spline = CubicSpline(self.t, self.U, axis=0) if len(self.t) >= 4 else None

    def __call__(self, t, x=None, xd=None):
        if not self.t[0] - 1e-12 <= t <= self.t[-1] + 1e-12:
            raise PkmError(f"t = {t:.6g} s is outside the torque table ({self.t[0]:.6g} … {self.t[-1]:.6g} s)")
        t = min(max(t, self.t[0]), self.t[-1])
        if self._spline is None:
            return np.array([np.interp(t, self.t, col) for col in self.U.T])
        return self._spline(t)


def strip_unit(header: str) -> str:
    """A CSV column name without its unit suffix: ``"tau_limb1/1 [N·m]"`` → ``"tau_limb1/1"``."""
    h = header.strip()
    if h.endswith("]") and " [" in h:
        h = h[:h.rindex(" [")].rstrip()
    return h


def read_table(path, actuator_names) -> Table:
    """A torque table from a CSV with a header: a column ``t`` and one column per actuator, named
    ``tau_NAME`` (as ``pkm inverse-dynamics --out`` writes them, with a unit suffix such as
    `` [N·m]``, which is ignored) or ``NAME``."""
    path = Path(path)
    try:
        lines = [l for l in path.read_text(encoding="utf-8-sig").splitlines()
                 if l.strip() and not l.lstrip().startswith("#")]
    except OSError as exc:
        raise PkmError(f"{path}: cannot read the torque table: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise PkmError(f"{path}: not a text (UTF-8) CSV file: byte {exc.object[exc.start]:#04x} at offset "
                       f"{exc.start}") from None
    if len(lines) < 3:
        raise PkmError(f"{path}: a torque table needs a header line and at least two rows")
    header = [strip_unit(h) for h in lines[0].split(",")]
    if "t" not in header:
        raise PkmError(f"{path}: no column 't' in the header")
    cols = []
    for name in actuator_names:
        for key in (f"tau_{name}", name):
            if key in header:
                cols.append(header.index(key))
                break
        else:
            raise PkmError(f"{path}: no column 'tau_{name}' (or '{name}') for actuator {name!r}")
    rows = []
    for k, line in enumerate(lines[1:], start=2):
        fields = line.split(",")
        if len(fields) != len(header):
            raise PkmError(f"{path}: line {k}: {len(fields)} values, expected {len(header)}")
        try:
            rows.append([float(fields[header.index("t")])] + [float(fields[c]) for c in cols])
        except ValueError:
            raise PkmError(f"{path}: line {k}: not a number") from None
    data = np.array(rows)
    try:
        return Table(data[:, 0], data[:, 1:])
    except ValueError as exc:
        raise PkmError(f"{path}: {exc}") from None


def actuator_input(robot, u, hold=None):
    """``u`` as a function ``(t, x, xd) → (n_act,)``: a number or an (n_act,) array (constant), a
    :class:`Table`, a path to a torque CSV (:func:`read_table`), ``"zero"``, ``"hold"`` (the constant
    forces ``hold`` that keep the initial state at rest: gravity compensation) or any callable
    ``u(t, x, xd)`` — a controller (see :mod:`pkm.control`)."""
    n = robot.n_act
    if isinstance(u, str) and u in ("zero", "hold"):
        return Constant(np.zeros(n) if u == "zero" else hold)
    if isinstance(u, (str, Path)):
        return read_table(u, robot.actuator_names)
    if callable(u):
        return u
    value = np.asarray(u)
    if np.iscomplexobj(value) or value.dtype.kind not in "biuf":
        raise InputError(f"u must be real numbers, a table, a CSV path or a callable, got {value.dtype} values")
    value = np.broadcast_to(value.astype(float), (n,)).copy() if value.ndim == 0 else value.astype(float)
    if value.shape != (n,) or not np.all(np.isfinite(value)):
        raise InputError(f"a constant u must be {n} finite actuator forces ({', '.join(robot.actuator_names)}), "
                         f"got shape {value.shape}")
    return Constant(value)
