"""The joint catalogue of seed 000 (S, S–S, R, U, C, P) and seed 002's planar pair (E), in
director coordinates.

Each joint connects marker ``i`` (on body i) and marker ``j`` (on body j; either may be the
ground), with ``p`` the marker origins, ``x, y, z`` their axes and ``d = p_j − p_i``. The rows
are seed 000's, written with the marker axes (seed 000's ``a_i`` is ``z_i``; its ``m, n`` are
``x, y``); in director coordinates every one of them is linear or bilinear in ``q``, so the
Jacobian is exact and ``γ`` has only the velocity-quadratic part (digest §1.2 primitives B1–B4):

====================  ====  =============================================================  ============
joint                 rows  Φ                                                              seed
====================  ====  =============================================================  ============
:class:`Spherical`      3   ``p_i − p_j``                                                  000 eq. 1
:class:`Distance`       1   ``d·d − l²``                                                   000 eq. 8
:class:`Revolute`       5   ``p_i − p_j``, ``z_i·x_j``, ``z_i·y_j``                         000 eq. 12
:class:`Universal`      4   ``p_i − p_j``, ``x_i·y_j``                                      000 eq. 18
:class:`Cylindrical`    4   ``x_i·d``, ``y_i·d``, ``z_i·x_j``, ``z_i·y_j``                   000 eq. 25
:class:`Prismatic`      5   cylindrical + ``x_i·y_j``                                       000 eq. 32
:class:`Planar`         3   ``z_i·d``, ``z_i·x_j``, ``z_i·y_j``                              002 eq. 139
====================  ====  =============================================================  ============

Assembly: the markers are meant to coincide at assembly (:meth:`Marker.at
<pkm.absolute.markers.Marker.at>` with one world frame for both), which makes every dot row 0
with a well-conditioned gradient (digest §3.5: rows ``n·d₁ − η`` with ``η = ±1`` have a
vanishing gradient; with coincident markers all our ``η`` are 0). The axis is ``z``; a
universal joint's cross axes are ``x_i`` (fixed in body i) and ``y_j`` (fixed in body j); the
prismatic joint's fifth row uses ``x_i`` and ``y_j``, which are perpendicular at assembly (seed
000 does not say that ``n_j ⊥ n_i`` is needed; the same-named vectors would give 1, digest §1.3).

Null-space matrices for the discrete null space method. Seed 002 gives ``P_ext^{2,(J)}``, the
twist of body 2 from the twist of body 1 and the joint rates, for S (eq. 84; discrete: mid-point,
eq. 90), C (eq. 107; discrete eq. 113 with ``n¹ → (m₁¹ × m₂¹)_{n+1/2}``), R (eq. 122;
mid-point, eq. 125), P (eq. 132; discrete eq. 133, same substitute) and E (eq. 143; discrete
eq. 149 with ``m₁ → (m₂¹ × n¹)_{n+1/2}``, ``m₂ → (n¹ × m₁¹)_{n+1/2}``); its twist is
``(v_φ; ω)``, pkm's is ``(ω; v_φ)`` (:mod:`pkm.absolute.body`). Universal and distance joints
have none in seed 002. :meth:`pkm.absolute.system.System.null_space` gives a numerical basis
for any joint set.
"""
from __future__ import annotations

from pkm.absolute.checks import MAX_LENGTH, positive
from pkm.absolute.markers import Marker
from pkm.absolute.quadratic import QuadraticConstraint

_E = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0))


class _Joint(QuadraticConstraint):
    """Helpers shared by the catalogue's joints."""

    def _coincidence_rows(self) -> None:
        """Seed 000 eq. 1 (B1): ``p_i − p_j = 0``, one row per world axis."""
        pi, pj = self._point(0), self._point(1)
        diff = self._sum((1.0, pi), (-1.0, pj))
        for k, name in enumerate("xyz"):
            self._row(f"p.{name}", {(self._world(_E[k]), diff): 1.0})

    def _dot_row(self, name: str, a: int, b: int) -> None:
        """Seed 000 B3 (dot-1) or B4 (dot-2): ``x_a·x_b = 0``."""
        self._row(name, {(a, b): 1.0})

    def _separation(self) -> int:
        """``d = p_j − p_i`` (seed 000 eq. 5)."""
        return self._sum((1.0, self._point(1)), (-1.0, self._point(0)))

    #: Marker axes (0, 1, 2 = x, y, z) that the joint keeps parallel: its dot rows also vanish
    #: with them antiparallel (turned by 180°), a configuration the joint does not allow.
    _parallel: tuple[int, ...] = ()

    def false_zero(self, qi, qj, t: float = 0.0) -> str | None:
        """The axes kept parallel (:attr:`_parallel`) pointing apart: ``e_i·e_j < 0`` where the dot
        rows make them ±parallel (the genuine configurations have ``+1``: the markers coincide at
        assembly and the joint's motion keeps these axes)."""
        Ci, Cj = self.marker_poses(qi, qj)
        for a in self._parallel:
            c = float(Ci[:3, a] @ Cj[:3, a])
            if c < 0.0:
                name = "xyz"[a]
                return f"its markers' {name} axes point apart ({name}_i·{name}_j = {c:.3g}; they must be parallel)"
        return None


class Spherical(_Joint):
    """Ball joint, 3 rows: ``p_i − p_j = 0`` (seed 000 eq. 1; seed 002 S pair eq. 80 with the
    opposite sign). Linear in ``q``: constant Jacobian and ``γ = 0`` (seed 000 eq. 3 is the same
    thing in mixed velocities). Seed 002 null space: eq. 84."""

    kind = "spherical"

    def __init__(self, marker_i: Marker, marker_j: Marker, name: str | None = None):
        super().__init__(marker_i, marker_j, name)
        self._coincidence_rows()
        self._finish()


class Distance(_Joint):
    """Spherical–spherical link of length ``length``, 1 row: ``d·d − l² = 0`` (seed 000 eq. 8,
    ``d = p_j − p_i``, eq. 5); ``γ = −2 ḋ·ḋ`` (seed 000 eq. 10 in mixed velocities). The force of
    the reaction is along ``d`` (``2λd``, seed 000 eq. 11)."""

    kind = "distance"

    def __init__(self, marker_i: Marker, marker_j: Marker, length: float, name: str | None = None):
        super().__init__(marker_i, marker_j, name)
        length = positive(length, f"{self.name}: length", high=MAX_LENGTH)
        self.length = length
        d = self._separation()
        self._row("d.d", {(d, d): 1.0}, -length**2)
        self._finish()


class Revolute(_Joint):
    """Hinge about the common z axis, 5 rows: ``p_i − p_j``, ``z_i·x_j``, ``z_i·y_j`` (seed 000
    eq. 12, ``a_i = z_i``, ``m_j = x_j``, ``n_j = y_j``; seed 002 R pair eq. 119). Seed 002 null
    space: eq. 122 (mid-point discrete, eq. 125)."""

    kind = "revolute"
    _parallel = (2,)

    def __init__(self, marker_i: Marker, marker_j: Marker, name: str | None = None):
        super().__init__(marker_i, marker_j, name)
        self._coincidence_rows()
        zi = self._axis(0, 2)
        self._dot_row("zi.xj", zi, self._axis(1, 0))
        self._dot_row("zi.yj", zi, self._axis(1, 1))
        self._finish()


class Universal(_Joint):
    """Hooke joint, 4 rows: ``p_i − p_j``, ``x_i·y_j`` (seed 000 eq. 18 with ``a_i = x_i``,
    ``b_j = y_j``): body j turns about ``x_i`` (fixed in i) and about ``y_j`` (fixed in j)."""

    kind = "universal"

    def __init__(self, marker_i: Marker, marker_j: Marker, name: str | None = None):
        super().__init__(marker_i, marker_j, name)
        self._coincidence_rows()
        self._dot_row("xi.yj", self._axis(0, 0), self._axis(1, 1))
        self._finish()


class Cylindrical(_Joint):
    """Slides along and turns about the z axis of marker i, 4 rows: ``x_i·d``, ``y_i·d``,
    ``z_i·x_j``, ``z_i·y_j`` (seed 000 eq. 25, where the paper's velocity row 4 says ``m_j`` for
    ``n_j``; seed 002 C pair eq. 100). Seed 002 null space: eq. 107, discrete eq. 113."""

    kind = "cylindrical"
    _parallel = (2,)

    def __init__(self, marker_i: Marker, marker_j: Marker, name: str | None = None):
        super().__init__(marker_i, marker_j, name)
        self._cylinder_rows()
        self._finish()

    def _cylinder_rows(self) -> None:
        d = self._separation()
        self._dot_row("xi.d", self._axis(0, 0), d)
        self._dot_row("yi.d", self._axis(0, 1), d)
        zi = self._axis(0, 2)
        self._dot_row("zi.xj", zi, self._axis(1, 0))
        self._dot_row("zi.yj", zi, self._axis(1, 1))


class Prismatic(Cylindrical):
    """Slides along the z axis of marker i, 5 rows: the cylindrical rows and ``x_i·y_j`` (seed
    000 eq. 32 with ``n_i = x_i``, ``n_j = y_j``, perpendicular at assembly; seed 002's P pair
    eq. 129 uses three cyclic director products instead). Seed 002 null space: eq. 132, discrete
    eq. 133."""

    kind = "prismatic"
    _parallel = (2, 0)

    def __init__(self, marker_i: Marker, marker_j: Marker, name: str | None = None):
        _Joint.__init__(self, marker_i, marker_j, name)
        self._cylinder_rows()
        self._dot_row("xi.yj", self._axis(0, 0), self._axis(1, 1))
        self._finish()


class Planar(_Joint):
    """Plane-on-plane pair (seed 002's E pair), 3 rows: ``z_i·(p_j − p_i)``, ``z_i·x_j``,
    ``z_i·y_j`` (seed 002 eq. 139 with ``n¹ = z_i``, ``d₁², d₂² → x_j, y_j`` and ``η = 0``): body j
    moves in the plane through ``p_i`` normal to ``z_i`` and turns about ``z_i``. Seed 002 null
    space: eq. 143, discrete eq. 149."""

    kind = "planar"
    _parallel = (2,)

    def __init__(self, marker_i: Marker, marker_j: Marker, name: str | None = None):
        super().__init__(marker_i, marker_j, name)
        zi = self._axis(0, 2)
        self._dot_row("zi.d", zi, self._separation())
        self._dot_row("zi.xj", zi, self._axis(1, 0))
        self._dot_row("zi.yj", zi, self._axis(1, 1))
        self._finish()


#: The catalogue by type name.
JOINTS = {cls.kind: cls for cls in (Spherical, Distance, Revolute, Universal, Cylindrical, Prismatic, Planar)}
