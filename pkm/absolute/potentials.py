"""Conservative forces as potentials ``V(q)``, and the discrete gradient the energy–momentum scheme
needs (seed 002 eq. 10's ``∇̄V(q_n, q_{n+1})``; Part I, after Gonzalez 1996).

A discrete gradient satisfies ``∇̄V(q_a, q_b)·(q_b − q_a) = V(q_b) − V(q_a)`` exactly, which is what
makes the scheme conserve energy. For a potential of degree ≤ 2 in ``q`` (gravity is linear in
the centre of mass, seed 002 eq. 159; a zero-length spring between two markers is quadratic) the
mid-point gradient ``∇V(q_{n+1/2})`` is one; otherwise :func:`discrete_gradient` adds Gonzalez's
correction along ``q_b − q_a``. The gradient of ``V`` is ``−f`` with ``f`` the generalized force on
the coordinates (``M q̈ + Φ_qᵀλ = f``).
"""
from __future__ import annotations

import numpy as np

from pkm.absolute.checks import MAX_LENGTH, MAX_VALUE, array, number, show
from pkm.absolute.markers import Marker
from pkm.absolute.system import as_system as check_system
from pkm.absolute.tree import marker_point
from pkm.errors import InputError


class Potential:
    """Base class: ``energy(q)``, ``gradient(q)`` (n,), ``hessian(q)`` (n × n, may be None: treated
    as zero in Newton's matrix). ``degree``: polynomial degree in q if ≤ 2 (the mid-point gradient is
    then exact), else None."""

    degree: int | None = None

    def energy(self, q) -> float:
        raise NotImplementedError

    def gradient(self, q) -> np.ndarray:
        raise NotImplementedError

    def hessian(self, q):
        return None

    def __add__(self, other):
        return Sum(self, other)


class Sum(Potential):
    """The sum of potentials."""

    def __init__(self, *parts: Potential):
        self.parts = tuple(parts)
        degrees = [p.degree for p in parts]
        self.degree = None if any(d is None for d in degrees) else max(degrees, default=0)

    def energy(self, q) -> float:
        return float(sum(p.energy(q) for p in self.parts))

    def gradient(self, q) -> np.ndarray:
        return sum(p.gradient(q) for p in self.parts)

    def hessian(self, q):
        hs = [p.hessian(q) for p in self.parts]
        hs = [h for h in hs if h is not None]
        return sum(hs) if hs else None


class Gravity(Potential):
    """``V = −Σ_b m_b g·φ_b`` for the acceleration of gravity ``g`` (3,); seed 002 eq. 159 is
    ``g = (0, 0, −9.81)``. Linear: the discrete gradient is exact and constant."""

    degree = 1

    def __init__(self, system, g):
        self.system = check_system(system)
        self.g = array(g, "g", (3,), bound=MAX_VALUE)
        self._f = system.gravity_force(self.g)

    def energy(self, q) -> float:
        return -float(self._f @ self.system._q(q))

    def gradient(self, q) -> np.ndarray:
        return -self._f


class Spring(Potential):
    """A linear spring between the origins of two markers: ``V = ½ k (|p_b − p_a| − l₀)²``.

    With ``rest_length = 0`` it is quadratic in ``q`` (degree 2); otherwise not polynomial, and the
    scheme uses Gonzalez's discrete gradient (:func:`discrete_gradient`). A test potential for the
    discrete gradient, and a simple compliant element.
    """

    def __init__(self, system, marker_a: Marker, marker_b: Marker, stiffness: float, rest_length: float = 0.0):
        self.system, self.a, self.b = check_system(system), marker_a, marker_b
        for what, m in (("marker_a", marker_a), ("marker_b", marker_b)):
            if not isinstance(m, Marker):
                raise InputError(f"Spring {what} must be a Marker, got {show(m)}")
            if m.body is not None:
                system.body_slice(m.body)   # a body of the system
        self.k = number(stiffness, "Spring stiffness", low=0.0, high=MAX_VALUE)
        self.l0 = number(rest_length, "Spring rest_length", low=0.0, high=MAX_LENGTH)
        self.degree = 2 if self.l0 == 0.0 else None
        n = system.n
        self._C = np.zeros((3, n))  # p_b − p_a = C q + c0
        for sign, m in ((-1.0, marker_a), (1.0, marker_b)):
            if m.body is not None:
                self._C[:, system.body_slice(m.body)] += sign * np.kron(m.point_coefficients(), np.eye(3))
        self._c0 = marker_b.point_constant() - marker_a.point_constant()

    def _d(self, q):
        return self._C @ self.system._q(q) + self._c0

    def energy(self, q) -> float:
        return 0.5 * self.k * (np.linalg.norm(self._d(q)) - self.l0) ** 2

    def gradient(self, q) -> np.ndarray:
        d = self._d(q)
        L = np.linalg.norm(d)
        if self.l0 == 0.0:
            return self.k * self._C.T @ d
        if L == 0.0:
            raise InputError("Spring: the gradient of a spring with a rest length is undefined where its ends meet")
        return self.k * (L - self.l0) / L * (self._C.T @ d)

    def hessian(self, q):
        d = self._d(q)
        if self.l0 == 0.0:
            return self.k * self._C.T @ self._C
        L = np.linalg.norm(d)
        if L == 0.0:
            raise InputError("Spring: the Hessian of a spring with a rest length is undefined where its ends meet")
        u = d / L
        Hd = self.k * ((1.0 - self.l0 / L) * np.eye(3) + (self.l0 / L) * np.outer(u, u))
        return self._C.T @ Hd @ self._C

    def points(self, q):
        """World positions of the two ends."""
        q = self.system._q(q)
        qa = None if self.a.body is None else q[self.system.body_slice(self.a.body)]
        qb = None if self.b.body is None else q[self.system.body_slice(self.b.body)]
        return marker_point(self.a, qa), marker_point(self.b, qb)


def discrete_gradient(potential: Potential, q_a, q_b) -> np.ndarray:
    """``∇̄V(q_a, q_b)`` with ``∇̄V·(q_b − q_a) = V(q_b) − V(q_a)``: the mid-point gradient, plus for a
    potential of unknown degree Gonzalez's correction
    ``[V(q_b) − V(q_a) − ∇V(q_m)·Δq] Δq / |Δq|²`` (Part I of seed 002; it vanishes for degree ≤ 2)."""
    q_a, q_b = np.asarray(q_a, dtype=float), np.asarray(q_b, dtype=float)
    qm = 0.5 * (q_a + q_b)
    grad = np.array(potential.gradient(qm), dtype=float)
    if potential.degree is not None and potential.degree <= 2:
        return grad
    dq = q_b - q_a
    nn = float(dq @ dq)
    if nn == 0.0:
        return grad
    return grad + (potential.energy(q_b) - potential.energy(q_a) - grad @ dq) / nn * dq
