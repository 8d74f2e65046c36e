"""Fixed-size small-matrix code for the numba kernels: SE(3) and se(3) on tuples.

Every function here is a plain ``numba.njit`` function (small enough for LLVM to inline it at
every call site; numba's own IR inlining is not used, it only costs compile time) and works on
tuples of floats, which LLVM keeps in registers: a rotation is a row-major 9-tuple ``R``, a vector a 3-tuple, a pose the pair
``(R, p)`` (``C = [[R, p], [0, 1]]``), a twist ``(ω, v)`` and a wrench ``(m, f)`` pairs of
3-tuples. The kernels of :mod:`pkm.algorithms.kinematics`, :mod:`pkm.algorithms.dynamics` and :mod:`pkm.kernels.batch` use them
in their per-body loops instead of passing array views (``T[i]``, ``V[p]``) to small functions: a
view costs an atomic reference-count increment and decrement plus the argument marshalling of a
call, several times the arithmetic of a 3×3 product. The ``get``/``set`` helpers read and write
array rows by index, so no view is ever created in a loop.

The formulas are those of :mod:`pkm.lie` (paper App. A–C, eq. 145–175, App. A); ``tests/test_small.py`` checks each
against its array counterpart there.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from pkm.lie.options import KERNEL_FASTMATH
from pkm.lie.series import _alpha

# Called from numba code only: no C or Python entry point (no_cpython_wrapper saves ~1.5 s of a
# first run's compile). CALLING ONE OF THESE FROM PYTHON CRASHES THE INTERPRETER (numba does not
# check); the tests call them through small jitted callers (tests/conftest.py: numba_only).
# Without numba's runtime (_nrt=False), as the batch kernel that calls them (pkm.kernels.work._jit).
_inline = njit(cache=True, nogil=True, no_cfunc_wrapper=True, no_cpython_wrapper=True, _nrt=False,
               fastmath=KERNEL_FASTMATH)


# ----------------------------------------------------------------------------- 3-vectors
@_inline
def cross(a, b):
    return (a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0])


@_inline
def dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


@_inline
def add(a, b):
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2])


@_inline
def sub(a, b):
    return (a[0] - b[0], a[1] - b[1], a[2] - b[2])


@_inline
def scale(s, a):
    return (s * a[0], s * a[1], s * a[2])


@_inline
def axpy(s, a, b):
    """``s a + b``."""
    return (s * a[0] + b[0], s * a[1] + b[1], s * a[2] + b[2])


# ----------------------------------------------------------------------------- 3×3 (row-major 9-tuples)
@_inline
def mv(R, x):
    """``R x``."""
    return (R[0] * x[0] + R[1] * x[1] + R[2] * x[2],
            R[3] * x[0] + R[4] * x[1] + R[5] * x[2],
            R[6] * x[0] + R[7] * x[1] + R[8] * x[2])


@_inline
def mtv(R, x):
    """``Rᵀ x``."""
    return (R[0] * x[0] + R[3] * x[1] + R[6] * x[2],
            R[1] * x[0] + R[4] * x[1] + R[7] * x[2],
            R[2] * x[0] + R[5] * x[1] + R[8] * x[2])


@_inline
def mm(A, B):
    """``A B``."""
    return (A[0] * B[0] + A[1] * B[3] + A[2] * B[6], A[0] * B[1] + A[1] * B[4] + A[2] * B[7],
            A[0] * B[2] + A[1] * B[5] + A[2] * B[8],
            A[3] * B[0] + A[4] * B[3] + A[5] * B[6], A[3] * B[1] + A[4] * B[4] + A[5] * B[7],
            A[3] * B[2] + A[4] * B[5] + A[5] * B[8],
            A[6] * B[0] + A[7] * B[3] + A[8] * B[6], A[6] * B[1] + A[7] * B[4] + A[8] * B[7],
            A[6] * B[2] + A[7] * B[5] + A[8] * B[8])


@_inline
def mtm(A, B):
    """``Aᵀ B``."""
    return (A[0] * B[0] + A[3] * B[3] + A[6] * B[6], A[0] * B[1] + A[3] * B[4] + A[6] * B[7],
            A[0] * B[2] + A[3] * B[5] + A[6] * B[8],
            A[1] * B[0] + A[4] * B[3] + A[7] * B[6], A[1] * B[1] + A[4] * B[4] + A[7] * B[7],
            A[1] * B[2] + A[4] * B[5] + A[7] * B[8],
            A[2] * B[0] + A[5] * B[3] + A[8] * B[6], A[2] * B[1] + A[5] * B[4] + A[8] * B[7],
            A[2] * B[2] + A[5] * B[5] + A[8] * B[8])


# ----------------------------------------------------------------------------- array access by index
@_inline
def get3(a, i):
    """Row ``i`` of an (n, ≥3) array as a 3-tuple."""
    return (a[i, 0], a[i, 1], a[i, 2])


@_inline
def get6(a, i):
    """Row ``i`` of an (n, 6) array as ``(ω, v)``."""
    return (a[i, 0], a[i, 1], a[i, 2]), (a[i, 3], a[i, 4], a[i, 5])


@_inline
def set6(a, i, w, v):
    a[i, 0], a[i, 1], a[i, 2] = w
    a[i, 3], a[i, 4], a[i, 5] = v


@_inline
def get_pose(C, i):
    """``C[i]`` (a 4×4 pose in an (n, 4, 4) array) as ``(R, p)``."""
    R = (C[i, 0, 0], C[i, 0, 1], C[i, 0, 2], C[i, 1, 0], C[i, 1, 1], C[i, 1, 2], C[i, 2, 0], C[i, 2, 1], C[i, 2, 2])
    return R, (C[i, 0, 3], C[i, 1, 3], C[i, 2, 3])


@_inline
def set_pose(C, i, R, p):
    C[i, 0, 0], C[i, 0, 1], C[i, 0, 2], C[i, 0, 3] = R[0], R[1], R[2], p[0]
    C[i, 1, 0], C[i, 1, 1], C[i, 1, 2], C[i, 1, 3] = R[3], R[4], R[5], p[1]
    C[i, 2, 0], C[i, 2, 1], C[i, 2, 2], C[i, 2, 3] = R[6], R[7], R[8], p[2]
    C[i, 3, 0], C[i, 3, 1], C[i, 3, 2], C[i, 3, 3] = 0.0, 0.0, 0.0, 1.0


# ----------------------------------------------------------------------------- SE(3)
@_inline
def pose_mul(R1, p1, R2, p2):
    """``C1 C2``."""
    return mm(R1, R2), add(mv(R1, p2), p1)


@_inline
def exp_screw(e, v, q):
    """``exp(q X)`` as ``(R, p)`` for a joint screw ``X = (e; v)`` with ``|e| = 1`` or ``e = 0`` (paper App. A, eq. 146–147).

    ``R = I + sin q K + (1 − cos q) K²`` with ``K = skew(e)`` (``K² = eeᵀ − I``) and
    ``p = (q I + (1 − cos q) K + (q − sin q) K²) v``; for ``e = 0`` (prismatic) ``R = I``, ``p = q v``.
    """
    ex, ey, ez = e
    if ex * ex + ey * ey + ez * ez == 0.0:
        return (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0), scale(q, v)
    s = np.sin(q)
    c1 = 1.0 - np.cos(q)
    t = q - s
    R = (1.0 + c1 * (ex * ex - 1.0), -s * ez + c1 * ex * ey, s * ey + c1 * ex * ez,
         s * ez + c1 * ex * ey, 1.0 + c1 * (ey * ey - 1.0), -s * ex + c1 * ey * ez,
         -s * ey + c1 * ex * ez, s * ex + c1 * ey * ez, 1.0 + c1 * (ez * ez - 1.0))
    k = cross(e, v)  # K v
    ev = dot(e, v)  # K² v = e (e·v) − v
    return R, (q * v[0] + c1 * k[0] + t * (ex * ev - v[0]),
               q * v[1] + c1 * k[1] + t * (ey * ev - v[1]),
               q * v[2] + c1 * k[2] + t * (ez * ev - v[2]))


@_inline
def exp_joint(X, i, q):
    """``exp(q X_i)`` for the joint screw in row ``i`` of ``X`` (n, 6); see :func:`exp_screw`."""
    e, v = get6(X, i)
    return exp_screw(e, v, q)


@_inline
def Ad(R, p, w, v):
    """``Ad_C (ω; v) = (Rω; p × Rω + Rv)`` (eq. 157)."""
    Rw = mv(R, w)
    return Rw, add(cross(p, Rw), mv(R, v))


@_inline
def Ad_inv(R, p, w, v):
    """``Ad_C⁻¹ (ω; v) = (Rᵀω; Rᵀ(v − p × ω))`` (eq. 151)."""
    return mtv(R, w), mtv(R, sub(v, cross(p, w)))


@_inline
def Ad_inv_T(R, p, m, f):
    """``Ad_C⁻ᵀ (m; f) = (Rm + p × Rf; Rf)``: a wrench moved from the child frame to the parent's."""
    Rf = mv(R, f)
    return add(mv(R, m), cross(p, Rf)), Rf


@_inline
def ad(w1, v1, w2, v2):
    """``ad_{(ω1;v1)} (ω2; v2) = (ω1 × ω2; v1 × ω2 + ω1 × v2)`` (eq. 166)."""
    return cross(w1, w2), add(cross(v1, w2), cross(w1, v2))


@_inline
def coad(w, v, m, f):
    """``ad_{(ω;v)}ᵀ (m; f) = (m × ω + f × v; f × ω)``."""
    return add(cross(m, w), cross(f, v)), cross(f, w)


@_inline
def inertia_mul(M, i, w, v):
    """``M_i (ω; v)`` for the (n, 6, 6) array ``M``, as a wrench ``(m, f)``."""
    x = (w[0], w[1], w[2], v[0], v[1], v[2])
    m0 = M[i, 0, 0] * x[0] + M[i, 0, 1] * x[1] + M[i, 0, 2] * x[2] + M[i, 0, 3] * x[3] + M[i, 0, 4] * x[4] + M[i, 0, 5] * x[5]
    m1 = M[i, 1, 0] * x[0] + M[i, 1, 1] * x[1] + M[i, 1, 2] * x[2] + M[i, 1, 3] * x[3] + M[i, 1, 4] * x[4] + M[i, 1, 5] * x[5]
    m2 = M[i, 2, 0] * x[0] + M[i, 2, 1] * x[1] + M[i, 2, 2] * x[2] + M[i, 2, 3] * x[3] + M[i, 2, 4] * x[4] + M[i, 2, 5] * x[5]
    f0 = M[i, 3, 0] * x[0] + M[i, 3, 1] * x[1] + M[i, 3, 2] * x[2] + M[i, 3, 3] * x[3] + M[i, 3, 4] * x[4] + M[i, 3, 5] * x[5]
    f1 = M[i, 4, 0] * x[0] + M[i, 4, 1] * x[1] + M[i, 4, 2] * x[2] + M[i, 4, 3] * x[3] + M[i, 4, 4] * x[4] + M[i, 4, 5] * x[5]
    f2 = M[i, 5, 0] * x[0] + M[i, 5, 1] * x[1] + M[i, 5, 2] * x[2] + M[i, 5, 3] * x[3] + M[i, 5, 4] * x[4] + M[i, 5, 5] * x[5]
    return (m0, m1, m2), (f0, f1, f2)


#: Rotation angle below which :func:`log_pose` uses series (no atan2).
_NEAR_IDENTITY = 1e-4
_THIRD, _SEVENTH, _TWELFTH, _INV720 = 1.0 / 3.0, 1.0 / 7.0, 1.0 / 12.0, 1.0 / 720.0


@_inline
def log_pose(R, p):
    """``log(C) = (ω; v)`` of the pose ``C = (R, p)`` with ``|ω| ≤ π`` (App. A): the algorithm of
    :func:`pkm.lie.log_so3_into` (atan2 angle; axis from the symmetric part when cos φ < 0) and
    ``v = dexp_so3(ω)⁻¹ p = p − ω×p/2 + α ω×(ω×p)`` as :func:`pkm.lie.log_se3_into`."""
    w0 = 0.5 * (R[7] - R[5])
    w1 = 0.5 * (R[2] - R[6])
    w2 = 0.5 * (R[3] - R[1])
    ss = w0 * w0 + w1 * w1 + w2 * w2
    c = min(1.0, max(-1.0, 0.5 * (R[0] + R[4] + R[8] - 1.0)))
    if c > 0.0 and ss < _NEAR_IDENTITY * _NEAR_IDENTITY:
        # near the identity (an IK's pose error near convergence): φ/sin φ = atan(x)/(x c) with
        # x = tan φ = s/c, by its series in t = x² (relative error < 1e-30); α(φ) = 1/12 + φ²/720
        # + O(φ⁴) with φ² = t (1 + O(t)). No sqrt, atan2 or α's Horner; one division.
        ic = 1.0 / c
        t = ss * ic * ic
        f = ic * (1.0 - t * (_THIRD - t * (0.2 - t * _SEVENTH)))
        w = (f * w0, f * w1, f * w2)
        al = _TWELFTH + t * _INV720
        # the tail below repeats the function's last three lines: with one shared tail after an
        # if/else the Delta ran ~2 % slower (A/B alternated, same results bit for bit)
        k = cross(w, p)
        kk = cross(w, k)
        return w, (p[0] - 0.5 * k[0] + al * kk[0], p[1] - 0.5 * k[1] + al * kk[1], p[2] - 0.5 * k[2] + al * kk[2])
    s = np.sqrt(ss)
    phi = np.arctan2(s, c)
    if c >= 0.0:
        f = phi / s if s > 0.0 else 1.0
        w = (f * w0, f * w1, f * w2)
    else:
        j = 0
        if R[4] > R[0]:
            j = 1
        if R[8] > R[4 * j]:
            j = 2
        u = (0.5 * (R[j] + R[3 * j]), 0.5 * (R[3 + j] + R[3 * j + 1]), 0.5 * (R[6 + j] + R[3 * j + 2]))
        u = (u[0] - c if j == 0 else u[0], u[1] - c if j == 1 else u[1], u[2] - c if j == 2 else u[2])
        nu = np.sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2])
        if u[0] * w0 + u[1] * w1 + u[2] * w2 < 0.0:
            nu = -nu
        w = scale(phi / nu, u)
    al = _alpha(phi)
    k = cross(w, p)
    kk = cross(w, k)
    return w, (p[0] - 0.5 * k[0] + al * kk[0], p[1] - 0.5 * k[1] + al * kk[1], p[2] - 0.5 * k[2] + al * kk[2])
