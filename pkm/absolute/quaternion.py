"""Quaternion algebra of seed 001 (Tasora & Righettini) and the rotation of a director frame.

Quaternions are arrays ``(q₀, q₁, q₂, q₃)`` (scalar first, seed 001 eq. 5). The product is written
with the seed's 4×4 matrices (eqs. 55–58): ``a ⊗ b = [a]⁺ b = [b]⁻ a``; the conjugate is
``q* = χ q`` with ``χ = diag(1, −1, −1, −1)`` (eqs. 61–62). A unit quaternion rotates by eq. 3
(printed with a typo in element (2, 1): ``2(q₁q₂ + q₀q₃)``, as the digest notes); its rate is
``q̇ = ½ (0, ω) ⊗ q`` with ω in world axes (eq. 21) and its second derivative
``q̈ = ½ (0, α) ⊗ q − ¼|ω|² q`` — seed 001's eq. 22 omits the second term.

Director bodies (:mod:`pkm.absolute.body`) carry a rotation only on the manifold. Off it, the
rotation used here is the nearest one, the polar factor ``R`` of ``D = R H`` (``D = [d₁ d₂ d₃]``,
``H`` symmetric): a smooth function of the directors wherever ``tr(H) I − H`` is regular (any
director frame of rank ≥ 2 with ``det D > 0``). :func:`frame_rotation` returns ``R`` with its
world rotation Jacobian and the angular velocity and acceleration along a straight line of the
directors (the ``q̈ = 0`` path of the acceleration bias γ):

* ``Rᵀ δD`` splits into ``Ω H + δH`` with ``Ω = Rᵀ δR = ŵ``; its skew part gives
  ``(tr(H) I − H) w = vee(Rᵀ δD − δDᵀ R)`` (``Ω H + H Ω = ((tr H) I − H) w`` hat, H symmetric);
  world ``δθ = R w``, which on the manifold (H = I) is ``½ Σ d_I × δd_I``;
* along ``D(s) = D + s Ḋ``: ``(Ω² + Ω̇) H + 2 Ω Ḣ + Ḧ = 0`` with ``Ḣ = Rᵀ Ḋ − Ω H``; its skew
  part gives ``(tr(H) I − H) ẇ = −vee(Y − Yᵀ)``, ``Y = Ω² H + 2 Ω Ḣ``; world ``α = R ẇ``.
"""
from __future__ import annotations

import numpy as np

from pkm.errors import SingularityError

#: ``χ`` of seed 001 eq. 62: ``q* = χ q``.
CHI = np.diag([1.0, -1.0, -1.0, -1.0])
#: The identity rotation (seed 001's ``q_Re = {1, 0, 0, 0}``, eq. 47).
ONE = np.array([1.0, 0.0, 0.0, 0.0])

_LEVI = np.zeros((3, 3, 3))
for _i, _j, _k in ((0, 1, 2), (1, 2, 0), (2, 0, 1)):
    _LEVI[_i, _j, _k], _LEVI[_i, _k, _j] = 1.0, -1.0
_LEVI_9 = _LEVI.reshape(9, 3)


def _tensor(matrix) -> np.ndarray:
    """``T`` (4, 4, 4) with ``matrix(q) = T @ q`` for a matrix linear in q."""
    return np.stack([matrix(e) for e in np.eye(4)], axis=-1)


def plus(q) -> np.ndarray:
    """``[q]⁺`` (seed 001 eq. 56): ``q ⊗ p = [q]⁺ p``."""
    return _PLUS @ q


def minus(q) -> np.ndarray:
    """``[q]⁻`` (seed 001 eq. 58): ``p ⊗ q = [q]⁻ p``."""
    return _MINUS @ q


def _plus(q):
    q0, q1, q2, q3 = q
    return np.array([[q0, -q1, -q2, -q3], [q1, q0, -q3, q2], [q2, q3, q0, -q1], [q3, -q2, q1, q0]])


def _minus(q):
    q0, q1, q2, q3 = q
    return np.array([[q0, -q1, -q2, -q3], [q1, q0, q3, -q2], [q2, -q3, q0, q1], [q3, q2, -q1, q0]])


_PLUS, _MINUS = _tensor(_plus), _tensor(_minus)


def mul(*qs) -> np.ndarray:
    """``q₁ ⊗ q₂ ⊗ …`` (seed 001 eq. 10; associative, eq. 19)."""
    out = qs[0]
    for q in qs[1:]:
        out = (_PLUS @ out) @ q
    return out


def conj(q) -> np.ndarray:
    """``q* = χ q`` (seed 001 eqs. 7, 61)."""
    return CHI @ q


def pure(v) -> np.ndarray:
    """The pure quaternion ``(0, v)``."""
    return np.concatenate([[0.0], v])


def to_matrix(q) -> np.ndarray:
    """The rotation matrix of the unit quaternion ``q`` (seed 001 eq. 3, element (2, 1) corrected)."""
    q0, q1, q2, q3 = q
    return 2.0 * np.array([[q0 * q0 + q1 * q1 - 0.5, q1 * q2 - q0 * q3, q1 * q3 + q0 * q2],
                           [q1 * q2 + q0 * q3, q0 * q0 + q2 * q2 - 0.5, q2 * q3 - q0 * q1],
                           [q1 * q3 - q0 * q2, q2 * q3 + q0 * q1, q0 * q0 + q3 * q3 - 0.5]])


def from_matrix(R) -> np.ndarray:
    """A unit quaternion of the rotation ``R`` (Shepperd's method: the largest of ``4q_k²`` first, so
    no cancellation at any angle). Its sign is whichever the method gives: ``q`` and ``−q`` are the
    same rotation, and every caller here fixes the hemisphere it needs."""
    tr = R[0, 0] + R[1, 1] + R[2, 2]
    k = int(np.argmax([tr, R[0, 0], R[1, 1], R[2, 2]]))
    if k == 0:
        s = 2.0 * np.sqrt(max(1.0 + tr, 0.0))
        q = np.array([0.25 * s, (R[2, 1] - R[1, 2]) / s, (R[0, 2] - R[2, 0]) / s, (R[1, 0] - R[0, 1]) / s])
    elif k == 1:
        s = 2.0 * np.sqrt(max(1.0 + R[0, 0] - R[1, 1] - R[2, 2], 0.0))
        q = np.array([(R[2, 1] - R[1, 2]) / s, 0.25 * s, (R[0, 1] + R[1, 0]) / s, (R[0, 2] + R[2, 0]) / s])
    elif k == 2:
        s = 2.0 * np.sqrt(max(1.0 - R[0, 0] + R[1, 1] - R[2, 2], 0.0))
        q = np.array([(R[0, 2] - R[2, 0]) / s, (R[0, 1] + R[1, 0]) / s, 0.25 * s, (R[1, 2] + R[2, 1]) / s])
    else:
        s = 2.0 * np.sqrt(max(1.0 - R[0, 0] - R[1, 1] + R[2, 2], 0.0))
        q = np.array([(R[1, 0] - R[0, 1]) / s, (R[0, 2] + R[2, 0]) / s, (R[1, 2] + R[2, 1]) / s, 0.25 * s])
    return q / np.linalg.norm(q)


def law_rates(R, w, wd) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(q, q̇, q̈)`` of a rotation law ``(R, ω, ω̇)`` with body-fixed ω (``Ṙ = R ω̂``,
    :mod:`pkm.absolute.laws`): ``q̇ = ½ q ⊗ (0, ω)``, ``q̈ = ½ q ⊗ (0, ω̇) − ¼|ω|² q``."""
    q = from_matrix(R)
    return q, 0.5 * minus(pure(w)) @ q, 0.5 * minus(pure(wd)) @ q - 0.25 * float(w @ w) * q


def _vee_antisym(X) -> np.ndarray:
    """``vee(X − Xᵀ)``."""
    return np.array([X[2, 1] - X[1, 2], X[0, 2] - X[2, 0], X[1, 0] - X[0, 1]])


def frame_rotation(D, Dd=None, what: str = "directors"):
    """The polar factor ``R`` of the director matrix ``D`` (columns ``d_I``) and its derivatives.

    Returns ``(R, J, ω, α)``: ``J`` (3×9) maps ``δd = (δd₁, δd₂, δd₃)`` to the world rotation
    ``δθ`` of ``R``; with ``Dd``, ``ω = J ḋ`` and ``α`` the angular acceleration of ``R`` along
    ``D + s Ḋ`` (module doc); ``None`` without. A frame whose nearest rotation is not
    differentiable (rank < 2, or two singular values of opposite signs summing to zero) is a
    :class:`~pkm.errors.SingularityError`."""
    U, s, Vt = np.linalg.svd(D)
    det = (D[0, 0] * (D[1, 1] * D[2, 2] - D[1, 2] * D[2, 1]) - D[0, 1] * (D[1, 0] * D[2, 2] - D[1, 2] * D[2, 0])
           + D[0, 2] * (D[1, 0] * D[2, 1] - D[1, 1] * D[2, 0]))
    sign = 1.0 if det > 0.0 else -1.0
    R = (U * np.array([1.0, 1.0, sign])) @ Vt
    h = s * np.array([1.0, 1.0, sign])           # eigenvalues of H = Rᵀ D
    k = h.sum() - h                               # eigenvalues of tr(H) I − H
    if not np.min(np.abs(k)) > 1e-9 * max(1.0, float(np.max(np.abs(h)))):
        raise SingularityError(f"the {what} are degenerate (singular values {s[0]:.3g}, {s[1]:.3g}, {s[2]:.3g}): "
                               f"their nearest rotation has no derivative there", condition=np.inf)
    H = R.T @ D
    H = 0.5 * (H + H.T)
    K = np.trace(H) * np.eye(3) - H
    Kinv = (Vt.T / k) @ Vt                        # H = Vᵀdiag(h)V → K⁻¹ in the same basis
    M = (_LEVI_9 @ R.T).reshape(3, 9)                     # vee(Rᵀ δD − δDᵀ R) = M δd
    J = R @ Kinv @ M
    if Dd is None:
        return R, J, None, None
    w = Kinv @ _vee_antisym(R.T @ Dd)
    W = np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])
    Hd = R.T @ Dd - W @ H
    Y = W @ W @ H + 2.0 * W @ Hd
    wd = -np.linalg.solve(K, _vee_antisym(Y))
    return R, J, R @ w, R @ wd
