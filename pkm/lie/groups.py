"""SO(3) and SE(3): skew/hat/vee, exponential and logarithm, inverse and product of poses (paper eq. 145–156)."""
import numpy as np

from pkm.lie.options import _jit, _jit_inline
from pkm.lie.series import _alpha, _coeffs, _fill3, _norm3


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
    (paper App. A, eq. 152, App. A).

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
    (Rodrigues, paper App. A, eq. 146–147, App. A).  Series near φ = 0.

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
    (paper App. A, eq. 146–147, App. A).  For a screw X = θY (eq. 148) this is the joint motion.

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
