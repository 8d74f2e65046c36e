"""Seed 001's "lock" constraint between two markers, any subset of its six rows, optionally
rheonomic (prescribed relative motion), in director coordinates.

Marker P sits on body O1 (``marker_p``, side i) and marker S on body O2 (``marker_s``, side j).
With ``s_a`` the axes of S, ``p_b`` the axes of P (world vectors) and ``R_rel = R_Sᵀ R_P``
(``R_rel[a, b] = s_a·p_b``), the six rows are

* translation (seed 001 eqs. 28–29): ``C_k = s_k·(p_P − p_S) − x_Δ,k(t)``, k = x, y, z — the
  position of P relative to S in S axes, minus the law ``q_Δ(t)``;
* rotation: rows ``C_θk`` of the error rotation ``R_e = R_Δ(t)ᵀ R_rel``, k = x, y, z.

Seed 001 writes the rotation rows as the vector part ``e_v`` of the error quaternion
``q_Δ* ⊗ q_rel`` (eqs. 49, 72). That is not a polynomial of the directors, and seed 002 needs
constraints "at most quadratic" in ``q`` (§4.3, its discrete derivative). So the rows here are
dot products of marker axes — bilinear in ``q`` — chosen to equal ``2 e_k`` to first order at
zero error (so a rotation row's multiplier is a torque in N·m there) and to keep seed 001's zero
set and a regular gradient wherever the mask lets the rotation be large:

* all three rotation rows (weld, prismatic, angular alignment, Oldham): the error stays small,
  ``C_θ = ½ vee(R_e − R_eᵀ) = sin ϑ n = 2 e₀ e_v``;
* two rows, free axis ``f`` (revolute, cylindrical, plane-on-plane: f = z): seed 000's dot-1
  rows, ``C_θk = −ε_{fbk} R_e[f, b]`` (b the third index; for f = z: ``C_θx = s_z·p_y``,
  ``C_θy = −s_z·p_x`` when ``R_Δ = I``) — their Jacobian is the same for every angle about f,
  whereas ``2 e₀ e_v`` would be singular at a half turn about f;
* one row k (homokinetic, or a drive row on top of a revolute): ``C_θk = ½ vee(R_e − R_eᵀ)_k =
  2 e₀ e_k``, regular wherever the quaternion row is (``e₀ ≠ 0``: bends below 180°).

Rheonomic form: with laws (:mod:`pkm.absolute.laws`) the time enters as ``g(t) = −x_Δ(t)`` and
linearly through ``R_Δ(t)`` in the rotation rows' forms ``K(t)``, so ``Φ_t``, ``Φ_qt`` and ``Φ_tt`` follow
in closed form (seed 001 eqs. 32, 43 and 51 in quaternion form; its markers' own motion
``u_P(t)``, ``q_P(t)`` is not supported: a moving marker is the same as a law on the relative
motion here). ``γ = −(Φ_q q̇)_q q̇ − 2 Φ_qt q̇ − Φ_tt`` (seed 001 eq. 26; its eq. 22,
``q̈ = ½ a ⊗ q``, misses ``−¼|ω|² q`` — not used here, the director form has no quaternions).

Drives. A motor about the z axis of S is ``Lock(p, s, ("rz",), rotation=about(z, θ))`` added to
a :class:`~pkm.absolute.joints.Revolute`, or the full lock with that law (seed 001 §6.5); a
linear actuator is ``("z",)`` with ``translation=along(z, s)``. The drive's effort is its
multiplier: with ``M q̈ + Φ_qᵀλ = f`` the torque (force) of the drive on body O1 along z is
``−λ`` and on O2 ``+λ`` (see :meth:`~pkm.absolute.quadratic.QuadraticConstraint.reaction`).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
from scipy.spatial.transform import Rotation

from pkm.absolute.body import skew
from pkm.absolute.checks import array, function, show
from pkm.absolute.markers import Marker
from pkm.absolute.quadratic import QuadraticConstraint
from pkm.errors import InputError

#: The six rows of the lock (seed 001 eq. 72: ``C_x, C_y, C_z, C_θi, C_θj, C_θk``).
LOCK_ROWS = ("x", "y", "z", "rx", "ry", "rz")

#: Seed 001 Table 1 (and §6.1–6.4): joints as row subsets; the free axis of R, P, C is z of S.
LOCK_MASKS = {
    "weld": LOCK_ROWS,                                   # bolt / glue / fastener / nail
    "spherical": ("x", "y", "z"),                        # §6.1
    "prismatic": ("x", "y", "rx", "ry", "rz"),           # §6.2, slides along z
    "revolute": ("x", "y", "z", "rx", "ry"),             # §6.3, turns about z
    "cylindrical": ("x", "y", "rx", "ry"),               # §6.4
    "point_on_line": ("x", "y"),                         # P's origin on the z axis of S
    "point_on_plane": ("z",),                            # P's origin in the xy plane of S
    "plane_on_plane": ("z", "rx", "ry"),                 # planar joint
    "angular_alignment": ("rx", "ry", "rz"),             # no relative rotation
    "oldham": ("x", "rx", "ry", "rz"),                   # as printed: shafts along x of S
    "homokinetic": ("x", "y", "z", "rz"),                # spherical + no twist about z
}

#: Largest quaternion component ``|e_k|`` of a masked rotation row at an accepted zero
#: (:meth:`Lock.false_zero`); a false zero has ``|e_k| = |n_k|``, O(1).
FALSE_ZERO_TOL = 1e-6

_E = np.eye(3)
_LEVI = np.zeros((3, 3, 3))
for _i, _j, _k in ((0, 1, 2), (1, 2, 0), (2, 0, 1)):
    _LEVI[_i, _j, _k], _LEVI[_i, _k, _j] = 1.0, -1.0


def mask_rows(mask) -> tuple[int, ...]:
    """The row indices (into :data:`LOCK_ROWS`) of a lock ``mask``: a name, row names or 6 booleans."""
    if isinstance(mask, str):
        if mask not in LOCK_MASKS:
            raise InputError(f"unknown lock mask {mask!r}; expected one of {sorted(LOCK_MASKS)} or row names "
                             f"from {LOCK_ROWS} or 6 booleans")
        mask = LOCK_MASKS[mask]
    if not isinstance(mask, (list, tuple, np.ndarray)):
        raise InputError(f"lock mask must be a name from {sorted(LOCK_MASKS)}, a sequence of row names from "
                         f"{LOCK_ROWS} or 6 booleans, got {show(mask)}")
    mask = list(mask)
    if len(mask) == 6 and all(isinstance(b, (bool, np.bool_)) for b in mask):
        rows = [k for k, b in enumerate(mask) if b]
    else:
        unknown = [r for r in mask if not isinstance(r, str) or r not in LOCK_ROWS]
        if unknown:
            raise InputError(f"unknown lock rows {unknown}; rows are {LOCK_ROWS} (or give 6 booleans)")
        if len(set(mask)) != len(mask):
            raise InputError(f"lock rows repeat: {mask}")
        rows = sorted(LOCK_ROWS.index(r) for r in mask)
    if not rows:
        raise InputError("a lock needs at least one row")
    return tuple(rows)


def law_values(values, name: str, kind: str, shape, t) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The three values of a law at ``t`` checked: (value of ``shape``, rate (3,), its derivative (3,)),
    finite."""
    what = f"{name}: the {kind} law at t = {t:g}"
    if not isinstance(values, (tuple, list)) or len(values) != 3:
        raise InputError(f"{what} must return 3 values (value, rate, acceleration), got {show(values)}")
    return (array(values[0], f"{what}: value", shape), array(values[1], f"{what}: rate", (3,)),
            array(values[2], f"{what}: acceleration", (3,)))


class Lock(QuadraticConstraint):
    """Seed 001's lock between marker P (``marker_p``, on O1) and marker S (``marker_s``, on O2).

    Parameters
    ----------
    mask:
        A name from :data:`LOCK_MASKS`, row names from :data:`LOCK_ROWS`, or 6 booleans (one of
        the 2⁶ − 1 non-empty variants of seed 001 §6).
    translation, rotation:
        Optional laws ``x_Δ(t)`` and ``R_Δ(t)`` (:mod:`pkm.absolute.laws`); without them the
        lock is scleronomic with ``x_Δ = 0``, ``R_Δ = I``.
    """

    kind = "lock"

    def __init__(self, marker_p: Marker, marker_s: Marker, mask: str | Sequence = "weld", *,
                 translation=None, rotation=None, name: str | None = None):
        rows = mask_rows(mask)
        function(translation, "Lock translation (a law t -> (x, ẋ, ẍ))")
        function(rotation, "Lock rotation (a law t -> (R, ω, ω̇))")
        super().__init__(marker_p, marker_s, name)
        self.mask = tuple(LOCK_ROWS[r] for r in rows)
        self.translation, self.rotation = translation, rotation
        self.rheonomic = translation is not None or rotation is not None
        pp, ps = self._point(0), self._point(1)
        d = self._sum((1.0, pp), (-1.0, ps))
        active = [k - 3 for k in rows if k >= 3]
        self._free = [k for k in range(3) if k not in active] if len(active) == 2 else []
        self._s = [self._axis(1, a) for a in range(3)]
        self._p = [self._axis(0, b) for b in range(3)]
        for k in rows:
            terms = {(self._s[k], d): 1.0} if k < 3 else self._rotation_terms(k - 3, np.eye(3))
            self._row(LOCK_ROWS[k], terms)
        self._rows = rows
        self._finish()

    def _rotation_form(self, M: np.ndarray, k: int) -> np.ndarray:
        """3×3 ``C`` with row ``C_θk = Σ_ab C[a, b] s_a·p_b`` for ``R_Δ = M`` (linear in M, so
        ``Ṙ_Δ`` and ``R̈_Δ`` give ``K̇`` and ``K̈``)."""
        if len(self._free) == 1:  # two rotation rows: seed 000 dot-1 rows about the free axis f
            f = self._free[0]
            b = 3 - f - k
            C = np.zeros((3, 3))
            C[:, b] = -_LEVI[f, b, k] * M[:, f]
            return C
        return 0.5 * M @ skew(_E[k])  # ½ vee(R_e − R_eᵀ)_k with R_e = Mᵀ R_rel

    def _rotation_terms(self, k: int, M: np.ndarray) -> dict:
        C = self._rotation_form(M, k)
        return {(self._s[a], self._p[b]): C[a, b] for a in range(3) for b in range(3) if C[a, b] != 0.0}

    def _rotation_block(self, M: np.ndarray, k: int) -> np.ndarray:
        """The (n, n) form of rotation row k for ``R_Δ = M`` (or a derivative of it)."""
        n = len(self._coef)
        out = np.zeros((n, n))
        out[np.ix_(self._s, self._p)] = self._rotation_form(M, k)
        return out

    def rotation_error(self, qi, qj, t: float = 0.0) -> np.ndarray:
        """The error rotation ``R_e = R_Δ(t)ᵀ R_rel`` (3×3), ``R_rel[a, b] = s_a·p_b`` (module doc)."""
        Cp, Cs = self.marker_poses(qi, qj)
        R_rel = Cs[:3, :3].T @ Cp[:3, :3]
        return R_rel if self.rotation is None else np.asarray(self.rotation(t)[0], dtype=float).T @ R_rel

    def false_zero(self, qi, qj, t: float = 0.0) -> str | None:
        """The rotation rows at a false zero: seed 001's own rows are the vector part ``e_v`` of the
        error quaternion ``q_Δ* ⊗ q_rel`` (eqs. 49, 72), these are ``2 e₀ e_k`` (module doc), which
        vanish at ``e₀ = 0`` too — a 180° error rotation: a weld (three rows) turned by a half turn,
        a revolute mask (two rows) with its z axes apart, a drive (one row) at ``θ + π``. So the
        masked components of ``e_v`` (``e₀ ≥ 0``) must vanish as well; they are O(1) there
        (``|e_k| = |n_k|``, n the error axis) and ≈ ``|C_θk| / 2e₀`` at a true zero. A 180° bend
        about an axis ⊥ k of a one-row mask is both (its ``n_k`` → 0) and is not flagged."""
        if not any(k >= 3 for k in self._rows):
            return None
        R = self.rotation_error(qi, qj, t)
        # the quaternion (e₀ ≥ 0) of the nearest rotation: R may be off the manifold by the tolerance
        U, _, Vt = np.linalg.svd(R)
        e = Rotation.from_matrix(U @ np.diag([1.0, 1.0, np.linalg.det(U @ Vt)]) @ Vt).as_quat()  # (e_v, e₀)
        e = -e if e[3] < 0.0 else e
        worst = max((k - 3 for k in self._rows if k >= 3), key=lambda k: abs(e[k]))
        if abs(e[worst]) <= FALSE_ZERO_TOL:
            return None
        angle = np.degrees(2.0 * np.arctan2(np.linalg.norm(e[:3]), e[3]))
        return (f"its markers are turned by {angle:.4g}° from the prescribed relative rotation (a false zero of "
                f"the director rows; the quaternion row {LOCK_ROWS[3 + worst]} is {e[worst]:.3g}, not 0)")

    def forms(self, t: float = 0.0):
        """``(K, K̇, K̈, g, ġ, g̈)`` at ``t``; rotation rows from ``R_Δ``, ``Ṙ_Δ = R_Δ ω̂`` and
        ``R̈_Δ = R_Δ(ω̂² + (ω̇)^)``."""
        if not self.rheonomic:
            return super().forms(t)
        K, Kd, Kdd = self._K.copy(), np.zeros_like(self._K), np.zeros_like(self._K)
        g, gd, gdd = self._g0.copy(), np.zeros(self.m), np.zeros(self.m)
        if self.translation is not None:
            x, xd, xdd = law_values(self.translation(t), self.name, "translation", (3,), t)
            for r, k in enumerate(self._rows):
                if k < 3:
                    g[r], gd[r], gdd[r] = -x[k], -xd[k], -xdd[k]
        if self.rotation is not None:
            R, w, wd = law_values(self.rotation(t), self.name, "rotation", (3, 3), t)
            W = skew(w)
            Rd, Rdd = R @ W, R @ (W @ W + skew(wd))
            for r, k in enumerate(self._rows):
                if k >= 3:
                    K[r] = self._rotation_block(R, k - 3)
                    Kd[r] = self._rotation_block(Rd, k - 3)
                    Kdd[r] = self._rotation_block(Rdd, k - 3)
        return K, Kd, Kdd, g, gd, gdd
