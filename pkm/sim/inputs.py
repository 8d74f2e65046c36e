"""Actuator forces for a simulation: ``u(t, x, xd)`` from a constant, a table, a CSV file or a
controller (paper Sec. 8.1: the ``u(t)`` of eq. 129)."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from pkm.errors import InputError, PkmError
from pkm.trajectory.files import check_header, column_name, csv_lines


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

    def require_span(self, t0, t1) -> None:
        """A one-line :class:`pkm.PkmError` unless the table covers the run ``[t0, t1]``."""
        if not (self.t[0] - 1e-12 <= t0 and t1 <= self.t[-1] + 1e-12):
            raise PkmError(f"the run ({t0:.6g} … {t1:.6g} s) is outside the torque table ({self.t[0]:.6g} … "
                           f"{self.t[-1]:.6g} s): shorten the run or extend the table")

    def __call__(self, t, x=None, xd=None):
        if not self.t[0] - 1e-12 <= t <= self.t[-1] + 1e-12:
            raise PkmError(f"t = {t:.6g} s is outside the torque table ({self.t[0]:.6g} … {self.t[-1]:.6g} s)")
        t = min(max(t, self.t[0]), self.t[-1])
        if self._spline is None:
            return np.array([np.interp(t, self.t, col) for col in self.U.T])
        return self._spline(t)


def _read_rows(path):
    """A torque CSV's header (unit suffixes stripped) and its data rows ``(line number, fields)``,
    blank lines and ``#`` comments skipped (anywhere, the first data row included). Raises a
    one-line :class:`pkm.InputError` naming the file for an unreadable file, an empty or duplicated
    column name and a row whose number of fields differs from the header's."""
    path, lines = csv_lines(path, "the torque table")
    if len(lines) < 3:
        raise InputError(f"{path}: a torque table needs a header line and at least two rows")
    header_line, header = lines[0][0], [column_name(path, lines[0][0], h) for h in lines[0][1].split(",")]
    check_header(path, header_line, header)
    rows = []
    for k, line in lines[1:]:
        fields = line.split(",")
        if len(fields) != len(header):
            raise InputError(f"{path}: line {k}: {len(fields)} values, expected {len(header)} (one per header "
                             f"column)")
        rows.append((k, fields))
    return header, rows


def _number(path, lineno, column, text) -> float:
    """The finite number ``text`` of a CSV cell, else a one-line InputError naming the cell."""
    try:
        v = float(text)
    except ValueError:
        raise InputError(f"{path}: line {lineno}: column {column!r}: not a number: {text.strip()!r}") from None
    if not np.isfinite(v):
        raise InputError(f"{path}: line {lineno}: column {column!r}: {v} is not finite")
    return v


def read_table(path, actuator_names) -> Table:
    """A torque table from a CSV with a header: a column ``t`` and one column per actuator, named
    ``tau_NAME`` (as ``pkm inverse-dynamics --out`` writes them, with a unit suffix such as
    `` [N·m]``: SI units only, :func:`pkm.trajectory.files.column_name`) or ``NAME``. Blank lines and ``#`` comments are skipped; any
    defect (text, NaN/inf, a missing column, a ragged row) is a one-line :class:`pkm.InputError`
    naming the file and the line."""
    header, rows = _read_rows(path)
    if "t" not in header:
        raise InputError(f"{path}: no column 't' in the header")
    cols = [header.index("t")]
    for name in actuator_names:
        for key in (f"tau_{name}", name):
            if key in header:
                cols.append(header.index(key))
                break
        else:
            raise InputError(f"{path}: no column 'tau_{name}' (or '{name}') for actuator {name!r}")
    data = np.array([[_number(path, k, header[c], fields[c]) for c in cols] for k, fields in rows])
    try:
        return Table(data[:, 0], data[:, 1:])
    except ValueError as exc:
        raise InputError(f"{path}: {exc}") from None


def table_columns(path, names, row=0):
    """The values of the columns ``names`` in data row ``row`` (default the first) of the CSV at
    ``path`` (e.g. a torque table's task coordinates and rates, the start of its motion), checked
    finite; None if the file lacks one of them."""
    header, rows = _read_rows(path)
    if not all(n in header for n in names):
        return None
    k, fields = rows[row]
    return np.array([_number(path, k, n, fields[header.index(n)]) for n in names])


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
    try:
        value = np.asarray(u)
    except (TypeError, ValueError):   # ragged lists
        raise InputError(f"u must be real numbers, a table, a CSV path or a callable, got {type(u).__name__}") from None
    if value.dtype.kind not in "iuf":
        raise InputError(f"u must be real numbers, a table, a CSV path or a callable, got {value.dtype} values")
    value = np.broadcast_to(value.astype(float), (n,)).copy() if value.ndim == 0 else value.astype(float)
    if value.shape != (n,) or not np.all(np.isfinite(value)):
        raise InputError(f"a constant u must be {n} finite actuator forces ({', '.join(robot.actuator_names)}), "
                         f"got shape {value.shape}")
    return Constant(value)


#: The IK options a simulation passes on (``**solver`` of :func:`pkm.sim.simulate.simulate`), every form.
SOLVER_OPTIONS = ("tol", "max_iter", "singularity_threshold", "threads")


def check_solver_options(form: str, solver: dict, function=None) -> None:
    """:class:`pkm.InputError` naming a keyword of ``solver`` (the ``**solver`` of ``function``, the
    simulation) that is not an IK option (a misspelt option is never ignored), with every keyword
    accepted: ``function``'s own and :data:`SOLVER_OPTIONS`; their values as
    :func:`pkm.algorithms.inverse_kinematics.check_solver` checks them."""
    import inspect

    from pkm.algorithms.inverse_kinematics import check_parallel, check_solver
    from pkm.algorithms.limb import SINGULARITY_THRESHOLD

    unknown = [k for k in solver if k not in SOLVER_OPTIONS]
    if unknown:
        named = [] if function is None else [n for n, p in inspect.signature(function).parameters.items()
                                             if p.kind == p.KEYWORD_ONLY]
        raise InputError(f"simulate(form={form!r}): unknown keyword {unknown[0]!r} (accepted: "
                         f"{', '.join(named + list(SOLVER_OPTIONS))})")
    check_solver(solver.get("tol", 1e-12), solver.get("max_iter", 50),
                 solver.get("singularity_threshold", SINGULARITY_THRESHOLD))
    check_parallel(solver.get("threads"), None)


def check_span(t_span) -> tuple[float, float]:
    """``(t0, t1)`` of a simulation's ``t_span``: two finite times with ``t0 < t1``, else a one-line
    :class:`pkm.InputError`."""
    try:
        t0, t1 = (float(v) for v in t_span)
    except (TypeError, ValueError):
        raise InputError(f"t_span must be two finite times t0 < t1, got {t_span!r}") from None
    if not (np.isfinite(t0) and np.isfinite(t1) and t1 > t0):
        raise InputError(f"t_span must be two finite times t0 < t1, got {t_span!r}")
    return t0, t1


def check_times(T, t0, t1, most) -> np.ndarray:
    """Output times ``T`` of a simulation, checked: at most ``most`` finite, strictly increasing real
    numbers within ``[t0, t1]``, else a one-line :class:`pkm.InputError` naming the first bad one."""
    try:
        T = np.asarray(T)
    except (TypeError, ValueError):
        raise InputError("t_eval must be a 1-D array of times") from None
    if T.dtype.kind not in "iuf" or T.ndim != 1 or T.size == 0 or T.size > most:
        raise InputError(f"t_eval must be 1 to {most} real times, got {T.dtype} values of shape {T.shape}")
    T = T.astype(float)
    bad = np.flatnonzero(~np.isfinite(T) | (T < t0) | (T > t1))
    if bad.size:
        raise InputError(f"t_eval[{bad[0]}] = {float(T[bad[0]])!r} is not a finite time within t_span ({t0:.6g} … {t1:.6g} s)")
    if np.any(np.diff(T) <= 0):
        k = int(np.argmax(np.diff(T) <= 0))
        raise InputError(f"t_eval must increase strictly: t_eval[{k}] = {float(T[k])!r}, t_eval[{k + 1}] = "
                         f"{float(T[k + 1])!r}")
    return T


def _real_number(value) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))


def check_options(*, rtol, atol, dt, max_step, max_condition, project, wrench, gravity) -> None:
    """The integration options of :func:`pkm.sim.simulate.simulate`, checked up front: each a
    one-line :class:`pkm.InputError` naming it (a string, a list, NaN, 0 or a negative number reached
    scipy or numpy as a TypeError or ValueError deep inside)."""
    from pkm.description.taskspace import _real

    for name, value, lo in (("rtol", rtol, 0.0), ("atol", atol, 0.0)):
        if not _real_number(value) or not (lo < value < np.inf):
            raise InputError(f"{name} must be a positive finite number, got {value!r}")
    for name, value in (("dt", dt), ("max_step", max_step)):
        if value is not None and (not _real_number(value) or not value > 0 or (name == "dt" and not np.isfinite(value))):
            raise InputError(f"{name} must be None or a positive number of seconds, got {value!r}")
    if not _real_number(max_condition) or not max_condition >= 1:
        raise InputError(f"max_condition must be a number >= 1 (a condition number; inf: no check), got {max_condition!r}")
    if not isinstance(project, (bool, np.bool_)):
        raise InputError(f"project must be True or False, got {project!r}")
    for name, value, n in (("wrench", wrench, 6), ("gravity", gravity, 3)):
        if value is not None:
            a = _real(value, name)
            if a.shape != (n,) or not np.all(np.isfinite(a)):
                raise InputError(f"{name} must be None or {n} finite numbers, got shape {a.shape}")
