"""Joint-reaction dynamics (seed 003: Huang, Yan, Jeng & Cheing, "Constrained multibody dynamics
avoiding kinematic singularities"; digest §4): the joint reactions are the unknowns of each time
step, and the constraints are imposed on the *end* configuration of a second-order Taylor step.

Unknowns (paper §§5–10, eqs. 34–36). Each joint transmits a wrench ``W = (n; f)`` (moment; force,
world axes) at its point ``p`` (the origin of marker i): ``+W`` on body i and ``−W`` on body j
(action–reaction, eqs. 34–35, about the common point, so it holds for the separated markers of C
and P joints too). ``W`` ranges over the joint's constraint-wrench space — the wrenches its rows
can exert; the free directions (a revolute's axial moment, a ball's moments) carry none, and applied
efforts there (motor torques) enter through ``force``. The reaction components are the coordinates
``Q_j`` of ``W`` in an orthonormal basis ``B_j`` of that space (:meth:`JointReactions.bases`):
world force components and moment components perpendicular to the free axes for S, U and R joints.
So the paper's 45 unknowns of its 3-leg platform (with the 6 known axial moments eliminated) are our
39, one per independent constraint row.

Newton–Euler with reactions (eqs. 5–14, 20). Body k (mass m, world inertia ``J = R J' Rᵀ``):
``a = (f_k + Σ ±f_j)/m``, ``α = J⁻¹(n_k + Σ ±(n_j + (p_j − φ_k) × f_j) − ω × J ω)``, linear in Q
— the paper's ``C`` and ``D`` terms (eq. 14), here in world axes.

The step (eqs. 2–4, A1–A10, corrected as in the digest §4.2): positions follow the Taylor step
``φ' = φ + Δt v + ½Δt² a``, ``R' = exp(Δt ω + ½Δt² α) R`` (agrees with the paper's
``Δq = q̇Δt + ½q̈Δt²`` of every body-fixed vector to O(Δt³) and keeps R' a rotation), and the
reactions ``Q_n`` are those for which the joints hold at the end, ``Φ(q'(Q_n)) = 0``. The paper
linearises once about Q = 0 (its eq. 4, ``[Φ_q + Φ_qq κ] M⁻¹ Zᵀ Q = −Ψ``; in director coordinates
Φ is quadratic, so ``Φ_q + Φ_qq κ`` is exactly ``Φ_q(q + κ)``) and leaves out the current residual;
here Newton's method is iterated from the previous step's reactions until ``|Φ(q')| ≤ tol``, its
matrix being the same ``Φ_q(q') P_int(q') T ½Δt² M⁻¹ Zᵀ`` (``T`` the derivative of exp, ``Zᵀ`` the
map of reactions to body wrenches at ``q_n``). Velocities: the paper's ``v' = v + Δt a`` is first
order and leaves ``Φ_q v' ≠ 0``; here they are the trapezoidal ``v' = v + ½Δt (a_n + a')`` with the
end accelerations ``a'`` from reactions ``Q'`` at ``q'`` that make ``Φ_q(q') v' + Φ_t = 0`` (the
velocity half of RATTLE, Andersen 1983), which makes the scheme second order and keeps the velocity
constraint too. The reactions reported at node n are ``½(Q'_{n−1} + Q_n)``.

Singularities. The paper claims the step matrix is regular at kinematic singularities for any finite
Δt because of ``Φ_qq κ``. That holds for the *left* factor only: at a configuration where ``Φ_q``
loses rank a self-stress ``Q₀ ≠ 0`` with ``Zᵀ Q₀ = 0`` exists, and it is a null vector of the step
matrix whatever Δt (digest §4.4 claim 2 and its caution; tests/test_joint_reactions.py shows it on
two collinear rods). Near such a configuration, at a distance δ, the step matrix's condition grows
like 1/δ (the right factor ``Zᵀ`` only), the multiplier method's ``[[M, Φ_qᵀ], [Φ_q, 0]]`` like 1/δ²
(tests/test_seed003_passage.py). At δ = 0 the null space of the step matrix is the self-stress — the
reactions are statically indeterminate there (the paper's Fig. 1(b)), the motion is not — and the
Newton equations are consistent along a motion that passes the configuration: the step then takes
the minimum-norm correction (singular values below ``σ_max/MAX_CONDITION`` left out), which leaves
the self-stress component of the reactions where the previous step had it, and is accepted only if
Newton's residual reaches ``tol`` — or, a hair off the singular configuration, stalls below
:data:`SINGULAR_TOL` — and the end velocities hold the joints, else
:class:`~pkm.errors.SingularityError`. So a motion through a rank loss of ``Φ_q`` is integrated with
the joints held to ``tol`` (examples/seed003_singularities.py: a parallelogram four-bar through its
flat configuration, where the multiplier formulation's matrix is singular).
What the formulation does not need is any map that a singularity of the
*driven* mechanism or of its task coordinates makes singular: the motors are forces, the unknowns
are the joints' reactions, so the matrix stays regular where actuator coordinates (type II) or task
coordinates (pkm's minimal-coordinate engine; the seed's 3-(RR)S starts on a singularity of its
tilt–heave task map) fail — as does the index-1 form of the same absolute-coordinate DAE
(:func:`~pkm.absolute.standard.projected_ode`), with which it agrees. :meth:`JointReactions.step_matrix`
gives the matrix and :func:`actuated_jacobian` the actuator-locked Jacobian for such studies.
"""
from __future__ import annotations

import numpy as np

from pkm.absolute.body import NQ, angular_velocity, directors, skew
from pkm.absolute.checks import MAX_LENGTH, MAX_VALUE, MIN_DT, array, count, function, number, positive, time_steps
from pkm.absolute.energy_momentum import check_force, check_start, step_failed
from pkm.absolute.forward import actuator_forces
from pkm.absolute.model_checks import check_model
from pkm.absolute.results import assemble
from pkm.absolute.system import as_system as check_system
from pkm.errors import InputError, SingularityError, fmt_condition

#: Condition number of a step matrix above which it is taken as singular (module doc: the minimum-norm
#: correction, the step accepted only if it holds the joints).
MAX_CONDITION = 1e14
#: Largest ``max|Φ|`` accepted from a position step whose matrix is singular, where Newton's residual
#: stalls at the part of Φ that the reactions of the reduced range cannot reach (≈ 1e-11 on the
#: parallelogram 1e-10 rad from its flat configuration); the next regular step removes it.
SINGULAR_TOL = 1e-9


def cross(a, b) -> np.ndarray:
    """``a × b`` over the last axis (np.cross's axis handling costs more than the product here)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return np.stack([a[..., 1] * b[..., 2] - a[..., 2] * b[..., 1], a[..., 2] * b[..., 0] - a[..., 0] * b[..., 2],
                     a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]], axis=-1)


def so3_exp(theta) -> np.ndarray:
    """Rodrigues' formula, ``exp(θ̂)`` (3×3)."""
    theta = np.asarray(theta, dtype=float)
    a = float(np.linalg.norm(theta))
    K = skew(theta)
    if a < 1e-8:
        return np.eye(3) + K + 0.5 * K @ K
    return np.eye(3) + np.sin(a) / a * K + (1.0 - np.cos(a)) / a**2 * K @ K


def so3_left_jacobian(theta) -> np.ndarray:
    """``T(θ)`` with ``exp((θ + δθ)^) = exp((T δθ)^) exp(θ̂)`` to first order (world-frame dexp)."""
    theta = np.asarray(theta, dtype=float)
    a = float(np.linalg.norm(theta))
    K = skew(theta)
    if a < 1e-6:
        return np.eye(3) + 0.5 * K + K @ K / 6.0
    return np.eye(3) + (1.0 - np.cos(a)) / a**2 * K + (a - np.sin(a)) / a**3 * K @ K


class JointReactions:
    """Seed 003's joint-reaction time stepping on a :class:`~pkm.absolute.system.System` (module doc).

    Parameters
    ----------
    system:
        Bodies and joints; only its active rows are used (remove dependent rows first, e.g. the
        loader's model does).
    force:
        Applied generalized forces ``f(t, q, v)`` (n,) in director coordinates, as for
        :func:`~pkm.absolute.standard.projected_ode` (gravity, motor torques, …), or None.
    tol, max_iter:
        Newton's tolerance on ``max|Φ(q')|`` and iteration limit per step.
    """

    def __init__(self, system, *, force=None, tol: float = 1e-12, max_iter: int = 25):
        self.system, self.force = check_system(system), function(force, "force (f(t, q, v))")
        self.tol = positive(tol, "tol", high=1.0)
        self.max_iter = count(max_iter, "max_iter", 1, 1000)
        self.N = len(system.bodies)
        self.mass = np.array([b.mass for b in system.bodies])
        self.inertia = np.array([b.inertia for b in system.bodies])
        self.nint = 6 * self.N
        # joints with their active-row masks and the body index on each side (None: ground)
        self.joints = []
        for k, j in enumerate(system.joints):
            mask = system._joint_mask(k)
            if mask.any():
                sides = tuple(None if b is None else system.bodies.index(b) for b in j.bodies)
                self.joints.append((j, np.flatnonzero(mask), sides))
        self.sizes = np.array([rows.size for _, rows, _ in self.joints], dtype=int)
        self.offsets = np.concatenate([[0], np.cumsum(self.sizes)])
        self.unknowns = int(self.offsets[-1])

    # ------------------------------------------------------------------ reactions ↔ wrenches
    def _side(self, k, q):
        return None if k is None else q[NQ * k:NQ * k + NQ]

    def bases(self, q, Gt=None, t: float = 0.0):
        """Per joint ``(p, B, C)``: the joint point p (marker i origin, world), an orthonormal basis B
        (6 × m_j) of the wrenches (moment about p; force) its active rows exert on body i, and C
        (6N × m_j), the body wrenches (about the centres of mass) of the reaction coordinates Q_j.

        From ``G̃ = Φ_q P_int`` (``Gt``, joint rows × 6N): a multiplier vector λ of the joint's rows
        exerts ``−G̃ᵀλ`` on the bodies' twists (ω; v), i.e. the wrenches (moment about the centre of
        mass; force) of ``M q̈ + Φ_qᵀλ = f``; on body i that is ``W_i = S_i(−G̃_iᵀλ)`` about p, ``S``
        moving the moment from the centre of mass to p. With ``W_i = B R`` (QR, diag R > 0), ``Q = Rλ`` and
        ``C = −G̃ᵀR⁻¹``. A ground body i takes body j's wrench, reversed, about p."""
        Gt = self._reduced_jacobian(q, t) if Gt is None else Gt
        out = []
        for (j, rows, (i, k)), o, m in zip(self.joints, self.offsets, self.sizes):
            p = j.marker_i.world_pose(self._side(i, q))[:3, 3]
            Cl = -Gt[o:o + m].T
            side, sign = (i, 1.0) if i is not None else (k, -1.0)
            W = sign * Cl[6 * side:6 * side + 6]
            W = np.concatenate([W[:3] - skew(p - q[NQ * side:NQ * side + 3]) @ W[3:], W[3:]])
            B, R = np.linalg.qr(W)
            flip = np.where(np.diag(R) < 0.0, -1.0, 1.0)   # the unique QR with diag(R) > 0: B varies
            B, R = B * flip, R * flip[:, None]             # continuously along a motion
            out.append((p, B, np.linalg.solve(R.T, Cl.T).T))
        return out

    def wrench_map(self, q, bases=None) -> np.ndarray:
        """``Zᵀ`` (6N × unknowns): the body wrenches (moment about the centre of mass; force, world
        axes; body order) of the reactions ``Q`` (columns ``C`` of :meth:`bases`)."""
        bases = self.bases(q) if bases is None else bases
        return np.concatenate([C for _, _, C in bases], axis=1) if bases else np.zeros((6 * self.N, 0))

    def joint_wrenches(self, q, Q, bases=None) -> dict:
        """``{joint name: (p, W_j)}``: each joint's reaction on its body j (marker j's body, the
        file's child) as (moment about p; force), world axes, p the joint point."""
        bases = self.bases(q) if bases is None else bases
        Q = array(Q, "Q", (self.unknowns,))
        return {j.name: (p, -B @ Q[o:o + B.shape[1]])
                for (j, _, _), (p, B, _), o in zip(self.joints, bases, self.offsets)}

    # ------------------------------------------------------------------ bodies
    def _state(self, q, v):
        D = directors(q.reshape(self.N, NQ))
        omega = angular_velocity(q.reshape(self.N, NQ), v.reshape(self.N, NQ))
        return D, omega, v.reshape(self.N, NQ)[:, :3].copy()

    def _applied(self, t, q, v) -> np.ndarray:
        """Applied body wrenches (N, 6) (moment about the centre of mass; force) of ``force``: the
        director form's ``P_intᵀ f`` (moment ``Σ d_I × f_{d_I}``, force ``f_φ``, seed 002 eq. 36)."""
        out = np.zeros((self.N, 6))
        if self.force is None:
            return out
        f = check_force(self.force(t, q, v), NQ * self.N).reshape(self.N, 4, 3)
        out[:, :3] = cross(q.reshape(self.N, 4, 3)[:, 1:, :], f[:, 1:, :]).sum(axis=1)
        out[:, 3:] = f[:, 0, :]
        return out

    def _inverse_inertia(self, D) -> np.ndarray:
        """World inverse inertias (N, 3, 3): ``D J'⁻¹ Dᵀ``."""
        return D @ np.linalg.inv(self.inertia) @ np.swapaxes(D, -1, -2)

    def accelerations(self, D, omega, wrench) -> np.ndarray:
        """Newton–Euler (paper eqs. 9–10 in world axes): ``(α; a)`` (N, 6) from body wrenches (N, 6)."""
        Jw = D @ self.inertia @ np.swapaxes(D, -1, -2)
        Jinv = self._inverse_inertia(D)
        gyro = cross(omega, np.einsum("kab,kb->ka", Jw, omega))
        alpha = np.einsum("kab,kb->ka", Jinv, wrench[:, :3] - gyro)
        return np.concatenate([alpha, wrench[:, 3:] / self.mass[:, None]], axis=1)

    def _coordinates(self, D, phi) -> np.ndarray:
        q = np.empty((self.N, NQ))
        q[:, :3] = phi
        q[:, 3:] = np.swapaxes(D, -1, -2).reshape(self.N, 9)
        return q.ravel()

    def _velocities(self, D, omega, vel) -> np.ndarray:
        v = np.empty((self.N, 4, 3))
        v[:, 0] = vel
        v[:, 1:] = cross(omega[:, None, :], np.swapaxes(D, -1, -2))
        return v.ravel()

    def _reduced_jacobian(self, q, t) -> np.ndarray:
        """``Φ_q P_int`` of the joint rows (unknowns × 6N): the joints' rows against the bodies'
        twists (ω; v_φ)."""
        G = self.system.jacobian(q, t)[self.nint:]
        return G @ self.system.internal_null_space(q)

    # ------------------------------------------------------------------ one step
    def _predict(self, D, phi, omega, vel, acc, dt):
        theta = dt * omega + 0.5 * dt * dt * acc[:, :3]
        R = np.array([so3_exp(th) for th in theta])
        return R @ D, phi + dt * vel + 0.5 * dt * dt * acc[:, 3:], theta

    def step_matrix(self, q, v, dt: float, t: float = 0.0, Q=None) -> np.ndarray:
        """The position step's matrix ``∂Φ(q'(Q))/∂Q`` at ``Q`` (default 0: the paper's eq. 4 / A9,
        ``−½Δt² [Φ_q + Φ_qq κ] M⁻¹ Zᵀ`` up to sign), unknowns × unknowns."""
        q, v = self.system._q(q, "q"), self.system._qd(v, "v")
        dt, t = number(dt, "dt", low=MIN_DT, why=" s (a positive time step)"), number(t, "t")
        Q = np.zeros(self.unknowns) if Q is None else array(Q, "Q", (self.unknowns,))
        D, omega, vel = self._state(q, v)
        Z = self.wrench_map(q, self.bases(q, None, t))
        wrench = self._applied(t, q, v) + (Z @ Q).reshape(self.N, 6)
        acc = self.accelerations(D, omega, wrench)
        D1, phi1, theta = self._predict(D, q.reshape(self.N, NQ)[:, :3], omega, vel, acc, dt)
        return self._position_matrix(self._coordinates(D1, phi1), D, theta, Z, dt, t + dt)

    def _position_matrix(self, q1, D, theta, Z, dt, t1):
        Jinv = self._inverse_inertia(D)
        S = np.zeros((6 * self.N, 6 * self.N))
        for k in range(self.N):
            S[6 * k:6 * k + 3, 6 * k:6 * k + 3] = so3_left_jacobian(theta[k]) @ Jinv[k]
            S[6 * k + 3:6 * k + 6, 6 * k + 3:6 * k + 6] = np.eye(3) / self.mass[k]
        return self._reduced_jacobian(q1, t1) @ (0.5 * dt * dt * S) @ Z

    def _singular(self, what, t, cond):
        return SingularityError(f"joint reactions: the {what} matrix is singular at t = {t:g} "
                                f"(condition {fmt_condition(cond)}) and no reactions hold the joints: a singular "
                                f"configuration the motion cannot pass, or a step too large for the motion (try a "
                                f"smaller dt)", condition=cond, threshold=MAX_CONDITION)

    def _solve(self, A, b, what, t):
        """``A⁻¹ b`` and cond(A); for a singular ``A`` (cond > :data:`MAX_CONDITION`) the minimum-norm
        solution with singular values below ``σ_max/MAX_CONDITION`` left out (module doc, static
        indeterminacy): it leaves the reactions' self-stress component where it was. Whether it
        solves the step is checked by the caller (the position step's Newton residual, the end
        velocity's constraint), which raises :class:`~pkm.errors.SingularityError` if not."""
        if not (np.all(np.isfinite(A)) and np.all(np.isfinite(b))):
            raise step_failed("joint reactions", t, f"the {what}'s Newton iterate diverged to non-finite values")
        U, s, Vt = np.linalg.svd(A)
        cond = float(s[0] / s[-1]) if s.size and s[-1] > 0.0 else np.inf
        if s.size and np.isfinite(cond) and cond <= MAX_CONDITION:
            return Vt.T @ ((U.T @ b) / s), cond
        keep = s > s[0] / MAX_CONDITION if s.size and s[0] > 0.0 else np.zeros(s.size, bool)
        return Vt[keep].T @ ((U[:, keep].T @ b) / s[keep]), cond

    def step(self, t, q, v, Q_guess, dt: float, Gt=None):
        """One step from ``(t, q, v)``: ``(q', v', Q_n, Q', info)`` with ``Q_n`` the reactions of
        the position step (at ``q``) and ``Q'`` those of the end velocity (at ``q'``); ``Gt``:
        ``Φ_q P_int`` at ``(q, t)`` if known (``info["Gt"]`` is the one at the end)."""
        system, N = self.system, self.N
        q, v = system._q(q, "q"), system._qd(v, "v")
        t, dt = number(t, "t"), number(dt, "dt", low=MIN_DT, why=" s (a positive time step)")
        t1 = t + dt
        D, omega, vel = self._state(q, v)
        phi = q.reshape(N, NQ)[:, :3]
        applied = self._applied(t, q, v)
        Z = self.wrench_map(q, self.bases(q, Gt, t))
        Q = array(Q_guess, "Q_guess", (self.unknowns,)).copy()
        conds, errs = [], []
        for it in range(self.max_iter + 1):
            acc = self.accelerations(D, omega, applied + (Z @ Q).reshape(N, 6))
            D1, phi1, theta = self._predict(D, phi, omega, vel, acc, dt)
            q1 = self._coordinates(D1, phi1)
            if not np.all(np.abs(q1) <= MAX_LENGTH):   # also NaN
                raise step_failed("joint reactions", t, f"Newton's iterate left the range |q| ≤ {MAX_LENGTH:g}")
            res = system.phi(q1, t1)[self.nint:]
            err = float(np.max(np.abs(res), initial=0.0))
            errs.append(err)
            singular = bool(conds) and conds[-1] > MAX_CONDITION
            if err <= self.tol or (singular and err <= SINGULAR_TOL and err >= 0.5 * errs[-2]):
                break   # converged, or (a rank loss of Zᵀ) stalled at what the reactions cannot reach
            if it == self.max_iter:
                if conds and max(conds) > MAX_CONDITION:
                    raise self._singular("position step", t, max(conds))
                raise step_failed("joint reactions", t, f"max|Φ| = {err:.3g} after {it} Newton iterations")
            dQ, cond = self._solve(self._position_matrix(q1, D, theta, Z, dt, t1), -res, "position step", t)
            conds.append(cond)
            Q = Q + dQ
        # velocities: trapezoidal with end reactions Q' making Φ_q(q') v' + Φ_t = 0
        half = np.concatenate([omega, vel], axis=1) + 0.5 * dt * acc
        G1 = self._reduced_jacobian(q1, t1)
        rhs_t = -system.phi_t(q1, t1)[self.nint:]
        Z1 = self.wrench_map(q1, self.bases(q1, G1, t1))
        Jinv1 = self._inverse_inertia(D1)
        Minv = np.zeros((6 * N, 6 * N))
        for k in range(N):
            Minv[6 * k:6 * k + 3, 6 * k:6 * k + 3] = Jinv1[k]
            Minv[6 * k + 3:6 * k + 6, 6 * k + 3:6 * k + 6] = np.eye(3) / self.mass[k]
        A = G1 @ (0.5 * dt * Minv) @ Z1
        tw = half.copy()
        Q1 = Q.copy()
        for _ in range(self.max_iter):
            v1 = self._velocities(D1, tw[:, :3], tw[:, 3:])
            free = half + 0.5 * dt * self.accelerations(D1, tw[:, :3], self._applied(t1, q1, v1))
            Q1, cond1 = self._solve(A, rhs_t - G1 @ free.ravel(), "velocity step", t)
            new = free + 0.5 * dt * (Minv @ (Z1 @ Q1)).reshape(N, 6)
            change = float(np.max(np.abs(new - tw)))
            tw = new
            if change <= 1e-14 * (1.0 + float(np.max(np.abs(tw)))):
                break
        v1 = self._velocities(D1, tw[:, :3], tw[:, 3:])
        if cond1 > MAX_CONDITION:   # the minimum-norm end reactions: accepted if they hold the joints' velocities
            miss = float(np.max(np.abs(G1 @ tw.ravel() - rhs_t), initial=0.0))
            if not miss <= 1e-9 * (1.0 + float(np.max(np.abs(tw)))):
                raise self._singular("velocity step", t, cond1)
        return q1, v1, Q, Q1, {"iterations": it, "residual": err, "condition": max(conds, default=np.nan),
                               "velocity_condition": cond1, "Gt": G1}

    def land(self, t, q, v, Q_guess, dt: float, event, bisections: int = 60):
        """The step from ``(t, q, v)`` of the length ``h`` in (0, dt] whose end is a root of the
        scalar ``event(q)`` (a configuration to study, e.g. a singular one), by bisection on ``h``:
        ``(h, q', v', Q_n, Q', info)``. ``event`` must change sign between ``q`` and the end of the
        full step ``dt``, else :class:`~pkm.errors.InputError`."""
        event = function(event, "event (a scalar function of q)", optional=False)
        dt = number(dt, "dt", low=MIN_DT, why=" s (a positive time step)")
        bisections = count(bisections, "bisections", 1, 200)
        sign = lambda x: np.sign(number(event(x), "event(q)"))
        start = sign(self.system._q(q, "q"))
        if start == 0.0:
            raise InputError(f"land: event(q) is 0 at the start (t = {t:g}): the step is there already")
        if sign(self.step(t, q, v, Q_guess, dt)[0]) == start:
            raise InputError(f"land: event(q) does not change sign over the step of {dt:g} s from t = {t:g}")
        lo, hi = 0.0, dt
        for _ in range(bisections):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if sign(self.step(t, q, v, Q_guess, mid)[0]) == start else (lo, mid)
        return (hi, *self.step(t, q, v, Q_guess, hi))

    # ------------------------------------------------------------------ trajectories
    def integrate(self, q0, v0, dt: float, steps: int, t0: float = 0.0):
        """``steps`` steps of ``dt`` from a consistent ``(q0, v0)``: a
        :class:`~pkm.absolute.results.Trajectory`; ``condition`` is the largest condition number of
        the position step's Newton matrices (NaN for a step whose start guess needed none), and ``info`` holds ``velocity_condition`` (per step),
        ``joints`` (names) and ``wrenches`` (N+1, joints, 6): each joint's reaction on its body j
        (the file's child) as (moment about the joint point; force), world axes, at the nodes —
        ``½(Q'_{n−1} + Q_n)`` inside, ``Q_0`` and ``Q'_{N−1}`` at the ends (the two are O(Δt) apart
        and their mean is the reaction at t_n to O(Δt²))."""
        dt, steps, t0 = time_steps(dt, steps, t0, self.system.n)
        q, v = check_start(self.system, q0, v0, t=t0)
        qs, vs, its, ress, conds, vconds, Qn, Q1s = [q], [v], [], [], [], [], [], []
        Q, Gt = np.zeros(self.unknowns), None
        for k in range(steps):
            q, v, Q, Q1, info = self.step(t0 + k * dt, q, v, Q, dt, Gt)
            Gt = info["Gt"]
            for lst, val in ((qs, q), (vs, v), (Qn, Q), (Q1s, Q1), (its, info["iterations"]),
                             (ress, info["residual"]), (conds, info["condition"]),
                             (vconds, info["velocity_condition"])):
                lst.append(val)
        t = t0 + dt * np.arange(len(qs))
        nodes = [Qn[0]] + [0.5 * (a + b) for a, b in zip(Q1s[:-1], Qn[1:])] + [Q1s[-1]] if Qn \
            else [np.zeros(self.unknowns)]
        wrenches = np.array([[w for _, w in self.joint_wrenches(qn, Qk, self.bases(qn, None, tn)).values()]
                             for qn, Qk, tn in zip(qs, nodes, t)])
        return assemble("joint reactions (seed 003, Taylor step + trapezoidal velocities)", self.system, None, t,
                        qs, vs, its, ress, conds, self.unknowns, self.system.n - self.system.m, None,
                        {"dt": dt, "velocity_condition": np.array(vconds), "wrenches": wrenches,
                         "joints": [j.name for j, _, _ in self.joints]})


def efforts_force(model, efforts):
    """``f(t, q, v)``: gravity plus constant actuator ``efforts`` of a loader model
    (:func:`pkm.absolute.forward.actuator_forces`: an R actuator's torque turns its child about the
    joint axis and its parent by −τ, a P actuator's force pushes them apart along it), for
    :class:`JointReactions` and :func:`~pkm.absolute.standard.projected_ode`."""
    check_model(model)
    gravity = model.system.gravity_force(model.gravity)
    efforts = array(efforts, f"efforts (one per actuator: {len(model.actuators)})", (len(model.actuators),),
                    bound=MAX_VALUE)
    return lambda t, q, v: gravity + actuator_forces(model, q, efforts)


def actuated_jacobian(model, q) -> np.ndarray:
    """The joints' ``Φ_q P_int`` (rows × 6N, twists (ω; v) per body) with one row per actuator
    appended: the actuator's joint rate, ``z·(ω_child − ω_parent)`` (R) or ``z·(v_child − v_parent)``
    at the child's marker (P), z the joint axis. Square for a mechanism with as many actuators as
    DOF; it loses rank where locking the actuators leaves the mechanism movable — the singular
    configurations of the driven mechanism (type II), where a formulation in actuator coordinates
    cannot solve for the other velocities. With the actuators driven by forces (as here) the joints'
    own Jacobian may stay regular there."""
    system = check_model(model).system
    q = system._q(q)
    nint = 6 * len(system.bodies)
    G = system.jacobian(q)[nint:] @ system.internal_null_space(q)
    rows = np.zeros((len(model.actuators), G.shape[1]))
    for r, a in enumerate(model.actuators):
        qp = None if a.parent.body is None else q[system.body_slice(a.parent.body)]
        axis = a.parent.world_pose(qp)[:3, 2]
        point = a.child.world_pose(q[system.body_slice(a.child.body)])[:3, 3]
        for sign, body in ((1.0, a.child.body), (-1.0, a.parent.body)):
            if body is None:
                continue
            k = system.bodies.index(body)
            if a.type == "R":
                rows[r, 6 * k:6 * k + 3] += sign * axis
            else:   # velocity of the point: v_φ + ω × (point − φ) → axis·v_φ + ((point − φ) × axis)·ω
                rows[r, 6 * k + 3:6 * k + 6] += sign * axis
                rows[r, 6 * k:6 * k + 3] += sign * cross(point - q[NQ * k:NQ * k + 3], axis)
    return np.vstack([G, rows])
