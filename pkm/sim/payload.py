"""A robot with a payload that shares its limbs: the members of a batch with payloads
(:func:`pkm.sim.batch.simulate_batch`, ``payloads=``) cost no robot of their own."""
from __future__ import annotations

import numpy as np

from pkm.errors import InputError, PkmError


def with_payload(robot, mass):
    """``robot`` with a point mass ``mass`` at the platform frame's origin (``spec.with_payload``): a shallow
    copy whose spec and packed model hold the new platform inertia (the limb trees carry a massless
    platform, paper eq. 99: they are shared)."""
    import copy

    from pkm.algorithms.manipulator import platform_inertia
    from pkm.kernels.model import inertia10

    if mass == 0.0:
        return robot
    try:
        spec = robot.spec.with_payload(mass)
    except PkmError as exc:   # a payload too large for float64's inertia
        raise InputError(str(exc)) from None
    variant = copy.copy(robot)
    variant.spec = spec
    variant._pack_cache = robot._packed()._replace(Mp=inertia10(np.asarray(platform_inertia(variant), dtype=float))[None, :])
    return variant
