"""Base parameters: the combinations of the standard parameters that the torques determine.

The regressor ``Y`` (:mod:`pkm.identification.regressor`) of a PKM has dependent columns: parameters
that never move the torques (a body turning about its own axis only …) and parameters that move them
only in fixed combinations (the parallelogram's rods, a body and the joint it rotates about). The
base parameters are found numerically (Gautier 1990, "Numerical calculation of the base inertial
parameters of robots"): ``Y`` stacked over random reachable states (:func:`random_states`), its
columns scaled by the typical size of their parameters (``Y diag(s)``,
:func:`pkm.identification.parameters.parameter_scales`: each column then is a torque contribution of
the body's own size, and a column that is zero up to rounding stays at the rounding level), is factorised by a QR decomposition with column pivoting
(``scipy.linalg.qr(pivoting=True)``), ``Y P = Q R``. Its rank ``r`` is the number of diagonal entries
``|R_kk| > RANK_TOL · |R_00|``. The first ``r`` pivoted columns are the independent parameters
``π_i``; the others ``π_d`` satisfy ``Y_d = Y_i K`` (``K`` from the triangular factor), so

    ``τ = Y π = Y_i β``,   ``β = π_i + K π_d``   (the base parameters, printed as expressions).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from pkm.errors import IKError, InputError, PkmError, SingularityError

#: Relative tolerance of the rank decision on the diagonal of the pivoted QR factor of the
#: column-normalised stacked regressor (the data's rounding is ~1e-15; a real combination is far above).
RANK_TOL = 1e-8
#: Entries of ``K`` below this (relative to the largest of its row, and absolutely 1e-12) are dropped.
K_TOL = 1e-10


class BaseParameters(NamedTuple):
    """``names`` (P,) of the standard parameters; ``independent`` (r,) and ``dependent`` indices into
    them; ``K`` (r, P − r) with ``β = π[independent] + K π[dependent]``; ``B`` (r, P) the same map as a
    matrix (``β = B π``); ``rank`` r; ``unidentifiable``: standard parameters that move no torque."""

    names: tuple
    independent: np.ndarray
    dependent: np.ndarray
    K: np.ndarray
    B: np.ndarray

    @property
    def rank(self) -> int:
        return len(self.independent)

    @property
    def unidentifiable(self) -> tuple:
        return tuple(self.names[j] for j in self.dependent if not np.any(self.K[:, list(self.dependent).index(j)]))

    def values(self, pi) -> np.ndarray:
        """``β = B π`` for standard parameters ``π`` (P,)."""
        return self.B @ np.asarray(pi, float)

    def expressions(self) -> list[str]:
        """Each base parameter in the standard ones: ``"limb.arm.Izz + 0.25·limb.rod1.m"``."""
        out = []
        for k, i in enumerate(self.independent):
            terms = [self.names[i]]
            for c, j in enumerate(self.dependent):
                a = self.K[k, c]
                if a:
                    terms.append(f"{'+' if a > 0 else '-'} {_coef(abs(a))}{self.names[j]}")
            out.append(" ".join(terms))
        return out


def _coef(a: float) -> str:
    return "" if abs(a - 1.0) < 1e-12 else f"{a:.10g}·"


def base_parameters(names, Y, scale) -> BaseParameters:
    """:class:`BaseParameters` of a stacked regressor ``Y`` (M, P) with the parameters' typical sizes
    ``scale`` (P,) (module docstring)."""
    from scipy.linalg import qr, solve_triangular

    Y = np.asarray(Y, float)
    if Y.ndim == 3:
        Y = Y.reshape(-1, Y.shape[2])
    if not np.all(np.isfinite(Y)):
        raise PkmError("the regressor is not finite (velocities or accelerations too large?)")
    P = Y.shape[1]
    scale = np.asarray(scale, float)
    _, R, piv = qr(Y / scale, mode="economic", pivoting=True)
    d = np.abs(np.diag(R))
    if d.size == 0 or d[0] == 0.0:
        raise PkmError("the regressor is zero: no parameter moves the torques")
    r = int(np.sum(d > RANK_TOL * d[0]))
    ind, dep = np.sort(piv[:r]), piv[r:]
    # K from the triangular factor (column-scaled), back to the parameters' own units; rows in piv order
    Kn = solve_triangular(R[:r, :r], R[:r, r:]) if r < P else np.zeros((r, 0))
    K = Kn * scale[dep][None, :] / scale[piv[:r]][:, None]
    order = np.argsort(piv[:r])
    K = K[order]
    big = np.abs(K).max(axis=1, keepdims=True) if K.size else np.zeros((r, 1))
    K[(np.abs(K) <= K_TOL * np.maximum(big, 1.0)) | (np.abs(K) < 1e-12)] = 0.0
    dep = np.array(dep, dtype=np.intp)
    B = np.zeros((r, P))
    B[np.arange(r), ind] = 1.0
    B[:, dep] = K
    return BaseParameters(names=tuple(names), independent=ind, dependent=dep, K=K, B=B)


def random_states(robot, n: int = 60, *, seed: int = 0, box=None):
    """``(x, xd, xdd)`` of ``n`` random reachable states: positions drawn uniformly in ``box`` ((lo, hi)
    per task coordinate; default the bounding box of the robot file's trajectory, else ±10 % of a
    characteristic length about ``x_ref``), kept where the IK succeeds away from singularities;
    velocities and accelerations normal, of the box's size per second (squared)."""
    rng = np.random.default_rng(seed)
    lo, hi = default_box(robot) if box is None else (np.asarray(box[0], float), np.asarray(box[1], float))
    out, tries = [], 0
    while len(out) < n and tries < 40 * n:
        tries += 1
        x = lo + (hi - lo) * rng.random(robot.task_dof)
        try:
            robot.inverse_kinematics(x, warm_start=False, singularity_threshold=1e4)
        except (IKError, SingularityError):
            continue
        out.append(x)
    if len(out) < n:
        raise InputError(f"{robot.name}: only {len(out)} of {n} random states in the box are reachable")
    X = np.array(out)
    size = np.maximum(hi - lo, 1e-3)
    return X, rng.normal(size=X.shape) * size, rng.normal(size=X.shape) * 4.0 * size


def default_box(robot):
    """(lo, hi) of the task coordinates: the file's trajectory's bounding box (slightly shrunk), else
    ``x_ref`` ± 0.1 of the robot's size (rotations ± 0.2 rad)."""
    traj = robot.spec.trajectory
    if traj is not None:
        from pkm.trajectory import from_spec

        tr = from_spec(traj, robot.task.coordinate_names())
        lo, hi = tr.x.min(axis=0), tr.x.max(axis=0)
        mid, half = 0.5 * (lo + hi), 0.5 * (hi - lo)
        half = np.where(half > 0, 0.95 * half, 0.02)
        return mid - half, mid + half
    size = max(float(np.linalg.norm(robot.r0)), 0.1)
    half = np.array([0.2 if c.startswith("w") else 0.1 * size for c in robot.task.components])
    return robot.x_ref - half, robot.x_ref + half


def robot_base_parameters(robot, n: int | None = None, seed: int = 0) -> BaseParameters:
    """:func:`base_parameters` of ``robot``'s regressor over ``n`` :func:`random_states` (default: 60, or
    enough for three rows of ``Y`` per parameter)."""
    from pkm.identification.regressor import regression

    import warnings

    from pkm.errors import BranchWarning

    from pkm.identification.regressor import parameters

    if n is None:
        n = max(60, -(-3 * len(parameters(robot)[0]) // robot.n_act))
    X, XD, XDD = random_states(robot, n, seed=seed)
    with warnings.catch_warnings():   # unrelated states: any branch the IK finds will do
        warnings.simplefilter("ignore", BranchWarning)
        reg = regression(robot, X, XD, XDD, limits=False)   # random states: the rank, not a motion
    from pkm.identification.parameters import parameter_scales

    return base_parameters(reg.names, reg.Y, parameter_scales(reg.values, reg.names))
