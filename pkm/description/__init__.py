"""Layer 2 — the robot description: what a robot *is*, as data.

Robot files (TOML) are read and validated into a :class:`~pkm.description.spec.RobotSpec`
(:mod:`.robotfile` with its value checks in :mod:`.fileformat`, parameters and expressions in
:mod:`.expr`, primitive-shape inertias in :mod:`.inertia`); :mod:`.topology` finds limbs,
fundamental cycles and cut joints; :mod:`.model` compiles a spanning tree into flat arrays
(:class:`~pkm.description.model.TreeModel`).

Imports only :mod:`pkm.errors` and :mod:`pkm.lie` (the layers below).
"""
