"""The differential of the exponential, dexp and dexp⁻¹ on SO(3) and SE(3) (paper eq. 7, 169–175)."""
import numpy as np

from pkm.lie.options import _jit
from pkm.lie.series import _alpha, _coeffs, _dcoeffs, _fill3, _fill_D, _norm3


@_jit
def dexp_so3(x):
    """dexp_x = Σ_k skew(x)^k/(k+1)! = I + βK + γK² (paper App. A, eq. 146–147; eq. 7 and App. A, App. A), β = (1−cosφ)/φ²,
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
def dexp_so3_dot(x, xd):
    """Time derivative of ``dexp_so3(x(t))`` along ``ẋ = xd``: ``β̇K + βK̇ + γ̇K² + γ(K̇K + KK̇)``
    with ``K = skew(x)``, ``β̇ = (β'/φ)(x·ẋ)``, ``γ̇ = (γ'/φ)(x·ẋ)``. It is the block ``D(x, ẋ)`` of
    ``dexp_se3`` (paper eq. 7 and App. A: D is the directional derivative of dexp on SO(3)). The body-fixed
    angular acceleration of ``R(t) = exp(x(t))`` (eq. 7 differentiated, paper Sec. 8.1) is
    ``ω̇ = dexp_so3(−x) ẍ + dexp_so3_dot(−x, −ẋ) ẋ``.

    >>> import numpy as np; from pkm.lie import dexp_so3, dexp_so3_dot
    >>> x, xd, h = np.array([.3, -1., 2.]), np.array([1., .5, -.2]), 1e-6
    >>> fd = (dexp_so3(x + h * xd) - dexp_so3(x - h * xd)) / (2 * h)
    >>> bool(np.allclose(dexp_so3_dot(x, xd), fd, atol=1e-9))
    True
    """
    out = np.empty((3, 3))
    _fill_D(out, 0, 0, x, xd)
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
    """dexp_X = Σ_k ad_X^k/(k+1)! = [[A, 0], [D, A]], A = dexp_so3(ω), D from paper eq. 7 and App. A.
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


@_jit
def rotvec_motions_into(X, XD, XDD, R, W, WD):
    """Rotations ``R[s] = exp(x)`` and body-fixed angular velocities and accelerations of
    ``R(t) = exp(x(t))`` for rotation vectors ``X`` (N, 3) with rates ``XD`` and accelerations
    ``XDD`` (N, 3), into ``R`` (N, 3, 3), ``W`` and ``WD`` (N, 3); allocates nothing.

    ``ω = dexp_{−x} ẋ = ẋ − β x×ẋ + γ x×(x×ẋ)`` (eq. 7) and its derivative
    ``ω̇ = dexp_{−x} ẍ + D(−x, −ẋ) ẋ`` (:func:`dexp_so3_dot`), which applied to ``ẋ`` reduces to
    ``γ ẋ×(x×ẋ) + (x·ẋ)(−(β'/φ) x×ẋ + (γ'/φ) x×(x×ẋ))`` (the ``skew(ẋ)ẋ`` term vanishes): the
    vector form of :meth:`pkm.robot.Robot.platform_twist`'s matrices, for whole trajectories.

    >>> import numpy as np; from pkm.lie import rotvec_motions_into, dexp_so3
    >>> X, XD = np.array([[0., 0., 2.]]), np.array([[0., 0., 1.]])  # about a fixed axis: ω = ẋ, ω̇ = ẍ
    >>> R, W, WD = np.empty((1, 3, 3)), np.empty((1, 3)), np.empty((1, 3))
    >>> rotvec_motions_into(X, XD, np.array([[0., 0., .5]]), R, W, WD)
    >>> W.round(12).tolist(), WD.round(12).tolist()
    ([[0.0, 0.0, 1.0]], [[0.0, 0.0, 0.5]])
    """
    for s in range(X.shape[0]):
        x0, x1, x2 = X[s, 0], X[s, 1], X[s, 2]
        phi = np.sqrt(x0 * x0 + x1 * x1 + x2 * x2)
        a, b, g = _coeffs(phi)
        bp, gp = _dcoeffs(phi)
        # R = I + a K + b K², K² = x xᵀ − φ² I
        R[s, 0, 0] = 1.0 + b * (x0 * x0 - phi * phi)
        R[s, 1, 1] = 1.0 + b * (x1 * x1 - phi * phi)
        R[s, 2, 2] = 1.0 + b * (x2 * x2 - phi * phi)
        R[s, 0, 1] = -a * x2 + b * x0 * x1
        R[s, 1, 0] = a * x2 + b * x0 * x1
        R[s, 0, 2] = a * x1 + b * x0 * x2
        R[s, 2, 0] = -a * x1 + b * x0 * x2
        R[s, 1, 2] = -a * x0 + b * x1 * x2
        R[s, 2, 1] = a * x0 + b * x1 * x2
        y0, y1, y2 = XD[s, 0], XD[s, 1], XD[s, 2]
        z0, z1, z2 = XDD[s, 0], XDD[s, 1], XDD[s, 2]
        c0, c1, c2 = x1 * y2 - x2 * y1, x2 * y0 - x0 * y2, x0 * y1 - x1 * y0  # x × ẋ
        cc0, cc1, cc2 = x1 * c2 - x2 * c1, x2 * c0 - x0 * c2, x0 * c1 - x1 * c0  # x × (x × ẋ)
        W[s, 0] = y0 - b * c0 + g * cc0
        W[s, 1] = y1 - b * c1 + g * cc1
        W[s, 2] = y2 - b * c2 + g * cc2
        e0, e1, e2 = x1 * z2 - x2 * z1, x2 * z0 - x0 * z2, x0 * z1 - x1 * z0  # x × ẍ
        ee0, ee1, ee2 = x1 * e2 - x2 * e1, x2 * e0 - x0 * e2, x0 * e1 - x1 * e0  # x × (x × ẍ)
        d0, d1, d2 = y1 * c2 - y2 * c1, y2 * c0 - y0 * c2, y0 * c1 - y1 * c0  # ẋ × (x × ẋ)
        sd = x0 * y0 + x1 * y1 + x2 * y2
        WD[s, 0] = z0 - b * e0 + g * ee0 + g * d0 + sd * (-bp * c0 + gp * cc0)
        WD[s, 1] = z1 - b * e1 + g * ee1 + g * d1 + sd * (-bp * c1 + gp * cc1)
        WD[s, 2] = z2 - b * e2 + g * ee2 + g * d2 + sd * (-bp * c2 + gp * cc2)
