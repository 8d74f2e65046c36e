"""The differential of the exponential, dexp and dexp⁻¹ on SO(3) and SE(3) (paper eq. 7, 169–175)."""
import numpy as np

from pkm.lie.options import _jit
from pkm.lie.series import _alpha, _coeffs, _fill3, _fill_D, _norm3


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
