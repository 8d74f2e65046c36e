"""Layer 3 — recursive algorithms on trees and limbs (the paper's §3–§6, one sample at a time).

:mod:`.kinematics` (POE forward kinematics, body Jacobians, J̇), :mod:`.constraints` (cut-joint
constraints, H, Ḣq̇), :mod:`.limb` (a limb's loops resolved locally), :mod:`.inverse_kinematics`
(mechanism IK), :mod:`.assembly` (free-platform assembly), :mod:`.dynamics` (O(n) Newton–Euler,
CRBA) and :mod:`.manipulator` (task- and actuator-space EOM). These are the reference
implementations the batched kernels of :mod:`pkm.kernels` are tested against.

Imports only the layers below: :mod:`pkm.errors`, :mod:`pkm.lie`, :mod:`pkm.description`.
"""
