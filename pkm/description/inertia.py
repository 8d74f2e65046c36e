"""Mass properties of primitive shapes and checks of inertia tensors.

All functions take and return SI values. Inertia tensors are about the centre of mass.
"""

from __future__ import annotations

import numpy as np

#: Built-in densities, kg/m³.
MATERIALS = {
    "aluminium": 2700.0,
    "aluminum": 2700.0,
    "steel": 7850.0,
    "titanium": 4430.0,
    "carbon_fibre": 1600.0,
    "carbon_fiber": 1600.0,
    "abs": 1040.0,
}

#: Relative tolerance of the symmetry and triangle-inequality checks.
RTOL = 1e-9
#: Largest inertia entry accepted [kg·m²]: rotating a tensor (sums of three products) and the
#: dynamics' products with it stay finite far beyond any physical body (the Earth: ~8e37).
MAX_INERTIA = 1e300


def cylinder_volume(radius: float, length: float) -> float:
    return np.pi * radius**2 * length


def box_volume(size) -> float:
    return float(np.prod(size))


def sphere_volume(radius: float) -> float:
    return 4.0 / 3.0 * np.pi * radius**3


def cylinder_inertia(mass: float, radius: float, length: float, axis) -> np.ndarray:
    """Inertia of a solid cylinder about its centre, in the axes ``axis`` is given in.

    ``I_axis = m r²/2`` about the (unit) axis, ``I_perp = m (3 r² + L²)/12`` about any
    perpendicular through the centre: ``I = I_perp (1 - a aᵀ) + I_axis a aᵀ``.
    """
    a = np.asarray(axis, dtype=float)
    a = a / np.linalg.norm(a)
    i_axis = mass * radius**2 / 2.0
    i_perp = mass * (3.0 * radius**2 + length**2) / 12.0
    aa = np.outer(a, a)
    return i_perp * (np.eye(3) - aa) + i_axis * aa


def box_inertia(mass: float, size) -> np.ndarray:
    """Inertia of a solid box with edge lengths ``size`` along the axes, about its centre."""
    lx, ly, lz = (float(s) for s in size)
    return mass / 12.0 * np.diag([ly**2 + lz**2, lx**2 + lz**2, lx**2 + ly**2])


def sphere_inertia(mass: float, radius: float) -> np.ndarray:
    """Inertia of a solid sphere about its centre: ``2/5 m r²`` about every axis."""
    return 0.4 * mass * radius**2 * np.eye(3)


def inertia_problem(inertia: np.ndarray) -> str | None:
    """Why ``inertia`` is not a physical inertia tensor about the centre of mass, or None.

    Checks symmetry (to :data:`RTOL` relative), positive definiteness and the triangle inequality
    of the principal moments (each ≤ the sum of the other two, :data:`RTOL` relative slack).
    """
    inertia = np.asarray(inertia, dtype=float)
    if not np.all(np.isfinite(inertia)):
        return "inertia is not finite (numbers too large)"
    scale = float(np.max(np.abs(inertia)))
    if scale == 0.0:
        return "inertia is zero (not positive definite)"
    if scale > MAX_INERTIA:
        return f"inertia is out of range (an entry of {scale:.3g} kg*m^2; at most {MAX_INERTIA:.0e})"
    unit = inertia / scale   # entries in [-1, 1]: I + I^T and the eigensolver cannot overflow
    if np.max(np.abs(unit - unit.T)) > RTOL:
        return "inertia is not symmetric"
    moments = scale * np.linalg.eigvalsh(0.5 * (unit + unit.T))
    if moments[0] <= 1e-14 * moments[-1] or moments[0] <= 0.0:
        return f"inertia is not positive definite (principal moments {_fmt(moments)} kg*m^2)"
    total = float(np.sum(moments))
    for k in range(3):
        others = total - moments[k]
        if moments[k] > others + RTOL * total:
            return (
                "principal moments violate the triangle inequality "
                f"({moments[k]:.6g} > {others:.6g}; moments {_fmt(moments)} kg*m^2)"
            )
    return None


def _fmt(values) -> str:
    return "[" + ", ".join(f"{v:.6g}" for v in values) + "]"
