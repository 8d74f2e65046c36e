"""Time laws of prescribed relative motion for rheonomic constraints (seed 001 §4, §6.5).

A *scalar law* is a callable ``s(t) -> (s, ṡ, s̈)``. A *translation law* is ``t -> (x, ẋ, ẍ)``
(3-vectors, in the coordinates of the lock's marker S: seed 001's ``q_Δ(t)``, eq. 28). A
*rotation law* is ``t -> (R, ω, ω̇)`` with ``Ṙ = R ω̂`` (ω in the rotated frame, pkm's body-fixed
convention; seed 001's ``q_θΔ(t)`` as a rotation matrix). For a rotation about a fixed axis both
conventions give ``ω = θ̇ a``.
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np

from pkm.absolute.body import skew
from pkm.absolute.checks import MAX_LENGTH, MAX_VALUE, array, function, number, show
from pkm.errors import InputError

ScalarLaw = Callable[[float], tuple[float, float, float]]


def constant(value: float = 0.0) -> ScalarLaw:
    """``s(t) = value``."""
    value = number(value, "constant law: value")
    return lambda t: (value, 0.0, 0.0)


def polynomial(coefficients) -> ScalarLaw:
    """``s(t) = Σ c_k t^k`` (``coefficients`` lowest order first)."""
    c = array(coefficients, "polynomial law: coefficients", (None,), bound=MAX_VALUE)
    if c.size == 0:
        raise InputError("polynomial law: coefficients must hold at least one number")
    p = np.polynomial.Polynomial(c)
    dp, ddp = p.deriv(1), p.deriv(2)
    return lambda t: (float(p(t)), float(dp(t)), float(ddp(t)))


def sine(amplitude: float, omega: float, phase: float = 0.0, offset: float = 0.0) -> ScalarLaw:
    """``s(t) = offset + amplitude sin(ω t + phase)``."""
    a, w, ph, c = (number(v, f"sine law: {k}", low=-MAX_VALUE, high=MAX_VALUE) for k, v in
                   (("amplitude", amplitude), ("omega", omega), ("phase", phase), ("offset", offset)))

    def law(t):
        arg = w * t + ph
        return c + a * math.sin(arg), a * w * math.cos(arg), -a * w * w * math.sin(arg)

    return law


def _unit(axis) -> np.ndarray:
    a = array(axis, "axis", (3,), bound=MAX_VALUE)
    n = float(np.linalg.norm(a))
    if not n > 0.0:
        raise InputError(f"axis must be a non-zero 3-vector, got {show(axis)}")
    return a / n


def along(axis, law: ScalarLaw):
    """Translation law ``x(t) = s(t) a`` along the (normalised) ``axis``."""
    a = _unit(axis)
    function(law, "along: law", optional=False)

    def translation(t):
        s, sd, sdd = law(t)
        return s * a, sd * a, sdd * a

    return translation


def about(axis, law: ScalarLaw):
    """Rotation law ``R(t) = exp(θ(t) â)`` about the (normalised) ``axis``: ``ω = θ̇ a``, ``ω̇ = θ̈ a``."""
    a = _unit(axis)
    function(law, "about: law", optional=False)
    A = skew(a)
    A2 = A @ A

    def rotation(t):
        th, thd, thdd = law(t)
        R = np.eye(3) + math.sin(th) * A + (1.0 - math.cos(th)) * A2
        return R, thd * a, thdd * a

    return rotation


def fixed_translation(x):
    """Constant translation law."""
    x = array(x, "fixed translation", (3,), bound=MAX_LENGTH)
    z = np.zeros(3)
    return lambda t: (x, z, z)


def fixed_rotation(R):
    """Constant rotation law."""
    R = array(R, "fixed rotation", (3, 3))
    if np.max(np.abs(R.T @ R - np.eye(3))) > 1e-9 or np.linalg.det(R) < 0.0:
        raise InputError("fixed rotation must be a rotation matrix (orthonormal, det +1)")
    z = np.zeros(3)
    return lambda t: (R, z, z)
