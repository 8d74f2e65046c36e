"""Layer 5 — controllers for simulations: functions ``u(t, x, xd)`` of the actuator forces.

:class:`pkm.control.computed_torque.ComputedTorque`: task-space computed-torque control with PD
feedback on a (possibly wrong) model of the robot.
"""
from pkm.control.computed_torque import ComputedTorque

__all__ = ["ComputedTorque"]
