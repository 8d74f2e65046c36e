"""Exceptions raised by pkm. All derive from :class:`PkmError`."""


class PkmError(Exception):
    """Base class of every error pkm raises on purpose."""


class RobotFileError(PkmError, ValueError):
    """A robot file is malformed or inconsistent.

    The message is one line, ``FILE: ENTRY: what is wrong``; :attr:`path` and :attr:`entry` hold
    the parts.
    """

    def __init__(self, path, entry: str, what: str):
        self.path = str(path) if path is not None else "<robot>"
        self.entry = entry
        self.what = what
        where = f"{self.path}: {entry}: " if entry else f"{self.path}: "
        super().__init__(f"{where}{what}".replace("\n", " "))


class InputError(PkmError, ValueError):
    """A bad argument to a pkm function: wrong shape or type, complex, NaN/inf, out of range.

    The message is one line naming the argument. A :class:`ValueError` too, so that code catching
    ValueError (the documented error of bad input) keeps working."""


class TopologyError(PkmError, ValueError):
    """The joint graph does not have the structure an algorithm needs (e.g. not a tree).

    Raised about a robot file, the message names it as :class:`RobotFileError` does,
    ``FILE: joints: what is wrong`` (:func:`naming_file`); :attr:`path` then holds the file."""

    path = None


def naming_file(func):
    """Decorator of a function whose first argument is a robot's ``RobotSpec``: a
    :class:`TopologyError` it raises names the spec's file (``FILE: joints: what``, as
    :class:`RobotFileError`), once, however deep it was raised."""
    import functools

    @functools.wraps(func)
    def wrapper(spec, *args, **kwargs):
        try:
            return func(spec, *args, **kwargs)
        except TopologyError as exc:
            source = getattr(spec, "source", None)
            if exc.path is not None or source is None:
                raise
            new = TopologyError(f"{source}: joints: {exc}".replace("\n", " "))
            new.path = str(source)
            raise new from None

    return wrapper


class IKError(PkmError, ValueError):
    """Inverse kinematics found no solution (e.g. an unreachable task-space point).

    :attr:`limb`, :attr:`residual` and :attr:`iterations` say where and how far it got;
    :attr:`sample` is the index of the failing sample in the call's trajectory (None for one point).
    """

    def __init__(self, message: str, limb: str | None = None, residual: float = float("nan"), iterations: int = 0,
                 sample: int | None = None):
        self.limb = limb
        self.residual = residual
        self.iterations = iterations
        self.sample = sample
        super().__init__(message)


class BranchError(IKError):
    """A trajectory cannot be followed on its branch (assembly mode): from sample ``sample − 1`` the
    solution cannot be continued to sample ``sample`` without crossing a singularity or leaving
    the workspace (see :meth:`pkm.Robot.inverse_dynamics`, "Branches")."""


class LimitError(IKError):
    """A solved configuration or motion leaves the limits the robot file gives a joint (its
    ``limits``: an angle or stroke range, a U/S joint's cone, an actuator's velocity;
    :mod:`pkm.description.limits`).

    A subclass of :class:`IKError`: the mechanism can reach the point, but not with admissible
    joints, so there is no *admissible* inverse-kinematics solution — code that treats an IKError as
    "this point cannot be reached" (a sweep's failed point, a CLI's one-line error) stays right
    without knowing limits. :attr:`joint` names the joint (a limb instance's ``"leg1/P"``),
    :attr:`value` the offending value (rad, m, rad/s or m/s; a cone's tilt angle in rad),
    :attr:`range` the admissible ``(lo, hi)``, :attr:`kind` ``"range"``, ``"cone"`` or
    ``"velocity"``, :attr:`sample` the first sample beyond the limits (None for one point) and
    :attr:`time` its time where the call has times (a simulation).
    """

    def __init__(self, message: str, joint: str | None = None, value: float = float("nan"), range=None,
                 sample: int | None = None, kind: str = "range", time: float | None = None, **ik):
        self.joint = joint
        self.value = value
        self.range = range
        self.kind = kind
        self.time = time
        super().__init__(message, sample=sample, **ik)


class BranchWarning(UserWarning):
    """The solution at a sample was on another branch than its predecessor's (a jump in the
    trajectory); pkm continued the predecessor's branch instead and names the sample. Turn it into
    an error with ``warnings.simplefilter("error", pkm.BranchWarning)``."""


class AccuracyWarning(UserWarning):
    """A simulation's own health check failed: its energy balance ``E(t) − E(0) = W(t)`` is off by more
    than :data:`pkm.sim.simulate.ENERGY_TOLERANCE` of the energy scale (a step too large for the
    motion, e.g. a fixed RK4 step across a singularity); the warning names the time and size."""


class SingularityError(PkmError, ArithmeticError):
    """A matrix that must be inverted (``G_y``, the IK Jacobian) is ill conditioned.

    :attr:`condition` is its condition number, :attr:`threshold` the configured limit,
    :attr:`sample` the index of the sample in the call's trajectory (None for one point).
    """

    def __init__(self, message: str, condition: float = float("inf"), threshold: float = float("nan"),
                 sample: int | None = None):
        self.condition = condition
        self.threshold = threshold
        self.sample = sample
        super().__init__(message)


def fmt_array(a, precision: int = 6) -> str:
    """An array as error messages write it: numpy's form on ONE line, however many entries (numpy
    wraps at 75 characters, which split the one-line errors of a 6-DOF robot)."""
    import numpy as np

    return np.array2string(np.asarray(a), precision=precision, max_line_width=10**9)


def fmt_condition(cond: float) -> str:
    """A condition number as messages print it: ``1.234e+07``, or ``infinite (exactly singular)``
    where a singular value is zero (never a bare "inf" in an error line)."""
    import math

    return f"{cond:.3e}" if math.isfinite(cond) else "infinite (exactly singular)"


def with_time(exc, t):
    """``exc`` (an error naming ``exc.sample`` of a trajectory, "at sample 633 (x = …)") naming the
    sample's time ``t[sample]`` too ("at sample 633 (t = 6.33 s, x = …)"), so that the point can be
    found in the trajectory's CSV and plot; ``exc`` itself without times or a sample."""
    import copy

    s = getattr(exc, "sample", None)
    if t is None or s is None or not 0 <= s < len(t) or f"sample {s} (" not in str(exc):
        return exc
    new = copy.copy(exc)
    new.args = (str(exc).replace(f"sample {s} (", f"sample {s} (t = {t[s]:.6g} s, ", 1),) + exc.args[1:]
    return new
