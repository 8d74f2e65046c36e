"""Excitation trajectories: a finite Fourier series in the task coordinates that makes the base
regressor well conditioned (Swevers et al. 1997, "Optimal robot excitation and identification").

``x(t) = x₀ + Σ_{k=1..H} (a_k sin kωt + b_k cos kωt)`` per coordinate (``ω = 2π/T``), rates and
accelerations analytic. Candidates with random coefficients, scaled to stay inside the box of
:func:`pkm.identification.base.default_box` (the file's trajectory's bounding box, or the caller's),
within the file's joint limits (ranges, cones and actuator velocities: the IK's :class:`pkm.LimitError`)
and the drives' maximum motor speeds (:func:`within_drive_limits`), both checked on a grid
:data:`CHECK` times finer than the regressor's samples, are rated by
``cond(Y_b)`` of the column-scaled base regressor over a sampled period (a candidate whose IK fails or
meets a singularity is rejected); the best is refined by Nelder–Mead on the coefficients
(``scipy.optimize.minimize``, a few dozen evaluations). Written as a trajectory CSV
(``t, x…, xd…, xdd…``: :func:`pkm.trajectory.files.read_csv` reads it, ``pkm inverse-dynamics
--trajectory FILE`` replays it).
"""
from __future__ import annotations

import warnings
from typing import NamedTuple

import numpy as np

from pkm.errors import BranchWarning, IKError, InputError, PkmError, SingularityError


class Excitation(NamedTuple):
    t: np.ndarray
    x: np.ndarray
    xd: np.ndarray
    xdd: np.ndarray
    cond: float
    coef: np.ndarray
    x0: np.ndarray
    period: float

    def sample(self, dt: float, periods: int = 1):
        """``t, x, xd, xdd`` at steps ``dt`` over ``periods`` periods (the series is periodic)."""
        n = int(round(periods * self.period / dt))
        t = np.arange(n + 1) * (periods * self.period / n)
        return (t, *fourier(self.coef, self.x0, self.period, t))


def fourier(coef, x0, period, t):
    """``x, xd, xdd`` of the series with ``coef`` (δ_p, H, 2) = (a_k, b_k) at times ``t``."""
    H = coef.shape[1]
    w = 2 * np.pi / period * np.arange(1, H + 1)
    s, c = np.sin(np.outer(t, w)), np.cos(np.outer(t, w))
    a, b = coef[:, :, 0], coef[:, :, 1]
    x = x0 + s @ a.T + c @ b.T
    xd = (c * w) @ a.T - (s * w) @ b.T
    xdd = -(s * w ** 2) @ a.T - (c * w ** 2) @ b.T
    return x, xd, xdd


def _fit_box(coef, x0, lo, hi, period):
    """Scale each coordinate's coefficients so that the motion stays inside (lo, hi)."""
    t = np.linspace(0, period, 200, endpoint=False)
    x, _, _ = fourier(coef, np.zeros_like(x0), period, t)
    room = np.minimum(hi - x0, x0 - lo)
    peak = np.maximum(np.abs(x).max(axis=0), 1e-300)
    return coef * np.minimum(1.0, room / peak)[:, None, None]


#: The limits are checked on a grid this many times finer than the regressor's samples.
CHECK = 4
#: A candidate beyond a limit is scaled down by 0.7 up to this many times (to 1.4 %) before it is dropped.
SHRINK = 12


def excitation(robot, base, *, period: float = 2.0, harmonics: int = 3, samples: int = 60, candidates: int = 12,
               refine: int = 40, seed: int = 0, box=None) -> Excitation:
    """An optimised excitation trajectory for the base parameters ``base`` (module docstring); the
    returned one is sampled at ``samples`` points per period; ``cond`` its condition number."""
    from scipy.optimize import minimize

    from pkm.identification.base import default_box
    from pkm.identification.regressor import regression

    if not (np.isfinite(period) and period > 0) or harmonics < 1 or samples < 4:
        raise InputError("excitation: period must be > 0 s, harmonics ≥ 1 and samples ≥ 4")
    lo, hi = default_box(robot) if box is None else (np.asarray(box[0], float), np.asarray(box[1], float))
    x0 = 0.5 * (lo + hi)
    t = np.linspace(0.0, period, samples, endpoint=False)
    rng = np.random.default_rng(seed)
    dp = robot.task_dof

    fine = np.linspace(0.0, period, CHECK * samples, endpoint=False)

    def cost(coef):
        coef = _fit_box(coef.reshape(dp, harmonics, 2), x0, lo, hi, period)
        x, xd, xdd = fourier(coef, x0, period, t)
        try:   # the limits on a finer grid than the regressor's (ranges, cones, velocities; motor speeds)
            xf, xdf, xddf = fourier(coef, x0, period, fine)
            with warnings.catch_warnings():   # (the batch kernel's IK: the reference IK took 80 % of the search)
                warnings.simplefilter("ignore", BranchWarning)
                if not within_drive_limits(robot, robot.inverse_dynamics(xf, xdf, xddf, t=fine).qd_act):
                    return 1e30
        except (IKError, SingularityError, PkmError):
            return 1e30
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", BranchWarning)
                reg = regression(robot, x, xd, xdd, t=t, columns=base.independent)
        except (IKError, SingularityError, PkmError):   # a LimitError too: beyond a joint's range or velocity
            return 1e30
        if not within_drive_limits(robot, reg.qd_act):
            return 1e30
        Y = reg.Y.reshape(-1, base.rank)
        Y = Y / np.maximum(np.linalg.norm(Y, axis=0), 1e-300)
        c = np.linalg.cond(Y)
        return float(c) if np.isfinite(c) else 1e30

    best, best_c = None, np.inf
    for _ in range(candidates):
        coef = rng.normal(size=(dp, harmonics, 2)) * (hi - lo)[:, None, None] / np.arange(1, harmonics + 1)[None, :, None]
        for _ in range(SHRINK):   # beyond a limit or out of reach: the same shape, smaller
            c = cost(coef.ravel())
            if c < 1e30:
                break
            coef = coef * 0.7
        if c < best_c:
            best, best_c = coef.ravel(), c
    if best is None or best_c >= 1e30:
        raise PkmError(f"{robot.name}: no excitation candidate stays reachable in the box; give a smaller box")
    if refine:
        sol = minimize(cost, best, method="Nelder-Mead", options={"maxfev": int(refine), "xatol": 1e-6})
        if sol.fun < best_c:
            best, best_c = sol.x, float(sol.fun)
    coef = _fit_box(best.reshape(dp, harmonics, 2), x0, lo, hi, period)
    x, xd, xdd = fourier(coef, x0, period, t)
    return Excitation(t, x, xd, xdd, best_c, coef, x0, float(period))


def write_trajectory_csv(path, names, t, x, xd, xdd) -> None:
    """Write ``t, x…, xd…, xdd…`` as a trajectory CSV (floats as ``repr``)."""
    header = ["t", *names, *(f"{n}d" for n in names), *(f"{n}dd" for n in names)]
    data = np.column_stack([t, x, xd, xdd])
    if not np.all(np.isfinite(data)):
        raise PkmError("the excitation trajectory is not finite")
    with open(path, "w") as fh:
        fh.write(",".join(header) + "\n")
        fh.writelines(",".join(map(repr, row)) + "\n" for row in data.tolist())


def within_drive_limits(robot, qd_act) -> bool:
    """Whether the motor speeds ``n q̇`` stay within the drives' ``max_speed`` (where the file gives one)."""
    d = robot.drives
    if d is None:
        return True
    limit = np.where(np.isfinite(d.max_speed), d.max_speed, np.inf)
    return bool(np.all(np.abs(d.motor_speed(qd_act)) <= limit))
