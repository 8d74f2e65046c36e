"""Task-space trajectories with analytic velocities and accelerations.

A :class:`Trajectory` holds sampled task coordinates ``x(t)``, velocities ``ẋ(t)`` and
accelerations ``ẍ(t)``.  Every generator here evaluates closed-form expressions -- nothing is
obtained by numerical differentiation -- vectorised over the sample times:

* :func:`sine` -- the straight-line sine motion of Müller's Sec. 9.4,
  ``r(t) = c + A sin(2πt/T)``;
* :func:`line` -- a rest-to-rest straight line with the quintic time law
  ``s(τ) = 10τ³ − 15τ⁴ + 6τ⁵`` (zero velocity and acceleration at both ends);
* :func:`pick_place` -- the standard pick-and-place cycle (up, across, down, up, back, down),
  every move a septic rest-to-rest law ``s(τ) = 35τ⁴ − 84τ⁵ + 70τ⁶ − 20τ⁷`` so that position,
  velocity, acceleration and jerk are continuous everywhere; optionally with rounded corners;
* :func:`from_spec` -- the default trajectory of a robot file (``RobotSpec.trajectory``);
* :meth:`Trajectory.to_csv` / :func:`read_csv` -- the CSV format ``t, x…, xd…, xdd…``.

Times are ``t_i = i·dt`` for ``i = 0 … n`` with ``n = round(duration/dt)``; ``duration`` must be
an integer multiple of ``dt`` (to 1e-9 relative), so the last sample is the end of the motion;
at most :data:`MAX_SAMPLES` samples.
All generators also accept ``times=`` (any strictly increasing sample times) instead of ``dt``;
outside ``[0, duration]`` the rest-to-rest motions stay at rest at their end points.

Units are whatever the inputs use (pkm works in SI: metres, seconds).
"""

from __future__ import annotations

from pkm.trajectory.base import (
    MAX_SAMPLES,
    SEPTIC_PEAK_ACCELERATION,
    SEPTIC_PEAK_VELOCITY,
    Trajectory,
    default_names,
)
from pkm.trajectory.files import from_spec, read_csv
from pkm.trajectory.laws import Segment, line, pick_place, pick_place_segments, sine

__all__ = [
    "Trajectory", "Segment", "sine", "line", "pick_place", "pick_place_segments", "from_spec",
    "read_csv", "default_names", "SEPTIC_PEAK_VELOCITY", "SEPTIC_PEAK_ACCELERATION", "MAX_SAMPLES",
]
