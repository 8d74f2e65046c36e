"""Layer 5 — forward dynamics and time integration (paper §8.1).

:mod:`.forward` gives the task acceleration under actuator forces from the batched
inverse-dynamics kernel; :mod:`.simulate` integrates it in time (scipy's ``solve_ivp`` or a fixed
-step RK4) with energy, actuator work and loop closure recorded along the run; :mod:`.inputs`
turns constants, tables and controllers into actuator forces ``u(t, state)``; :mod:`.batch` runs many
fixed-step RK4 simulations at once (states, tables, payloads) on all cores.

Takes a :class:`pkm.robot.Robot` as an argument; imports only the layers below.
"""
