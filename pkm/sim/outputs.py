"""A simulation's outputs, filled one output time at a time from whichever form integrates there
(:mod:`pkm.sim.switching`): task coordinates, rates and accelerations, actuator coordinates, rates
and forces, every limb's tree variables, energies and loop closure (the fields of
:class:`pkm.sim.simulate.SimulationResult`).

The energy is counted body by body from the joint rates (kinetic ``T``) and the centres of mass
(potential ``V``), independent of the mass matrix either form integrates with, so the balance
``E − E(0) − W`` checks the integration (:func:`task_energy`). The outputs keep each output's tree
variables and rates; the energies (and the task form's loop closure) of all outputs are then one numba
call (:meth:`Energy.states`, :mod:`pkm.kernels.state_outputs`, as a batch's members): per output in Python
they had cost ~2/3 of a Delta's RK4 run.
"""
from __future__ import annotations

import numpy as np

from pkm.algorithms.dynamics import kinetic_energy, potential_energy
from pkm.algorithms.limits import check_limits
from pkm.algorithms.manipulator import dynamics_trees, platform_inertia
from pkm.kernels.batch import platform_states
from pkm.kernels.state_outputs import energies_closure_limbs, forest


class Energy:
    """Kinetic and potential energy of a robot's state given by its limbs' tree variables and
    rates and its task coordinates: the limb trees with a massless platform plus the platform."""

    def __init__(self, robot, gravity):
        self.robot, self.g0 = robot, np.array(gravity, dtype=float)   # a copy: a batch sets its kernel's per member
        self.trees = dynamics_trees(robot)
        self.Mp = platform_inertia(robot)
        p = robot.spec.body(robot.spec.platform)
        self.mass = p.mass
        self.local_com = np.linalg.solve(p.frame[:3, :3], p.com - p.frame[:3, 3])
        self.forests = {}

    def states(self, TH, THD, X, XD, Vp=None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(kin, pot, closure)`` at ``K`` states: the limbs' tree variables and rates ``TH``, ``THD``
        (K, L, n_max), the task coordinates and rates ``X``, ``XD`` (K, d); ``closure`` (K, L) each limb's
        largest loop residual. One numba call for the limbs (:func:`pkm.kernels.state_outputs.energies_closure_limbs`)
        and the platform vectorised; equal to :meth:`__call__` per state to rounding (``tests/test_state_outputs.py``).
        ``Vp`` (K, 6): the platform's body-fixed twists, if the caller has them (the joint form: ``P_p V_t``)."""
        nmax = TH.shape[2]
        if nmax not in self.forests:
            self.forests[nmax] = forest(self.robot, nmax)
        kin, pot, closure = energies_closure_limbs(self.forests[nmax], TH, THD, self.g0)
        X, XD = np.ascontiguousarray(X, dtype=float), np.ascontiguousarray(XD, dtype=float)
        Cp, V, _ = platform_states(self.robot, X, XD, np.zeros_like(X))
        kp, pp = self.platform(Cp, V if Vp is None else Vp)
        return kin + kp, pot + pp, closure

    def __call__(self, thetas, thetads, x, xd) -> tuple[float, float]:
        robot = self.robot
        kin = pot = 0.0
        for k, (th, thd) in enumerate(zip(thetas, thetads)):
            kin += kinetic_energy(self.trees[k], th, thd)
            pot += potential_energy(self.trees[k], th, self.g0)
        kp, pp = self.platform(robot.platform_pose(x)[None], robot.platform_twist(x, xd)[0][None])
        return kin + float(kp[0]), pot + float(pp[0])

    def platform(self, Cp, Vp) -> tuple[np.ndarray, np.ndarray]:
        """The platform body's kinetic ``½ V_pᵀ M_p V_p`` and potential ``−m g0·(R_p c + r_p)`` energy
        (K,) at its poses ``Cp`` (K,4,4) and body-fixed twists ``Vp`` (K,6)."""
        kin = 0.5 * np.einsum("ki,ki->k", Vp @ self.Mp.T, Vp)
        pot = -self.mass * ((Cp[:, :3, :3] @ self.local_com + Cp[:, :3, 3]) @ self.g0)
        return kin, pot


class Outputs:
    """Arrays for ``N`` output times, written by :meth:`task` (the task form's kernel outputs at a
    state) or :meth:`actuator` (the actuator form's assembly)."""

    def __init__(self, robot, N, gravity):
        self.robot = robot
        d, na, L = robot.task_dof, robot.n_act, len(robot.limbs)
        self.X, self.XD, self.XDD = np.empty((N, d)), np.empty((N, d)), np.empty((N, d))
        self.QA, self.QDA, self.U = np.empty((N, na)), np.empty((N, na)), np.empty((N, na))
        self.work, self.lost = np.empty(N), np.empty(N)
        self.closure = np.empty((N, L))
        self.joints = {l.name: np.empty((N, l.n)) for l in robot.limbs}
        self.rates = {l.name: np.empty((N, l.n)) for l in robot.limbs}
        self.by_task = np.zeros(N, dtype=bool)   # the outputs whose closure comes from their tree variables
        self.energy = Energy(robot, gravity)

    def task(self, k, t, y, rhs):
        """Output ``k`` at ``(t, y)`` of the task form (``y = (x, ẋ, w, w_f)``, ``rhs`` a
        :class:`pkm.sim.task.TaskRhs`: one kernel evaluation, its IK from the last one's solution)."""
        robot, d = self.robot, self.robot.task_dof
        x, xd = y[:d], y[d:2 * d]
        u, (th, thd, _, xdd, _, _) = rhs.evaluate(t, x, xd)
        rhs.nfev -= 1
        thetas = [th[0, j, :l.n].copy() for j, l in enumerate(robot.limbs)]
        thetads = [thd[0, j, :l.n].copy() for j, l in enumerate(robot.limbs)]
        self.X[k], self.XD[k], self.XDD[k], self.U[k], self.work[k], self.lost[k] = x, xd, xdd[0], u, y[2 * d], \
            y[2 * d + 1]
        act = robot._act_limb, robot._act_var
        self.QA[k], self.QDA[k] = th[0][act], thd[0][act]
        for j, l in enumerate(robot.limbs):
            self.joints[l.name][k], self.rates[l.name][k] = thetas[j], thetads[j]
        self.by_task[k] = True   # energies and closure: fields()

    def actuator(self, k, t, y, rhs):
        """Output ``k`` at ``(t, y)`` of the actuator form (``y = (θ_act, θ̇_act, w, w_f)``, ``rhs`` a
        :class:`pkm.sim.actuator.ActuatorRhs`: one assembly from the current configuration, which
        is restored afterwards so the integration's branch is untouched)."""
        model, d = rhs.model, self.robot.n_act
        saved, rho = model.thetas, model.rho
        u, (qdd, thetas, thd, thdd, _, _, closure) = rhs.evaluate(t, y[:d], y[d:2 * d], energies=False)
        rhs.nfev -= 1
        self.X[k], self.XD[k], self.XDD[k] = rhs.task_state(thetas, thd, thdd, qdd)
        model.thetas, model.rho = saved, rho
        self.U[k], self.QA[k], self.QDA[k], self.work[k], self.lost[k] = u, y[:d], y[d:2 * d], y[2 * d], y[2 * d + 1]
        o = model.offs
        self.closure[k, :] = closure
        self.by_task[k] = False
        for j, l in enumerate(self.robot.limbs):
            self.joints[l.name][k], self.rates[l.name][k] = thetas[j], thd[o[j]:o[j + 1]]

    def fields(self) -> dict:
        """The :class:`pkm.sim.simulate.SimulationResult` fields the outputs fill (every output written): the
        energies of all outputs, and the loop closure of the task form's, in one call (:meth:`Energy.states`)."""
        limbs = self.robot.limbs
        TH = np.zeros((len(self.X), len(limbs), max(l.n for l in limbs)))
        THD = np.zeros_like(TH)
        for j, l in enumerate(limbs):
            TH[:, j, :l.n], THD[:, j, :l.n] = self.joints[l.name], self.rates[l.name]
        self.kin, self.pot, closure = self.energy.states(TH, THD, self.X, self.XD)
        self.closure[self.by_task] = closure[self.by_task]
        E = self.kin + self.pot
        return dict(x=self.X, xd=self.XD, xdd=self.XDD, q_act=self.QA, qd_act=self.QDA, tau=self.U,
                    joints=self.joints, kinetic=self.kin, potential=self.pot, energy=E, work=self.work,
                    energy_error=E - E[0] - self.work + self.lost, closure=self.closure, dissipated=self.lost,
                    actuator_names=list(self.robot.actuator_names))

    def check_limits(self, k, t):
        """:class:`pkm.LimitError` naming the time ``t`` where output ``k`` is beyond a joint limit of
        the robot file (:mod:`pkm.algorithms.limits`): the run stops at the first output time beyond
        a limit (located at the outputs, not between them)."""
        robot = self.robot
        check_limits(robot, [self.joints[l.name][k:k + 1] for l in robot.limbs], self.X[k:k + 1],
                     self.QDA[k:k + 1], t=[t], first=k)


def energy_status(out, tolerance: float) -> None:
    """Status ``"inaccurate"`` for the ok members of a :class:`pkm.sim.batch.BatchResult` whose energy balance is off
    by more than ``tolerance`` of their ``energy_scale`` (as :func:`pkm.sim.simulate._check_energy` warns for one
    run): ``t_fail`` the last output before it is, the message that warning's."""
    err = np.abs(out.energy_error)
    for b in np.flatnonzero(out.status == "ok"):
        bad = err[b] > tolerance * out.energy_scale[b]
        if np.any(bad):
            k = int(np.argmax(bad))
            out.status[b], out.t_fail[b] = "inaccurate", out.t[max(k - 1, 0)]
            out.message[b] = (f"the energy balance fails from t = {out.t[k]:.6g} s: E − E(0) − W reaches "
                              f"{err[b].max():.3e} J ({err[b].max() / out.energy_scale[b]:.1e} of the energy scale "
                              f"{out.energy_scale[b]:.3e} J): the steps are too large for this motion (smaller dt)")
