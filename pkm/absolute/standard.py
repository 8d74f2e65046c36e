"""Standard schemes to compare seed 002's energy–momentum scheme with, on the same systems:

* :class:`GeneralizedAlpha`: the index-3 generalized-α method of Arnold & Brüls (2007) — the
  family Exudyn, Chrono and most multibody codes integrate with — applied to the director-form DAE
  ``M q̈ + Φ_qᵀλ = f(q)``, ``Φ(q, t) = 0`` (constant ``M``, seed 002 eq. 1). Spectral radius at
  infinity ``ρ∞`` (1: no numerical damping; Exudyn's default 0.9). The constraints hold at the
  nodes; energy is not conserved (dissipated for ``ρ∞ < 1``).
* :func:`projected_ode`: the index-1 form (:meth:`~pkm.absolute.system.System.accelerations`)
  integrated by :func:`scipy.integrate.solve_ivp` (RK45, DOP853, Radau, BDF, …) over each output
  step, followed by coordinate projection onto ``Φ = 0`` (:meth:`~pkm.absolute.system.System.assemble`)
  and ``G v = 0`` (:meth:`~pkm.absolute.system.System.project_velocity`).

Both return a :class:`~pkm.absolute.results.Trajectory` with the same health as the energy–momentum
scheme, so their energy drift can be read beside it. Both need independent constraint rows; the
dependent ones are chosen at every step (:func:`~pkm.absolute.energy_momentum.independent_rows`:
a set chosen once can lose rank along the motion) and those at ``q0`` reported.
"""
from __future__ import annotations

import numpy as np
from scipy.integrate import OdeSolver, solve_ivp

from pkm.absolute.checks import (
    MAX_LENGTH,
    MAX_VALUE,
    MIN_DT,
    array,
    count,
    function,
    number,
    positive,
    show,
    time_steps,
)
from pkm.absolute.energy_momentum import (
    ConvergenceError,
    _converged,
    check_force,
    check_potential,
    check_start,
    independent_rows,
    newton_solve,
    step_failed,
)
from pkm.absolute.hessian import ConstraintHessian
from pkm.absolute.redundancy import RTOL
from pkm.absolute.results import assemble
from pkm.absolute.system import as_system as check_system
from pkm.absolute.system import kkt_solve
from pkm.errors import InputError, SingularityError


def _accelerations(system, q, v, f, t, rtol, rows=None, max_condition=None):
    """``(q̈, λ)`` of the index-1 equations with the rows ``rows`` (default: those independent at
    ``(q, t)``); λ over all rows, zero on the others. ``max_condition``: see
    :func:`~pkm.absolute.system.kkt_solve`."""
    if rows is None:
        rows = independent_rows(system, q, t, rtol=rtol)[0]
    G = system.jacobian(q, t)[rows]
    qdd, lam_rows = kkt_solve(system.sparse_mass_matrix(), G, f, system.gamma(q, v, t)[rows], max_condition)
    lam = np.zeros(rows.size)
    lam[rows] = lam_rows
    return qdd, lam


#: The methods of :func:`scipy.integrate.solve_ivp` by name.
IVP_METHODS = ("RK45", "RK23", "DOP853", "Radau", "BDF", "LSODA")
#: Most evaluations of the equations of motion :func:`projected_ode` spends on one output step.
MAX_EVALUATIONS = 20_000


#: Largest condition number of the KKT matrix solved by LU in :func:`projected_ode`; beyond it (a
#: configuration where the constraints nearly lose rank) the truncated least-squares solution.
KKT_CONDITION = 1e10


def _least_squares_accelerations(system, q, v, f, t):
    """``q̈`` of the index-1 equations with every row, where the constraint Jacobian ``G`` has lost
    rank (a singular configuration of the mechanism, where it gains instantaneous mobility): the
    minimum-norm least-squares solution of ``[[M, Gᵀ], [G, 0]] [q̈; λ] = [f; γ]``. Its ``q̈`` is the
    one of the consistent equations (only ``λ`` is not unique: ``M`` is positive definite on the
    null space of ``G``), its ``λ`` the smallest."""
    M = system.sparse_mass_matrix()
    M = M.toarray() if hasattr(M, "toarray") else np.asarray(M, dtype=float)
    G = system.jacobian(q, t)
    n, m = M.shape[0], G.shape[0]
    K = np.block([[M, G.T], [G, np.zeros((m, m))]])
    rhs = np.concatenate([f, system.gamma(q, v, t)])
    x = np.linalg.lstsq(K, rhs, rcond=1.0 / KKT_CONDITION)[0]
    if not np.all(np.isfinite(x)):
        raise SingularityError("the constrained equations of motion have no finite solution here")
    return x[:n]


def _force(potential, q):
    return np.zeros(len(q)) if potential is None else -np.asarray(potential.gradient(q), dtype=float)


def _in_range(y, n: int) -> bool:
    """``y = (q, v)`` finite with ``|q| ≤ MAX_LENGTH`` and ``|v| ≤ MAX_VALUE`` (NaN is out of range)."""
    return bool(np.all(np.abs(y[:n]) <= MAX_LENGTH) and np.all(np.abs(y[n:]) <= MAX_VALUE))


def _flag(value, what: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise InputError(f"{what} must be True or False, got {show(value)}")
    return bool(value)


class GeneralizedAlpha:
    """Index-3 generalized-α (Arnold & Brüls 2007, Multibody Syst. Dyn. 18:185–202).

    Parameters
    ----------
    system, q0:
        The system and a consistent configuration (dependent rows are removed there).
    potential:
        Conservative forces (``f = −∇V``), or None.
    force:
        Other generalized forces ``f(t, q, v)`` (n,), taken at the end of the step (``∂f`` is left
        out of Newton's matrix), or None.
    rho_inf:
        Spectral radius at infinity in [0, 1]: ``α_m = (2ρ∞ − 1)/(ρ∞ + 1)``,
        ``α_f = ρ∞/(ρ∞ + 1)``, ``γ = ½ + α_f − α_m``, ``β = ¼ (γ + ½)²``.
    tol, max_iter:
        Newton tolerance (scaled residual of the equations of motion; ``|Φ|`` to round-off) and
        iteration limit.
    """

    def __init__(self, system, q0, potential=None, *, force=None, rho_inf: float = 0.9, tol: float = 1e-12,
                 max_iter: int = 30, condition: bool = False, rtol: float = RTOL):
        rho_inf = number(rho_inf, "rho_inf", low=0.0, high=1.0)
        rtol = number(rtol, "rtol", low=0.0, high=1.0, low_open=True, high_open=True)
        self.system, self.rho_inf, self.rtol = check_system(system), rho_inf, rtol
        self.potential = check_potential(potential)
        self.force = function(force, "force (f(t, q, v))")
        rows, self.redundancy = independent_rows(system, system._q(q0, "q0"), rtol=rtol)
        self.am = (2.0 * rho_inf - 1.0) / (rho_inf + 1.0)
        self.af = rho_inf / (rho_inf + 1.0)
        self.gamma = 0.5 + self.af - self.am
        self.beta = 0.25 * (self.gamma + 0.5) ** 2
        self.tol = number(tol, "tol", low=0.0, high=1.0, low_open=True, high_open=True)
        self.max_iter = count(max_iter, "max_iter", 1, 1000)
        self.want_condition = _flag(condition, "condition")
        self.M = system.mass_matrix()
        self.hessian = ConstraintHessian(system)
        self.unknowns = system.n + int(rows.sum())
        self.dof = system.n - int(rows.sum())

    def step(self, t1, q0, v0, a0, at0, lam, dt, rows):
        """One step to ``t1`` with the rows ``rows`` (mask): ``(q1, v1, a1, ã1, λ1, info)`` (``a`` the
        accelerations, ``ã`` the algorithmic ones, ``λ`` over all rows, zero on the unused)."""
        system, n = self.system, self.system.n
        q0, v0 = system._q(q0, "q0"), system._qd(v0, "v0")
        a0, at0 = array(a0, "a0", (n,)), array(at0, "at0", (n,))
        t1, dt = number(t1, "t1"), number(dt, "dt", low=MIN_DT, why=" s (a positive time step)")
        if not (isinstance(rows, np.ndarray) and rows.dtype == bool and rows.shape == (system.m,)):
            raise InputError(f"rows must be a boolean mask over the {system.m} active rows, got {show(rows)}")
        M, m, t0 = self.M, int(rows.sum()), t1 - dt
        am, af, beta, gamma = self.am, self.af, self.beta, self.gamma
        c = (1.0 - am) / ((1.0 - af) * beta * dt * dt)
        base = q0 + dt * v0 + dt * dt * (0.5 - beta) * at0
        at1 = (a0 - am * at0) / (1.0 - am)                          # predictor: a1 = a0
        q1 = base + dt * dt * beta * at1
        lam_all = array(lam, "lam", (system.m,)).copy()
        lam = lam_all[rows]
        tol_phi = 1e-12 * (1.0 + float(np.max(np.abs(q0))))
        history = []
        scheme = "generalized-α"
        for it in range(self.max_iter + 1):
            if not np.all(np.abs(q1) <= MAX_LENGTH):   # also NaN
                raise step_failed(scheme, t0, f"Newton's iterate left the range |q| ≤ {MAX_LENGTH:g}")
            at1 = (q1 - base) / (beta * dt * dt)
            a1 = ((1.0 - am) * at1 + am * at0 - af * a0) / (1.0 - af)
            G1 = system.jacobian(q1, t1)[rows]
            f1 = _force(self.potential, q1)
            if self.force is not None:
                f1 = f1 + check_force(self.force(t1, q1, v0 + dt * ((1.0 - gamma) * at0 + gamma * at1)), n)
            R1 = M @ a1 + G1.T @ lam - f1
            phi = system.phi(q1, t1)[rows]
            scale = float(np.linalg.norm(M @ a1) + np.linalg.norm(G1.T @ lam) + np.linalg.norm(f1)) + 1e-300
            history.append(float(np.linalg.norm(R1)) / scale)
            K = np.zeros((n + m, n + m))
            lam_all[:] = 0.0
            lam_all[rows] = lam
            K[:n, :n] = c * M + self.hessian.contract(lam_all, t1)
            if self.potential is not None and self.potential.hessian(q1) is not None:
                K[:n, :n] += self.potential.hessian(q1)
            K[:n, n:], K[n:, :n] = G1.T, G1
            phi_ok = np.max(np.abs(phi), initial=0.0) <= tol_phi
            if (phi_ok and _converged(history, self.tol)) or it == self.max_iter:
                break
            x = newton_solve(K, -np.concatenate([R1, phi]), scheme, t0)
            q1, lam = q1 + x[:n], lam + x[n:]
        if not (phi_ok and _converged(history, self.tol)):
            raise step_failed(scheme, t0, f"Newton's residual {history[-1]:.3g}, |Φ| {np.max(np.abs(phi)):.3g} after "
                                          f"{self.max_iter} iterations")
        v1 = v0 + dt * ((1.0 - gamma) * at0 + gamma * at1)
        cond = float(np.linalg.cond(K)) if self.want_condition else np.nan
        lam_all[:] = 0.0
        lam_all[rows] = lam
        return q1, v1, a1, at1, lam_all, {"iterations": it, "residual": history[-1], "condition": cond,
                                       "history": history}

    def integrate(self, q0, v0, dt: float, steps: int, t0: float = 0.0):
        """``steps`` steps of ``dt`` from a consistent ``(q0, v0)``; starts from the index-1
        accelerations (Arnold & Brüls: ``ã₀ = a₀``)."""
        dt, steps, t0 = time_steps(dt, steps, t0, self.system.n)
        q, v = check_start(self.system, q0, v0, t=t0)
        f = _force(self.potential, q) + (0.0 if self.force is None else check_force(self.force(t0, q, v), q.size))
        a, lam = _accelerations(self.system, q, v, f, t0, self.rtol)
        at = a.copy()
        qs, vs, its, ress, conds = [q], [v], [], [], []
        for k in range(steps):
            rows = independent_rows(self.system, q, t0 + k * dt, rtol=self.rtol)[0]
            q, v, a, at, lam, info = self.step(t0 + (k + 1) * dt, q, v, a, at, lam, dt, rows)
            qs.append(q)
            vs.append(v)
            its.append(info["iterations"])
            ress.append(info["residual"])
            conds.append(info["condition"])
        t = t0 + dt * np.arange(len(qs))
        return assemble(f"generalized-α index 3 (ρ∞ = {self.rho_inf:g})", self.system, self.potential, t, qs, vs,
                        its, ress, conds, self.unknowns, self.dof, self.redundancy, {"dt": dt})


def projected_ode(system, q0, v0, dt: float, steps: int, potential=None, *, force=None, method: str = "RK45",
                  rtol: float = 1e-8, atol: float = 1e-10, t0: float = 0.0, project: bool = True):
    """The index-1 equations (:meth:`~pkm.absolute.system.System.accelerations`) by
    ``scipy.integrate.solve_ivp(method, rtol, atol)`` over each step of ``dt``, then (``project``)
    the coordinates projected onto ``Φ = 0`` and the velocities onto ``G v = 0`` — the textbook
    ODE-with-projection approach. ``force(t, q, v)``: other generalized forces. ``iterations`` in the
    result counts right-hand-side evaluations per step."""
    check_system(system)
    potential, force = check_potential(potential), function(force, "force (f(t, q, v))")
    if not ((isinstance(method, str) and method in IVP_METHODS)
            or (isinstance(method, type) and issubclass(method, OdeSolver))):
        raise InputError(f"method must be one of {', '.join(IVP_METHODS)} (or a scipy OdeSolver class), got "
                         f"{show(method)}")
    rtol = number(rtol, "rtol", low=0.0, high=1.0, low_open=True, high_open=True)
    atol = positive(atol, "atol")
    project = _flag(project, "project")
    dt, steps, t0 = time_steps(dt, steps, t0, system.n)
    q0, v0 = check_start(system, q0, v0, t=t0)
    rows0, report = independent_rows(system, q0, t0)
    n = system.n
    count = [0]
    label = method if isinstance(method, str) else method.__name__

    rows = [rows0]

    def rhs(t, y):  # rows fixed over a step: off the manifold other rows give other accelerations
        count[0] += 1
        if count[0] > MAX_EVALUATIONS:
            raise ConvergenceError(f"projected ODE ({label}): more than {MAX_EVALUATIONS} evaluations of the equations "
                                   f"of motion in the output step from t = {ta[0]:g} (dt = {dt:g}): the motion is too "
                                   f"fast or stiff for it; use a smaller dt (or Radau/BDF for a stiff system)")
        if not _in_range(y, n):
            raise step_failed(f"projected ODE ({label})", ta[0], f"the state left the range |q| ≤ {MAX_LENGTH:g}, "
                                                                f"|v| ≤ {MAX_VALUE:g} at t = {t:g}")
        q, v = y[:n], y[n:]
        f = _force(potential, q) + (0.0 if force is None else check_force(force(t, q, v), n))
        try:
            return np.concatenate([v, _accelerations(system, q, v, f, t, RTOL, rows[0], KKT_CONDITION)[0]])
        except SingularityError:  # the rows chosen at the step's start lost rank on the way (the whole
            rows[0] = independent_rows(system, q, t)[0]  # set need not): choose again here
        try:
            return np.concatenate([v, _accelerations(system, q, v, f, t, RTOL, rows[0], KKT_CONDITION)[0]])
        except SingularityError:  # the whole set (nearly) lost rank: a singular configuration of the mechanism
            return np.concatenate([v, _least_squares_accelerations(system, q, v, f, t)])

    qs, vs, its = [q0], [v0], []
    ta = [t0]
    for k in range(steps):
        ta[0], tb = t0 + k * dt, t0 + (k + 1) * dt
        count[0] = 0
        rows[0] = independent_rows(system, qs[-1], ta[0])[0]
        sol = solve_ivp(rhs, (ta[0], tb), np.concatenate([qs[-1], vs[-1]]), method=method, rtol=rtol, atol=atol)
        if not sol.success:
            raise step_failed(f"projected ODE ({label})", ta[0], f"solve_ivp: {sol.message}".replace("\n", " "))
        if not _in_range(sol.y[:, -1], n):
            raise step_failed(f"projected ODE ({label})", ta[0], f"the state left the range |q| ≤ {MAX_LENGTH:g}, "
                                                                f"|v| ≤ {MAX_VALUE:g}")
        q, v = sol.y[:n, -1], sol.y[n:, -1]
        if project:
            q = system.assemble(q, tb)
            v = system.project_velocity(q, v, tb)
        qs.append(q)
        vs.append(v)
        its.append(count[0])
    t = t0 + dt * np.arange(len(qs))
    name = f"index-1 {label} (rtol {rtol:g})" + (" + projection" if project else "")
    m = int(rows0.sum())
    return assemble(name, system, potential, t, qs, vs, its, np.full(len(its), np.nan), np.full(len(its), np.nan),
                    n + m, n - m, report, {"dt": dt})
