"""A rigid body in director (absolute) coordinates ``q = (φ, d₁, d₂, d₃) ∈ R¹²`` (seed 002 §3.1).

``φ`` is the centre of mass, ``d_I`` the body axes ("directors") resolved in the world frame, so a
material point with body coordinates ``X`` (relative to the centre of mass, along the body axes)
is at ``x = φ + X_I d_I`` (seed 002 eq. 16). Rigidity is six quadratic *internal* constraints,
``Φ_int = [½(d₁·d₁−1), ½(d₂·d₂−1), ½(d₃·d₃−1), d₁·d₂, d₁·d₃, d₂·d₃]`` (eq. 24), and the kinetic
energy ``T = ½ m|φ̇|² + ½ E_IJ ḋ_I·ḋ_J`` (eq. 17) gives a *constant* mass matrix (eq. 23).

Body axes. Seed 002 takes the body axes along the principal axes, so the Euler tensor
``E = ½ tr(J) I − J`` (eqs. 20, 158) is diagonal and ``M = diag(m I, E₁ I, E₂ I, E₃ I)``. pkm's
bodies keep the axes of their robot-file frame, so here ``E`` is a full symmetric 3×3 and the
director blocks are ``E_IJ I`` — the same energy, still constant (``M = blockdiag(m I, E ⊗ I₃)``).
``E`` is only positive *semi*-definite for a slender rod or a thin plate (``E_I = ½(J_J + J_K −
J_I)`` can be 0); then ``M`` is singular although the reduced mass ``P_intᵀ M P_int =
diag(J, m I)`` is not (seed 002 eq. 33).

Twists follow pkm's convention, angular part first. The twist the null space of the internal
constraints is built on is seed 002's ``t = (v_φ; ω)`` (eq. 26) **reordered** to ``(ω; v_φ)``:
``ω`` the angular velocity in world axes and ``v_φ = φ̇`` the velocity of the centre of mass, so
``q̇ = P_int t`` with ``P_int = [[0, I], [−d̂₁, 0], [−d̂₂, 0], [−d̂₃, 0]]`` (eq. 29, columns
swapped). :meth:`Body.velocity` and :meth:`Body.twist` also convert to pkm's body-fixed
(``hat(V) = C⁻¹Ċ``) and spatial (``ĊC⁻¹``) twists of the body *frame* (pose ``C``, whose origin
need not be the centre of mass).

Every function takes arrays with any leading batch shape: ``q`` (..., 12), poses (..., 4, 4),
twists (..., 6).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from pkm.absolute.checks import MASS_RANGE, MAX_LENGTH, MAX_VALUE, array, choice, name, number
from pkm.description.inertia import inertia_problem
from pkm.errors import InputError

#: Coordinates of one body and internal constraints per body.
NQ = 12
NINT = 6
#: Labels of the internal constraint rows (seed 002 eq. 24).
INTERNAL_ROWS = ("d1.d1", "d2.d2", "d3.d3", "d1.d2", "d1.d3", "d2.d3")
#: The (I, J) director pairs of the internal rows.
_PAIRS = ((0, 0), (1, 1), (2, 2), (0, 1), (0, 2), (1, 2))
#: Frames a twist may be given in: pkm's body-fixed and spatial twists of the body frame, or
#: ``"com"``: (ω in world axes; velocity of the centre of mass) — seed 002's t, reordered.
TWIST_FRAMES = ("body", "spatial", "com")


# ====================================================================== small array helpers
def skew(x) -> np.ndarray:
    """``skew(x) @ y == x × y`` for any batch of 3-vectors ``x`` (..., 3) → (..., 3, 3)."""
    x = np.asarray(x, dtype=float)
    out = np.zeros(x.shape + (3,))
    out[..., 0, 1], out[..., 0, 2] = -x[..., 2], x[..., 1]
    out[..., 1, 0], out[..., 1, 2] = x[..., 2], -x[..., 0]
    out[..., 2, 0], out[..., 2, 1] = -x[..., 1], x[..., 0]
    return out


def directors(q) -> np.ndarray:
    """The matrix ``D = [d₁ d₂ d₃]`` (directors as columns; the rotation on the manifold), (..., 3, 3)."""
    q = np.asarray(q, dtype=float)
    return np.swapaxes(q[..., 3:].reshape(q.shape[:-1] + (3, 3)), -1, -2)


def split(q) -> np.ndarray:
    """``q`` (..., 12) as rows ``(φ, d₁, d₂, d₃)``, (..., 4, 3) (a view when possible)."""
    q = np.asarray(q, dtype=float)
    return q.reshape(q.shape[:-1] + (4, 3))


# ====================================================================== internal constraints
def internal_constraints(q) -> np.ndarray:
    """``Φ_int(q)`` (..., 6), seed 002 eq. 24: ``½(d_I·d_I − 1)`` and ``d_I·d_J`` (I < J)."""
    Q = split(q)
    return np.stack([(0.5 if I == J else 1.0) * np.einsum("...c,...c->...", Q[..., 1 + I, :], Q[..., 1 + J, :])
                     - (0.5 if I == J else 0.0) for I, J in _PAIRS], axis=-1)


def internal_jacobian(q) -> np.ndarray:
    """``G_int = ∂Φ_int/∂q`` (..., 6, 12), seed 002 eq. 25."""
    Q = split(q)
    G = np.zeros(Q.shape[:-2] + (6, 4, 3))
    for r, (I, J) in enumerate(_PAIRS):
        G[..., r, 1 + I, :] += Q[..., 1 + J, :] if I != J else Q[..., 1 + I, :]
        if I != J:
            G[..., r, 1 + J, :] += Q[..., 1 + I, :]
    return G.reshape(Q.shape[:-2] + (6, 12))


def internal_bias(qd) -> np.ndarray:
    """``γ_int = −(G_int q̇)_q q̇`` (..., 6): ``−|ḋ_I|²`` and ``−2 ḋ_I·ḋ_J`` (the internal constraints
    are quadratic, so ``Φ̈_int = G_int q̈ − γ_int`` exactly; seed 002 gives no γ since its scheme is
    index 3, this is the digest's §3.2 derivation)."""
    V = split(qd)
    return np.stack([-(1.0 if I == J else 2.0) * np.einsum("...c,...c->...", V[..., 1 + I, :], V[..., 1 + J, :])
                     for I, J in _PAIRS], axis=-1)


def internal_null_space(q) -> np.ndarray:
    """``P_int(q)`` (..., 12, 6): ``q̇ = P_int (ω; v_φ)``, seed 002 eq. 29 with the columns in pkm's
    order (angular first). ``G_int P_int = 0`` for every ``q`` (not only on the manifold), and the
    discrete method evaluates it at the mid-point, ``P_int(q_{n+1/2})`` (eqs. 39–40, 65)."""
    Q = split(q)
    P = np.zeros(Q.shape[:-2] + (4, 3, 6))
    P[..., 0, :, 3:] = np.eye(3)
    for I in range(3):
        P[..., 1 + I, :, :3] = -skew(Q[..., 1 + I, :])
    return P.reshape(Q.shape[:-2] + (12, 6))


def rigid_velocity(q, omega, v_com) -> np.ndarray:
    """``q̇ = P_int (ω; v_φ)``: ``φ̇ = v_φ``, ``ḋ_I = ω × d_I`` (seed 002 eq. 27), (..., 12)."""
    Q = split(q)
    omega = np.asarray(omega, dtype=float)
    out = np.empty(np.broadcast_shapes(Q.shape, omega.shape[:-1] + (4, 3)))
    out[..., 0, :] = v_com
    out[..., 1:, :] = np.cross(omega[..., None, :], Q[..., 1:, :])
    return out.reshape(out.shape[:-2] + (12,))


def angular_velocity(q, qd) -> np.ndarray:
    """``ω = ½ Σ_I d_I × ḋ_I`` (..., 3): exact for ``ḋ_I = ω × d_I`` on the manifold, and the
    least-squares fit ``P_int⁺ q̇`` of any ``q̇`` there (``Σ_I d̂_Iᵀ d̂_I = 2 I``)."""
    Q, V = split(q), split(qd)
    return 0.5 * np.cross(Q[..., 1:, :], V[..., 1:, :]).sum(axis=-2)


def orthonormalize(q) -> np.ndarray:
    """``q`` with its directors replaced by the nearest rotation (polar decomposition, det +1).

    The centre of mass is kept. A start for assembly, not a projection that respects joints.
    """
    q = np.array(q, dtype=float)
    D = directors(q)
    U, _, Vt = np.linalg.svd(D)
    S = np.ones(D.shape[:-1])
    S[..., -1] = np.sign(np.linalg.det(U @ Vt))
    R = (U * S[..., None, :]) @ Vt
    q[..., 3:] = np.swapaxes(R, -1, -2).reshape(q.shape[:-1] + (9,))
    return q


def rigid_pose(pose, what: str = "pose") -> np.ndarray:
    """``pose`` (..., 4, 4) checked: finite, a rotation block (orthonormal to 1e-6, det +1), a
    translation within :data:`~pkm.absolute.checks.MAX_LENGTH`, last row (0, 0, 0, 1)."""
    C = array(pose, what, (4, 4), batch=True, bound=MAX_LENGTH)
    R = C[..., :3, :3]
    err = np.abs(np.swapaxes(R, -1, -2) @ R - np.eye(3)).max(initial=0.0)
    last_row = np.abs(C[..., 3, :] - (0.0, 0.0, 0.0, 1.0)).max(initial=0.0)
    if err > 1e-6 or np.any(np.linalg.det(R) < 0.0) or last_row > 0.0:
        raise InputError(f"{what} must be a rigid transformation (4×4: a rotation, a translation, last row 0 0 0 1)")
    return C


# ====================================================================== inertia
def euler_tensor(inertia) -> np.ndarray:
    """Euler tensor (second moments about the centre of mass) ``E = ½ tr(J) I − J`` from the
    inertia tensor ``J`` (seed 002 eq. 20, ``J = tr(E) I − E``, solved for E as in eq. 158)."""
    J = np.asarray(inertia, dtype=float)
    return 0.5 * np.trace(J) * np.eye(3) - J


def inertia_tensor(euler) -> np.ndarray:
    """``J = tr(E) I − E`` (seed 002 eq. 20)."""
    E = np.asarray(euler, dtype=float)
    return np.trace(E) * np.eye(3) - E


@dataclass(frozen=True, eq=False)
class Body:
    """A rigid body for the absolute-coordinate formulation.

    Attributes
    ----------
    name:
        Unique name (rows of the internal constraints are labelled with it).
    mass:
        kg, positive.
    inertia:
        3×3 inertia tensor about the centre of mass, in the body axes (= the directors), kg·m²;
        pkm's :attr:`pkm.description.spec.BodySpec.inertia` convention.
    com:
        Centre of mass in the body *frame* (from the frame origin, body axes), m. The directors
        live at the centre of mass; :meth:`pose` and :meth:`coordinates` convert to the pose of
        the frame, whose origin is ``φ − D com``.

    The identity of a body is the object (``eq=False``): two bodies with equal data are two bodies.
    """

    name: str
    mass: float
    inertia: np.ndarray
    com: np.ndarray = field(default_factory=lambda: np.zeros(3))

    def __post_init__(self):
        name(self.name, "Body name")
        mass = number(self.mass, f"body {self.name!r}: mass", low=MASS_RANGE[0], high=MASS_RANGE[1], why=" kg")
        inertia = array(self.inertia, f"body {self.name!r}: inertia", (3, 3), bound=MASS_RANGE[1])
        com = array(self.com, f"body {self.name!r}: com", (3,), bound=MAX_LENGTH)
        problem = inertia_problem(inertia)
        if problem:
            raise InputError(f"body {self.name!r}: {problem}")
        inertia = 0.5 * (inertia + inertia.T)
        M = np.zeros((NQ, NQ))
        M[:3, :3] = mass * np.eye(3)
        M[3:, 3:] = np.kron(euler_tensor(inertia), np.eye(3))
        for key, value in (("mass", mass), ("inertia", inertia), ("com", com), ("_M", M)):
            if isinstance(value, np.ndarray):
                value.setflags(write=False)
            object.__setattr__(self, key, value)

    @classmethod
    def from_spec(cls, spec) -> Body:
        """The body of a :class:`pkm.description.spec.BodySpec` (its frame's axes become the directors)."""
        R, origin = spec.frame[:3, :3], spec.frame[:3, 3]
        return cls(spec.name, spec.mass, spec.inertia, R.T @ (np.asarray(spec.com, dtype=float) - origin))

    # ------------------------------------------------------------------ mass
    @property
    def euler(self) -> np.ndarray:
        """Euler tensor ``E`` in the body axes (seed 002 eqs. 18–20)."""
        return euler_tensor(self.inertia)

    @property
    def mass_matrix(self) -> np.ndarray:
        """Constant 12×12 mass matrix ``blockdiag(m I, E ⊗ I₃)`` (seed 002 eq. 23), read-only."""
        return self._M

    def kinetic_energy(self, qd) -> np.ndarray:
        """``T = ½ q̇ᵀ M q̇ = ½ m|φ̇|² + ½ E_IJ ḋ_I·ḋ_J`` (seed 002 eq. 17), any batch shape."""
        V = split(array(qd, "qd", (NQ,), batch=True))
        return 0.5 * (self.mass * np.einsum("...c,...c->...", V[..., 0, :], V[..., 0, :])
                      + np.einsum("IJ,...Ic,...Jc->...", self.euler, V[..., 1:, :], V[..., 1:, :]))

    def momentum(self, q, qd) -> tuple[np.ndarray, np.ndarray]:
        """(angular momentum about the world origin, linear momentum), world axes.

        ``L = φ × m φ̇ + E_IJ d_I × ḋ_J`` (from ``∫ρ x × ẋ`` with eq. 16), ``p = m φ̇``: defined
        off the manifold too, which is where seed 002's momentum maps are checked (§5).
        """
        Q, V = split(array(q, "q", (NQ,), batch=True)), split(array(qd, "qd", (NQ,), batch=True))
        p = self.mass * V[..., 0, :]
        spin = np.cross(Q[..., 1:, None, :], V[..., None, 1:, :])  # d_I × ḋ_J
        L = np.cross(Q[..., 0, :], p) + np.einsum("IJ,...IJc->...c", self.euler, spin)
        return L, p

    def gravity_force(self, g) -> np.ndarray:
        """Generalized force of gravity ``g`` (3,) on ``q``: ``(m g, 0, 0, 0)`` (the potential
        ``V = −m g·φ`` depends on φ only, seed 002 §5.1)."""
        f = np.zeros(NQ)
        f[:3] = self.mass * array(g, "g", (3,), bound=MAX_VALUE)
        return f

    # ------------------------------------------------------------------ poses and twists
    def coordinates(self, pose) -> np.ndarray:
        """``q`` (..., 12) of the body whose frame has ``pose`` (..., 4, 4): ``φ = r + R com``,
        ``d_I = R e_I`` (the columns of ``R``)."""
        C = rigid_pose(pose, "pose")
        R, r = C[..., :3, :3], C[..., :3, 3]
        q = np.empty(C.shape[:-2] + (NQ,))
        q[..., :3] = r + R @ self.com
        q[..., 3:] = np.swapaxes(R, -1, -2).reshape(C.shape[:-2] + (9,))
        return q

    def pose(self, q) -> np.ndarray:
        """The frame's pose ``C = [[D, φ − D com], [0, 1]]`` (..., 4, 4); ``D = [d₁ d₂ d₃]`` is a
        rotation only on the manifold (``Φ_int = 0``)."""
        q = array(q, "q", (NQ,), batch=True)
        D = directors(q)
        C = np.zeros(q.shape[:-1] + (4, 4))
        C[..., :3, :3] = D
        C[..., :3, 3] = q[..., :3] - D @ self.com
        C[..., 3, 3] = 1.0
        return C

    def velocity(self, q, twist, frame: str = "body") -> np.ndarray:
        """``q̇`` (..., 12) of the rigid motion with ``twist`` (..., 6) = (ω; v) in ``frame``:

        * ``"body"``: pkm's body-fixed twist of the frame, ``hat(V) = C⁻¹Ċ`` (both parts in body axes);
        * ``"spatial"``: ``hat(V) = ĊC⁻¹`` (v is the velocity of the point at the world origin);
        * ``"com"``: (ω in world axes; velocity of the centre of mass), seed 002's twist (eq. 26).
        """
        q = array(q, "q", (NQ,), batch=True)
        twist = array(twist, "twist", (6,), batch=True)
        omega, v_com = self._world_twist(q, twist, choice(frame, "frame", TWIST_FRAMES))
        return rigid_velocity(q, omega, v_com)

    def twist(self, q, qd, frame: str = "body") -> np.ndarray:
        """The twist (..., 6) of ``q̇`` in ``frame`` (see :meth:`velocity`); ω by
        :func:`angular_velocity`, so the inverse of :meth:`velocity` on the manifold."""
        q, qd = array(q, "q", (NQ,), batch=True), array(qd, "qd", (NQ,), batch=True)
        choice(frame, "frame", TWIST_FRAMES)
        omega = angular_velocity(q, qd)
        v_com = qd[..., :3]
        D = directors(q)
        if frame == "com":
            return np.concatenate([omega, v_com], axis=-1)
        arm = D @ self.com  # frame origin → centre of mass
        v_origin = v_com - np.cross(omega, arm)
        if frame == "body":
            Dt = np.swapaxes(D, -1, -2)
            return np.concatenate([(Dt @ omega[..., None])[..., 0], (Dt @ v_origin[..., None])[..., 0]], axis=-1)
        if frame == "spatial":
            origin = q[..., :3] - arm
            return np.concatenate([omega, v_origin - np.cross(omega, origin)], axis=-1)
        raise ValueError(f"twist frame must be one of {TWIST_FRAMES}, got {frame!r}")

    def _world_twist(self, q, twist, frame):
        q = np.asarray(q, dtype=float)
        V = np.asarray(twist, dtype=float)
        D = directors(q)
        arm = D @ self.com
        if frame == "com":
            return V[..., :3], V[..., 3:]
        if frame == "body":
            omega = (D @ V[..., :3, None])[..., 0]
            v_origin = (D @ V[..., 3:, None])[..., 0]
        elif frame == "spatial":
            omega = V[..., :3]
            v_origin = V[..., 3:] + np.cross(omega, q[..., :3] - arm)
        else:
            raise ValueError(f"twist frame must be one of {TWIST_FRAMES}, got {frame!r}")
        return omega, v_origin + np.cross(omega, arm)
