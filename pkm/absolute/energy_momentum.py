"""Seed 002's energy–momentum consistent scheme for constrained multibody systems in director
coordinates, in its two forms: the constrained scheme with multipliers (eq. 10) and the discrete
null space method (§2.2.2, §4) with nodal reparametrisation.

The scheme (seed 002 eq. 10, Part I's mid-point/discrete-gradient discretisation)::

    q_{n+1} − q_n = Δt v_{n+1/2},          v_{n+1/2} = ½ (v_n + v_{n+1})
    M (v_{n+1} − v_n) = −Δt ∇̄V(q_n, q_{n+1}) − Δt G(q_{n+1/2})ᵀ λ̄
    Φ(q_{n+1}) = 0

Every constraint is at most quadratic, so ``Φ(q_{n+1}) − Φ(q_n) = G(q_{n+1/2}) (q_{n+1} − q_n)``
exactly (eqs. 38, 67); with ``∇̄V`` a discrete gradient (:mod:`pkm.absolute.potentials`),
multiplying the momentum balance by ``v_{n+1/2}`` gives ``E_{n+1} = E_n`` to the Newton tolerance,
and momentum maps of symmetries (angular momentum of a free system, ``e₃·L`` of the top) are kept
likewise. Eliminating ``v_{n+1}`` leaves the residual
``r(q_{n+1}) = (2/Δt) M (q_{n+1} − q_n) − 2 M v_n + Δt ∇̄V`` with ``r + Δt Gᵀλ̄ = 0``.

``method="constrained"`` solves for ``(q_{n+1}, λ̄)`` — n + m unknowns (21 for the gyro top,
40 for the cylindrical pair); its iteration matrix
``[[2M/Δt + (Δt/2) Σλ_k ∇²Φ_k, Δt Gᵀ_{n+1/2}], [G(q_{n+1}), 0]]`` has a condition number that grows
like Δt⁻³ (seed 002 Tables II–V).

``method="null_space"`` (the discrete null space method) multiplies by ``P(q_n, q_{n+1})ᵀ`` with
``G(q_{n+1/2}) P = 0`` (eqs. 11–14), which removes λ̄, and writes ``q_{n+1} = F_{q_n}(μ)`` with the
tree's product of exponentials (eq. 15, :mod:`pkm.absolute.reparam`), so that the unknowns are the
minimal increments μ (3 for the top, 8 and 9 for the pairs). A closed loop keeps its closure rows
as equations ``Φ_c(F(μ)) = 0`` beside ``Pᵀr = 0`` (seed 002 §5.4.2, after Part I §4.4 / App. C),
with the dependent closure rows left out — chosen at every step by pivoted QR, reported at the
start (:func:`independent_rows`). ``P`` is seed 002's
explicit matrix (``null_space="explicit"``, :func:`~pkm.absolute.nullspace.tree_null_space`,
completed numerically for closure rows) or an SVD basis (``"numerical"``); both span
``null G(q_{n+1/2})``, so both give the same ``q_{n+1}``.

Newton's matrix of the reduced scheme. ``Pᵀ r`` depends on μ through ``P`` too. At the solution
``r = −Δt Gᵀλ̄``, and differentiating ``G P = 0`` gives ``(dP)ᵀ r = (Δt/2) Pᵀ (Σ λ̄_k ∇²Φ_k) dq``
whatever basis P is, so the iteration matrix is ``Pᵀ A ∂F/∂μ`` with
``A = 2M/Δt + ½ Σ_k Λ_k ∇²Φ_k + (Δt/2) ∇²V``, ``Λ = Δt λ̄`` estimated each iteration by least
squares from ``r``: exact at the solution, so the convergence stays quadratic. Its condition
number is O(1) in Δt: as Δt → 0, ``K → (2/Δt) Pᵀ M P``, the reduced mass matrix (eq. 8) in the
tree's rates (Table II: ≈ 8 for the top, ``M̃₁/M̃₃`` of eq. 168).

Condition numbers (``condition``, seed 002 Tables II–V): the 2-norm condition of Newton's matrix at
the converged iterate of each step, with the residuals scaled as above — the seed's number. The
constrained column of Tables II–IV is reproduced to 3 % at any step (it barely changes along the
motion); the reduced column of Table III (C pair) is the step ending at t = 0.1 (Fig. 12's first
snapshot), reproduced to 0.2 % — at the first step the same matrix has 493. Table IV's reduced
column, the gyro top's at Δt = 0.05 and Table V are not reproduced by the seed's printed data
(reasons and numbers in tests/test_absolute_seed_tables.py). A closed loop's closure rows are
scaled to the norm of ``Pᵀ A ∂F/∂μ`` (pkm's choice; the seed does not state one).

Velocities ``v_{n+1} = 2 (q_{n+1} − q_n)/Δt − v_n`` satisfy the hidden constraint ``G v = 0`` only
at the mid-point (digest §3.4, 11); the constraints hold at every node.
"""
from __future__ import annotations

import numpy as np

from pkm.absolute.body import NINT
from pkm.absolute.checks import (
    MAX_LENGTH,
    MIN_DT,
    array,
    choice,
    count,
    function,
    number,
    positive,
    show,
    time_steps,
)
from pkm.absolute.hessian import ConstraintHessian
from pkm.absolute.nullspace import closure_null_space, numerical_null_space, tree_null_space
from pkm.absolute.potentials import discrete_gradient
from pkm.absolute.redundancy import RTOL, dependent_rows
from pkm.absolute.reparam import reparametrize, tangent
from pkm.absolute.results import assemble
from pkm.absolute.system import System
from pkm.absolute.system import as_system as check_system
from pkm.absolute.tree import Tree
from pkm.errors import InputError, PkmError

METHODS = ("null_space", "constrained")
NULL_SPACES = ("explicit", "numerical")


class ConvergenceError(PkmError, ArithmeticError):
    """Newton's method did not converge in a time step."""


def step_failed(scheme: str, t: float, why: str) -> ConvergenceError:
    """The one-line error of a step whose Newton iteration failed (diverged, met a singular matrix or
    ran out of iterations), pointing at the usual cause, a step too large for the motion."""
    return ConvergenceError(f"{scheme}: the step at t = {t:g} did not converge ({why}): try a smaller dt")


def newton_solve(K, rhs, scheme: str, t: float) -> np.ndarray:
    """``K⁻¹ rhs`` for a Newton step, or :func:`step_failed` where the iterate has left the finite
    numbers or ``K`` is singular — never a LAPACK error (or its text on stderr) on a diverging step."""
    if not (np.all(np.isfinite(K)) and np.all(np.isfinite(rhs))):
        raise step_failed(scheme, t, "Newton's iterate diverged to non-finite values")
    try:
        x = np.linalg.solve(K, rhs)
    except np.linalg.LinAlgError:
        raise step_failed(scheme, t, "Newton's matrix is singular") from None
    if not np.all(np.isfinite(x)):
        raise step_failed(scheme, t, "Newton's matrix is singular")
    return x


def check_force(f, n: int, what: str = "force(t, q, v)") -> np.ndarray:
    """The value of a user's generalized force checked: (n,), finite."""
    return array(f, f"the value of {what}", (n,))


def check_potential(potential):
    from pkm.absolute.potentials import Potential

    if potential is not None and not isinstance(potential, Potential):
        raise InputError(f"potential must be a pkm.absolute.potentials.Potential (e.g. Gravity) or None, got "
                         f"{show(potential)}")
    return potential


def _converged(history, tol: float) -> bool:
    """The last scaled residual is below ``tol``, or within 1000 ``tol`` and no longer falling
    (round-off reached: it did not halve in the last iteration)."""
    res = history[-1]
    if res <= tol:
        return True
    return len(history) > 1 and res <= 1e3 * tol and res > 0.5 * history[-2]


def independent_rows(system, q, t: float = 0.0, rtol: float = RTOL, among=None, basis=None):
    """``(mask, report)``: a boolean mask over ``system``'s active rows keeping every internal row
    and a maximal independent set of the joint rows at ``(q, t)`` (pivoted QR of the joint rows
    reduced by ``P_int``, as :meth:`~pkm.absolute.system.System.redundancy`), and the report.

    ``among`` (indices into the active rows) restricts the choice to those rows, the others being
    kept; ``basis`` (n × k) replaces ``P_int`` as the null space they are reduced by (the tree's,
    for closure rows). Dependent rows are a property of a configuration: a set that is independent
    at the start can lose rank along the motion although the whole set keeps its rank (the six-body
    linkage does at θ¹ ≈ −π/2), so the schemes below choose again at every step."""
    q = check_system(system)._q(q)
    nint = NINT * len(system.bodies)
    G = system.jacobian(q, t)
    among = np.arange(nint, G.shape[0]) if among is None else np.asarray(among, dtype=int)
    B = system.internal_null_space(q) if basis is None else basis
    labels = [system.labels[k] for k in among]
    report = dependent_rows(G[among] @ B, labels, rtol=rtol)
    mask = np.ones(G.shape[0], bool)
    mask[among[list(report.removed)]] = False
    return mask, report


def consistent_start(system, q0, v0, t: float = 0.0, tol: float = 1e-12):
    """Consistent initial conditions near ``(q0, v0)``: ``q`` with ``|Φ(q, t)| ≤ tol`` by
    :meth:`~pkm.absolute.system.System.assemble` and the nearest velocity with ``G v + Φ_t = 0``
    (:meth:`~pkm.absolute.system.System.project_velocity`); both are robust to dependent rows."""
    q = check_system(system).assemble(q0, t, tol=tol)
    return q, system.project_velocity(q, v0, t)


def check_start(system, q0, v0, tol: float = 1e-9, t: float = 0.0):
    """Raise :class:`~pkm.errors.InputError` (a ValueError) unless ``q0`` (n,) and ``v0`` (n,) are
    finite, ``|Φ(q0)| ≤ tol`` and ``|G v0 + Φ_t| ≤ tol (1 + |v0|)``: the schemes keep the
    constraints from the start, they do not repair them (:func:`consistent_start`). Returns the
    checked ``(q0, v0)``."""
    check_system(system)
    q0, v0, t = system._q(q0, "q0"), system._qd(v0, "v0"), number(t, "t0")
    tol = positive(tol, "tol")
    phi = float(np.max(np.abs(system.phi(q0, t)), initial=0.0))
    gv = float(np.max(np.abs(system.jacobian(q0, t) @ v0 + system.phi_t(q0, t)), initial=0.0))
    if phi > tol or gv > tol * (1.0 + float(np.max(np.abs(v0), initial=0.0))):
        raise InputError(f"inconsistent initial conditions: max|Φ(q0)| = {phi:.3g}, max|G v0 + Φ_t| = {gv:.3g}; "
                         f"use pkm.absolute.energy_momentum.consistent_start")
    return q0, v0


class EnergyMomentum:
    """Seed 002's energy–momentum scheme on ``system`` (see the module docstring).

    Parameters
    ----------
    system:
        The :class:`~pkm.absolute.system.System` (scleronomic joints; drives with prescribed motion
        have no conserved energy and are not supported here).
    q0:
        A consistent configuration, where the dependent rows are reported (they are chosen again at
        every step, :func:`independent_rows`).
    potential:
        A :class:`~pkm.absolute.potentials.Potential` (e.g. gravity) or None.
    force:
        Other generalized forces ``f(t, q, v)`` (n,) or None, taken at the mid-point
        ``(t_{n+1/2}, q_{n+1/2}, (q_{n+1} − q_n)/Δt)``, so that ``E_{n+1} − E_n = Δt f·v_{n+1/2}``
        exactly (the discrete work); Newton's matrix leaves out ``∂f/∂q`` (it converges linearly
        when f depends strongly on q or v).
    method:
        ``"null_space"`` (default, the discrete null space method) or ``"constrained"``.
    null_space:
        ``"explicit"`` (seed 002's matrices, default) or ``"numerical"`` (SVD).
    cut:
        Joint names the tree must not use (closure joints), e.g. seed 002's closing joint.
    tol:
        Newton tolerance on the scaled residual (relative to the momentum terms of the step).
    max_iter:
        Newton iterations per step before :class:`ConvergenceError`.
    condition:
        Compute the 2-norm condition number of Newton's matrix at the converged iterate of every
        step (seed 002 Tables II–V; see the module docstring).
    """

    def __init__(self, system: System, q0, potential=None, *, force=None, method: str = "null_space",
                 null_space: str = "explicit", cut=(), tol: float = 1e-13, max_iter: int = 30,
                 condition: bool = True, rtol: float = RTOL):
        choice(method, "method", METHODS)
        choice(null_space, "null_space", NULL_SPACES)
        rheo = [j.name for j in check_system(system).joints if j.rheonomic]
        if rheo:
            raise InputError(f"rheonomic joints {rheo}: the energy–momentum scheme needs scleronomic constraints")
        q0 = system._q(q0, "q0")
        self.system, self.method, self.null_space = system, method, null_space
        self.potential = check_potential(potential)
        self.force = function(force, "force (f(t, q, v))")
        self.tol = number(tol, "tol", low=0.0, high=1.0, low_open=True, high_open=True)
        self.max_iter = count(max_iter, "max_iter", 1, 1000)
        if not isinstance(condition, (bool, np.bool_)):
            raise InputError(f"condition must be True or False, got {show(condition)}")
        self.want_condition = bool(condition)
        self.rtol = number(rtol, "rtol", low=0.0, high=1.0, low_open=True, high_open=True)
        cut = (cut,) if isinstance(cut, str) else cut
        if not isinstance(cut, (list, tuple)) or not all(isinstance(c, str) for c in cut):
            raise InputError(f"cut must be a list of joint names, got {show(cut)}")
        self.M = system.mass_matrix()
        self.hessian = ConstraintHessian(system)
        self._nint = NINT * len(system.bodies)
        self.tree = None
        if method == "null_space":
            self.tree = Tree(system, cut)
            self._closure = self._nint + np.flatnonzero(self.tree.closure_rows())   # row indices
            offsets = np.cumsum([0] + [j.m for j in system.joints])
            self._closure_joints = []                   # (joint, its active rows' mask, their rows)
            row = self._nint
            for k, j in enumerate(system.joints):
                act = system.active[offsets[k]:offsets[k + 1]]
                if k in self.tree.closure:
                    self._closure_joints.append((j, act, np.arange(row, row + int(act.sum()))))
                row += int(act.sum())
        rows, self.redundancy = self.select(q0)
        if method == "constrained":
            self.dof = system.n - int(rows.sum())
            self.unknowns = system.n + int(rows.sum())
        else:
            self.dof = self.tree.size - int(rows[self._closure].sum())
            self.unknowns = self.tree.size
        self.switches = 0

    def select(self, q):
        """``(row mask, report)``: the independent rows used for a step from ``q``."""
        if self.method == "constrained":
            return independent_rows(self.system, q, rtol=self.rtol)
        if self._closure.size == 0:
            return np.ones(self.system.m, bool), dependent_rows(np.zeros((0, self.tree.size)))
        return independent_rows(self.system, q, rtol=self.rtol, among=self._closure, basis=tangent(self.tree, q))

    def predict(self, q, v, dt) -> np.ndarray:
        """A first guess of the tree increments μ from the velocity ``v``: ``Δt ν`` with every
        rotation (vector or angle) ``θ`` shortened to ``2 atan(|θ|/2) θ/|θ|`` — the angle the
        mid-point rule turns a freely spinning body by (a Cayley map), which keeps the guess in
        Newton's basin when ``|ω| Δt`` is large (the top at Δt = 0.05 turns by ≈ 7 rad per step)."""
        if self.tree is None:
            raise InputError("predict needs the null space method (method='null_space'): it guesses tree increments")
        q, v = self.system._q(q), self.system._qd(v, "v")
        dt = number(dt, "dt", low=MIN_DT, why=" s (a positive time step)")
        mu = dt * np.linalg.lstsq(tangent(self.tree, q), v, rcond=None)[0]
        for block in self.tree.rotation_blocks():
            a = float(np.linalg.norm(mu[block]))
            if a > 0.0:
                mu[block] *= 2.0 * np.arctan(0.5 * a) / a
        return mu

    # ------------------------------------------------------------------ pieces
    def _forces(self, q_a, q_b, dt, t0):
        """``Δt (∇̄V − f_mid)`` and the matching block of Newton's matrix ``(Δt/2) ∇²V(q_m)``."""
        out, H_V = 0.0, 0.0
        if self.potential is not None:
            out = dt * discrete_gradient(self.potential, q_a, q_b)
            H = self.potential.hessian(0.5 * (q_a + q_b))
            H_V = 0.0 if H is None else 0.5 * dt * H
        if self.force is not None:
            out = out - dt * check_force(self.force(t0 + 0.5 * dt, 0.5 * (q_a + q_b), (q_b - q_a) / dt), self.system.n)
        return out, H_V

    def _scale(self, *parts) -> float:
        return sum(float(np.linalg.norm(p)) for p in parts) + 1e-300

    def _closure_eval(self, q, closure):
        """``(Φ_c, G_c)`` of the closure rows ``closure`` (global row indices) at ``q``, from the
        closure joints only (a full :meth:`System.jacobian` per iteration costs more than the rest)."""
        phi, G = np.zeros(self.system.m), np.zeros((self.system.m, self.system.n))
        for j, act, rows in self._closure_joints:
            qs = [None if b is None else q[self.system.body_slice(b)] for b in j.bodies]
            phi[rows] = j.phi(*qs)[act]
            for b, block in zip(j.bodies, j.jacobian(*qs)):
                if b is not None:
                    G[rows, self.system.body_slice(b)] += block[act]
        return phi[closure], G[closure]

    def _contract(self, rows, lam_rows):
        lam = np.zeros(self.system.m)
        lam[rows] = lam_rows
        return self.hessian.contract(lam)

    # ------------------------------------------------------------------ one step
    def step(self, q0, v0, dt: float, guess=None, rows=None, t0: float = 0.0):
        """One step from ``(q0, v0)``: returns ``(q1, v1, info)``; ``info`` has ``iterations``,
        ``residual`` (scaled, last iteration), ``history`` (every iteration's), ``condition``,
        ``rows`` (the row mask used) and ``guess`` (the solution's unknowns, a predictor for the next
        step). ``t0``: the time at the start (for ``force``)."""
        q0, v0 = self.system._q(q0, "q0"), self.system._qd(v0, "v0")
        dt = number(dt, "dt", low=MIN_DT, why=" s (a positive time step)")
        t0 = number(t0, "t0")
        if rows is None:
            rows = self.select(q0)[0]
        elif not (isinstance(rows, np.ndarray) and rows.dtype == bool and rows.shape == (self.system.m,)):
            raise InputError(f"rows must be a boolean mask over the {self.system.m} active rows "
                             f"(EnergyMomentum.select), got {show(rows)}")
        if self.method == "constrained":
            q1, info = self._step_constrained(q0, v0, dt, guess, rows, t0)
        else:
            q1, info = self._step_null_space(q0, v0, dt, guess, rows, t0)
        info["rows"] = rows
        return q1, 2.0 / dt * (q1 - q0) - v0, info

    def _step_null_space(self, q0, v0, dt, mu, rows, t0):
        tree, system, M = self.tree, self.system, self.M
        mu = self.predict(q0, v0, dt) if mu is None else array(mu, "guess", (tree.size,)).copy()
        Mv2 = 2.0 * M @ v0
        closure = self._closure[rows[self._closure]]          # the closure rows in use
        history = []
        scheme = "energy-momentum (discrete null space method)"
        for it in range(self.max_iter + 1):
            if not np.all(np.isfinite(mu)):
                raise step_failed(scheme, t0, "Newton's iterate diverged to non-finite values")
            q1, D = reparametrize(tree, q0, mu)
            if not np.all(np.abs(q1) <= MAX_LENGTH):
                raise step_failed(scheme, t0, f"Newton's iterate left the range |q| ≤ {MAX_LENGTH:g}")
            qm = 0.5 * (q0 + q1)
            f_dt, H_V = self._forces(q0, q1, dt, t0)
            Mdq = (2.0 / dt) * M @ (q1 - q0)
            r = Mdq - Mv2 + f_dt
            Gm_all = system.jacobian(qm)
            Gm = Gm_all[rows]
            if self.null_space == "explicit":
                P = tree_null_space(tree, q0, q1)
                if closure.size:
                    P = closure_null_space(P, Gm_all[closure], dim=self.dof)
            else:
                P = numerical_null_space(system, q0, q1, dim=self.dof, rows=rows)
            R_dyn = P.T @ r
            scale = self._scale(P.T @ Mv2, P.T @ Mdq, P.T @ f_dt if np.ndim(f_dt) else 0.0)
            Lam = newton_solve(Gm @ Gm.T, -Gm @ r, scheme, t0)  # least squares, Gᵀ Λ ≈ −r
            A = (2.0 / dt) * M + 0.5 * self._contract(rows, Lam) + H_V
            K = P.T @ A @ D
            if closure.size:
                phi_c, G_c = self._closure_eval(q1, closure)
                Kc = G_c @ D
                s = np.linalg.norm(K) / max(np.linalg.norm(Kc), 1e-300)
                R = np.concatenate([R_dyn, s * phi_c])
                K = np.vstack([K, s * Kc])
            else:
                R = R_dyn
            res = float(np.linalg.norm(R)) / scale
            history.append(res)
            if _converged(history, self.tol) or it == self.max_iter:
                break
            mu = mu + newton_solve(K, -R, scheme, t0)
        if not _converged(history, self.tol):
            raise step_failed(scheme, t0, f"Newton's residual {res:.3g} > {self.tol:.3g} after {self.max_iter} "
                                          f"iterations")
        cond = float(np.linalg.cond(K)) if self.want_condition else np.nan
        return q1, {"iterations": it, "residual": res, "condition": cond, "guess": mu, "history": history}

    def _step_constrained(self, q0, v0, dt, lam, rows, t0):
        system, M, n = self.system, self.M, self.system.n
        m = int(rows.sum())
        q1 = q0 + dt * v0
        lam = np.zeros(m) if lam is None or np.size(lam) != m else array(lam, "guess", (m,)).copy()
        Mv2 = 2.0 * M @ v0
        tol_phi = 1e-12 * (1.0 + float(np.max(np.abs(q0))))
        history = []
        scheme = "energy-momentum (constrained)"
        for it in range(self.max_iter + 1):
            if not np.all(np.abs(q1) <= MAX_LENGTH):   # also NaN
                raise step_failed(scheme, t0, f"Newton's iterate left the range |q| ≤ {MAX_LENGTH:g}")
            qm = 0.5 * (q0 + q1)
            f_dt, H_V = self._forces(q0, q1, dt, t0)
            Gm = system.jacobian(qm)[rows]
            Mdq = (2.0 / dt) * M @ (q1 - q0)
            r = Mdq - Mv2 + f_dt + dt * Gm.T @ lam
            phi = system.phi(q1)[rows]
            res = float(np.linalg.norm(r)) / self._scale(Mv2, Mdq, f_dt if np.ndim(f_dt) else 0.0)
            history.append(res)
            K = np.zeros((n + m, n + m))
            K[:n, :n] = (2.0 / dt) * M + 0.5 * dt * self._contract(rows, lam) + H_V
            K[:n, n:] = dt * Gm.T
            K[n:, :n] = system.jacobian(q1)[rows]
            phi_ok = np.max(np.abs(phi), initial=0.0) <= tol_phi
            if (phi_ok and _converged(history, self.tol)) or it == self.max_iter:
                break
            x = newton_solve(K, -np.concatenate([r, phi]), scheme, t0)
            q1, lam = q1 + x[:n], lam + x[n:]
        if not (phi_ok and _converged(history, self.tol)):
            raise step_failed(scheme, t0, f"Newton's residual {res:.3g}, |Φ| {np.max(np.abs(phi)):.3g} after "
                                          f"{self.max_iter} iterations")
        cond = float(np.linalg.cond(K)) if self.want_condition else np.nan
        return q1, {"iterations": it, "residual": res, "condition": cond, "guess": lam, "history": history}

    # ------------------------------------------------------------------ many steps
    def _check_start(self, q0, v0, tol: float = 1e-9, t0: float = 0.0):
        return check_start(self.system, q0, v0, tol, t0)

    def integrate(self, q0, v0, dt: float, steps: int, t0: float = 0.0):
        """``steps`` steps of ``dt`` from ``(q0, v0)`` (consistent: ``Φ(q0) = 0``, ``G(q0) v0 = 0``;
        see :meth:`System.assemble <pkm.absolute.system.System.assemble>` and
        :meth:`~pkm.absolute.system.System.project_velocity`) → :class:`~pkm.absolute.results.Trajectory`."""
        dt, steps, t0 = time_steps(dt, steps, t0, self.system.n)
        q0, v0 = self._check_start(q0, v0, t0=t0)
        qs, vs = [q0], [v0]
        its, ress, conds = [], [], []
        guess, rows, switches = None, None, 0
        for k in range(steps):
            q1, v1, info = self.step(qs[-1], vs[-1], dt, guess, t0=t0 + k * dt)
            guess = info["guess"]
            switches += rows is not None and bool(np.any(rows != info["rows"]))
            rows = info["rows"]
            qs.append(q1)
            vs.append(v1)
            its.append(info["iterations"])
            ress.append(info["residual"])
            conds.append(info["condition"])
        name = f"energy-momentum ({self.method}" + (f", {self.null_space} P)" if self.method == "null_space" else ")")
        t = t0 + dt * np.arange(len(qs))
        return assemble(name, self.system, self.potential, t, qs, vs, its, ress, conds, self.unknowns, self.dof,
                        self.redundancy, {"dt": dt, "tree": self.tree, "row_switches": switches})


def simulate(system, q0, v0, dt: float, steps: int, potential=None, **options):
    """Convenience: :class:`EnergyMomentum` (``options`` as there) from ``(q0, v0)`` for ``steps``."""
    return EnergyMomentum(system, q0, potential, **options).integrate(q0, v0, dt, steps)
