"""SE(3)/se(3) Lie-group primitives, numba-jitted (paper App. A, eq. 145–175).

Conventions
-----------
* Pose ``C = [[R, r], [0, 1]]`` (4×4, eq. 145) maps body-frame to IFR coordinates.
* Twist ``X = (ω; v)`` -- ANGULAR FIRST; ``hat(X) = [[skew(ω), v], [0, 0]]``.
  Body-fixed twist ``hat(V) = C⁻¹Ċ``, spatial twist ``hat(Vˢ) = ĊC⁻¹ = hat(Ad_C V)``.
* Wrench ``W = (m; f)`` -- moment first; power ``W·V``; wrenches transform with ``Ad_C^T``.
* ``Ad_C = [[R, 0], [skew(r)R, R]]`` (eq. 157), ``ad_X = [[skew(ω), 0], [skew(v), skew(ω)]]``
  (eq. 166), co-adjoint ``ad_X^T`` (eq. 168).
* ``dexp_X = Σ_{k≥0} ad_X^k/(k+1)!`` (§1.7).  For ``C(t) = exp(X(t))``: spatial twist
  ``ĊC⁻¹ = hat(dexp_X Ẋ)`` (right-trivialised), body-fixed twist ``C⁻¹Ċ = hat(dexp_{-X} Ẋ)``
  (left-trivialised, used in eq. 7).

All public functions are ``numba.njit(cache=True, nogil=True)`` and take float64 arrays; they can
be called from Python and from other jitted code.  ``*_into`` variants write into a preallocated
``out`` and allocate nothing; matrix-valued ones require that ``out`` does not alias an input,
the vector-valued ones (``*_apply_into``) may be called in place.

Numerics.  The scalar coefficients sinφ/φ, β, γ, β'/φ, γ'/φ and α (φ = |ω|) are evaluated by
their Taylor series in φ² (Horner, 12 terms; truncation error < 1e-20) for φ < ``_SERIES_PHI``
= 1, and by the closed forms above, where their cancellation error is ≲ 30 ε ≈ 7e-15
(relative).  ``log_so3`` takes φ = atan2(sinφ, cosφ) from the skew/trace parts, the axis from
the skew part if cosφ ≥ 0 and from the symmetric part (R+Rᵀ)/2 − cosφ I = (1−cosφ)uuᵀ otherwise,
so it is accurate at 0 and at π (never NaN).  At exactly π (or within ~1e-15 of it) the sign of
the returned rotation vector is arbitrary -- both ±πu are valid logarithms.
"""
# The public API of the spatial layer (``pkm.lie.exp_se3`` etc.); the package's modules hold one idea
# each: groups (exp/log/inverse/product), adjoint (Ad, ad, co-adjoint), dexp, series (the scalar
# coefficients), options (numba compile flags), small (fixed-size tuple kernels of the batch code),
# linalg (small allocation-free solvers) and interpret (the kernels run as plain Python at one point).
from pkm.lie.adjoint import (
    Ad,
    Ad_apply_into,
    Ad_into,
    Ad_inv,
    Ad_inv_apply_into,
    Ad_inv_into,
    Ad_inv_T_apply_into,
    ad,
    ad_apply_into,
    coad,
    coad_apply_into,
)
from pkm.lie.dexp import dexp_inv_se3, dexp_inv_so3, dexp_se3, dexp_so3, dexp_so3_dot, rotvec_motions_into
from pkm.lie.groups import (
    exp_se3,
    exp_se3_into,
    exp_so3,
    hat,
    inv_se3,
    inv_se3_into,
    log_se3,
    log_se3_into,
    log_so3,
    log_so3_into,
    mul_se3_into,
    skew,
    vee,
)
from pkm.lie.options import KERNEL_FASTMATH

__all__ = ["Ad", "Ad_apply_into", "Ad_into", "Ad_inv", "Ad_inv_apply_into", "Ad_inv_into", "Ad_inv_T_apply_into",
           "ad", "ad_apply_into", "coad", "coad_apply_into", "dexp_inv_se3", "dexp_inv_so3", "dexp_se3", "dexp_so3", "dexp_so3_dot", "rotvec_motions_into",
           "exp_se3", "exp_se3_into", "exp_so3", "hat", "inv_se3", "inv_se3_into", "log_se3", "log_se3_into",
           "log_so3", "log_so3_into", "mul_se3_into", "skew", "vee", "KERNEL_FASTMATH"]
