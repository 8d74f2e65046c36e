"""Scalar coefficients of the SO(3)/SE(3) exponential and its differential, as series and closed forms.

sinφ/φ, β = (1−cosφ)/φ², γ = (φ−sinφ)/φ³, β'/φ, γ'/φ and α = (1 − (φ/2)cot(φ/2))/φ² (φ = |ω|), by
their Taylor series in φ² (Horner, 12 terms; truncation error < 1e-20) for φ < ``_SERIES_PHI`` = 1
and by the closed forms above it; plus the small 3×3 block fillers of :mod:`pkm.lie.dexp`
(paper App. A).
"""
from fractions import Fraction
from math import factorial

import numpy as np

from pkm.lie.options import _jit_only

_SERIES_PHI = 1.0
_NT = 12
# Taylor coefficients (in t = φ²) of sinφ/φ, β, γ, β'/φ, γ'/φ and α.
_C_SINC = np.array([(-1) ** k / factorial(2 * k + 1) for k in range(_NT)])
_C_BETA = np.array([(-1) ** k / factorial(2 * k + 2) for k in range(_NT)])
_C_GAMMA = np.array([(-1) ** k / factorial(2 * k + 3) for k in range(_NT)])
_C_DBETA = np.array([(-1) ** (k + 1) * (2 * k + 2) / factorial(2 * k + 4) for k in range(_NT)])
_C_DGAMMA = np.array([(-1) ** (k + 1) * (2 * k + 2) / factorial(2 * k + 5) for k in range(_NT)])
_BERNOULLI = [Fraction(1, 6), Fraction(1, 30), Fraction(1, 42), Fraction(1, 30), Fraction(5, 66),
              Fraction(691, 2730), Fraction(7, 6), Fraction(3617, 510), Fraction(43867, 798),
              Fraction(174611, 330), Fraction(854513, 138), Fraction(236364091, 2730)]  # |B_2n|
_C_ALPHA = np.array([float(b / factorial(2 * n + 2)) for n, b in enumerate(_BERNOULLI)])

@_jit_only
def _horner(c, t):
    s = 0.0
    for i in range(c.shape[0] - 1, -1, -1):
        s = s * t + c[i]
    return s


@_jit_only
def _coeffs(phi):
    """(sinφ/φ, β, γ) with β = (1−cosφ)/φ², γ = (φ−sinφ)/φ³."""
    t = phi * phi
    if phi < _SERIES_PHI:
        return _horner(_C_SINC, t), _horner(_C_BETA, t), _horner(_C_GAMMA, t)
    s = np.sin(phi)
    h = np.sin(0.5 * phi)
    return s / phi, 2.0 * h * h / t, (phi - s) / (t * phi)


@_jit_only
def _dcoeffs(phi):
    """(β'/φ, γ'/φ), β' = dβ/dφ, γ' = dγ/dφ."""
    t = phi * phi
    if phi < _SERIES_PHI:
        return _horner(_C_DBETA, t), _horner(_C_DGAMMA, t)
    a, b, g = _coeffs(phi)
    return (a - 2.0 * b) / t, (b - 3.0 * g) / t


@_jit_only
def _alpha(phi):
    """α = (1 − (φ/2)cot(φ/2))/φ² (coefficient of K² in dexp⁻¹ on SO(3))."""
    t = phi * phi
    if phi < _SERIES_PHI:
        return _horner(_C_ALPHA, t)
    h = 0.5 * phi
    return (1.0 - h * np.cos(h) / np.sin(h)) / t


@_jit_only
def _norm3(x):
    return np.sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2])


@_jit_only
def _fill3(out, i0, j0, x, c0, c1, c2):
    """out[i0:i0+3, j0:j0+3] = c0 I + c1 skew(x) + c2 x xᵀ."""
    for i in range(3):
        for j in range(3):
            out[i0 + i, j0 + j] = c2 * x[i] * x[j]
        out[i0 + i, j0 + i] += c0
    out[i0, j0 + 1] -= c1 * x[2]
    out[i0, j0 + 2] += c1 * x[1]
    out[i0 + 1, j0] += c1 * x[2]
    out[i0 + 1, j0 + 2] -= c1 * x[0]
    out[i0 + 2, j0] -= c1 * x[1]
    out[i0 + 2, j0 + 1] += c1 * x[0]


@_jit_only
def _fill_D(out, i0, j0, x, y):
    """Lower-left block D(x, y) of dexp_se3 (paper eq. 7 and App. A) written into out[i0:, j0:]."""
    phi = _norm3(x)
    _, b, g = _coeffs(phi)
    bp, gp = _dcoeffs(phi)
    s = x[0] * y[0] + x[1] * y[1] + x[2] * y[2]
    # D = β skew(y) + γ(yxᵀ + xyᵀ − 2s I) + s(β'/φ skew(x) + γ'/φ (xxᵀ − φ² I))
    z = (b * y[0] + s * bp * x[0], b * y[1] + s * bp * x[1], b * y[2] + s * bp * x[2])
    _fill3(out, i0, j0, z, -2.0 * g * s - s * gp * phi * phi, 1.0, 0.0)
    for i in range(3):
        for j in range(3):
            out[i0 + i, j0 + j] += g * (y[i] * x[j] + x[i] * y[j]) + s * gp * x[i] * x[j]
