"""Argument checks of the robot-file model in absolute coordinates (:mod:`pkm.absolute.loader`,
:mod:`pkm.absolute.forward`, :mod:`pkm.absolute.joint_reactions`): the model, actuator motions and
efforts, start configurations, tolerances, the robot file (issue 27, item 4; the generic checks are
:mod:`pkm.absolute.checks`)."""
from __future__ import annotations

import os

import numpy as np

from pkm.absolute.checks import MAX_LENGTH, MAX_STEPS, MAX_VALUE, array, number, positive, show
from pkm.absolute.system import System
from pkm.errors import InputError


def check_model(model):
    """``model`` if it is a robot file's model (an :class:`~pkm.absolute.loader.AbsoluteModel`: a
    :class:`~pkm.absolute.system.System` and its actuators), else an InputError. (By its parts: the
    loader imports this module.)"""
    if not (isinstance(getattr(model, "system", None), System) and isinstance(getattr(model, "actuators", None), list)):
        raise InputError(f"model must be a pkm.absolute.loader.AbsoluteModel (load_spec), got {show(model)}")
    return model


def check_efforts(model, u, what: str = "u") -> np.ndarray:
    """Actuator efforts (n_act,) checked: one finite number per actuator (any shape of that size)."""
    n = len(model.actuators)
    u = array(u, f"{what} (one effort per actuator)", bound=MAX_VALUE).reshape(-1)
    if u.size != n:
        raise InputError(f"{u.size} actuator efforts in {what} for {n} actuators")
    return u


def check_motion(model, theta, theta_d, theta_dd, *, samples: bool = False):
    """Actuator positions, rates, accelerations checked: finite, one per actuator, the same shape;
    positions within :data:`~pkm.absolute.checks.MAX_LENGTH` (m or rad: beyond it an angle has lost its
    digits), rates and accelerations within :data:`~pkm.absolute.checks.MAX_VALUE`. ``samples``:
    (N, n_act) or (n_act,) as (1, n_act), N from 1 to :data:`~pkm.absolute.checks.MAX_STEPS`."""
    n = len(model.actuators)
    shape = (None, n) if samples else (n,)
    out = []
    for what, value, bound in (("theta", theta, MAX_LENGTH), ("theta_d", theta_d, MAX_VALUE),
                               ("theta_dd", theta_dd, MAX_VALUE)):
        a = array(value, f"{what} (one value per actuator: {n})", bound=bound)
        if samples and a.ndim == 1:
            a = a[None, :]
        out.append(array(a, f"{what} (one value per actuator: {n})", shape))
    if samples:
        if len({a.shape for a in out}) != 1:
            raise InputError(f"theta, theta_d and theta_dd must have the same shape, got "
                             f"{', '.join(str(a.shape) for a in out)}")
        if not 1 <= out[0].shape[0] <= MAX_STEPS:
            raise InputError(f"theta must hold 1 to {MAX_STEPS} samples, got {out[0].shape[0]}")
    return tuple(out)


def check_tol(tol) -> float:
    """The assembly tolerance on ``max|Φ|``: in (0, 1e-6]."""
    return positive(tol, "tol", high=1e-6, why=" (a tolerance on max|Φ|)")


def check_start_configurations(model, q_start, N: int):
    """``q_start`` of :meth:`~pkm.absolute.loader.AbsoluteModel.inverse_dynamics`: None, (n,) or (N, n)."""
    if q_start is None:
        return None
    n = model.system.n
    q = array(q_start, f"q_start ((n,) or (N, n) with n = {n})", bound=MAX_LENGTH)
    if q.shape not in ((n,), (N, n)):
        raise InputError(f"q_start must have shape ({n},) or ({N}, {n}), got {q.shape}")
    return q


def check_spec(spec, rtol):
    """``(RobotSpec, rtol)`` of :func:`~pkm.absolute.loader.load_spec`: a RobotSpec, or a path to a
    robot file (read by :func:`pkm.description.robotfile.load_spec`); ``rtol`` in (0, 1)."""
    from pkm.description.robotfile import load_spec as read_file
    from pkm.description.spec import RobotSpec

    if isinstance(spec, (str, os.PathLike)):
        spec = read_file(spec)
    if not isinstance(spec, RobotSpec):
        raise InputError(f"load_spec needs a RobotSpec or the path of a robot file, got {show(spec)}")
    return spec, number(rtol, "rtol", low=0.0, high=1.0, low_open=True, high_open=True)


def finite_result(values, what: str) -> np.ndarray:
    """``values`` if finite, else the one-line error that the inputs were out of range for it."""
    values = np.asarray(values, dtype=float)
    if not np.all(np.isfinite(values)):
        raise InputError(f"{what} is not finite: the motion's rates or accelerations are out of range")
    return values
