"""SE(3)/se(3) Lie-group primitives, numba-jitted (spec §1.4–§1.7; paper App. A, eq. 145–175).

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
from fractions import Fraction
from math import factorial

import numba
import numpy as np

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

#: The fastmath flags of the batch kernel and of every helper it calls (:data:`pkm.batch_ik._OPTIONS`):
#: only ``contract``, which lets LLVM fuse ``a·b + c`` into one FMA instruction (one rounding
#: instead of two; ~10 % of the Delta's time, A/B alternated). Results stay reproducible bit for
#: bit: the same on a fresh compile, from numba's cache and with the caller recompiled against
#: cached callees (the kernel's pieces are always inlined or always calls, so the same code is
#: generated each time; ``tests/test_sweep.py`` compares a process pool to the serial run bit for
#: bit). No ``nnan``/``ninf`` (the kernel checks for NaN and inf); ``reassoc``/``arcp``/``nsz``
#: gained nothing more. The reference kernels (:func:`_jit`) use no fastmath.
KERNEL_FASTMATH = {"contract"}

_jit = numba.njit(cache=True, nogil=True, no_cfunc_wrapper=True)
# The small allocation-free ``*_into`` primitives are inlined into their numba callers at the
# Numba-IR level: a call that passes array views (``T[i]``, ``V[p]``) costs ~100 ns in reference
# counting and argument marshalling, several times the arithmetic it performs. Called from Python
# they behave like any other jitted function.
_jit_inline = numba.njit(cache=True, nogil=True, inline="always", no_cfunc_wrapper=True)
# Helpers called from numba code only: no Python entry point (no_cpython_wrapper: less compile in
# a first run). CALLING ONE FROM PYTHON CRASHES THE INTERPRETER; tests use conftest.numba_only.
# No numba runtime (_nrt=False): the batch kernel calls them (see pkm.batch_ik._OPTIONS).
_jit_only = numba.njit(cache=True, nogil=True, no_cfunc_wrapper=True, no_cpython_wrapper=True, _nrt=False,
                       fastmath=KERNEL_FASTMATH)


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
    """Lower-left block D(x, y) of dexp_se3 (spec §1.7) written into out[i0:, j0:]."""
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


@_jit
def skew(x):
    """3×3 skew matrix of a 3-vector, ``skew(x) @ y == np.cross(x, y)`` (the paper's x̃, §1.1).

    >>> import numpy as np; from pkm.lie import skew
    >>> (skew(np.array([1., 2., 3.])) @ np.array([0., 0., 1.])).tolist()
    [2.0, -1.0, 0.0]
    """
    out = np.zeros((3, 3))
    _fill3(out, 0, 0, x, 0.0, 1.0, 0.0)
    return out


@_jit
def hat(x):
    """Matrix form: 3-vector → skew(x) ∈ so(3); twist X = (ω; v) → [[skew(ω), v], [0, 0]] ∈ se(3)
    (spec §1.2, App. A).

    >>> import numpy as np; from pkm.lie import hat
    >>> hat(np.array([0., 0., 1., 4., 5., 6.]))[:, 3].tolist()
    [4.0, 5.0, 6.0, 0.0]
    """
    if x.shape[0] == 3:
        return skew(x)
    if x.shape[0] != 6:
        raise ValueError("hat: expected a 3- or 6-vector")
    out = np.zeros((4, 4))
    _fill3(out, 0, 0, x[:3], 0.0, 1.0, 0.0)
    for i in range(3):
        out[i, 3] = x[3 + i]
    return out


@_jit
def vee(M):
    """Inverse of ``hat``: 3×3 → 3-vector (of the antisymmetric part (M − Mᵀ)/2, robust to
    round-off); 4×4 → twist (ω; v) with v = M[:3, 3].

    >>> import numpy as np; from pkm.lie import hat, vee
    >>> vee(hat(np.array([1., 2., 3., 4., 5., 6.]))).tolist()
    [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    """
    n = M.shape[0]
    if n != 3 and n != 4:
        raise ValueError("vee: expected a 3×3 or 4×4 matrix")
    out = np.empty(3 if n == 3 else 6)
    out[0] = 0.5 * (M[2, 1] - M[1, 2])
    out[1] = 0.5 * (M[0, 2] - M[2, 0])
    out[2] = 0.5 * (M[1, 0] - M[0, 1])
    if n == 4:
        for i in range(3):
            out[3 + i] = M[i, 3]
    return out


@_jit
def exp_so3(x):
    """Rotation matrix exp(skew(x)) = I + (sinφ/φ)K + ((1−cosφ)/φ²)K², K = skew(x), φ = |x|
    (Rodrigues, spec §1.6, App. A).  Series near φ = 0.

    >>> import numpy as np; from pkm.lie import exp_so3
    >>> (exp_so3(np.array([0., 0., np.pi / 2])) @ [1., 0., 0.]).round(12).tolist()
    [0.0, 1.0, 0.0]
    """
    phi = _norm3(x)
    a, b, _ = _coeffs(phi)
    out = np.empty((3, 3))
    _fill3(out, 0, 0, x, 1.0 - b * phi * phi, a, b)
    return out


@_jit_inline
def log_so3_into(R, out):
    """In-place ``log_so3``: writes the rotation vector of ``R`` into the 3-vector ``out``.

    Rotation vector x with exp_so3(x) = R and |x| ≤ π (principal logarithm, App. A).

    φ = atan2(|vee(R − Rᵀ)|/2, (trR − 1)/2); axis from the skew part when cosφ ≥ 0, else
    from the symmetric part (R+Rᵀ)/2 − cosφ I = (1−cosφ)uuᵀ (largest-diagonal column) with the
    sign fixed by the skew part.  Accurate at φ = 0 and φ = π; at φ = π the sign is arbitrary.

    >>> import numpy as np; from pkm.lie import exp_so3, log_so3_into
    >>> out = np.empty(3); log_so3_into(exp_so3(np.array([0.1, -0.2, 0.3])), out); out.round(12).tolist()
    [0.1, -0.2, 0.3]
    """
    w0 = 0.5 * (R[2, 1] - R[1, 2])
    w1 = 0.5 * (R[0, 2] - R[2, 0])
    w2 = 0.5 * (R[1, 0] - R[0, 1])
    s = np.sqrt(w0 * w0 + w1 * w1 + w2 * w2)
    c = min(1.0, max(-1.0, 0.5 * (R[0, 0] + R[1, 1] + R[2, 2] - 1.0)))
    phi = np.arctan2(s, c)
    if c >= 0.0:
        f = phi / s if s > 0.0 else 1.0   # φ/sinφ; atan2(s, c)/s is accurate for any s > 0
        out[0], out[1], out[2] = f * w0, f * w1, f * w2
        return
    j = 0
    for k in range(1, 3):
        if R[k, k] > R[j, j]:
            j = k
    for i in range(3):
        out[i] = 0.5 * (R[i, j] + R[j, i])
    out[j] -= c
    n = _norm3(out)
    if out[0] * w0 + out[1] * w1 + out[2] * w2 < 0.0:
        n = -n
    for i in range(3):
        out[i] *= phi / n


@_jit
def log_so3(R):
    """Rotation vector x with exp_so3(x) = R and |x| ≤ π (principal logarithm, App. A).

    See :func:`log_so3_into` for the algorithm; accurate at φ = 0 and φ = π.

    >>> import numpy as np; from pkm.lie import exp_so3, log_so3
    >>> log_so3(exp_so3(np.array([0.1, -0.2, 0.3]))).round(12).tolist()
    [0.1, -0.2, 0.3]
    """
    out = np.empty(3)
    log_so3_into(R, out)
    return out


@_jit
def exp_se3_into(X, out):
    """In-place ``exp_se3``: writes the pose exp(hat(X)) into the 4×4 ``out`` (allocation-free).

    >>> import numpy as np; from pkm.lie import exp_se3, exp_se3_into
    >>> X = np.array([.1, .2, .3, 1., 2., 3.]); out = np.empty((4, 4)); exp_se3_into(X, out)
    >>> bool((out == exp_se3(X)).all())
    True
    """
    x = X[:3]
    phi = _norm3(x)
    a, b, g = _coeffs(phi)
    t = phi * phi
    _fill3(out, 0, 0, x, 1.0 - b * t, a, b)
    s = x[0] * X[3] + x[1] * X[4] + x[2] * X[5]
    c0 = 1.0 - g * t
    out[0, 3] = c0 * X[3] + b * (x[1] * X[5] - x[2] * X[4]) + g * s * x[0]
    out[1, 3] = c0 * X[4] + b * (x[2] * X[3] - x[0] * X[5]) + g * s * x[1]
    out[2, 3] = c0 * X[5] + b * (x[0] * X[4] - x[1] * X[3]) + g * s * x[2]
    out[3, 0], out[3, 1], out[3, 2], out[3, 3] = 0.0, 0.0, 0.0, 1.0


@_jit
def exp_se3(X):
    """Pose exp(hat(X)) = [[exp_so3(ω), dexp_so3(ω) v], [0, 1]] for the twist X = (ω; v)
    (spec §1.6, App. A).  For a screw X = θY (eq. 148) this is the joint motion.

    >>> import numpy as np; from pkm.lie import exp_se3
    >>> C = exp_se3(np.array([0., 0., np.pi, 0., 0., 1.]))   # half turn + 1 m along z
    >>> (C.round(12) + 0.0).tolist()[2]
    [0.0, 0.0, 1.0, 1.0]
    """
    out = np.empty((4, 4))
    exp_se3_into(X, out)
    return out


@_jit_inline
def log_se3_into(C, out):
    """In-place ``log_se3`` (allocation-free): ``out[:3] = ω = log_so3(R)``,
    ``out[3:] = dexp_so3(ω)⁻¹ r = r − ω×r/2 + α ω×(ω×r)``.

    >>> import numpy as np; from pkm.lie import exp_se3, log_se3_into
    >>> X = np.array([0.1, 0.2, -0.3, 1., 2., 3.]); out = np.empty(6)
    >>> log_se3_into(exp_se3(X), out); bool(np.allclose(out, X, atol=1e-14))
    True
    """
    log_so3_into(C[:3, :3], out[:3])
    w0, w1, w2 = out[0], out[1], out[2]
    al = _alpha(np.sqrt(w0 * w0 + w1 * w1 + w2 * w2))
    r0, r1, r2 = C[0, 3], C[1, 3], C[2, 3]
    k0, k1, k2 = w1 * r2 - w2 * r1, w2 * r0 - w0 * r2, w0 * r1 - w1 * r0
    kk0, kk1, kk2 = w1 * k2 - w2 * k1, w2 * k0 - w0 * k2, w0 * k1 - w1 * k0
    out[3] = r0 - 0.5 * k0 + al * kk0
    out[4] = r1 - 0.5 * k1 + al * kk1
    out[5] = r2 - 0.5 * k2 + al * kk2


@_jit
def log_se3(C):
    """Twist X = (ω; v) with exp_se3(X) = C, |ω| ≤ π: ω = log_so3(R), v = dexp_so3(ω)⁻¹ r
    (App. A).

    >>> import numpy as np; from pkm.lie import exp_se3, log_se3
    >>> X = np.array([0.1, 0.2, -0.3, 1., 2., 3.])
    >>> bool(np.allclose(log_se3(exp_se3(X)), X, atol=1e-14))
    True
    """
    out = np.empty(6)
    log_se3_into(C, out)
    return out


@_jit_inline
def inv_se3_into(C, out):
    """In-place ``inv_se3`` (allocation-free); ``out`` must not alias ``C``.

    >>> import numpy as np; from pkm.lie import exp_se3, inv_se3_into
    >>> C = exp_se3(np.array([.1, .2, .3, 1., 2., 3.])); out = np.empty((4, 4)); inv_se3_into(C, out)
    >>> bool(np.allclose(out @ C, np.eye(4), atol=1e-14))
    True
    """
    for i in range(3):
        out[i, 3] = 0.0
        for j in range(3):
            out[i, j] = C[j, i]
            out[i, 3] -= C[j, i] * C[j, 3]
        out[3, i] = 0.0
    out[3, 3] = 1.0


@_jit
def inv_se3(C):
    """Closed-form inverse [[Rᵀ, −Rᵀr], [0, 1]] of a pose (eq. 145; C_{k,r} = C_k⁻¹C_r).

    >>> import numpy as np; from pkm.lie import exp_se3, inv_se3
    >>> C = exp_se3(np.array([0.3, 0.1, 0.2, 1., 0., 2.]))
    >>> bool(np.allclose(inv_se3(C) @ C, np.eye(4), atol=1e-14))
    True
    """
    out = np.empty((4, 4))
    inv_se3_into(C, out)
    return out


@_jit_inline
def mul_se3_into(C1, C2, out):
    """``out = C1 @ C2`` via blocks (R1R2, R1r2 + r1); ``out`` must not alias C1 or C2.

    >>> import numpy as np; from pkm.lie import exp_se3, mul_se3_into
    >>> A = exp_se3(np.array([.1, .2, .3, 1., 2., 3.])); out = np.empty((4, 4))
    >>> mul_se3_into(A, A, out); bool(np.allclose(out, A @ A, atol=1e-14))
    True
    """
    for i in range(3):
        for j in range(4):
            s = C1[i, 0] * C2[0, j] + C1[i, 1] * C2[1, j] + C1[i, 2] * C2[2, j]
            out[i, j] = s + C1[i, 3] if j == 3 else s
        out[3, i] = 0.0
    out[3, 3] = 1.0


@_jit
def Ad_into(C, out):
    """In-place ``Ad`` (6×6, allocation-free, eq. 157); ``out`` must not alias ``C``.

    >>> import numpy as np; from pkm.lie import Ad, Ad_into, exp_se3
    >>> C = exp_se3(np.array([.1, .2, .3, 1., 2., 3.])); out = np.empty((6, 6)); Ad_into(C, out)
    >>> bool((out == Ad(C)).all())
    True
    """
    for i in range(3):
        for j in range(3):
            out[i, j] = C[i, j]
            out[i + 3, j + 3] = C[i, j]
            out[i, j + 3] = 0.0
    for j in range(3):  # lower-left column j = r × R[:, j]
        out[3, j] = C[1, 3] * C[2, j] - C[2, 3] * C[1, j]
        out[4, j] = C[2, 3] * C[0, j] - C[0, 3] * C[2, j]
        out[5, j] = C[0, 3] * C[1, j] - C[1, 3] * C[0, j]


@_jit
def Ad(C):
    """Adjoint Ad_C = [[R, 0], [skew(r)R, R]] (eq. 157): maps body-fixed to spatial twists,
    V^s = Ad_C V, and body-fixed screws to spatial ones, Y_i = Ad_{A_i} ^iX_i (eq. 151).

    >>> import numpy as np; from pkm.lie import Ad, exp_se3
    >>> C = exp_se3(np.array([0., 0., 0., 1., 2., 3.]))   # pure translation r
    >>> (Ad(C) @ np.array([0., 0., 1., 0., 0., 0.])).round(12).tolist()  # (e; r × e)
    [0.0, 0.0, 1.0, 2.0, -1.0, 0.0]
    """
    out = np.empty((6, 6))
    Ad_into(C, out)
    return out


@_jit
def Ad_inv_into(C, out):
    """In-place ``Ad_inv`` (6×6, allocation-free, eq. 151/157); ``out`` must not alias ``C``.

    >>> import numpy as np; from pkm.lie import Ad, Ad_inv_into, exp_se3
    >>> C = exp_se3(np.array([.1, .2, .3, 1., 2., 3.])); out = np.empty((6, 6)); Ad_inv_into(C, out)
    >>> bool(np.allclose(out @ Ad(C), np.eye(6), atol=1e-14))
    True
    """
    for i in range(3):
        for j in range(3):
            out[i, j] = C[j, i]
            out[i + 3, j + 3] = C[j, i]
            out[i, j + 3] = 0.0
    for i in range(3):  # lower-left = −Rᵀ skew(r) = (skew(r)R)ᵀ, row i = r × R[:, i]
        out[i + 3, 0] = C[1, 3] * C[2, i] - C[2, 3] * C[1, i]
        out[i + 3, 1] = C[2, 3] * C[0, i] - C[0, 3] * C[2, i]
        out[i + 3, 2] = C[0, 3] * C[1, i] - C[1, 3] * C[0, i]


@_jit
def Ad_inv(C):
    """Ad_C⁻¹ = Ad_{C⁻¹} = [[Rᵀ, 0], [−Rᵀskew(r), Rᵀ]] in closed form (eq. 151, 157):
    ^iX_i = Ad_{A_i}⁻¹ Y_i.

    >>> import numpy as np; from pkm.lie import Ad, Ad_inv, exp_se3
    >>> C = exp_se3(np.array([0.3, -0.2, 0.5, 1., 2., 3.]))
    >>> bool(np.allclose(Ad_inv(C) @ Ad(C), np.eye(6), atol=1e-14))
    True
    """
    out = np.empty((6, 6))
    Ad_inv_into(C, out)
    return out


@_jit_inline
def Ad_apply_into(C, V, out):
    """``out = Ad(C) @ V = (Rω; r × Rω + Rv)`` without forming Ad (eq. 156/157); may be in place.

    >>> import numpy as np; from pkm.lie import Ad, Ad_apply_into, exp_se3
    >>> C = exp_se3(np.array([.1, .2, .3, 1., 2., 3.])); V = np.arange(6.); Ad_apply_into(C, V, V)
    >>> bool(np.allclose(V, Ad(C) @ np.arange(6.), atol=1e-14))
    True
    """
    w0 = C[0, 0] * V[0] + C[0, 1] * V[1] + C[0, 2] * V[2]
    w1 = C[1, 0] * V[0] + C[1, 1] * V[1] + C[1, 2] * V[2]
    w2 = C[2, 0] * V[0] + C[2, 1] * V[1] + C[2, 2] * V[2]
    u0 = C[0, 0] * V[3] + C[0, 1] * V[4] + C[0, 2] * V[5] + C[1, 3] * w2 - C[2, 3] * w1
    u1 = C[1, 0] * V[3] + C[1, 1] * V[4] + C[1, 2] * V[5] + C[2, 3] * w0 - C[0, 3] * w2
    u2 = C[2, 0] * V[3] + C[2, 1] * V[4] + C[2, 2] * V[5] + C[0, 3] * w1 - C[1, 3] * w0
    out[0], out[1], out[2], out[3], out[4], out[5] = w0, w1, w2, u0, u1, u2


@_jit_inline
def Ad_inv_apply_into(C, V, out):
    """``out = Ad_inv(C) @ V = (Rᵀω; Rᵀ(v − r × ω))`` without forming the matrix (eq. 151/157);
    may be in place.

    >>> import numpy as np; from pkm.lie import Ad_inv, Ad_inv_apply_into, exp_se3
    >>> C = exp_se3(np.array([.1, .2, .3, 1., 2., 3.])); V = np.arange(6.); out = np.empty(6)
    >>> Ad_inv_apply_into(C, V, out); bool(np.allclose(out, Ad_inv(C) @ V, atol=1e-14))
    True
    """
    d0 = V[3] - (C[1, 3] * V[2] - C[2, 3] * V[1])
    d1 = V[4] - (C[2, 3] * V[0] - C[0, 3] * V[2])
    d2 = V[5] - (C[0, 3] * V[1] - C[1, 3] * V[0])
    w0 = C[0, 0] * V[0] + C[1, 0] * V[1] + C[2, 0] * V[2]
    w1 = C[0, 1] * V[0] + C[1, 1] * V[1] + C[2, 1] * V[2]
    w2 = C[0, 2] * V[0] + C[1, 2] * V[1] + C[2, 2] * V[2]
    u0 = C[0, 0] * d0 + C[1, 0] * d1 + C[2, 0] * d2
    u1 = C[0, 1] * d0 + C[1, 1] * d1 + C[2, 1] * d2
    u2 = C[0, 2] * d0 + C[1, 2] * d1 + C[2, 2] * d2
    out[0], out[1], out[2], out[3], out[4], out[5] = w0, w1, w2, u0, u1, u2


@_jit_inline
def Ad_inv_T_apply_into(C, W, out):
    """``out = Ad(C)⁻ᵀ @ W = (R m + r × R f; R f)`` for a wrench ``W = (m; f)``; may be in place.

    Transports a wrench from the frame whose pose relative to another is ``C`` into that other
    frame, e.g. from body c to its parent with ``C = T_c`` (``Ad_{C_{c,p}}ᵀ = Ad_{T_c}⁻ᵀ``, spec §9.2);
    the dual of :func:`Ad_apply_into` (power ``W·V`` is preserved).

    >>> import numpy as np; from pkm.lie import Ad_inv, Ad_inv_T_apply_into, exp_se3
    >>> C = exp_se3(np.array([.1, .2, .3, 1., 2., 3.])); W = np.arange(6.); out = np.empty(6)
    >>> Ad_inv_T_apply_into(C, W, out); bool(np.allclose(out, Ad_inv(C).T @ W, atol=1e-14))
    True
    """
    f0 = C[0, 0] * W[3] + C[0, 1] * W[4] + C[0, 2] * W[5]
    f1 = C[1, 0] * W[3] + C[1, 1] * W[4] + C[1, 2] * W[5]
    f2 = C[2, 0] * W[3] + C[2, 1] * W[4] + C[2, 2] * W[5]
    m0 = C[0, 0] * W[0] + C[0, 1] * W[1] + C[0, 2] * W[2] + C[1, 3] * f2 - C[2, 3] * f1
    m1 = C[1, 0] * W[0] + C[1, 1] * W[1] + C[1, 2] * W[2] + C[2, 3] * f0 - C[0, 3] * f2
    m2 = C[2, 0] * W[0] + C[2, 1] * W[1] + C[2, 2] * W[2] + C[0, 3] * f1 - C[1, 3] * f0
    out[0], out[1], out[2], out[3], out[4], out[5] = m0, m1, m2, f0, f1, f2


@_jit
def ad(X):
    """Lie-algebra adjoint ad_X = [[skew(ω), 0], [skew(v), skew(ω)]] for X = (ω; v) (eq. 166);
    ad_X Y = [X, Y] and hat(ad_X Y) = hat(X)hat(Y) − hat(Y)hat(X).

    >>> import numpy as np; from pkm.lie import ad
    >>> X = np.array([.1, .2, .3, 1., 2., 3.]); float(np.abs(ad(X) @ X).max())
    0.0
    """
    out = np.zeros((6, 6))
    _fill3(out, 0, 0, X[:3], 0.0, 1.0, 0.0)
    _fill3(out, 3, 3, X[:3], 0.0, 1.0, 0.0)
    _fill3(out, 3, 0, X[3:], 0.0, 1.0, 0.0)
    return out


@_jit
def coad(X):
    """Co-adjoint ad_Xᵀ = [[−skew(ω), −skew(v)], [0, −skew(ω)]] acting on wrenches (m; f)
    (eq. 168: gyroscopic matrix G(V) = −coad(V)); (coad(X) W)·Y = W·(ad(X) Y).

    >>> import numpy as np; from pkm.lie import ad, coad
    >>> X = np.array([.1, .2, .3, 1., 2., 3.]); bool((coad(X) == ad(X).T).all())
    True
    """
    out = np.zeros((6, 6))
    _fill3(out, 0, 0, X[:3], 0.0, -1.0, 0.0)
    _fill3(out, 3, 3, X[:3], 0.0, -1.0, 0.0)
    _fill3(out, 0, 3, X[3:], 0.0, -1.0, 0.0)
    return out


@_jit_inline
def ad_apply_into(X, Y, out):
    """``out = [X, Y] = ad(X) @ Y = (ωx × ωy; vx × ωy + ωx × vy)`` (eq. 166); may be in place.

    >>> import numpy as np; from pkm.lie import ad, ad_apply_into
    >>> X, Y, out = np.arange(6.), np.ones(6), np.empty(6); ad_apply_into(X, Y, out)
    >>> bool((out == ad(X) @ Y).all())
    True
    """
    a0 = X[1] * Y[2] - X[2] * Y[1]
    a1 = X[2] * Y[0] - X[0] * Y[2]
    a2 = X[0] * Y[1] - X[1] * Y[0]
    b0 = X[4] * Y[2] - X[5] * Y[1] + X[1] * Y[5] - X[2] * Y[4]
    b1 = X[5] * Y[0] - X[3] * Y[2] + X[2] * Y[3] - X[0] * Y[5]
    b2 = X[3] * Y[1] - X[4] * Y[0] + X[0] * Y[4] - X[1] * Y[3]
    out[0], out[1], out[2], out[3], out[4], out[5] = a0, a1, a2, b0, b1, b2


@_jit_inline
def coad_apply_into(X, W, out):
    """``out = ad(X)ᵀ @ W = (m × ω + f × v; f × ω)`` for X = (ω; v), W = (m; f) (eq. 168);
    may be in place.

    >>> import numpy as np; from pkm.lie import coad, coad_apply_into
    >>> X, W, out = np.arange(6.), np.ones(6), np.empty(6); coad_apply_into(X, W, out)
    >>> bool((out == coad(X) @ W).all())
    True
    """
    a0 = W[1] * X[2] - W[2] * X[1] + W[4] * X[5] - W[5] * X[4]
    a1 = W[2] * X[0] - W[0] * X[2] + W[5] * X[3] - W[3] * X[5]
    a2 = W[0] * X[1] - W[1] * X[0] + W[3] * X[4] - W[4] * X[3]
    b0 = W[4] * X[2] - W[5] * X[1]
    b1 = W[5] * X[0] - W[3] * X[2]
    b2 = W[3] * X[1] - W[4] * X[0]
    out[0], out[1], out[2], out[3], out[4], out[5] = a0, a1, a2, b0, b1, b2


@_jit
def dexp_so3(x):
    """dexp_x = Σ_k skew(x)^k/(k+1)! = I + βK + γK² (spec §1.6–1.7, App. A), β = (1−cosφ)/φ²,
    γ = (φ−sinφ)/φ³.  For R(t) = exp_so3(x(t)): ṘRᵀ = skew(dexp_so3(x) ẋ) (spatial) and
    RᵀṘ = skew(dexp_so3(−x) ẋ) = skew(dexp_so3(x)ᵀ ẋ) (body-fixed, eq. 7's H_p).

    >>> import numpy as np; from pkm.lie import dexp_so3
    >>> x = np.array([.3, -.1, .2]); bool(np.allclose(dexp_so3(-x), dexp_so3(x).T, atol=1e-15))
    True
    """
    phi = _norm3(x)
    _, b, g = _coeffs(phi)
    out = np.empty((3, 3))
    _fill3(out, 0, 0, x, 1.0 - g * phi * phi, b, g)
    return out


@_jit
def dexp_inv_so3(x):
    """Inverse of dexp_so3: I − K/2 + αK², α = (1 − (φ/2)cot(φ/2))/φ² (App. A); singular only
    at φ = 2π, 4π, ….

    >>> import numpy as np; from pkm.lie import dexp_so3, dexp_inv_so3
    >>> x = np.array([1., 2., -.5]); bool(np.allclose(dexp_inv_so3(x) @ dexp_so3(x), np.eye(3)))
    True
    """
    phi = _norm3(x)
    al = _alpha(phi)
    out = np.empty((3, 3))
    _fill3(out, 0, 0, x, 1.0 - al * phi * phi, -0.5, al)
    return out


@_jit
def dexp_se3(X):
    """dexp_X = Σ_k ad_X^k/(k+1)! = [[A, 0], [D, A]], A = dexp_so3(ω), D from spec §1.7.
    For C(t) = exp_se3(X(t)): spatial twist ĊC⁻¹ = hat(dexp_se3(X) Ẋ) (right-trivialised),
    body-fixed twist C⁻¹Ċ = hat(dexp_se3(−X) Ẋ) (left-trivialised; H_p = dexp_{−X} in eq. 7).

    >>> import numpy as np; from pkm.lie import dexp_se3
    >>> X = np.array([.1, .2, .3, 1., 2., 3.]); ((dexp_se3(X) @ X - X).round(14) + 0.0).tolist()
    [0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    """
    x = X[:3]
    phi = _norm3(x)
    _, b, g = _coeffs(phi)
    out = np.zeros((6, 6))
    _fill3(out, 0, 0, x, 1.0 - g * phi * phi, b, g)
    _fill3(out, 3, 3, x, 1.0 - g * phi * phi, b, g)
    _fill_D(out, 3, 0, x, X[3:])
    return out


@_jit
def dexp_inv_se3(X):
    """Inverse of dexp_se3: [[A⁻¹, 0], [−A⁻¹DA⁻¹, A⁻¹]] (App. A); singular only at |ω| = 2π, ….
    Body-fixed twist → rate of the exponential coordinates: Ẋ = dexp_inv_se3(−X) V.

    >>> import numpy as np; from pkm.lie import dexp_se3, dexp_inv_se3
    >>> X = np.array([1., -2., .5, 1., 2., 3.])
    >>> bool(np.allclose(dexp_inv_se3(X) @ dexp_se3(X), np.eye(6), atol=1e-13))
    True
    """
    Ai = dexp_inv_so3(X[:3])
    D = np.empty((3, 3))
    _fill_D(D, 0, 0, X[:3], X[3:])
    out = np.zeros((6, 6))
    out[:3, :3] = Ai
    out[3:, 3:] = Ai
    out[3:, :3] = -(Ai @ (D @ Ai))
    return out
