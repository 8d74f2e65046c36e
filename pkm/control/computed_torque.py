"""Computed-torque control in task space (inverse dynamics of a model plus PD feedback).

``u(t, x, ẋ) = ID_model(x, ẋ, ẍ_d + K_d (ẋ_d − ẋ) + K_p (x_d − x))``: the model's inverse
dynamics (eq. 137) at the *measured* state with the commanded acceleration. With an exact model
the closed loop is ``ë + K_d ė + K_p e = 0`` for the error ``e = x_d − x``; with a wrong one the
error stays bounded, of the order of the model error times the motion's accelerations over
``K_p``.
"""
from __future__ import annotations

import numpy as np

from pkm.errors import InputError


class ComputedTorque:
    """A controller ``u(t, x, xd)`` for :meth:`pkm.robot.Robot.simulate`.

    ``model``: the robot the controller believes in (a :class:`pkm.robot.Robot`, e.g. loaded with
    other masses than the simulated one); ``desired``: a :class:`pkm.trajectory.Trajectory`
    (interpolated by the piecewise quintic through its x, ẋ, ẍ samples; held at its ends outside its times)
    or a callable ``t → (x_d, ẋ_d, ẍ_d)``; ``kp`` [1/s²] and ``kd`` [1/s] the PD gains (scalars or
    one per task coordinate; ``kd`` defaults to ``2√kp``, critical damping).
    """

    def __init__(self, model, desired, kp, kd=None):
        self.model = model
        self.kp = _gains(kp, "kp", model.task_dof)
        self.kd = 2.0 * np.sqrt(self.kp) if kd is None else _gains(kd, "kd", model.task_dof)
        if not callable(desired) and not all(hasattr(desired, k) for k in ("t", "x", "xd", "xdd")):
            raise InputError(f"desired must be a pkm.trajectory.Trajectory or a callable t -> (x, xd, xdd), "
                             f"got {type(desired).__name__}")
        self.desired = desired if callable(desired) else _splines(desired)
        self._start = None

    def __call__(self, t, x, xd):
        xr, xdr, xddr = self.desired(t)
        a = xddr + self.kd * (xdr - xd) + self.kp * (xr - x)
        res = self.model.inverse_dynamics(x, xd, a, start=self._start, threads=1)
        self._start = [res.joints[l.name][0] for l in self.model.limbs]
        return res.tau[0]


def _gains(value, what: str, n: int) -> np.ndarray:
    """A PD gain as (n,) finite non-negative numbers (one for all task coordinates or one each), else a
    one-line InputError (a ValueError)."""
    try:
        v = np.asarray(value, dtype=float)
        if isinstance(value, (bool, np.bool_)) or v.size not in (1, n):
            raise ValueError
        v = np.broadcast_to(v.reshape(-1), (n,)).copy()
    except (TypeError, ValueError):
        raise InputError(f"{what} must be one number or {n} (one per task coordinate) [1/s² for kp, 1/s for kd], "
                         f"got {value!r}") from None
    if not (np.all(np.isfinite(v)) and np.all(v >= 0)):
        raise InputError(f"the gains must be finite and non-negative, got {what} = {' '.join(f'{a:g}' for a in v)}")
    return v


def _splines(traj):
    """``t → (x_d, ẋ_d, ẍ_d)``: the piecewise quintic through the samples' x, ẋ and ẍ (Hermite,
    scipy's ``BPoly.from_derivatives``) and its derivatives, so that the three are consistent
    (ẋ_d = dx_d/dt exactly), which three separate splines of the samples are not."""
    from scipy.interpolate import BPoly

    t = np.asarray(traj.t, dtype=float)
    x, xd, xdd = (np.asarray(getattr(traj, k), dtype=float) for k in ("x", "xd", "xdd"))
    polys = [BPoly.from_derivatives(t, np.stack([x[:, i], xd[:, i], xdd[:, i]], axis=1)) for i in range(x.shape[1])]
    parts = [[p.derivative(k) if k else p for p in polys] for k in range(3)]

    def desired(time):
        time = min(max(time, t[0]), t[-1])
        return tuple(np.array([float(p(time)) for p in ps]) for ps in parts)

    return desired
