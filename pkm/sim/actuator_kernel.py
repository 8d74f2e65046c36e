"""The actuator-coordinate form (paper 8.1.3) on its numba kernel (:mod:`pkm.kernels.actuator_form`):
:class:`ActuatorKernel` holds one robot's scratch (allocated once) and evaluates the EOM at one
state with the assembly warm-started from the last evaluation; :func:`rk4_actuator` integrates a
whole fixed-step RK4 run inside numba under constant or tabulated forces (as
:func:`pkm.sim.task.rk4_numba` does for the task form). :class:`pkm.sim.actuator.ActuatorRhs` uses
the kernel; its Python path (:class:`pkm.sim.actuator.ActuatorModel`) is the reference the tests
compare it with.
"""
from __future__ import annotations

import numpy as np

from pkm.errors import IKError, SingularityError
from pkm.kernels.actuator_form import ASSEMBLY_FAILED, SINGULAR_B, SINGULAR_MA, actuator_rhs, index_table
from pkm.kernels.actuator_rk4 import actuator_rk4
from pkm.kernels.dynamics import SINGULAR_GY
from pkm.kernels.model import LAY_NMAX, LI_AFF
from pkm.kernels.work import M_LP, make_work

#: Largest change of a tree variable (rad or m) that the prediction of the next assembly's start
#: may make (else the last solution is the start, :func:`pkm.kernels.actuator_form._predict`).
PREDICT_LIMIT = 0.2


class ActuatorKernel:
    """The actuator-form kernel of one robot (non-redundant, packed by :meth:`pkm.robot.Robot._packed`)
    with its scratch: gravity ``g0``, the end-effector wrench ``wrench`` (6, body-fixed, or None),
    the assembly's ``tol`` and ``max_iter``. :meth:`run` evaluates one state; ``th`` (L, n_max) is
    the next assembly's start (the last solution: the branch)."""

    def __init__(self, robot, wrench, g0, tol=1e-12, max_iter=50):
        self.robot = robot
        self.km = km = robot._packed()
        self.ix, self.K, self.Kv, self.R = index_table(km)
        L, nmax, na = km.mi.shape[0], int(km.lay[LAY_NMAX]), robot.n_act
        work = make_work(km, L)   # one chunk per limb: each keeps its poses, H and L_p
        self.bwL, self.matL, self.vecL = work.bw, work.mat, work.vec
        self.th, self.th0 = np.zeros((L, nmax)), np.zeros((L, nmax))
        k = max(self.K, self.Kv, na)
        rows = max(self.R + 1, 6 * L)
        self.Cd, self.A, self.N, self.Lf = np.zeros((1, 4, 4)), np.zeros((rows, k)), np.zeros((k, k)), np.zeros((k, k))
        self.res, self.dx = np.zeros(rows), np.zeros(2 * k)
        self.Z, self.Theta = np.zeros((self.Kv, na)), np.zeros((L, na, nmax))
        self.thd, self.thdd, self.Ma = np.zeros((L, nmax)), np.zeros((L, nmax)), np.zeros((na, na))
        self.sv = np.zeros((7, max(na, 6)))
        self.g0 = np.ascontiguousarray(g0, dtype=float)
        self.Wee = np.zeros(6) if wrench is None else np.ascontiguousarray(wrench, dtype=float).reshape(6)
        self.general = None if km.mi[:, LI_AFF].all() else km.lay
        self.tol, self.max_iter = float(tol), int(max_iter)
        self.status = np.zeros(4)
        self.views = [self.th[k, :l.n] for k, l in enumerate(robot.limbs)]

    def args(self):
        """The kernel's model and scratch arguments after ``(qa, qda, u)`` / before ``Y`` (see
        :func:`pkm.kernels.actuator_form.actuator_rhs`)."""
        return (self.bwL, self.matL, self.vecL, self.Cd, self.A, self.N, self.Lf, self.res, self.dx, self.Z, self.Theta,
                self.thd, self.thdd, self.Ma, self.sv, self.general, self.tol, self.max_iter)

    def set_start(self, thetas):
        """Each limb's tree variables (a list) as the next assembly's start."""
        self.th[:] = 0.0
        self.sv[4, 2] = 0.0   # no prediction from the last evaluation
        for k, th in enumerate(thetas):
            self.th[k, :len(th)] = th

    def run(self, qa, qda, u):
        """The EOM at ``(θ_act, θ̇_act)`` under forces ``u``: ``θ̈_act`` in ``sv[0]``, ``u − b`` in
        ``sv[1]``, ``V_p`` in ``sv[2]``, the tree variables, rates and accelerations in ``th``, ``thd``,
        ``thdd``; raises :class:`pkm.IKError` or :class:`pkm.SingularityError` (one line, without the
        time: the caller adds it)."""
        km, st = self.km, self.status
        st[:] = (-1, 0, 0, 0)
        actuator_rhs(km.mi, km.mf, km.lay, km.Mp, self.ix, self.K, self.Kv, self.R, qa, qda, u, self.g0, self.Wee,
                     self.th, self.th0, PREDICT_LIMIT, *self.args(), st)
        if st[0] != 0:
            raise_actuator_status(self.robot, st, self.tol, self.max_iter)

    def thetas(self):
        """Every limb's tree variables of the last evaluation (copies)."""
        return [v.copy() for v in self.views]

    def flat(self, a):
        """``a`` (L, n_max) as the reference's vector over all limbs' tree variables."""
        return np.concatenate([a[k, :l.n] for k, l in enumerate(self.robot.limbs)])

    def limb_jacobians(self):
        """Each limb's ``L_p = J_p H`` (6 × δ_l) of the last evaluation."""
        return [self.matL[k, M_LP, :6, :l.dof].copy() for k, l in enumerate(self.robot.limbs)]

    def pose(self):
        """The platform pose ``C_p`` (4×4) of the last evaluation."""
        return self.Cd[0].copy()


def raise_actuator_status(robot, st, tol, max_iter, when=""):
    """The one-line :class:`pkm.IKError` or :class:`pkm.SingularityError` of a failed kernel status."""
    code, value = int(st[0]), float(st[3])
    if code == ASSEMBLY_FAILED:
        raise IKError(f"{when}the mechanism cannot be assembled at these actuator coordinates: residual {value:.3e} "
                      f"within {max_iter} Newton iterations (tolerance {tol:.1e})", residual=value, iterations=max_iter)
    if code == SINGULAR_GY:
        raise SingularityError(f"{when}limb {robot.limbs[int(st[2])].name!r}: a loop's G_y is singular")
    if code == SINGULAR_B:
        raise SingularityError(f"{when}the actuator-space velocity system is singular (a forward-kinematics "
                               "singularity of the mechanism)")
    if code == SINGULAR_MA:
        raise SingularityError(f"{when}the actuator-space mass matrix M_a is singular (a forward-kinematics "
                               "singularity of the mechanism)")
    raise SingularityError(f"{when}the actuator-form kernel failed (status {code})")


def rk4_actuator(kernel: ActuatorKernel, T, y0, pp):
    """The whole RK4 run of the actuator form over the step ends ``T`` in numba
    (:func:`pkm.kernels.actuator_rk4.actuator_rk4`), forces from the piecewise cubic ``pp``
    (:func:`pkm.sim.task.piecewise_cubic`), the first assembly from ``kernel``'s start; returns
    ``(Y, theta)``: the states ``(θ_act, θ̇_act, w, w_f)`` (len(T), 2 n_act + 2) and the tree
    variables (len(T), L, n_max) at the step ends. Raises naming the step's time."""
    km = kernel.km
    n = len(T) - 1
    Y, theta = np.empty((n + 1, len(y0))), np.empty((n + 1,) + kernel.th.shape)
    tb, uc = pp
    st = kernel.status
    st[:] = (-1, 0, 0, 0)
    actuator_rk4(n, np.ascontiguousarray(T, dtype=float), np.ascontiguousarray(y0, dtype=float), tb, uc, PREDICT_LIMIT,
                 km.mi, km.mf, km.lay, km.Mp, kernel.ix, kernel.K, kernel.Kv, kernel.R, kernel.g0, kernel.Wee,
                 kernel.th, *kernel.args(), Y, theta, np.zeros((5, len(y0))), np.zeros(kernel.robot.n_act), st)
    if st[0] != 0:
        s = int(st[1])
        raise_actuator_status(kernel.robot, st, kernel.tol, kernel.max_iter,
                              when=f"at t = {T[s]:.6g} s (in the RK4 step from there): ")
    return Y, theta


def warm(robot) -> None:
    """Compile (or load from numba's cache) the actuator form's kernels for ``robot``'s structure:
    one evaluation at the reference pose and a two-step RK4 run (``pkm compile``). A robot the kernels
    cannot pack, or with redundant actuation, has none."""
    from pkm.errors import PkmError

    if robot.n_act != robot.task_dof:
        return
    try:
        kernel = ActuatorKernel(robot, None, np.asarray(robot.spec.gravity, dtype=float))
        sol = robot.inverse_kinematics(robot.x_ref, limits=False)
        start = [sol.joints[l.name][0] for l in robot.limbs]
        kernel.set_start(start)
        zero = np.zeros(robot.n_act)
        kernel.run(sol.q_act[0], zero, zero)
        kernel.set_start(start)
        pp = (np.array([0.0, 2e-3]), np.zeros((4, 1, robot.n_act)))
        rk4_actuator(kernel, np.array([0.0, 1e-3, 2e-3]), np.concatenate([sol.q_act[0], zero, [0.0, 0.0]]), pp)
    except (NotImplementedError, PkmError):   # compiled all the same: the failure is the state's
        pass
