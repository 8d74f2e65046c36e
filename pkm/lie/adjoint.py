"""Adjoint and co-adjoint operators: Ad_C, Ad_C⁻¹, ad_X, ad_Xᵀ and their allocation-free ``*_apply_into`` forms (paper eq. 157–168)."""
import numpy as np

from pkm.lie.options import _jit, _jit_inline
from pkm.lie.series import _fill3


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
    frame, e.g. from body c to its parent with ``C = T_c`` (``Ad_{C_{c,p}}ᵀ = Ad_{T_c}⁻ᵀ``, paper Sec. 6.2, eq. 100–101, App. B);
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
