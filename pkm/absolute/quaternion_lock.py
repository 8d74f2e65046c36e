"""Seed 001's lock as the seed writes it: rotation rows from the quaternion of the relative rotation.

Tasora & Righettini's lock between marker P (on body O1, side i) and marker S (on body O2, side j)
has six rows (eq. 72), any subset of which is one of the 2⁶ = 64 variants of §6 (the empty one is
refused: a joint without rows):

* translation (eqs. 28–29): ``C_x = Λ_Sᵀ Λ_O2ᵀ ((x_O1 + Λ_O1 u_P) − (x_O2 + Λ_O2 u_S)) − q_Δ(t)``;
* rotation (eqs. 47–49, 72): the vector part of ``c = q_Δ* ⊗ q_S* ⊗ q_O2* ⊗ q_O1 ⊗ q_P``,
  the error quaternion of the relative rotation of P w.r.t. S (eq. 48) against the law ``q_Δ(t)``.

Rheonomic: the laws ``q_Δ(t)`` (``translation``) and ``q_θΔ(t)`` (``rotation``) of the relative
motion, and the markers' own motion on their bodies (§5, eqs. 29–32, 51: ``u_P(t)``, ``q_P(t)``,
``u_S(t)``, ``q_S(t)``): ``p_translation``/``p_rotation`` move P, ``s_translation``/``s_rotation``
move S, in the marker's rest axes (``u = ϱ + A x(t)``, axes ``A R(t)``). Laws are those of
:mod:`pkm.absolute.laws`.

Coordinates. The bodies are pkm's director bodies (12 coordinates), not the seed's 7 (position
and Euler parameters): the lock must live in :class:`~pkm.absolute.system.System` beside every
other joint, with its constant mass matrix, internal constraints, assembly and simulation, and
quaternion coordinates would need a second System (configuration-dependent ``4GᵀJ'G`` mass
matrix, unit-norm rows). So each body's quaternion ``q_O`` is computed from its directors: the
quaternion of their nearest rotation (the polar factor, :func:`pkm.absolute.quaternion.frame_rotation`),
which is the body's rotation on the manifold and a smooth function of the coordinates off it;
``Λ_O`` in the translation rows is the director matrix D itself (equal on the manifold; it keeps
those rows bilinear). Jacobians then follow the seed's quaternion algebra:

* ``∂c/∂q_O1 = [q_Δ* ⊗ q_S* ⊗ q_O2*]⁺ [q_P]⁻`` (eq. 67), ``∂c/∂q_O2 = [q_Δ* ⊗ q_S*]⁺ [q_O1 ⊗ q_P]⁻ χ``
  (eq. 69), times ``∂q_O/∂q = ½ [q_O]⁻ (0; ∂θ/∂q)`` (eq. 21 with the frame's rotation Jacobian);
* γ (eq. 26, ``γ = −[(Φ_q q̇)_q q̇ + 2 Φ_qt q̇ + Φ_tt]``) as the seed's expansion of ``c̈``
  (eqs. 52–53, its "60 products": every factor's second derivative, twice every pair of first
  derivatives) along ``q + s q̇, t + s``, with ``q̈_O = ½ (0, α) ⊗ q_O − ¼|ω|² q_O`` (eq. 22 corrected)
  and ``α`` the frame's angular acceleration along that line; ``Φ_t`` from eqs. 32 and 51.

Hemisphere. ``q`` and ``−q`` are one rotation, and the body quaternions' signs are arbitrary here
(Shepperd's method); the rows are ``σ vec(c)`` with ``σ = sign(c₀)`` (``c₀ ≥ 0``: the error
rotation's angle ϑ ∈ [0, π], ``vec = n sin(ϑ/2)``). A 360° turn is the identity again (rows 0, as
it should be). At ``c₀ = 0`` (ϑ = 180°) the sign flips: rows and Jacobian change sign together, which
leaves the zero set, Newton steps and constrained accelerations unchanged (only a multiplier's sign).

What it buys. ``vec(c) = 0`` only where c = ±1, the prescribed relative rotation: every mask's
rotation rows vanish where the seed says and nowhere else, so there are no false zeros
(:meth:`false_zero` is always ``None``). The director rows of :class:`~pkm.absolute.lock.Lock`
are ``2 c₀ vec(c) = sin ϑ n``, zero at a weld turned by 180°; here they are ``n``, |Φ| = 1.

The caveat (the digest's, seed 001 §2.5): ``∂vec(c)/∂θ = ½ (c₀ I + vec(c)~)`` loses rank at
``c₀ = 0`` — at 180° from the target the rows are O(1) but the Jacobian has rank 2 in the three
rotation directions (the error axis n is missing: the residual is at its maximum along n). What to
expect: Newton (:meth:`System.assemble`) started near 180° takes a long step (``Δϑ ≈ −2 tan(ϑ/2)``)
and either reaches the true configuration or stops with :class:`~pkm.absolute.system.AssemblyError`;
it cannot converge to the half turn, whose residual is 1. Started exactly there it makes no
rotational progress and ends in that error. Near the solution (``c₀ ≈ 1``) the rows are regular.

Not for: the energy–momentum and generalized-α schemes (seed 002), which need constraints at most
quadratic in q (:class:`~pkm.absolute.hessian.ConstraintHessian` refuses this joint); one
configuration per call (no batches). Cost: 4–10× the director lock's Φ + Jacobian + γ (quaternion
algebra at the Python level and a 3×3 SVD per body; :meth:`evaluate` does the three in one pass,
``benchmarks/bench_quaternion_lock.py``). Multipliers: near zero error a rotation row is half the
rotation angle, so its multiplier is twice the torque (the director lock's rows are the angle).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from pkm.absolute.body import NQ, split
from pkm.absolute.checks import array, function, number
from pkm.absolute.lock import LOCK_ROWS, law_values, mask_rows
from pkm.absolute.markers import Marker
from pkm.absolute.quadratic import body_wrenches, joint_name
from pkm.absolute.quaternion import CHI, ONE, conj, from_matrix, frame_rotation, law_rates, minus, mul, plus, pure
from pkm.errors import InputError

_Z3 = np.zeros(3)
_STILL_T = (_Z3, _Z3, _Z3)
_STILL_R = (np.eye(3), _Z3, _Z3)


def _hat(w) -> np.ndarray:
    return np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])


def _chain(f, f1, f2=None):
    """``(c, ċ, c̈)`` of ``c = f₀ ⊗ … ⊗ f₄`` with factor rates ``f1`` (and ``f2``): the seed's expansion
    of ``C̈`` (eqs. 52–53, every factor's second derivative and twice every pair of first ones)
    accumulated factor by factor, ``(P ⊗ f)'' = P'' ⊗ f + 2 P' ⊗ f' + P ⊗ f''``; ``c̈`` is None
    without ``f2``."""
    c, d1 = f[0], f1[0]
    d2 = None if f2 is None else f2[0]
    for k in range(1, len(f)):
        Pc, Pd1 = plus(c), plus(d1)
        if f2 is not None:
            d2 = plus(d2) @ f[k] + 2.0 * Pd1 @ f1[k] + Pc @ f2[k]
        d1 = Pd1 @ f[k] + Pc @ f1[k]
        c = Pc @ f[k]
    return c, d1, d2


def _rotation_law(law, lock, kind: str, t: float):
    """``(R, ω, ω̇)`` of a rotation law at ``t``, checked: R a rotation (to 1e-6), else one line."""
    R, w, wd = law_values(law(t), lock.name, kind, (3, 3), t)
    if np.max(np.abs(R.T @ R - np.eye(3))) > 1e-6 or np.linalg.det(R) < 0.0:
        raise InputError(f"{lock.name}: the {kind} law at t = {t:g} must return a rotation matrix (orthonormal, "
                         f"det +1)")
    return R, w, wd


class _Side:
    """One marker and its body at (q, q̇, t): the quantities of eqs. 29–32 and 48–51."""

    def __init__(self, lock, side: int, q, qd, t: float, rates: bool):
        marker = (lock.marker_i, lock.marker_j)[side]
        body = marker.body
        tag = "ij"[side]
        if (q is None) != (body is None):
            raise InputError(f"{lock.name}: side {tag} needs "
                             + ("None (ground)" if body is None else f"the coordinates of {body.name!r}"))
        self.body = body
        if body is None:
            self.D, self.phi, self.Dd, self.phid = np.eye(3), _Z3, np.zeros((3, 3)), _Z3
            self.q, self.J, self.w, self.a = ONE, None, _Z3, _Z3
        else:
            Q = split(array(q, f"{lock.name}: q{tag}", (NQ,)))
            self.D, self.phi = Q[1:].T, Q[0]
            if rates:
                Qd = split(array(qd, f"{lock.name}: qd{tag}", (NQ,)))
                self.Dd, self.phid = Qd[1:].T, Qd[0]
            R, self.J, self.w, self.a = frame_rotation(self.D, self.Dd if rates else None,
                                                       f"{lock.name}: directors of body {body.name!r}")
            self.q = from_matrix(R)
        xlaw, rlaw = lock.marker_laws[side]
        x, xd, xdd = _STILL_T if xlaw is None else law_values(xlaw(t), lock.name, f"marker {tag} translation", (3,), t)
        Rm, wm, wmd = _STILL_R if rlaw is None else _rotation_law(rlaw, lock, f"marker {tag} rotation", t)
        A = marker.axes
        self.u, self.ud, self.udd = marker.origin + A @ x, A @ xd, A @ xdd
        self.B = A @ Rm                                   # marker axes in body (director) components
        W = _hat(wm)
        self.Bd, self.Bdd = self.B @ W, self.B @ (W @ W + _hat(wmd))
        qm, qmd, qmdd = (ONE, np.zeros(4), np.zeros(4)) if rlaw is None else law_rates(Rm, wm, wmd)
        qA = lock._marker_q[side]
        self.qm, self.qmd, self.qmdd = mul(qA, qm), mul(qA, qmd), mul(qA, qmdd)

    def body_rates(self) -> tuple[np.ndarray, np.ndarray]:
        """``(q̇_O, q̈_O)`` along ``q + s q̇``: eq. 21 and eq. 22 with its ``−¼|ω|² q`` term."""
        if self.body is None:
            return np.zeros(4), np.zeros(4)
        return 0.5 * minus(self.q) @ pure(self.w), 0.5 * minus(self.q) @ pure(self.a) - 0.25 * float(self.w @ self.w) * self.q

    def dq_dcoordinates(self) -> np.ndarray:
        """``∂q_O/∂q`` (4×12): ``½ [q_O]⁻ (0; δθ)`` with ``δθ = J δd`` (eq. 21)."""
        out = np.zeros((4, NQ))
        out[:, 3:] = 0.5 * minus(self.q)[:, 1:] @ self.J
        return out


class QuaternionLock:
    """Seed 001's lock between marker P (``marker_p``, side i) and marker S (``marker_s``, side j)
    with quaternion rotation rows (module doc).

    Parameters
    ----------
    mask:
        A name from :data:`~pkm.absolute.lock.LOCK_MASKS`, row names from
        :data:`~pkm.absolute.lock.LOCK_ROWS`, or 6 booleans (one of the 63 non-empty variants).
    translation, rotation:
        Laws of the relative motion ``q_Δ(t)``, ``q_θΔ(t)`` (in S axes).
    p_translation, p_rotation, s_translation, s_rotation:
        Laws of the markers' own motion on their bodies, in their rest axes.
    """

    kind = "qlock"

    def __init__(self, marker_p: Marker, marker_s: Marker, mask: str | Sequence = "weld", *,
                 translation=None, rotation=None, p_translation=None, p_rotation=None,
                 s_translation=None, s_rotation=None, name: str | None = None):
        rows = mask_rows(mask)
        laws = dict(translation=translation, rotation=rotation, p_translation=p_translation,
                    p_rotation=p_rotation, s_translation=s_translation, s_rotation=s_rotation)
        for key, law in laws.items():
            function(law, f"QuaternionLock {key} (a law t -> (value, rate, acceleration))")
        self.name = joint_name(self, marker_p, marker_s, name)
        self.marker_i, self.marker_j = marker_p, marker_s
        self.mask = self.row_names = tuple(LOCK_ROWS[r] for r in rows)
        self._rows = np.array(rows)
        self.translation, self.rotation = translation, rotation
        self.marker_laws = ((p_translation, p_rotation), (s_translation, s_rotation))
        self.rheonomic = any(law is not None for law in laws.values())
        self._marker_q = tuple(from_matrix(m.axes) for m in (marker_p, marker_s))

    @property
    def m(self) -> int:
        """Number of rows."""
        return len(self.row_names)

    @property
    def bodies(self):
        """``(body of P, body of S)``; ``None`` for the ground."""
        return self.marker_i.body, self.marker_j.body

    # ------------------------------------------------------------------ the six rows
    def _evaluate(self, qi, qj, qdi=None, qdj=None, t: float = 0.0, jacobian: bool = False, rates: bool = False):
        """All six rows' ``(Φ, Φ_t, (J_i, J_j), γ, σc)`` at one configuration (J, γ only when asked)."""
        t = number(t, "t")
        P, S = _Side(self, 0, qi, qdi, t, rates), _Side(self, 1, qj, qdj, t, rates)
        xl = _STILL_T if self.translation is None else law_values(self.translation(t), self.name, "translation", (3,), t)
        Rl = _STILL_R if self.rotation is None else _rotation_law(self.rotation, self, "rotation", t)
        phi, phi_t, gamma = np.zeros(6), np.zeros(6), np.zeros(6)
        # translation (eqs. 29, 32; Λ_S = B, Λ_O = D)
        r = P.phi + P.D @ P.u - S.phi - S.D @ S.u
        w = S.D.T @ r
        phi[:3] = S.B.T @ w - xl[0]
        phi_t[:3] = S.Bd.T @ w + S.B.T @ (S.D.T @ (P.D @ P.ud - S.D @ S.ud)) - xl[1]
        # rotation (eq. 49): c = q_Δ* ⊗ q_S* ⊗ q_O2* ⊗ q_O1 ⊗ q_P
        qD, qDd, qDdd = (ONE, np.zeros(4), np.zeros(4)) if self.rotation is None else law_rates(*Rl)
        f = [conj(qD), conj(S.qm), conj(S.q), P.q, P.qm]
        ft = [conj(qDd), conj(S.qmd), np.zeros(4), np.zeros(4), P.qmd]   # ∂/∂t of the factors (eq. 51)
        c, ct, _ = _chain(f, ft)
        sigma = 1.0 if c[0] >= 0.0 else -1.0
        phi[3:] = sigma * c[1:]
        phi_t[3:] = sigma * ct[1:]
        J = None
        if jacobian:
            T = S.B.T @ S.D.T
            J = [None if side.body is None else np.zeros((6, NQ)) for side in (P, S)]
            if P.body is not None:
                J[0][:3] = np.hstack([T, P.u[0] * T, P.u[1] * T, P.u[2] * T])
                J[0][3:] = sigma * (plus(mul(*f[:3])) @ minus(f[4]) @ P.dq_dcoordinates())[1:]       # eq. 67
            if S.body is not None:
                J[1][:3, :3] = -T
                for I in range(3):
                    J[1][:3, 3 + 3 * I:6 + 3 * I] = np.outer(S.B[I], r) - S.u[I] * T
                J[1][3:] = sigma * (plus(mul(*f[:2])) @ minus(mul(*f[3:])) @ CHI @ S.dq_dcoordinates())[1:]  # eq. 69
        if rates:
            rd = P.phid + P.Dd @ P.u + P.D @ P.ud - S.phid - S.Dd @ S.u - S.D @ S.ud
            rdd = 2.0 * P.Dd @ P.ud + P.D @ P.udd - 2.0 * S.Dd @ S.ud - S.D @ S.udd
            wd = S.Dd.T @ r + S.D.T @ rd
            wdd = 2.0 * S.Dd.T @ rd + S.D.T @ rdd
            gamma[:3] = -(S.Bdd.T @ w + 2.0 * S.Bd.T @ wd + S.B.T @ wdd - xl[2])
            (qSd, qSdd), (qPd, qPdd) = S.body_rates(), P.body_rates()
            f1 = [conj(qDd), conj(S.qmd), conj(qSd), qPd, P.qmd]           # d/ds along (q + s q̇, t + s)
            f2 = [conj(qDdd), conj(S.qmdd), conj(qSdd), qPdd, P.qmdd]
            cdd = _chain(f, f1, f2)[2]
            gamma[3:] = -sigma * cdd[1:]
        return phi, phi_t, J, gamma, sigma * c

    # ------------------------------------------------------------------ the joint interface (System)
    def phi(self, qi, qj, t: float = 0.0) -> np.ndarray:
        """``Φ(q, t)`` (m,)."""
        return self._evaluate(qi, qj, t=t)[0][self._rows]

    def phi_t(self, qi, qj, t: float = 0.0) -> np.ndarray:
        """``∂Φ/∂t`` (m,); zero for a scleronomic lock."""
        return self._evaluate(qi, qj, t=t)[1][self._rows]

    def jacobian(self, qi, qj, t: float = 0.0):
        """``(∂Φ/∂q_i, ∂Φ/∂q_j)``, each (m, 12), ``None`` for a ground side."""
        J = self._evaluate(qi, qj, t=t, jacobian=True)[2]
        return tuple(None if Jb is None else Jb[self._rows] for Jb in J)

    def gamma(self, qi, qj, qdi, qdj, t: float = 0.0) -> np.ndarray:
        """``γ`` (m,) with ``Φ_q q̈ = γ`` (seed 001 eq. 26)."""
        return self._evaluate(qi, qj, qdi, qdj, t, rates=True)[3][self._rows]

    def evaluate(self, qi, qj, qdi, qdj, t: float = 0.0):
        """``(Φ, (J_i, J_j), γ)`` in one pass (the seed's "compute the lock once, paste the rows")."""
        phi, _, J, gamma, _ = self._evaluate(qi, qj, qdi, qdj, t, jacobian=True, rates=True)
        return phi[self._rows], tuple(None if Jb is None else Jb[self._rows] for Jb in J), gamma[self._rows]

    def reaction(self, qi, qj, lam, t: float = 0.0, about: str = "marker"):
        """Wrenches ``(W_i, W_j)`` (6,) = (moment; force) on the two bodies for multipliers ``lam``
        (m,), from the generalized force ``−Φ_qᵀλ`` (as
        :meth:`~pkm.absolute.quadratic.QuadraticConstraint.reaction`); ``None`` for the ground."""
        lam = array(lam, f"{self.name}: lam", (self.m,))
        J = self.jacobian(qi, qj, t)
        Q = np.zeros((2, 4, 3))
        F = np.zeros((2, 4, 3))
        for side, (q, Jb) in enumerate(zip((qi, qj), J)):
            if Jb is not None:
                Q[side] = split(np.asarray(q, dtype=float))
                F[side] = (-Jb.T @ lam).reshape(4, 3)
        return body_wrenches(Q, F, (self.marker_i, self.marker_j), about)

    def false_zero(self, qi, qj, t: float = 0.0) -> None:
        """Always ``None``: the quaternion rows vanish only at the prescribed relative rotation."""
        return None

    def error_quaternion(self, qi, qj, t: float = 0.0) -> np.ndarray:
        """``σ c`` (4,): the error quaternion ``q_Δ* ⊗ q_rel`` in the hemisphere ``c₀ ≥ 0``; its
        vector part holds the rotation rows."""
        return self._evaluate(qi, qj, t=t)[4]

    def __repr__(self) -> str:
        return f"QuaternionLock({self.name!r}, mask={self.mask})"
