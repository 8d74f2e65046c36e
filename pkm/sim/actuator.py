"""Forward dynamics in actuator coordinates (paper eq. 135–136).

The state is ``(θ_act, θ̇_act)``. The assembled mechanism (:func:`pkm.algorithms.assembly.assemble`:
every limb's tree variables and the platform pose for given actuator values) is regular at the
limbs' IK (serial) singularities, where the task-space form breaks down, so this form passes
through them — e.g. the Delta's arms swinging through the stretched position.

Velocities: each limb's loops are resolved locally, ``θ̇_l = H_l q̇_l`` (eq. 76), and every limb
moves the one platform, ``L_l q̇_l = V_p`` with ``L_l = J_p H_l`` (eq. 80); eliminating ``V_p``
with the first limb, ``L_l q̇_l − L_1 q̇_1 = 0`` (l ≥ 2), a consistent system ``C z = 0`` in all
limbs' generalized velocities ``z``, of which the actuated ones are given: ``z = Z θ̇_act`` with
``Z_free = −C_free⁺ C_act`` (regular wherever the forward kinematics is, also where a single
``L_l`` loses rank). So ``θ̇_l = Θ_l θ̇_act``, ``Θ_l = H_l Z_l`` — the Jacobian of ψ_FK that spec
§9.6 puts in place of ``H F J_FK``. Accelerations, exactly (no differences): ``L_l q̈_l + β_l =
V̇_p`` with ``β_l = J_p Ḣ_l q̇_l + J̇_p θ̇_l`` (:meth:`pkm.algorithms.limb.LimbModel.Hdot_qd`, body
accelerations), so at ``θ̈_act = 0``: ``z̈⁰_free = −C_free⁺ Δβ`` and ``θ̈⁰_l = H_l z̈⁰_l + Ḣ_l q̇_l``.
By Jourdain's principle the EOM (eq. 116/135) are

    ``M_a θ̈_act = u − b``,  ``M_a = Σ_l Θ_lᵀ M̄_l Θ_l``,  ``b = Σ_l Θ_lᵀ τ_l(θ_l, θ̇_l, θ̈⁰_l)``,

with each limb's tree mass matrix ``M̄_l`` (CRBA) and inverse dynamics ``τ_l`` (RNEA with
gravity, :mod:`pkm.algorithms.dynamics`); the platform's inertia is carried by the first limb's
tree, the other limbs see it massless. An end-effector wrench ``W^EE`` (body-fixed in ``F_p``) adds
``Θ_pᵀ W^EE`` to the forces, ``Θ_p = J_p(1) Θ_1`` the platform twist per actuator rate (``V_p =
Θ_p θ̇_act``). Task coordinates of an assembled state (for outputs and controllers): the position
in the platform's reference axes, the rotation vector ``ρ = log(R_0ᵀR_p)`` continued from the
previous state (so it may pass ``|ρ| = π``), ``ẋ`` from ``V_t = P_pᵀV_p`` (eq. 130) — any
twist-closed task space. :class:`ActuatorModel` is the reference on the per-sample
algorithms (about a millisecond per evaluation); :class:`ActuatorRhs` evaluates the same EOM on
the numba kernel (:mod:`pkm.sim.actuator_kernel`, tens of µs: the assembly warm-started from the
last evaluation) unless ``kernel=False``. It is the form to use through IK singularities. It stops
where ``M_a`` degenerates: a forward-kinematics (type-2) singularity of the mechanism.
"""
from __future__ import annotations

import numpy as np

from pkm.algorithms.assembly import _system, assemble
from pkm.algorithms.dynamics import dissipated_power, inverse_dynamics, mass_matrix, potential_energy
from pkm.algorithms.kinematics import body_accelerations, body_jacobians, forward_kinematics
from pkm.algorithms.manipulator import dynamics_trees
from pkm.errors import IKError, PkmError, SingularityError, fmt_array
from pkm.lie import log_so3
from pkm.lie.interpret import kernel
from pkm.sim.actuator_kernel import ActuatorKernel
from pkm.sim.inputs import Constant, Table
from pkm.sim.task import dissipation, dissipative, forces, translational_axes


class _Fallback(Exception):
    """The kernel could not evaluate a state: the reference path does (:meth:`ActuatorRhs._fast`)."""


def _solve(t, Ma, rhs, degenerate):
    """``θ̈_act = M_a⁻¹ rhs``, or the one-line :class:`pkm.SingularityError` naming the time ``t``."""
    try:
        qdd = np.linalg.solve(Ma, rhs)
    except np.linalg.LinAlgError:
        raise SingularityError(f"at t = {t:.6g} s: the actuator-space mass matrix M_a is singular (a "
                               "forward-kinematics singularity of the mechanism)") from None
    if not np.all(np.isfinite(qdd)):
        raise SingularityError(f"at t = {t:.6g} s: {degenerate}")
    return qdd

def layout(robot):
    """``(zoffs, act, free)``: where each limb's generalized velocities start in ``z`` (all limbs'
    ``q̇_l`` stacked, L + 1 offsets), and which entries of ``z`` are actuated and which free."""
    limbs = robot.limbs
    zoffs = np.cumsum([0] + [l.dof for l in limbs])
    act = np.concatenate([zoffs[k] + np.array([list(l.q_index).index(a) for a in l.actuated], int)
                          for k, l in enumerate(limbs)])
    return zoffs, act, np.setdiff1d(np.arange(zoffs[-1]), act)


def closure_matrix(Ls, zoffs) -> np.ndarray:
    """``C`` (6(L − 1) × Σδ_l) of ``C z = 0``, every limb moving the one platform: ``L_l q̇_l −
    L_1 q̇_1 = 0`` for ``l ≥ 2`` (eq. 80; module docstring), from the limbs' ``L_p`` (6 × δ_l, or stacked
    over states (…, 6, δ_l): then ``C`` (…, 6(L − 1), Σδ_l))."""
    C = np.zeros(Ls[0].shape[:-2] + (6 * (len(Ls) - 1), zoffs[-1]))
    for k in range(1, len(Ls)):
        C[..., 6 * (k - 1):6 * k, zoffs[k]:zoffs[k + 1]] = Ls[k]
        C[..., 6 * (k - 1):6 * k, zoffs[0]:zoffs[1]] -= Ls[0]
    return C


class ActuatorModel:
    """The actuator-coordinate EOM of one robot (see the module docstring)."""

    def __init__(self, robot, wrench=None):
        self.robot = robot
        self.wrench = None if wrench is None else np.asarray(wrench, dtype=float).reshape(6)
        self.rho = None  # the last rotation vector (task coordinates continue it)
        limbs = robot.limbs
        self.offs = np.cumsum([0] + [l.n for l in limbs])
        self.zoffs, self.act, self.free = layout(robot)
        trees = dynamics_trees(robot)
        trees[0] = limbs[0].tree  # the platform's inertia, once
        self.trees = trees
        self.thetas = None  # the last assembled configuration (the next assembly's start: the branch)

    def state(self, q, qd, gravity):
        """Assemble at ``q`` and return ``(thetas, θ̇, Θ, θ̈⁰, M_a, b, closure residual)`` (``θ̇``, ``Θ``,
        ``θ̈⁰`` over all limbs' tree variables, limb after limb); the limbs' ``L_p`` of this state are
        kept in ``self.Ls``."""
        robot, limbs = self.robot, self.robot.limbs
        thetas, _ = assemble(robot, q, start=self.thetas, tol=1e-13)
        self.thetas = thetas
        nz, na = self.zoffs[-1], len(self.act)
        Hs, Ls = [], []
        for limb, th in zip(limbs, thetas):
            C = forward_kinematics(limb.tree, th)
            J = body_jacobians(limb.tree, th)
            H = limb._H(C, J, np.inf)
            Hs.append(H)
            Ls.append(J[limb.platform] @ H)
        self.Ls = Ls
        zo = self.zoffs
        C = closure_matrix(Ls, zo)
        Cf_pinv = np.linalg.pinv(C[:, self.free])
        Z = np.zeros((nz, na))
        Z[self.act, np.arange(na)] = 1.0
        Z[self.free] = -Cf_pinv @ C[:, self.act]
        z = Z @ qd
        thd, Theta, beta, Hdq = [], [], [], []
        for k, (limb, th) in enumerate(zip(limbs, thetas)):
            zk = z[zo[k]:zo[k + 1]]
            thd.append(Hs[k] @ zk)
            Theta.append(Hs[k] @ Z[zo[k]:zo[k + 1]])
            Hdq.append(limb.Hdot_qd(th, thd[k]))
            if not (np.all(np.isfinite(thd[k])) and np.all(np.isfinite(Hdq[k]))):
                raise PkmError("the integration diverged: the joint rates overflow float64 (initial velocities, "
                               "forces or gains too large for the motion)")
            beta.append(body_accelerations(limb.tree, th, thd[k], Hdq[k])[limb.platform])
        dbeta = np.concatenate([beta[k] - beta[0] for k in range(1, len(limbs))]) if len(limbs) > 1 else np.zeros(0)
        zdd0 = np.zeros(nz)
        zdd0[self.free] = -Cf_pinv @ dbeta
        thdd0 = [Hs[k] @ zdd0[zo[k]:zo[k + 1]] + Hdq[k] for k in range(len(limbs))]
        Ma = np.zeros((na, na))
        b = np.zeros(na)
        for k, tree in enumerate(self.trees):
            Ma += Theta[k].T @ mass_matrix(tree, thetas[k]) @ Theta[k]
            b += Theta[k].T @ inverse_dynamics(tree, thetas[k], thd[k], thdd0[k], gravity)
        self.Vp = Ls[0] @ z[zo[0]:zo[1]]  # the platform twist (body-fixed)
        if self.wrench is not None:  # the platform twist per actuator rate: V_p = J_p(1) Θ_1 θ̇_act
            b -= (Ls[0] @ Z[zo[0]:zo[1]]).T @ self.wrench
        r = _system(robot, thetas)[0]
        return (thetas, np.concatenate(thd), np.vstack(Theta), np.concatenate(thdd0), Ma, b,
                float(np.max(np.abs(r), initial=0.0)))

    def task_state(self, thetas, thd, thdd=None):
        """Task coordinates, their rates (and accelerations) of an assembled state, from the first
        limb's platform (module docstring)."""
        limb, s = self.robot.limbs[0], slice(self.offs[0], self.offs[1])
        Cp = forward_kinematics(limb.tree, thetas[0])[limb.platform]
        Vp = body_jacobians(limb.tree, thetas[0])[limb.platform] @ thd[s]
        x, xd = self.task_coordinates(Cp, Vp)
        if thdd is None:
            return x, xd
        dVp = body_accelerations(limb.tree, thetas[0], thd[s], thdd[s])[limb.platform]
        return x, xd, self.robot.coordinate_accelerations(x, xd, self.robot.P_p.T @ dVp)

    def task_coordinates(self, Cp, Vp):
        """``(x, ẋ)`` of the platform pose ``C_p`` and body-fixed twist ``V_p`` (module docstring)."""
        robot = self.robot
        local = robot.R0.T @ Cp[:3, 3]
        rho = kernel(log_so3)(robot.R0.T @ Cp[:3, :3])
        if self.rho is not None and np.linalg.norm(rho) > 0.0:  # the rotation vector nearest the last one
            angle = np.linalg.norm(rho)
            k = np.round((self.rho @ (rho / angle) - angle) / (2 * np.pi))
            rho = rho * (1.0 + 2 * np.pi * k / angle)
        x = np.array([(local if c.startswith("v") else rho)["xyz".index(c[1])] for c in robot.task.components])
        return x, robot.coordinate_rates(x, robot.P_p.T @ Vp)

    def follow(self, x):
        """Continue the rotation vector from the task coordinates ``x`` (a state entered from the
        task form)."""
        rho = np.zeros(3)
        for i, c in enumerate(self.robot.task.components):
            if c.startswith("w"):
                rho["xyz".index(c[1])] = x[i]
        self.rho = rho


class ActuatorRhs:
    """``y' = f(t, y)`` with ``y = (θ_act, θ̇_act, w, w_f)`` (paper 8.1.3, module docstring; ``w`` the
    actuators' and the wrench's work, ``w_f`` the energy the joints' friction dissipates)."""

    DEGENERATE = ("the actuator-space equations of motion degenerate (M_a grows without bound: a "
                  "forward-kinematics, type-II, singularity of the mechanism; form='auto' passes through)")

    def where(self, y):
        return f"q_act = {fmt_array(y[:self.d])}"

    def __init__(self, model, u, gravity, kernel=True):
        self.model, self.u, self.gravity = model, u, gravity
        robot = model.robot
        self.d = robot.n_act
        self.nfev = 0
        #: the numba kernel (:mod:`pkm.sim.actuator_kernel`); None: the Python reference path (``kernel=False``,
        #: redundant actuation, or a robot the kernels cannot pack)
        self.kernel = None
        if kernel and robot.n_act == robot.task_dof:
            try:
                self.kernel = ActuatorKernel(robot, model.wrench, np.asarray(gravity, dtype=float))
            except NotImplementedError:   # a distance constraint: the kernels' model has none
                pass
        self._timeless = isinstance(u, (Constant, Table))   # forces of t alone: no task coordinates needed
        self._axes = translational_axes(robot) if self.kernel is not None else None
        self._lossy = dissipative(robot)

    def _fast(self, t, q, qd):
        """``(u, θ̈_act)`` on the kernel, its assembly started from ``model.thetas`` (the branch)."""
        k, model, d = self.kernel, self.model, self.d
        if model.thetas is not k.views:
            k.set_start(model.thetas if model.thetas is not None else [np.zeros(l.n) for l in model.robot.limbs])
        u = forces(self.u, t, None, None, d) if self._timeless else np.zeros(d)
        try:
            k.run(q, qd, u)
        except (IKError, SingularityError):
            # at (or next to) a type-II singularity the kernel's normal equations give up before the
            # reference's least squares and pseudo-inverses do: the reference takes this state over,
            # from the same start, and evaluates it or raises its own error
            model.thetas = k.thetas()
            raise _Fallback from None
        model.thetas = k.views
        if self._timeless:
            return u, k.sv[0, :d]
        x, xd = model.task_coordinates(k.Cd[0], k.sv[2, :6])
        u = forces(self.u, t, x, xd, d)
        qdd = _solve(t, k.Ma, u + k.sv[1, :d], self.DEGENERATE)
        return u, qdd

    def evaluate(self, t, q, qd, energies=True):
        """``(u, (θ̈_act, thetas, θ̇, θ̈, T, V, closure))`` at ``(θ_act, θ̇_act)``; ``T``, ``V`` (from ``M_a``
        and the trees) None with ``energies=False`` (the outputs count them body by body themselves)."""
        if self.kernel is not None:
            try:
                return self._evaluate_kernel(t, q, qd, energies)
            except _Fallback:
                pass
        model = self.model
        try:
            thetas, thd, G, g, Ma, b, closure = model.state(q, qd, self.gravity)
        except IKError as exc:
            raise IKError(f"at t = {t:.6g} s: {exc}", residual=exc.residual, iterations=exc.iterations) from None
        except PkmError as exc:
            if type(exc) is not PkmError:
                raise
            raise PkmError(f"at t = {t:.6g} s: {exc}") from None
        x, xd = model.task_state(thetas, thd)
        u = forces(self.u, t, x, xd, self.d)
        qdd = _solve(t, Ma, u - b, self.DEGENERATE)
        self.nfev += 1
        kinetic = potential = None
        if energies:
            kinetic = 0.5 * float(qd @ Ma @ qd)
            potential = sum(potential_energy(tree, thetas[k], self.gravity) for k, tree in enumerate(model.trees))
        return u, (qdd, thetas, thd, G @ qdd + g, kinetic, potential, closure)

    def task_state(self, thetas, thd, thdd, qdd):
        """``(x, ẋ, ẍ)`` of the last :meth:`evaluate` (its outputs ``thetas``, ``θ̇``, ``θ̈``, ``θ̈_act``): from the
        kernel's platform pose, twist ``V_p = Z θ̇_act`` and ``V̇_p = V̇⁰_p + Z θ̈_act`` (its rows ``Z`` of the
        platform's twist per actuator rate, ``V̇⁰_p`` the acceleration at ``θ̈_act = 0``) where the kernel
        evaluated it, else :meth:`ActuatorModel.task_state` (limb 1's forward kinematics, Jacobians and
        accelerations by the reference algorithms: ~0.25 ms, most of an output's cost before)."""
        k, model, robot = self.kernel, self.model, self.model.robot
        if k is None or model.thetas is not k.views:   # the reference evaluated it (no kernel, or its fallback)
            return model.task_state(thetas, thd, thdd)
        dVp = k.sv[3, :6] + k.Z[:6] @ qdd
        if self._axes is not None:   # translational: the platform keeps R_0, V_p = (0; R_0ᵀṗ), V̇_p = (0; R_0ᵀp̈)
            a = 3 + self._axes       # (the general conversions below give the same numbers, at ~0.2 ms)
            out = (robot.R0.T @ k.Cd[0, :3, 3])[self._axes], k.sv[2, a], dVp[a]
            if all(np.all(np.isfinite(v)) for v in out):
                return out           # (else the conversions' own one-line error)
        x, xd = model.task_coordinates(k.Cd[0], k.sv[2, :6])
        return x, xd, robot.coordinate_accelerations(x, xd, robot.P_p.T @ dVp)

    def _evaluate_kernel(self, t, q, qd, energies=True):
        """:meth:`evaluate` on the kernel: the same outputs (``G θ̈_act + g`` is the kernel's ``θ̈``)."""
        k, model = self.kernel, self.model
        u, qdd = self._fast(t, q, qd)
        qdd = qdd.copy()
        self.nfev += 1
        thetas = k.thetas()
        model.Ls, model.Vp = k.limb_jacobians(), k.sv[2, :6].copy()
        kinetic = potential = None
        if energies:
            kinetic = 0.5 * float(qd @ k.Ma @ qd)
            potential = sum(potential_energy(tree, thetas[j], self.gravity) for j, tree in enumerate(model.trees))
        return u, (qdd, thetas, k.flat(k.thd), k.flat(k.thdd), kinetic, potential, float(k.sv[4, 0]))

    def __call__(self, t, y):
        d = self.d
        q, qd = y[:d], y[d:2 * d]
        k = self.kernel
        if k is not None:
            try:
                u, qdd = self._fast(t, q, qd)
            except _Fallback:
                k = None
        if k is not None:
            self.nfev += 1
            power = float(u @ qd)
            if self.model.wrench is not None:
                power += float(self.model.wrench @ k.sv[2, :6])
            lost = dissipation(self.model.robot, k.thd) if self._lossy else 0.0
            return np.concatenate([qd, qdd, [power, lost]])
        u, out = self.evaluate(t, q, qd)
        power = float(u @ qd)
        if self.model.wrench is not None:  # the end-effector wrench's power W^EE · V_p, in the work too
            power += float(self.model.wrench @ self.model.Vp)
        o, thd = self.model.offs, out[2]   # the friction's dissipated power (joint terms)
        lost = sum(dissipated_power(l.tree, thd[o[k]:o[k + 1]]) for k, l in enumerate(self.model.robot.limbs)
                   if l.tree.joint_terms is not None)
        return np.concatenate([qd, out[0], [power, lost]])

    def restart(self, thetas):
        """Start the next assembly from the limbs' tree variables ``thetas`` (a list): the branch."""
        self.model.thetas = [np.array(th, dtype=float) for th in thetas]

    def thetas(self, t, y):
        """Every limb's tree variables at state ``y`` (an evaluation: the assembly, on the branch)."""
        self.evaluate(t, y[:self.d], y[self.d:2 * self.d], energies=False)
        return [th.copy() for th in self.model.thetas]
