"""Layer 5 — controllers for simulations: functions ``u(t, x, xd)`` of the actuator forces.

:class:`pkm.control.computed_torque.ComputedTorque`: task-space computed-torque control with PD
feedback on a (possibly wrong) model of the robot. :func:`pkm.control.tracking.closed_loop_check`:
a planned motion simulated under that control with a wrong model — tracking error and the forces
against the drives' limits.
"""
from pkm.control.computed_torque import ComputedTorque
from pkm.control.tracking import TrackingReport, closed_loop_check

__all__ = ["ComputedTorque", "TrackingReport", "closed_loop_check"]
