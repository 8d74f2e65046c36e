"""A multibody system in absolute coordinates: bodies + joints → global ``q``, ``Φ``, ``Φ_q``,
``γ``, ``M``, redundancy removal and consistent initial conditions.

Layout. Body ``k`` (in the order given) owns ``q[12k : 12k + 12]`` = ``(φ, d₁, d₂, d₃)``; the
ground has no coordinates. The rows are the six internal constraints of each body (seed 002
eq. 24, in body order) followed by the rows of each joint (in joint order), and ``M`` is block
diagonal and constant (seed 002 eqs. 23, 50). Equations of motion, as in seeds 001 (eq. 27) and
002 (eq. 1)::

    M q̈ + Φ_qᵀ λ = f,      Φ(q, t) = 0   (Φ_q q̈ = γ at acceleration level)

Redundant joint rows are detected at a configuration (:meth:`System.redundancy`) on the
reduced Jacobian ``Φ_ext,q P_int`` (seed 002 eq. 64, ``G̃_ext``): since ``P_int`` spans the null
space of the internal rows, ``rank Φ_q = 6N + rank(Φ_ext,q P_int)``, and the internal rows are
never the ones removed. :meth:`System.without` returns the system with those rows inactive; all
evaluation methods then return the active rows only, and multipliers are per active row.

For the discrete null space method (seed 002 §2.2, §4) the building blocks are
:meth:`System.internal_null_space` (``P_int``, eq. 54) and the joints' ``P_ext`` of seed 002
(listed in :mod:`pkm.absolute.joints`); :meth:`System.null_space` gives an orthonormal
numerical basis of ``ker Φ_q`` for any joint set.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
import scipy.linalg
import scipy.sparse
import scipy.sparse.linalg

from pkm.absolute.body import (
    INTERNAL_ROWS,
    NINT,
    NQ,
    Body,
    internal_bias,
    internal_constraints,
    internal_jacobian,
    internal_null_space,
)
from pkm.absolute.checks import MAX_LENGTH, MAX_VALUE, array, count, number, positive, show
from pkm.absolute.quadratic import QuadraticConstraint
from pkm.absolute.quaternion_lock import QuaternionLock
from pkm.absolute.redundancy import RTOL, RedundancyReport, dependent_rows
from pkm.errors import InputError, PkmError, SingularityError


#: Largest condition number of the index-1 matrix :meth:`System.accelerations` accepts.
MAX_CONDITION = 1e14


def min_norm_solve(G, b, rtol: float = RTOL) -> np.ndarray:
    """``G⁺ b`` by the SVD with singular values below ``rtol`` × the largest treated as zero: the
    minimum-norm least-squares solution, robust to dependent rows (LAPACK's default cut-off,
    machine precision, lets a zero singular value computed as 1e-16 through)."""
    rtol = number(rtol, "rtol", low=0.0, high=1.0, low_open=True, high_open=True)
    G, b = array(G, "G", (None, None)), array(b, "b", (None,) if np.ndim(b) == 1 else None)
    if b.shape[:1] != G.shape[:1]:
        raise InputError(f"b must have {G.shape[0]} rows (one per row of G), got shape {b.shape}")
    U, s, Vt = np.linalg.svd(G, full_matrices=False)
    keep = s > rtol * s[0] if s.size and s[0] > 0.0 else np.zeros(s.size, bool)
    return Vt[keep].T @ ((U[:, keep].T @ b) / s[keep])


def kkt_solve(M, G, f, gamma, max_condition: float | None = None):
    """``(q̈, λ)`` of ``[[M, Gᵀ], [G, 0]] [q̈; λ] = [f; γ]`` by a sparse LU; ``M`` (n × n, sparse
    or dense), ``G`` (m × n). The matrix is sparse (a Delta: 381 unknowns, 2120 non-zeros), where a
    dense solve and an SVD condition number cost 10–20 ms.

    Raises :class:`~pkm.errors.SingularityError` when the matrix is singular (dependent rows left
    in, or a singular configuration): SuperLU meets a zero pivot, the solution does not satisfy
    the equations, or — with ``max_condition`` — the 1-norm condition estimate (Higham's, a few
    solves with the factors) exceeds it."""
    n = M.shape[0]
    f, gamma = array(f, "f", (n,)), array(gamma, "gamma", (G.shape[0],))
    Gs = scipy.sparse.csc_matrix(G)
    K = scipy.sparse.bmat([[scipy.sparse.csc_matrix(M), Gs.T], [Gs, None]], format="csc")
    rhs = np.concatenate([f, gamma])

    def singular(what, cond=np.inf):
        return SingularityError(f"the constrained equations of motion are singular ({what}): remove dependent rows "
                                f"with System.remove_redundant (or a singular configuration, or masses and inertias "
                                f"of very different scales)", condition=cond,
                                threshold=np.inf if max_condition is None else max_condition)

    try:
        lu = scipy.sparse.linalg.splu(K)
    except RuntimeError as exc:  # SuperLU: "Factor is exactly singular"
        raise singular(str(exc)) from None
    x = lu.solve(rhs)
    if not np.all(np.isfinite(x)) or np.linalg.norm(K @ x - rhs) > 1e-6 * (np.linalg.norm(rhs) + 1.0):
        raise singular("the sparse LU solution does not satisfy them")
    if max_condition is not None:
        inv = scipy.sparse.linalg.LinearOperator(K.shape, matvec=lu.solve, rmatvec=lambda y: lu.solve(y, trans="T"))
        cond = scipy.sparse.linalg.norm(K, 1) * scipy.sparse.linalg.onenormest(inv)
        if not np.isfinite(cond) or cond > max_condition:
            raise singular(f"condition {cond:.3g}", cond)
    return x[:n], x[n:]


def as_system(value) -> System:
    """``value`` if it is a :class:`System`, else a one-line :class:`~pkm.errors.InputError`."""
    if not isinstance(value, System):
        raise InputError(f"system must be a pkm.absolute System, got {show(value)}")
    return value


class AssemblyError(PkmError, ArithmeticError):
    """Newton's method found no configuration with ``|Φ| ≤ tol`` (:attr:`residual` after
    :attr:`iterations` steps)."""

    def __init__(self, message: str, residual: float, iterations: int):
        self.residual, self.iterations = residual, iterations
        super().__init__(message)


class AssemblyModeError(AssemblyError):
    """The assembly converged, but not to the configuration meant: a joint's rows hold at a false
    zero of the director form (:meth:`System.false_zeros`), or the configuration left the branch it
    was to stay on (:meth:`pkm.absolute.loader.AbsoluteModel.driven_state`)."""


class System:
    """Bodies and joints in absolute (director) coordinates.

    Parameters
    ----------
    bodies:
        The moving :class:`~pkm.absolute.body.Body` objects (distinct, with distinct names).
    joints:
        Constraints (:mod:`pkm.absolute.joints`, :class:`~pkm.absolute.lock.Lock`,
        :class:`~pkm.absolute.quaternion_lock.QuaternionLock`) between these bodies or the ground,
        with distinct names.
    active:
        Optional boolean mask over all joint rows (in order); inactive rows are left out of every
        result. Normally set by :meth:`without`.
    """

    def __init__(self, bodies: Sequence[Body], joints: Sequence[QuadraticConstraint | QuaternionLock], active=None):
        for what, items in (("bodies", bodies), ("joints", joints)):
            if not isinstance(items, (list, tuple)):
                raise InputError(f"System {what} must be a list, got {show(items)}")
        self.bodies, self.joints = tuple(bodies), tuple(joints)
        self._index: dict[int, int] = {}
        for k, b in enumerate(self.bodies):
            if not isinstance(b, Body):
                raise InputError(f"System bodies[{k}] is a {type(b).__name__}, not a pkm.absolute Body")
            if id(b) in self._index:
                raise InputError(f"body {b.name!r} is listed twice")
            self._index[id(b)] = k
        names = [b.name for b in self.bodies]
        if len(set(names)) != len(names):
            raise InputError(f"body names repeat: {names}")
        for k, j in enumerate(self.joints):
            if not isinstance(j, (QuadraticConstraint, QuaternionLock)):
                raise InputError(f"System joints[{k}] is a {type(j).__name__} ({show(j)}), not a joint of "
                                 f"pkm.absolute (Spherical, Revolute, …, Lock, QuaternionLock)")
        jnames = [j.name for j in self.joints]
        if len(set(jnames)) != len(jnames):
            raise InputError(f"joint names repeat: {jnames}")
        for j in self.joints:
            for b in j.bodies:
                if b is not None and id(b) not in self._index:
                    raise InputError(f"joint {j.name!r} connects body {b.name!r}, which is not in the system")
        self._rows = [(j, r) for j in self.joints for r in range(j.m)]
        self._offsets = np.cumsum([0] + [j.m for j in self.joints])
        if active is None:
            active = np.ones(len(self._rows), bool)
        else:
            a = np.asarray(active) if not isinstance(active, (str, bytes)) else np.asarray(None)
            if a.dtype.kind != "b" or a.shape != (len(self._rows),):
                raise InputError(f"active mask must be {len(self._rows)} booleans (one per joint row), got "
                                 f"{show(active)}")
            active = a.copy()
        self.active = active
        self.active.setflags(write=False)
        self._M = scipy.linalg.block_diag(*[b.mass_matrix for b in self.bodies]) if self.bodies else np.zeros((0, 0))

    # ------------------------------------------------------------------ sizes and labels
    @property
    def n(self) -> int:
        """Number of coordinates, 12 per body."""
        return NQ * len(self.bodies)

    @property
    def m(self) -> int:
        """Number of active rows (internal + joint)."""
        return NINT * len(self.bodies) + int(self.active.sum())

    @property
    def labels(self) -> tuple[tuple[str, str], ...]:
        """``(body or joint name, row name)`` of every active row, in order."""
        internal = [(b.name, r) for b in self.bodies for r in INTERNAL_ROWS]
        joint = [(j.name, j.row_names[r]) for (j, r), a in zip(self._rows, self.active) if a]
        return tuple(internal + joint)

    def body_slice(self, body: Body) -> slice:
        """The slice of ``q`` that holds ``body``."""
        k = self._index.get(id(body))
        if k is None:
            raise InputError(f"{show(body)} is not a body of this system")
        return slice(NQ * k, NQ * k + NQ)

    def coordinates(self, poses) -> np.ndarray:
        """``q`` (n,) from the poses (4×4) of the bodies' frames, in body order."""
        if isinstance(poses, (str, bytes, dict)) or not hasattr(poses, "__len__"):
            raise InputError(f"poses must be a list of 4×4 poses, one per body, got {show(poses)}")
        poses = list(poses)
        if len(poses) != len(self.bodies):
            raise InputError(f"{len(poses)} poses for {len(self.bodies)} bodies")
        return np.concatenate([b.coordinates(C) for b, C in zip(self.bodies, poses)]) if poses else np.zeros(0)

    def poses(self, q) -> list[np.ndarray]:
        """The bodies' frame poses at ``q``."""
        q = self._q(q)
        return [b.pose(q[self.body_slice(b)]) for b in self.bodies]

    def _q(self, q, what: str = "q") -> np.ndarray:
        """``q`` checked: (n,) finite, within :data:`~pkm.absolute.checks.MAX_LENGTH`."""
        return array(q, what, (self.n,), bound=MAX_LENGTH)

    def _qd(self, qd, what: str = "qd") -> np.ndarray:
        return array(qd, what, (self.n,), bound=MAX_VALUE)

    def _side(self, body, q):
        return None if body is None or q is None else q[self.body_slice(body)]

    def _joint_mask(self, j_index: int) -> np.ndarray:
        return self.active[self._offsets[j_index]:self._offsets[j_index + 1]]

    # ------------------------------------------------------------------ Φ, Φ_q, Φ_t, γ
    def phi(self, q, t: float = 0.0) -> np.ndarray:
        """``Φ(q, t)`` (m,)."""
        q, t = self._q(q), number(t, "t")
        parts = [internal_constraints(q.reshape(-1, NQ)).ravel()]
        for k, j in enumerate(self.joints):
            parts.append(j.phi(*(self._side(b, q) for b in j.bodies), t)[self._joint_mask(k)])
        return np.concatenate(parts)

    def phi_t(self, q, t: float = 0.0) -> np.ndarray:
        """``∂Φ/∂t`` (m,) (zero but for rheonomic joints)."""
        q, t = self._q(q), number(t, "t")
        parts = [np.zeros(NINT * len(self.bodies))]
        for k, j in enumerate(self.joints):
            parts.append(j.phi_t(*(self._side(b, q) for b in j.bodies), t)[self._joint_mask(k)])
        return np.concatenate(parts)

    def jacobian(self, q, t: float = 0.0) -> np.ndarray:
        """``Φ_q`` (m, n), dense."""
        q, t = self._q(q), number(t, "t")
        G = np.zeros((self.m, self.n))
        N = len(self.bodies)
        for k in range(N):
            G[NINT * k:NINT * k + NINT, NQ * k:NQ * k + NQ] = internal_jacobian(q[NQ * k:NQ * k + NQ])
        row = NINT * N
        for k, j in enumerate(self.joints):
            mask = self._joint_mask(k)
            rows = int(mask.sum())
            blocks = j.jacobian(*(self._side(b, q) for b in j.bodies), t)
            for body, block in zip(j.bodies, blocks):
                if body is not None:
                    G[row:row + rows, self.body_slice(body)] += block[mask]
            row += rows
        return G

    def gamma(self, q, qd, t: float = 0.0) -> np.ndarray:
        """Acceleration bias ``γ`` (m,) with ``Φ_q q̈ = γ``."""
        q, qd, t = self._q(q), self._qd(qd), number(t, "t")
        parts = [internal_bias(qd.reshape(-1, NQ)).ravel()]
        for k, j in enumerate(self.joints):
            args = [self._side(b, q) for b in j.bodies] + [self._side(b, qd) for b in j.bodies]
            parts.append(j.gamma(*args, t)[self._joint_mask(k)])
        return np.concatenate(parts)

    # ------------------------------------------------------------------ mass
    def mass_matrix(self) -> np.ndarray:
        """Constant block-diagonal ``M`` (n, n) (seed 002 eq. 50); a copy."""
        return self._M.copy()

    def sparse_mass_matrix(self):
        """``M`` as a (shared, read-only by convention) ``scipy.sparse`` CSC matrix, built once."""
        if getattr(self, "_M_sparse", None) is None:
            import scipy.sparse

            self._M_sparse = scipy.sparse.csc_matrix(self._M)
        return self._M_sparse

    def kinetic_energy(self, qd) -> float:
        """``½ q̇ᵀ M q̇``."""
        qd = self._qd(qd)
        return float(sum(b.kinetic_energy(qd[self.body_slice(b)]) for b in self.bodies))

    def momentum(self, q, qd) -> tuple[np.ndarray, np.ndarray]:
        """(angular momentum about the world origin, linear momentum) of all bodies."""
        q, qd = self._q(q), self._qd(qd)
        L, p = np.zeros(3), np.zeros(3)
        for b in self.bodies:
            s = self.body_slice(b)
            Lb, pb = b.momentum(q[s], qd[s])
            L, p = L + Lb, p + pb
        return L, p

    def gravity_force(self, g) -> np.ndarray:
        """Generalized gravity force (n,) for the acceleration of gravity ``g`` (3,)."""
        g = array(g, "g", (3,), bound=MAX_VALUE)
        return np.concatenate([b.gravity_force(g) for b in self.bodies]) if self.bodies else np.zeros(0)

    # ------------------------------------------------------------------ null spaces and redundancy
    def internal_null_space(self, q) -> np.ndarray:
        """``P_int`` (n, 6N): block diagonal, twists ``(ω; v_φ)`` per body (seed 002 eq. 54)."""
        q = self._q(q)
        return scipy.linalg.block_diag(*internal_null_space(q.reshape(-1, NQ))) if self.bodies else np.zeros((0, 0))

    def null_space(self, q, t: float = 0.0, rtol: float = RTOL) -> np.ndarray:
        """Orthonormal basis (n, n − rank) of ``ker Φ_q`` from the SVD (rank: singular values above
        ``rtol`` × the largest)."""
        rtol = number(rtol, "rtol", low=0.0, high=1.0, low_open=True, high_open=True)
        G = self.jacobian(q, t)
        _, s, Vt = np.linalg.svd(G)
        rank = int(np.sum(s > rtol * s[0])) if s.size and s[0] > 0.0 else 0
        return Vt[rank:].T.copy()

    def redundancy(self, q, t: float = 0.0, rtol: float = RTOL, method: str = "qr") -> RedundancyReport:
        """Dependent active joint rows at ``(q, t)``: :func:`~pkm.absolute.redundancy.dependent_rows`
        on ``Φ_ext,q P_int``. Indices in the report count the active joint rows."""
        q = self._q(q)
        G = self.jacobian(q, t)[NINT * len(self.bodies):]
        labels = self.labels[NINT * len(self.bodies):]
        return dependent_rows(G @ self.internal_null_space(q), labels, rtol=rtol, method=method)

    def without(self, report: RedundancyReport) -> System:
        """This system with the rows ``report.removed`` (from :meth:`redundancy`) made inactive."""
        if not isinstance(report, RedundancyReport):
            raise InputError(f"report must be a RedundancyReport (System.redundancy), got {show(report)}")
        active_rows = np.flatnonzero(self.active)
        if report.rows != active_rows.size:
            raise InputError(f"the report examined {report.rows} rows, this system has {active_rows.size} active "
                             f"joint rows (was it made for another system?)")
        active = self.active.copy()
        active[active_rows[list(report.removed)]] = False
        return System(self.bodies, self.joints, active)

    def remove_redundant(self, q, t: float = 0.0, rtol: float = RTOL, method: str = "qr"):
        """``(system without the dependent rows, report)`` at ``(q, t)``."""
        report = self.redundancy(q, t, rtol=rtol, method=method)
        return self.without(report), report

    # ------------------------------------------------------------------ consistent initial conditions
    def assemble(self, q0, t: float = 0.0, tol: float = 1e-12, max_iter: int = 50) -> np.ndarray:
        """A configuration with ``max|Φ(q, t)| ≤ tol`` near ``q0``: Newton's method with
        minimum-norm steps ``Δq = −Φ_q⁺ Φ`` (:func:`min_norm_solve`, so dependent rows do no harm).

        Raises :class:`AssemblyError` when ``max_iter`` steps do not get there, and
        :class:`AssemblyModeError` when they got to a false zero of a joint's rows (a 180° turn the
        joint does not allow, :meth:`false_zeros`): Newton's method converges there as readily.
        """
        q = self._q(q0, "q0").copy()
        t = number(t, "t")
        tol = positive(tol, "tol")
        max_iter = count(max_iter, "max_iter", 0, 10_000)
        residual = float(np.max(np.abs(self.phi(q, t)), initial=0.0))
        for it in range(max_iter):
            if residual <= tol:
                return self._true_zero(q, t, residual, it)
            q -= min_norm_solve(self.jacobian(q, t), self.phi(q, t))
            if not (np.all(np.isfinite(q)) and np.max(np.abs(q), initial=0.0) <= MAX_LENGTH):
                raise AssemblyError(f"assembly diverged (Newton's iterate left the range |q| ≤ {MAX_LENGTH:g} after "
                                    f"{it + 1} steps): no configuration near the start", np.inf, it + 1)
            residual = float(np.max(np.abs(self.phi(q, t)), initial=0.0))
        if residual <= tol:
            return self._true_zero(q, t, residual, max_iter)
        raise AssemblyError(f"assembly did not converge: max|Φ| = {residual:.3g} > {tol:.3g} after {max_iter} "
                            f"Newton steps (no configuration near the start, or a singular one)", residual, max_iter)

    def false_zeros(self, q, t: float = 0.0) -> dict:
        """``{joint name: description}`` of the joints whose rows hold at ``(q, t)`` at a false zero
        of the director form — a configuration turned by 180° that the joint does not allow
        (:meth:`~pkm.absolute.quadratic.QuadraticConstraint.false_zero`); empty at a true one."""
        q = np.asarray(q, dtype=float)
        out = {}
        for j in self.joints:
            what = j.false_zero(*(self._side(b, q) for b in j.bodies), t)
            if what is not None:
                out[j.name] = what
        return out

    def _true_zero(self, q, t, residual, iterations) -> np.ndarray:
        """``q`` if no joint holds at a false zero there, else :class:`AssemblyModeError`."""
        false = self.false_zeros(q, t)
        if false:
            name, what = next(iter(false.items()))
            more = f" (and {len(false) - 1} more joints)" if len(false) > 1 else ""
            raise AssemblyModeError(f"the absolute-coordinate assembly reached another assembly mode: joint {name!r} "
                                    f"holds at a false zero of its rows: {what}{more}; start the assembly from a "
                                    f"configuration on the intended branch (e.g. pkm's IK solution)", residual, iterations)
        return q

    def project_velocity(self, q, qd, t: float = 0.0) -> np.ndarray:
        """The velocity nearest ``qd`` (Euclidean) with ``Φ_q q̇ + Φ_t = 0``:
        ``q̇ − Φ_q⁺ (Φ_q q̇ + Φ_t)``."""
        qd = self._qd(qd)
        G = self.jacobian(q, t)
        return qd - min_norm_solve(G, G @ qd + self.phi_t(q, t))

    # ------------------------------------------------------------------ dynamics at one instant
    def accelerations(self, q, qd, force, t: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
        """``(q̈, λ)`` from ``[[M, Φ_qᵀ], [Φ_q, 0]] [q̈; λ] = [f; γ]`` (seed 001 eq. 27 without
        stabilisation) by :func:`kkt_solve`; a 1-norm condition estimate above :data:`MAX_CONDITION`
        is a :class:`~pkm.errors.SingularityError`. Needs independent rows (see :meth:`remove_redundant`)."""
        force = array(force, "force", (self.n,))
        return kkt_solve(self.sparse_mass_matrix(), self.jacobian(q, t), force, self.gamma(q, qd, t),
                         max_condition=MAX_CONDITION)

    def reactions(self, q, lam, t: float = 0.0, about: str = "marker") -> dict:
        """``{joint name: (W_i, W_j)}``: each joint's wrenches (moment; force) on its two bodies for
        the multipliers ``lam`` of the active rows (inactive rows carry none), world axes, moments
        about the marker origins (or ``about="com"``); ``None`` for the ground.
        See :meth:`~pkm.absolute.quadratic.QuadraticConstraint.reaction`."""
        q = self._q(q)
        try:
            lam = array(lam, "lam", (self.m,))
        except InputError as exc:
            raise InputError(f"{exc} (one per active row)") from None
        out, row = {}, NINT * len(self.bodies)
        for k, j in enumerate(self.joints):
            mask = self._joint_mask(k)
            full = np.zeros(j.m)
            full[mask] = lam[row:row + int(mask.sum())]
            row += int(mask.sum())
            out[j.name] = j.reaction(*(self._side(b, q) for b in j.bodies), full, t, about=about)
        return out
