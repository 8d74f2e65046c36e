"""The joint-coordinate form (paper 8.1.2) on its numba kernel (:mod:`pkm.kernels.joint_form`):
:class:`JointKernel` holds one robot's scratch (allocated once) and evaluates eq. 133–134 at one
joint state; :func:`rk4_joint` integrates a whole fixed-step RK4 run (with or without projections) inside
numba under constant or tabulated forces. :class:`pkm.sim.joint.JointRhs` uses the kernel; its
Python path (:class:`pkm.sim.joint.JointModel`) is the reference the tests compare it with.
"""
from __future__ import annotations

import numpy as np

from pkm.errors import IKError, SingularityError, fmt_condition
from pkm.kernels.dynamics import SINGULAR_GY, SINGULAR_LP
from pkm.kernels.joint_form import joint_rhs
from pkm.kernels.joint_projection import NOT_PROJECTED, TURNED, joint_rk4_projected
from pkm.kernels.model import LAY_NMAX, LI_N, LI_NROWS, pack
from pkm.kernels.work import M_JT, M_JTI, make_work
from pkm.sim.forward import pass_blocks
from pkm.sim.task import translational_axes


class JointKernel:
    """The joint-form kernel of one robot (translational task space; every limb on the general path,
    so that ``H`` comes from ``G(θ)`` off the manifold as in the reference) with its scratch:
    gravity ``g0``, the end-effector wrench (6, body-fixed, or None), the largest condition number
    ``threshold`` of a limb's ``G_y`` and ``L_p``."""

    def __init__(self, robot, g0, wrench, threshold):
        self.robot = robot
        self.km = km = pack(robot, affine=False)
        L, nmax, dp, na = km.mi.shape[0], int(km.lay[LAY_NMAX]), robot.task_dof, robot.n_act
        self.passes = pass_blocks(km, dp, na)
        if wrench is not None:
            self.passes[3][0] = np.asarray(wrench, dtype=float).reshape(6)
        self.work = [w[0] for w in make_work(km, 1)]
        self.g0 = np.ascontiguousarray(g0, dtype=float)
        self.threshold = float(threshold)
        self.R0 = np.ascontiguousarray(robot.R0, dtype=float)
        self.local0 = robot.R0.T @ robot.r0
        self.axes = translational_axes(robot)
        self.xdd, self.x = np.zeros(dp), np.zeros(dp)
        self.thd, self.thdd = np.zeros((L, nmax)), np.zeros((L, nmax))
        self.status = np.zeros(4)
        self.zero = np.zeros(na)

    def args(self):
        km = self.km
        return (km.mi, km.mf, km.lay, km.Mp, km.d_static, km.dp_static)

    def scratch(self):
        return (self.R0, self.local0, self.axes, self.g0, *self.passes, *self.work, self.km.lay, self.threshold,
                self.xdd, self.thd, self.thdd, self.x)

    def run(self, theta, Vt):
        """Eq. 133–134 at ``(θ, V_t)`` without forces: returns ``(θ̇, V̇_t⁰, M_t⁻¹, J_IK, x)`` with
        ``V̇_t = V̇_t⁰ + M_t⁻¹ J_IKᵀ u`` (views of the scratch); raises :class:`pkm.SingularityError`
        (one line, without the time)."""
        st = self.status
        st[:] = (-1, 0, 0, 0)
        joint_rhs(*self.args(), theta, Vt, self.zero, *self.scratch(), st)
        if st[0] != 0:
            raise_joint_status(self.robot, st, self.threshold)
        dp = len(self.xdd)
        return self.thd, self.xdd, self.work[2][M_JTI, :dp, :dp], self.passes[7][0], self.x

    def mass_matrix(self):
        """``M_t`` of the last evaluation."""
        dp = len(self.xdd)
        return self.work[2][M_JT, :dp, :dp]


def raise_joint_status(robot, st, threshold, when=""):
    """The one-line :class:`pkm.SingularityError` of a failed joint-kernel status (as the reference's)."""
    code, value = int(st[0]), float(st[3])
    if code in (SINGULAR_GY, SINGULAR_LP):
        what = "a loop's G_y" if code == SINGULAR_GY else "the platform Jacobian L_p"
        raise SingularityError(f"{when}limb {robot.limbs[int(st[2])].name!r}: {what} is ill conditioned (condition "
                               f"number {fmt_condition(value)} > {threshold:.1e})", condition=value, threshold=threshold)
    raise SingularityError(f"{when}the task-space mass matrix M_t is singular")


def projection_work(kernel: JointKernel) -> tuple:
    """The scratch of the closure projection in :func:`pkm.kernels.joint_projection.joint_rk4_projected`
    (its arguments ``A, Ax, r, B, V, pr, sv, N``) for ``kernel``'s robot."""
    mi, dp = kernel.km.mi, kernel.robot.task_dof
    rows, nt = int(sum(mi[:, LI_NROWS]) + 6 * len(mi)), int(sum(mi[:, LI_N]))
    return (np.zeros((rows, nt)), np.zeros((rows, dp)), np.zeros(rows), np.zeros((rows, nt)), np.eye(nt),
            np.zeros(max(4 * nt, rows + dp) + 8), np.zeros(rows), np.zeros((dp, 4)))


def rk4_joint(kernel: JointKernel, T, y0, pp, rank=None, tol=1e-13, max_iter=20):
    """The joint form's whole RK4 run over the step ends ``T`` in numba, forces from the piecewise
    cubic ``pp`` (:func:`pkm.sim.task.piecewise_cubic`), with the reference's check after every step
    (:func:`pkm.kernels.joint_projection.joint_rk4_projected`) and, unless ``rank=None``, its
    projection (``rank``
    the closure Jacobian's rank on the manifold, :attr:`pkm.sim.joint.JointModel.rank`, ``tol`` and
    ``max_iter`` the projection's). Returns ``(Y, proj)``: the integrated states (len(T), n + δ_p + 1)
    and per step the projection's ``(residual before, largest |Δθ|, iterations)`` (None without).
    Raises naming the step's time."""
    n = len(T) - 1
    Y = np.empty((n + 1, len(y0)))
    tb, uc = pp
    st = kernel.status
    st[:] = (-1, 0, 0, 0)
    T = np.ascontiguousarray(T, dtype=float)
    y0 = np.ascontiguousarray(y0, dtype=float)
    robot, dp = kernel.robot, kernel.robot.task_dof
    proj = np.zeros((n, 3))
    joint_rk4_projected(n, T, y0, tb, uc, *kernel.args(), *kernel.scratch(), 0 if rank is None else int(rank),
                        *projection_work(kernel), float(tol), int(max_iter), np.zeros((robot.n_act, dp)), proj, Y,
                        np.zeros((6, len(y0))), np.zeros(robot.n_act), st, np.inf, False,
                        np.zeros((robot.n_act + dp, dp)), rank is not None)
    if st[0] != 0:
        s = int(st[1])
        if st[0] == TURNED:
            raise SingularityError(f"at t ≈ {T[s]:.6g} s: J_IK degenerates: its row of actuator "
                                   f"{robot.actuator_names[int(st[3])]!r} changed sign within the step from t = "
                                   f"{T[s - 1]:.6g} s (a limb passed a singularity, where J_IK grows without bound; "
                                   "form='actuator' passes through)")
        if st[0] == NOT_PROJECTED:
            raise IKError(f"at t = {T[s]:.6g} s: the closure projection did not converge: residual {st[3]:.3e} "
                          f"after {max_iter} iterations", residual=float(st[3]), iterations=max_iter)
        raise_joint_status(robot, st, kernel.threshold, when=f"at t = {T[s]:.6g} s (in the RK4 step from there): ")
    return Y, (None if rank is None else proj)


def warm(robot) -> None:
    """Compile (or load from numba's cache) the joint form's kernels for ``robot``'s structure: one
    evaluation at the reference pose and a two-step RK4 run (``pkm compile``); only translational task
    spaces have the joint form."""
    from pkm.errors import PkmError

    if robot._rot or translational_axes(robot) is None:
        return
    try:
        kernel = JointKernel(robot, np.asarray(robot.spec.gravity, dtype=float), None, 1e6)
        sol = robot.inverse_kinematics(robot.x_ref, limits=False)
        theta = np.concatenate([sol.joints[l.name][0] for l in robot.limbs])
        zero = np.zeros(robot.task_dof)
        kernel.run(theta, zero)
        pp = (np.array([0.0, 2e-3]), np.zeros((4, 1, robot.n_act)))
        rk4_joint(kernel, np.array([0.0, 1e-3, 2e-3]), np.concatenate([theta, zero, [0.0]]), pp, rank=1)
    except (NotImplementedError, PkmError):   # compiled all the same: the failure is the state's
        pass
