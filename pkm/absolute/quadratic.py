"""One engine for every joint: constraint rows that are quadratic forms in marker vectors.

In director coordinates each marker origin and marker axis is linear in the coordinates
(:mod:`pkm.absolute.markers`), and every joint of seeds 000, 001 and 002 is a sum of dot products
of such vectors — "at most quadratic", as seed 002 §4.3 puts it. So a joint between bodies i and
j is described by

* *attachments* ``x_a = A_a,i·Q_i + A_a,j·Q_j + x0_a`` (3-vectors; ``Q`` the 4×3 rows
  ``(φ, d₁, d₂, d₃)`` of a body, zero for the ground, whose vectors sit in the constant ``x0``);
* rows ``Φ_r(q, t) = Σ_ab K_r,ab(t) x_a·x_b + g_r(t)``.

Everything then follows in closed form (``S = K + Kᵀ``, dots for time derivatives, ``ẋ_a`` the
attachment velocities from ``q̇``):

* Jacobian: ``∂Φ_r/∂Q_β[k,:] = Σ_a A_a,β[k] (S_r x)_a``;
* ``Φ_t = Σ K̇ x·x + ġ``;
* acceleration bias, ``Φ_q q̈ = γ`` (seed 001 eqs. 25–26 with the digest's fix ``(C_q q̇)_q q̇``):
  ``γ = −[(Φ_q q̇)_q q̇ + 2 Φ_qt q̇ + Φ_tt] = −[Σ S ẋ·ẋ + 2 Σ Ṡ ẋ_a·x_b + Σ K̈ x·x + g̈]``.

Reaction wrenches. Multipliers enter the equations of motion as in seeds 001 (eq. 27) and 002
(eq. 1): ``M q̈ + Φ_qᵀ λ = f``, so the joint's generalized force on the coordinates is
``−Φ_qᵀ λ``. Its wrench on a body follows from ``P_int``: force ``f = F_φ`` and moment about the
centre of mass ``m = Σ_I d_I × F_{d_I}`` (seed 002 eq. 36); :meth:`QuadraticConstraint.reaction`
returns ``(m; f)`` in world axes about the joint point (the marker origin) on that body, so its
virtual work on a rigid virtual displacement ``(δθ; δp)`` of that point is ``−λᵀ Φ_q δq``.
"""
from __future__ import annotations

import numpy as np

from pkm.absolute.body import NQ, split
from pkm.absolute.checks import array, choice, number
from pkm.absolute.checks import name as checked_name
from pkm.absolute.markers import Marker
from pkm.errors import InputError

#: Where :meth:`QuadraticConstraint.reaction` takes moments: the marker origin on each body or the
#: body's centre of mass.
REACTION_POINTS = ("marker", "com")


def joint_name(joint, marker_i, marker_j, name: str | None) -> str:
    """The name of ``joint`` between the two markers, checked: both are Markers, not both on the
    ground, not on one body; ``name`` or ``"kind:body_i-body_j"``."""
    for side, m in (("marker_i", marker_i), ("marker_j", marker_j)):
        if not isinstance(m, Marker):
            raise InputError(f"{type(joint).__name__}: {side} must be a Marker, got {type(m).__name__}")
    if marker_i.body is None and marker_j.body is None:
        raise InputError(f"{type(joint).__name__}: both markers are on the ground")
    if marker_i.body is marker_j.body:
        raise InputError(f"{type(joint).__name__}: both markers are on body {marker_i.body.name!r}")
    if name is not None:
        return checked_name(name, f"{type(joint).__name__}: name")
    names = [m.body.name if m.body is not None else "ground" for m in (marker_i, marker_j)]
    return f"{joint.kind}:{names[0]}-{names[1]}"


def body_wrenches(Q, F, markers, about: str) -> tuple:
    """The wrenches (..., 6) = (moment; force), world axes, of the generalized forces ``F``
    (..., 2, 4, 3) on the two bodies at ``Q`` (..., 2, 4, 3): force ``F_φ``, moment
    ``Σ_I d_I × F_{d_I}`` about the centre of mass (seed 002 eq. 36), moved to the marker origin for
    ``about="marker"``; ``None`` for a ground side."""
    choice(about, "reaction about", REACTION_POINTS)
    out = []
    for side, marker in enumerate(markers):
        if marker.body is None:
            out.append(None)
            continue
        f = F[..., side, 0, :]
        moment = np.cross(Q[..., side, 1:, :], F[..., side, 1:, :]).sum(axis=-2)
        if about == "marker":
            arm = np.einsum("k,...kc->...c", marker.point_coefficients(), Q[..., side, :, :]) - Q[..., side, 0, :]
            moment = moment - np.cross(arm, f)
        out.append(np.concatenate([moment, f], axis=-1))
    return tuple(out)


class QuadraticConstraint:
    """Base class of the joints: rows ``Σ K_r,ab(t) x_a·x_b + g_r(t)`` over marker attachments.

    Subclasses declare attachments with :meth:`_point`, :meth:`_axis`, :meth:`_world`,
    :meth:`_sum` and rows with :meth:`_row`, then call :meth:`_finish`; rheonomic ones override
    :meth:`forms`.

    Evaluation methods take the two bodies' coordinates ``qi``, ``qj`` (..., 12) — ``None`` for a
    ground side — and return arrays with the same leading shape.
    """

    #: Short type name (subclasses set it).
    kind = "quadratic"
    #: Whether Φ depends on time.
    rheonomic = False

    def __init__(self, marker_i: Marker, marker_j: Marker, name: str | None = None):
        self.name = joint_name(self, marker_i, marker_j, name)
        self.marker_i, self.marker_j = marker_i, marker_j
        self._coef: list[np.ndarray] = []
        self._const: list[np.ndarray] = []
        self._terms: list[dict] = []
        self._g: list[float] = []
        self.row_names: tuple[str, ...] = ()

    # ------------------------------------------------------------------ declaring rows
    def _marker(self, side: int) -> Marker:
        return (self.marker_i, self.marker_j)[side]

    def _attach(self, coef: np.ndarray, const: np.ndarray) -> int:
        self._coef.append(np.asarray(coef, dtype=float))
        self._const.append(np.asarray(const, dtype=float))
        return len(self._coef) - 1

    def _point(self, side: int) -> int:
        """Attachment: origin of marker i (side 0) or j (side 1)."""
        m, coef = self._marker(side), np.zeros((2, 4))
        coef[side] = m.point_coefficients()
        return self._attach(coef, m.point_constant())

    def _axis(self, side: int, a: int) -> int:
        """Attachment: axis ``a`` (0, 1, 2 = x, y, z) of marker i (side 0) or j (side 1)."""
        m, coef = self._marker(side), np.zeros((2, 4))
        coef[side] = m.axis_coefficients(a)
        return self._attach(coef, m.axis_constant(a))

    def _world(self, vector) -> int:
        """Attachment: a constant world vector."""
        return self._attach(np.zeros((2, 4)), vector)

    def _sum(self, *terms: tuple[float, int]) -> int:
        """Attachment: ``Σ c x_a`` of earlier attachments (e.g. ``p_j − p_i``)."""
        coef = sum(c * self._coef[a] for c, a in terms)
        const = sum(c * self._const[a] for c, a in terms)
        return self._attach(coef, const)

    def _row(self, name: str, terms: dict[tuple[int, int], float], g: float = 0.0) -> None:
        """Row ``Σ_{(a,b)} c x_a·x_b + g``."""
        self._terms.append(dict(terms))
        self._g.append(float(g))
        self.row_names = self.row_names + (name,)

    def _finish(self) -> None:
        self._A = np.array(self._coef)          # (n, 2, 4)
        self._X0 = np.array(self._const)        # (n, 3)
        n, m = len(self._coef), len(self._terms)
        K = np.zeros((m, n, n))
        for r, terms in enumerate(self._terms):
            for (a, b), c in terms.items():
                K[r, a, b] += c
        self._K, self._g0 = K, np.array(self._g)
        self._zero_K, self._zero_g = np.zeros_like(K), np.zeros(m)

    # ------------------------------------------------------------------ the forms
    def forms(self, t: float = 0.0):
        """``(K, K̇, K̈, g, ġ, g̈)`` at time ``t``: K (m, n, n), g (m,). Scleronomic by default."""
        return self._K, self._zero_K, self._zero_K, self._g0, self._zero_g, self._zero_g

    @property
    def m(self) -> int:
        """Number of rows (DOF removed when independent)."""
        return len(self.row_names)

    @property
    def bodies(self):
        """``(body_i, body_j)``; ``None`` for the ground."""
        return self.marker_i.body, self.marker_j.body

    # ------------------------------------------------------------------ evaluation
    def _pair(self, qi, qj) -> np.ndarray:
        """``(..., 2, 4, 3)``: the two bodies' Q, zeros for a ground side."""
        for side, (q, body) in enumerate(zip((qi, qj), self.bodies)):
            if (q is None) != (body is None):
                what = "None (ground)" if body is None else f"the coordinates of {body.name!r}"
                raise InputError(f"{self.name}: side {'ij'[side]} needs {what}")
        Qs = [None if q is None else split(array(q, f"{self.name}: q{'ij'[side]}", (NQ,), batch=True))
              for side, q in enumerate((qi, qj))]
        shape = np.broadcast_shapes(*[Q.shape for Q in Qs if Q is not None])
        out = np.zeros(shape[:-2] + (2, 4, 3))
        for side, Q in enumerate(Qs):
            if Q is not None:
                out[..., side, :, :] = Q
        return out

    def attachments(self, qi, qj) -> np.ndarray:
        """World values of the attachments (..., n, 3)."""
        return np.einsum("abk,...bkc->...ac", self._A, self._pair(qi, qj)) + self._X0

    def _rates(self, qdi, qdj, like) -> np.ndarray:
        Qd = np.zeros(like.shape)
        for side, qd in enumerate((qdi, qdj)):
            if qd is not None and self.bodies[side] is not None:
                Qd[..., side, :, :] = split(array(qd, f"{self.name}: qd{'ij'[side]}", (NQ,), batch=True))
        return np.einsum("abk,...bkc->...ac", self._A, Qd)

    def phi(self, qi, qj, t: float = 0.0) -> np.ndarray:
        """``Φ(q, t)`` (..., m)."""
        K, _, _, g, _, _ = self.forms(number(t, "t"))
        X = self.attachments(qi, qj)
        return np.einsum("rab,...ac,...bc->...r", K, X, X) + g

    def phi_t(self, qi, qj, t: float = 0.0) -> np.ndarray:
        """``∂Φ/∂t`` (..., m); zero for scleronomic joints."""
        _, Kd, _, _, gd, _ = self.forms(number(t, "t"))
        X = self.attachments(qi, qj)
        return np.einsum("rab,...ac,...bc->...r", Kd, X, X) + gd

    def _jac_pair(self, Q, t) -> np.ndarray:
        K = self.forms(t)[0]
        X = np.einsum("abk,...bkc->...ac", self._A, Q) + self._X0
        SX = np.einsum("rab,...bc->...rac", K + np.swapaxes(K, 1, 2), X)
        J = np.einsum("abk,...rac->...rbkc", self._A, SX)
        return J.reshape(J.shape[:-4] + (self.m, 2, NQ))

    def jacobian(self, qi, qj, t: float = 0.0):
        """``(∂Φ/∂q_i, ∂Φ/∂q_j)``, each (..., m, 12), ``None`` for a ground side (analytic)."""
        J = self._jac_pair(self._pair(qi, qj), number(t, "t"))
        return tuple(None if b is None else J[..., side, :] for side, b in enumerate(self.bodies))

    def gamma(self, qi, qj, qdi, qdj, t: float = 0.0) -> np.ndarray:
        """Acceleration bias ``γ`` (..., m) with ``Φ_q q̈ = γ``:
        ``γ = −[(Φ_q q̇)_q q̇ + 2 Φ_qt q̇ + Φ_tt]`` (seed 001 eq. 26)."""
        K, Kd, Kdd, _, _, gdd = self.forms(number(t, "t"))
        Q = self._pair(qi, qj)
        X = np.einsum("abk,...bkc->...ac", self._A, Q) + self._X0
        Xd = self._rates(qdi, qdj, Q)
        S, Sd = K + np.swapaxes(K, 1, 2), Kd + np.swapaxes(Kd, 1, 2)
        return -(np.einsum("rab,...ac,...bc->...r", S, Xd, Xd)
                 + 2.0 * np.einsum("rab,...ac,...bc->...r", Sd, Xd, X)
                 + np.einsum("rab,...ac,...bc->...r", Kdd, X, X) + gdd)

    def reaction(self, qi, qj, lam, t: float = 0.0, about: str = "marker"):
        """Wrenches ``(W_i, W_j)`` (..., 6) = (moment; force) the joint exerts on bodies i and j
        for multipliers ``lam`` (..., m), world axes; ``None`` for a ground side.

        The generalized force is ``−Φ_qᵀ λ`` (``M q̈ + Φ_qᵀ λ = f``, seeds 001 eq. 27 and 002
        eq. 1). Moments are taken about the body's marker origin (``about="marker"``, the joint
        point) or its centre of mass (``"com"``). Where the two markers coincide the wrenches are
        equal and opposite (``W_i = −W_j``), because Φ is invariant under rigid motions of the pair.
        """
        choice(about, "reaction about", REACTION_POINTS)
        Q = self._pair(qi, qj)
        J = self._jac_pair(Q, number(t, "t"))
        F = -np.einsum("...r,...rbq->...bq", array(lam, f"{self.name}: lam", (self.m,), batch=True), J)
        return body_wrenches(Q, F.reshape(F.shape[:-1] + (4, 3)), (self.marker_i, self.marker_j), about)

    # ------------------------------------------------------------------ false zeros
    def marker_poses(self, qi, qj) -> tuple[np.ndarray, np.ndarray]:
        """World poses (4×4) of marker i and marker j for one configuration (ground: fixed)."""
        return self.marker_i.world_pose(qi), self.marker_j.world_pose(qj)

    def false_zero(self, qi, qj, t: float = 0.0) -> str | None:
        """Whether the rows hold at a configuration the joint does not allow — a *false zero* of the
        director form (its dot-product rows vanish for axes turned by 180° as well, e.g. a
        revolute's ``z_i·x_j = z_i·y_j = 0`` for ``z_j = −z_i``): a short description of the
        false configuration (e.g. ``"its markers' z axes point apart (z_i·z_j = -1; …)"``), or ``None``. Only
        meaningful where the rows are (nearly) zero, i.e. after an assembly. None here: the base
        class has no such set (spherical, distance and universal rows only vanish where the joint
        holds)."""
        return None

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, m={self.m})"
