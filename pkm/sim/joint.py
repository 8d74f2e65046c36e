"""Forward dynamics in joint coordinates plus task velocity (paper 8.1.2, eq. 131–134).

The state is ``(θ, V_t)``: every limb's tree variables ``θ_(l)`` — all its joints, the loops'
dependent ones included — and the task velocity ``V_t`` (``= ẋ`` for a translational task
space), extended by the actuator work ``w = ∫ u·θ̇_act dt``. The ODEs are

    ``θ̇_(l) = H_(l)(θ) F_(l)(θ) V_t``  (eq. 134),
    ``V̇_t = M_t⁻¹(θ)(J_IKᵀ(θ) u + W_t^EE − C_t(θ, V_t) V_t − W_t^grav(θ))``  (eq. 133),

δ_p + n first-order equations (the spurious ``J_FK`` of the printed eq. 132 dropped, paper Sec. 8.1).

**What is evaluated where.** The right-hand side is evaluated *at the state's θ itself*, limb by
limb, with no inverse kinematics: ``H_(l)`` from the limb's loop constraints ``G(θ_(l))`` (eq.
44–45, 76–77), ``F_(l) = L_p⁺ P_p`` with ``L_p = J_p H`` (eq. 80, 94), the rows of ``F`` of the
actuated joints as ``J_IK`` (eq. 97–98), and the task-space terms by Jourdain's principle with
``Θ_(l) = H_(l) F_(l)`` (eq. 108–112): ``M_t = Σ Θᵀ M̄_(l) Θ + P_pᵀ M_p P_p`` and ``C_t V_t +
W_t^grav − W_t^EE = Σ Θᵀ τ_(l)(θ, θ̇, θ̈⁰) + P_pᵀ(φ_p(V̇_p = 0) − W^EE)``, where ``τ_(l)`` is the
limb tree's inverse dynamics (platform massless, :func:`pkm.algorithms.manipulator.dynamics_trees`),
``φ_p`` the platform's (eq. 104–106) at the task coordinates of θ, and ``θ̈⁰ = H q̈⁰ + Ḣ q̇`` with
``q̈⁰ = −L_p⁺(J̇_p θ̇ + J_p Ḣ q̇)`` the joint accelerations at ``V̇_t = 0`` (eq. 88 corrected, spec
§8.3). Only on the constraint manifold does this equal the task form (:mod:`pkm.sim.forward`);
there the tests compare both. The batched kernel of :func:`pkm.sim.forward.forward_dynamics` is
*not* used: its inverse kinematics would move θ onto the manifold at every evaluation, so the
integrated state would no longer be the θ of eq. 134 but its silent projection — the task form
with θ as a cache.

**Drift and projection.** The exact flow of eq. 134 keeps the loop constraints (``G H = 0``) and,
to first order, the platform closure (every limb's platform moves with ``L_p L_p⁺ P_p V_t``), but
the integrator does not: each step leaves θ off the manifold by its local error. After every
accepted step a separate *projection* puts θ back (paper Sec. 3.5–3.7, eq. 75–84, §8.5: geometric Newton corrections):
a minimum-norm Gauss–Newton iteration on the stacked residuals ``r = (g_(l)(θ_(l)); log(C_p(x)⁻¹
C_p(l)(θ_(l))))_l`` — each limb's loop residuals (eq. 12) and the mismatch of its platform pose
with a common platform pose ``C_p(x)``, the task coordinates ``x`` being unknowns too — with the
Jacobian ``[G_(l), 0; D_l J_p(l), −D_l Ad_{E_l⁻¹} P_p]``, ``D_l = dexp⁻¹(−ξ_l)``. Each step is the
correction of least norm ``‖Δθ‖`` (``Δx`` free): ``Δθ = −(P A_θ)⁺ P r`` with ``P`` the projector
onto the complement of the columns of ``A_x`` and ``⁺`` the pseudo-inverse truncated to the rank
``P A_θ`` has on the manifold (:data:`RANK_TOL`), then ``Δx`` by least squares. ``V_t`` needs no
correction (every ``V_t`` is admissible). The integrators of :mod:`pkm.sim.simulate` call
:meth:`JointRhs.accept` after each accepted step and go on from the projected state (scipy's
``solver.y`` and first stage ``solver.f`` reset: one more evaluation per corrected step). Every
projection is recorded in ``result.info``: the time, the residual it removed and how far it moved θ.

**Singularities.** Like the task form, the run stops with :class:`pkm.SingularityError` naming
the time where J_IK degenerates: an evaluation where ``G_y``, a limb's ``L_p`` or J_IK is ill
conditioned, an adaptive step that collapses, or — checked after every accepted step, since a
step may jump over a limb's singularity without any stage close to it — a row of J_IK that
changed sign within the step (:meth:`JointRhs._crossing`).

Outputs are the integrator's own states (the dense output between the projected start of a step
and its unprojected end, or RK4's unprojected step ends), so ``result.closure`` is the drift the
integrator really left there — bounded by one step's local error with the projection, growing
without it (``project=False``). :class:`JointModel`, on the per-sample reference algorithms (a few
hundred µs per evaluation), is the reference; :class:`JointRhs` evaluates eq. 133–134 on the numba
kernel (:mod:`pkm.sim.joint_kernel`) unless ``kernel=False``.
"""
from __future__ import annotations

import numpy as np

from pkm.algorithms import constraints as cons
from pkm.algorithms.dynamics import inverse_dynamics, mass_matrix
from pkm.algorithms.kinematics import body_accelerations, body_jacobians, body_twists, forward_kinematics
from pkm.algorithms.limb import SINGULARITY_THRESHOLD, _check_condition
from pkm.algorithms.manipulator import dynamics_trees, platform_inertia, platform_residual
from pkm.errors import IKError, InputError, SingularityError, fmt_array, fmt_condition
from pkm.lie import Ad_inv, dexp_inv_se3, log_se3
from pkm.sim.joint_kernel import JointKernel
from pkm.sim.outputs import Energy
from pkm.sim.task import translational_axes

#: The projection iterates until every residual (loop closure, platform mismatch) is ≤ this.
PROJECT_TOL = 1e-13
PROJECT_ITER = 20
#: Singular values of the closure Jacobian below this (relative) count as zero on the manifold:
#: its null space is the manifold's tangent space. Off the manifold those singular values grow
#: like the distance to it, so the projection keeps the rank it found at the (closed) initial
#: state — a least-squares cut-off would divide second-order residuals by them and step far
#: along the manifold.
RANK_TOL = 1e-8
#: The kernel evaluates states whose limbs' ``G_y`` and ``L_p`` have condition numbers up to this
#: (its ``L_p⁺`` from the normal equations loses ~cond² of the digits); closer to a limb's
#: singularity the reference (SVD) evaluates them, with its own checks and errors.
FAST_CONDITION = 1e4


class JointModel:
    """The joint-coordinate EOM (eq. 133–134) and the closure projection of one robot (see the
    module docstring); ``theta`` is all limbs' tree variables, limb after limb."""

    def __init__(self, robot, gravity=None, wrench=None, singularity_threshold=SINGULARITY_THRESHOLD):
        if robot._rot:
            raise InputError("the joint form supports translational task spaces (this robot's rotates: form='task')")
        self.robot = robot
        self.g0 = robot.spec.gravity if gravity is None else np.asarray(gravity, dtype=float)
        self.wrench = None if wrench is None else np.asarray(wrench, dtype=float).reshape(6)
        self.threshold = float(singularity_threshold)
        self.trees = dynamics_trees(robot)
        self.Mp = platform_inertia(robot)
        self.P = robot.P_p
        self.offs = np.cumsum([0] + [l.n for l in robot.limbs])
        self.n = int(self.offs[-1])
        # row of F_(l) (position in q_(l)) of each actuator, in actuator_names order (eq. 97–98)
        self.act_rows = [np.array([list(l.q_index).index(a) for a in l.actuated], int) for l in robot.limbs]
        self.act_flat = np.concatenate([self.offs[k] + l.actuated for k, l in enumerate(robot.limbs)])
        self.axes = ["xyz".index(c[1]) for c in robot.task.components]
        self.rank = None  # rank of the closure Jacobian in θ (x eliminated) on the manifold

    def split(self, theta):
        return [theta[self.offs[k]:self.offs[k + 1]] for k in range(len(self.robot.limbs))]

    def _x_of(self, poses):
        """Task coordinates of the limbs' platform poses: the mean of their positions in the
        platform's reference axes (they agree on the manifold)."""
        p = np.mean([C[:3, 3] for C in poses], axis=0)
        return (self.robot.R0.T @ p)[self.axes]

    def task_coordinates(self, theta) -> np.ndarray:
        """``x`` of a joint state (the common platform position of the limbs)."""
        return self._x_of([forward_kinematics(l.tree, th)[l.platform]
                           for l, th in zip(self.robot.limbs, self.split(theta))])

    # ------------------------------------------------------------------ eq. 133–134
    def _limb(self, limb, th):
        """``(C, J, H, L_p⁺, F)`` of one limb at ``θ_(l)``: ``H`` (eq. 44–45, 76–77), ``L_p = J_p H``
        (eq. 80) and ``F = L_p⁺ P_p`` (eq. 94); SingularityError where ``G_y`` or ``L_p`` is ill
        conditioned."""
        C = forward_kinematics(limb.tree, th)
        J = body_jacobians(limb.tree, th)
        H = limb._H(C, J, self.threshold)
        Lp = J[limb.platform] @ H
        _check_condition(Lp, self.threshold, f"limb {limb.name!r}: the platform Jacobian L_p")
        Lp_pinv = np.linalg.pinv(Lp)
        return C, J, H, Lp_pinv, Lp_pinv @ self.P

    def jacobian_ik(self, theta) -> np.ndarray:
        """``J_IK`` (eq. 97–98): the actuated rows of every limb's ``F``."""
        return np.vstack([self._limb(limb, th)[4][self.act_rows[k]]
                          for k, (limb, th) in enumerate(zip(self.robot.limbs, self.split(theta)))])

    def evaluate(self, theta, Vt):
        """``(θ̇, M_t, b, J_IK, x)`` at the joint state ``(θ, V_t)``: ``θ̇ = H F V_t`` (eq. 134) and the
        task-space EOM ``M_t V̇_t + b = J_IKᵀ u`` with ``b = C_t V_t + W_t^grav − W_t^EE`` (eq. 133).
        Raises :class:`SingularityError` where ``G_y`` or a limb's ``L_p`` is ill conditioned."""
        robot, P, d = self.robot, self.P, self.robot.task_dof
        M_t = P.T @ self.Mp @ P
        b = np.zeros(d)
        J_IK = np.empty((robot.n_act, d))
        thd_all = np.empty(self.n)
        poses = []
        a = 0
        for k, (limb, th) in enumerate(zip(robot.limbs, self.split(theta))):
            tree, p = limb.tree, limb.platform
            C, J, H, Lp_pinv, F = self._limb(limb, th)
            Theta = H @ F
            qd = F @ Vt
            thd = H @ qd  # eq. 134
            V = body_twists(tree, th, thd)
            Ab = body_accelerations(tree, th, thd, np.zeros(limb.n))  # Ab[p] = J̇_p θ̇
            Hdq = limb._Hdot_qd(C, J, V, Ab)
            thdd0 = H @ (-Lp_pinv @ (Ab[p] + J[p] @ Hdq)) + Hdq  # θ̈ at V̇_t = 0 (eq. 88, paper Sec. 4.2, eq. 90–93)
            M_t += Theta.T @ mass_matrix(self.trees[k], th) @ Theta
            b += Theta.T @ inverse_dynamics(self.trees[k], th, thd, thdd0, self.g0)
            na = len(limb.actuated)
            J_IK[a:a + na] = F[self.act_rows[k]]
            a += na
            thd_all[self.offs[k]:self.offs[k + 1]] = thd
            poses.append(C[p])
        x = self._x_of(poses)
        phi = platform_residual(self.Mp, robot.platform_pose(x), P @ Vt, np.zeros(6), self.g0)
        if self.wrench is not None:
            phi = phi - self.wrench
        b += P.T @ phi
        return thd_all, M_t, b, J_IK, x

    # ------------------------------------------------------------------ closure and projection
    def closure(self, theta, x, jacobian=True):
        """Stacked residuals ``r`` (each limb's loops, then its platform mismatch
        ``ξ_l = log(C_p(x)⁻¹ C_p(l))``), per-limb largest ``|r|`` and, with ``jacobian``, ``∂r/∂θ``
        and ``∂r/∂x`` (module docstring)."""
        robot, P = self.robot, self.P
        Cx = robot.platform_pose(x)
        res, per_limb, A_th, A_x = [], [], [], []
        for k, (limb, th) in enumerate(zip(robot.limbs, self.split(theta))):
            C = forward_kinematics(limb.tree, th)
            J = body_jacobians(limb.tree, th) if jacobian else None
            E = np.linalg.solve(Cx, C[limb.platform])
            xi = log_se3(E)
            r = np.concatenate([limb._residual(C), xi])
            res.append(r)
            per_limb.append(float(np.max(np.abs(r))))
            if jacobian:
                D = dexp_inv_se3(-xi)
                rows = np.zeros((len(r), self.n))
                m = len(r) - 6
                if m:
                    rows[:m, self.offs[k]:self.offs[k + 1]] = np.vstack(
                        [cons.jacobian(lp.cut, C, J)[lp.rows] for lp in limb.loops])
                rows[m:, self.offs[k]:self.offs[k + 1]] = D @ J[limb.platform]
                A_th.append(rows)
                ax = np.zeros((len(r), P.shape[1]))
                ax[m:] = -D @ Ad_inv(E) @ P
                A_x.append(ax)
        r = np.concatenate(res)
        if not jacobian:
            return r, np.array(per_limb)
        return r, np.array(per_limb), np.vstack(A_th), np.vstack(A_x)

    def project(self, theta, tol=PROJECT_TOL, max_iter=PROJECT_ITER):
        """Newton projection of ``theta`` onto the closure manifold (module docstring). Returns
        ``(θ, x, residual before, iterations)``; raises :class:`IKError` if it does not converge."""
        theta = np.array(theta, dtype=float)
        x = self.task_coordinates(theta)
        before = err = np.inf
        floor = False
        for it in range(max_iter + 1):
            first = self.rank is None
            out = self.closure(theta, x, jacobian=first)  # the Jacobian only where a step is taken
            prev, err = err, float(np.max(np.abs(out[0])))
            if it == 0:
                before = err
            if first:  # the normal space's dimension, at the first (closed) state
                S = np.linalg.svd(_eliminate(out[3], out[2]), compute_uv=False)
                self.rank = int(np.sum(S > RANK_TOL * S[0]))
            if err <= tol or not np.isfinite(err) or it == max_iter:
                break
            if it >= 2 and err > 0.1 * prev and err <= 1e3 * tol:
                floor = True  # the rounding floor: Newton no longer converges
                break
            r, _, A_th, A_x = out if first else self.closure(theta, x)
            U, S, Vt = np.linalg.svd(_eliminate(A_x, A_th), full_matrices=False)
            k = self.rank
            dth = -Vt[:k].T @ ((U[:, :k].T @ _eliminate(A_x, r)) / S[:k])
            dx = -np.linalg.lstsq(A_x, r + A_th @ dth, rcond=None)[0]
            theta += dth
            x += dx
        if not (err <= tol or floor):
            raise IKError(f"the closure projection did not converge: residual {err:.3e} after {it} iterations",
                          residual=err, iterations=it)
        return theta, x, before, it


class _Fallback(Exception):
    """The kernel does not evaluate this state: the reference does (:meth:`JointRhs._evaluate_kernel`)."""


def _eliminate(A_x, B):
    """``P B`` with ``P`` the projector onto the orthogonal complement of the columns of ``A_x``."""
    Q = np.linalg.qr(A_x)[0]
    return B - Q @ (Q.T @ B)


class JointRhs:
    """``y' = f(t, y)`` with ``y = (θ, V_t, w)`` (eq. 133–134) for the integrators of
    :mod:`pkm.sim.simulate`, which call :meth:`accept` after each accepted step; ``u(t, x, xd)``
    the checked actuator forces. Records every projection."""

    DEGENERATE = ("the task-space equations of motion degenerate (a limb near a singularity, where J_IK grows "
                  "without bound; form='actuator' passes through)")
    #: The adaptive methods' first step, relative to the span. scipy guesses it from ``f(t0)``; at
    #: rest with ``V̇_t ≈ 0`` the guess is the whole span, and a trial step that long carries the
    #: stages' θ far off the manifold (θ moves along straight lines in joint space): a controller's
    #: inverse kinematics at their task coordinates then fails (the IRSBot-2's computed-torque
    #: pick-and-place stopped that way). The step size control grows it within a few steps.
    FIRST_STEP = 1e-3

    def __init__(self, model, u, max_condition, project, t0, theta0, kernel=True):
        self.model, self.u, self.max_condition, self.do_project = model, u, float(max_condition), project
        self.nfev = 0
        #: the numba kernel of eq. 133–134 (:mod:`pkm.sim.joint_kernel`); None: the Python reference
        self.kernel = None
        if kernel and translational_axes(model.robot) is not None:
            try:
                self.kernel = JointKernel(model.robot, model.g0, model.wrench, min(model.threshold, FAST_CONDITION))
            except NotImplementedError:   # a distance constraint: the kernels' model has none
                pass
        self.projections = []  # (t, residual before, max |Δθ|, iterations)
        self._last = None  # (θ, J_IK) of the last evaluation
        self.accepted = (t0, self._guard(t0, theta0, model.jacobian_ik, theta0))  # (t, J_IK) of the last accepted state

    def where(self, y):
        return f"x = {fmt_array(self.model.task_coordinates(y[:self.model.n]))}"

    def _guard(self, t, theta, f, *args):
        """``f(*args)``, its singularities re-raised naming the time and the task coordinates."""
        try:
            return f(*args)
        except SingularityError as exc:
            xs = fmt_array(self.model.task_coordinates(theta))
            raise SingularityError(f"at t = {t:.6g} s (x = {xs}): {exc}", condition=exc.condition,
                                   threshold=exc.threshold) from None
        except np.linalg.LinAlgError:
            raise SingularityError(f"at t = {t:.6g} s: the task-space mass matrix M_t is singular") from None

    def evaluate(self, t, theta, Vt):
        """``(u, θ̇, V̇_t, J_IK, x)`` at time ``t``; singularities raise with the time."""
        u, thd, Vtd, J_IK, x = self._guard(t, theta, self._evaluate, t, theta, Vt)
        self.nfev += 1
        self._last = (np.array(theta), J_IK)
        return u, thd, Vtd, J_IK, x

    def _evaluate(self, t, theta, Vt):
        try:
            return self._evaluate_kernel(t, theta, Vt)
        except _Fallback:
            pass
        thd, M_t, b, J_IK, x = self.model.evaluate(theta, Vt)
        self._condition(J_IK)
        u = self.u(t, x, Vt)
        return u, thd, np.linalg.solve(M_t, J_IK.T @ u - b), J_IK, x  # eq. 133

    def _evaluate_kernel(self, t, theta, Vt):
        """:meth:`_evaluate` on the kernel (:class:`_Fallback` where it cannot be used)."""
        if self.kernel is None:
            raise _Fallback
        try:   # V̇_t = V̇_t⁰ + M_t⁻¹ J_IKᵀ u: the forces need x first
            thd, Vtd0, Mi, J_IK, x = self.kernel.run(theta, Vt)
        except SingularityError:   # near a limb's singularity: the reference's SVDs (and its own checks)
            raise _Fallback from None
        J_IK, x = J_IK.copy(), x.copy()
        self._condition(J_IK)
        u = self.u(t, x, Vt)
        thd = np.concatenate([thd[k, :l.n] for k, l in enumerate(self.model.robot.limbs)])
        return u, thd, Vtd0 + Mi @ (J_IK.T @ u), J_IK, x

    def _condition(self, J_IK):
        """SingularityError where J_IK's condition number exceeds ``max_condition``."""
        if self.max_condition == np.inf and np.all(np.isfinite(J_IK)):
            return
        cond = float(np.linalg.cond(J_IK))
        if not cond <= self.max_condition:
            raise SingularityError(f"J_IK is nearly singular (condition number {fmt_condition(cond)} > max_condition "
                                   f"{self.max_condition:.1e}): the task-space equations of motion degenerate "
                                   "there", condition=cond, threshold=self.max_condition)

    def __call__(self, t, y):
        n = self.model.n
        Vt = y[n:-1]
        u, thd, Vtd, J_IK, _ = self.evaluate(t, y[:n], Vt)
        return np.concatenate([thd, Vtd, [float(u @ (J_IK @ Vt))]])  # eq. 134, 133, u·θ̇_act

    def accept(self, t, y):
        """After an accepted step to ``(t, y)``: the check that no limb passed a singularity within
        the step, then the state after the projection of its θ (``y`` itself when nothing is to be
        done or ``project=False``)."""
        n = self.model.n
        last = self._last
        J = last[1] if last is not None and np.array_equal(last[0], y[:n]) else \
            self._guard(t, y[:n], self.model.jacobian_ik, y[:n])
        self._crossing(t, y, J)
        self.accepted = (t, J)
        if not self.do_project:
            return y
        try:
            theta, _, before, it = self.model.project(y[:n])
        except IKError as exc:
            raise IKError(f"at t = {t:.6g} s: {exc}", residual=exc.residual, iterations=exc.iterations) from None
        self.projections.append((t, before, float(np.max(np.abs(theta - y[:n]))), it))
        if it == 0:
            return y
        out = y.copy()
        out[:n] = theta
        return out

    def _crossing(self, t, y, J):
        """SingularityError if a row of J_IK turned by more than 90° since the last accepted state:
        near a limb's singularity (the Delta's stretched arm) a row grows like 1/(t − t_s) and flips
        its sign across it, yet J_IK's condition number need not grow (all three arms stretch
        together in the Delta's free fall) and no stage of a step over it may come close enough for
        the ``L_p`` check. ``t_s`` is estimated where the reciprocal of the row's component along
        its old direction, linear in time, vanishes."""
        t0, J0 = self.accepted
        dots = np.einsum("ad,ad->a", J, J0)
        flipped = np.flatnonzero(dots <= 0.0)
        if not flipped.size:
            return
        a = int(flipped[0])
        r0, r1 = float(np.linalg.norm(J0[a])), dots[a] / float(np.linalg.norm(J0[a]))
        ts = t if r1 == 0.0 else t0 + (t - t0) * (1.0 / r0) / (1.0 / r0 - 1.0 / r1)
        raise SingularityError(f"at t ≈ {ts:.6g} s ({self.where(y)}): J_IK degenerates: its row of actuator "
                               f"{self.model.robot.actuator_names[a]!r} changed sign within the step from t = "
                               f"{t0:.6g} to {t:.6g} s (a limb passed a singularity, where J_IK grows without "
                               "bound; form='actuator' passes through)")

    def result(self, T, Y, method) -> dict:
        """The fields of a :class:`pkm.sim.simulate.SimulationResult` for the integrated states ``Y``
        at ``T``; ``info``: the projections (time, residual before, largest ``|Δθ|``, iterations)."""
        model, robot = self.model, self.model.robot
        n, d, N = model.n, robot.task_dof, len(T)
        nfev = self.nfev
        TH, VT, W = Y[:, :n], Y[:, n:n + d], Y[:, -1]
        X, XDD = np.empty((N, d)), np.empty((N, d))
        U, QD = np.empty((N, robot.n_act)), np.empty((N, robot.n_act))
        closure = np.empty((N, len(robot.limbs)))
        limbs = robot.limbs
        Q = np.zeros((N, len(limbs), max(l.n for l in limbs)))
        QD_all = np.zeros_like(Q)
        for s in range(N):
            U[s], thd, XDD[s], J_IK, X[s] = self.evaluate(T[s], TH[s], VT[s])
            QD[s] = J_IK @ VT[s]
            for k, l in enumerate(limbs):
                o = model.offs[k]
                Q[s, k, :l.n], QD_all[s, k, :l.n] = TH[s, o:o + l.n], thd[o:o + l.n]
            closure[s] = model.closure(TH[s], X[s], jacobian=False)[1]
        # the energies body by body of all outputs in one call (Energy.states); the platform's twist P_p V_t
        kin, pot, _ = Energy(robot, model.g0).states(Q, QD_all, X, VT, Vp=VT @ model.P.T)
        E = kin + pot
        proj = np.array(self.projections, dtype=float).reshape(-1, 4)
        info = dict(project=self.do_project, projection_t=proj[:, 0], projection_residual=proj[:, 1],
                    projection=proj[:, 2], projection_iterations=proj[:, 3].astype(int),
                    projection_max=float(proj[:, 2].max(initial=0.0)))
        return dict(t=T, x=X, xd=VT.copy(), xdd=XDD, q_act=TH[:, model.act_flat], qd_act=QD, tau=U,
                    joints={l.name: TH[:, model.offs[k]:model.offs[k + 1]].copy() for k, l in enumerate(robot.limbs)},
                    kinetic=kin, potential=pot, energy=E, work=W, energy_error=E - E[0] - W, closure=closure,
                    actuator_names=list(robot.actuator_names), method=method, form="joint", nfev=nfev, info=info)


def joint_rhs(robot, u, t0, x0, xd0, *, start, wrench, gravity, max_condition, project, solver):
    """The right-hand side and the initial state ``(θ_0, V_t0, 0)`` of the joint form, for
    :func:`pkm.sim.simulate.simulate` (which checks the arguments and integrates): ``u(t, x, xd)``
    the checked actuator forces; θ_0 at ``t0`` from the IK at ``x0`` (from ``start``), projected onto the
    closure manifold (also with ``project=False``, which only skips the projections after the
    steps)."""
    threshold = solver.get("singularity_threshold", SINGULARITY_THRESHOLD)
    model = JointModel(robot, gravity, wrench, threshold)
    ik = {k: v for k, v in solver.items() if k in ("tol", "max_iter", "singularity_threshold")}
    sol = robot.inverse_kinematics(x0, start=start, limits=False, **ik)
    theta0 = model.project(np.concatenate([sol.joints[l.name][0] for l in robot.limbs]))[0]
    return JointRhs(model, u, max_condition, project, t0, theta0), np.concatenate([theta0, xd0, [0.0]])
