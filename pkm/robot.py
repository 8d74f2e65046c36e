"""The user-facing robot: a loaded, compiled PKM with its limbs (``pkm.load``).

Task coordinates ``x`` (paper Sec. 3.6, eq. 82–83, 85; eq. 7 and App. A; Sec. 8.1): the platform's reference pose ``A_p = (R_0, r_0)``
is kept in every component the task space does not select. Selected translational components are
the platform origin's coordinates ``l`` along the axes of ``R_0`` (the world axes when the platform
frame is parallel to the world frame, as for the Delta and the IRSBot-2), ``r_p = R_0 l``. Selected
rotational components form a rotation vector ``ρ`` **about the reference orientation**:
``R_p = R_0 exp(ρ)`` (components not selected are 0), singular only at ``|ρ| = 2π``; a full SE(3)
task space (6 DOF, e.g. a hexapod) has ``x = (ρ; l)`` or any order of the six, a spherical one
(``type = "rotational"``) ``x = ρ``.

Rates: ``xd = ẋ`` and ``xdd = ẍ`` are the time derivatives of these coordinates everywhere
(inverse kinematics, inverse and forward dynamics, simulation, trajectories). The **velocity
variable** of the equations of motion is the task velocity ``V_t = P_pᵀ V_p``, the selected
components of the body-fixed platform twist ``V_p = (ω; v)`` (eq. 82; paper Sec. 8.1: the platform twist,
free of parameterisation singularities): ``ω = dexp_{−ρ} ρ̇`` (eq. 7, paper eq. 7 and App. A), ``v = exp(ρ)ᵀ l̇``,
and their derivatives ``ω̇ = dexp_{−ρ} ρ̈ + (d/dt dexp_{−ρ}) ρ̇`` (:func:`pkm.lie.dexp_so3_dot`),
``v̇ = exp(ρ)ᵀ l̈ − ω × v`` (:meth:`Robot.platform_twist`). J_IK (eq. 98), the EOM terms ``M_t``,
``C_t V_t``, ``W_t^grav`` (eq. 107–112) and the forward dynamics' ``V̇_t`` refer to ``V_t``;
:meth:`Robot.task_velocity`, :meth:`Robot.coordinate_rates` and
:meth:`Robot.coordinate_accelerations` convert. When the selected twist components are closed under
the platform's rotations (no rotation, one rotation with the translations along its axis and/or
across it, or all three rotations with none or all three translations: translational, planar,
SCARA, spherical, SE(3)), ``V_p = P_p V_t`` and the batched numba kernels run. A selection such as
tilt–heave ``(wx, wy, vz)`` is not closed: the tilted platform's twist has ``ω_z, v_x, v_y ≠ 0``, so
``V_p = P(x) V_t`` with a configuration-dependent distribution (:meth:`Robot.velocity_distribution`,
``P(x) = H_p (P_pᵀH_p)⁻¹``); its inverse dynamics, EOM, forward dynamics and simulation run the
Python reference path with ``F_(l) = L_p⁺ P(x)`` and the platform term ``P(x)ᵀ φ_p`` (the unselected
motions are held by an ideal constraint, which the file must declare: ``pkm.description.freedom``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from pkm.algorithms.inverse_kinematics import (BRANCH_STEPS, CONTINUATION_STEPS, FORWARD_OPTIONS, SAME_SOLUTION, _along,
                                               _at_sample, _flag, _progress, branch_event, branch_suspect,
                                               check_branch_policy, check_keywords, check_parallel, check_solver,
                                               check_start, explained, ik_jacobian, limb_rates, solve_limb)
from pkm.errors import IKError, InputError, PkmError, SingularityError, with_time
from pkm.algorithms.drive_dynamics import joint_terms, with_drives
from pkm.algorithms.limits import check_limits, limit_table
from pkm.algorithms.limb import SINGULARITY_THRESHOLD, LimbModel, _check_condition, build_limb
from pkm.description.drives import robot_drives
from pkm.description.spec import RobotSpec
from pkm.description.taskspace import TaskCoordinates, _real, twist_closed
from pkm.description.topology import limb_topologies, mobility


@dataclass
class IKSolution:
    """Result of :meth:`Robot.inverse_kinematics` for ``N`` samples.

    ``q_act`` (N, n_act): actuator coordinates, in limb order (columns named by ``actuator_names``);
    ``joints[limb]`` (N, n_l): the tree-joint variables of each limb (named by ``variable_names[limb]``);
    ``J_IK`` (N, n_act, δ_p): the IK Jacobian ``θ̇_act = J_IK V_t`` (eq. 98). With velocities given:
    ``qd_act``, ``joints_d``; with accelerations: ``qdd_act``, ``joints_dd``.
    """

    x: np.ndarray
    q_act: np.ndarray
    joints: dict[str, np.ndarray]
    J_IK: np.ndarray
    actuator_names: list[str]
    variable_names: dict[str, tuple[str, ...]]
    iterations: np.ndarray
    qd_act: np.ndarray | None = None
    qdd_act: np.ndarray | None = None
    joints_d: dict[str, np.ndarray] = field(default_factory=dict)
    joints_dd: dict[str, np.ndarray] = field(default_factory=dict)


class Robot(TaskCoordinates):
    """A PKM compiled from a robot file: its limbs (:class:`pkm.algorithms.limb.LimbModel`) and task space.

    >>> import pkm
    >>> robot = pkm.load("robots/delta_3rr2rrr.toml")
    >>> sol = robot.inverse_kinematics([0.1, 0.0, -0.9])
    >>> sol.q_act.shape
    (1, 3)
    """

    def __init__(self, spec: RobotSpec):
        if spec.platform is None or spec.task is None:
            raise PkmError(f"{spec.source}: a PKM needs a platform and a [task] table")
        self.spec = spec
        self.topologies = limb_topologies(spec)
        self.limbs: list[LimbModel] = [build_limb(spec, t) for t in self.topologies]
        self.task = spec.task
        self.P_p = spec.task.selection_matrix()
        A_p = spec.body(spec.platform).frame
        self.R0 = A_p[:3, :3].copy()
        self.r0 = A_p[:3, 3].copy()
        self._trans = [i for i, c in enumerate(spec.task.components) if c.startswith("v")]
        self._rot = [i for i, c in enumerate(spec.task.components) if c.startswith("w")]
        self._closed = twist_closed(spec.task.components)
        self.actuator_names = [limb.tree.variable_names[a] for limb in self.limbs for a in limb.actuated]
        self._act_slices = []
        k = 0
        for limb in self.limbs:
            self._act_slices.append(slice(k, k + len(limb.actuated)))
            k += len(limb.actuated)
        # (limb, tree variable) of each actuator in actuator_names order: one gather from (N, L, n_max)
        self._act_limb = np.array([k for k, limb in enumerate(self.limbs) for _ in limb.actuated], dtype=np.intp)
        self._act_var = np.array([a for limb in self.limbs for a in limb.actuated], dtype=np.intp)
        # drives in actuator order and passive-joint friction per limb, or None (pkm.description.drives)
        self.drives, self.friction = robot_drives(spec, self.limbs, self.actuator_names)
        self.limbs = joint_terms(self.limbs, self.drives, self.friction, self._act_limb, self._act_var)
        limit_table(self)   # a range on a cut joint: RobotFileError at load

    # ------------------------------------------------------------------ facts
    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def n_act(self) -> int:
        return len(self.actuator_names)

    @property
    def actuator_kinds(self) -> list[str]:
        """Each actuated axis's kind in ``actuator_names`` order: ``"R"`` (a revolute actuator:
        torque [N·m], angle [rad]), ``"P"`` (prismatic: force [N], position [m]) or ``"H"`` (screw:
        torque, angle)."""
        return [limb.tree.axis_kind[int(a)] for limb in self.limbs for a in limb.actuated]

    @property
    def actuator_units(self) -> list[tuple[str, str]]:
        """``(force unit, position unit)`` of each actuator: ``("N·m", "rad")`` or ``("N", "m")``."""
        return [ACTUATOR_UNITS[k] for k in self.actuator_kinds]

    @property
    def redundancy(self) -> int:
        """Degree of actuation redundancy ``n_act − δ_p`` (0: one actuator per task coordinate; Sec. 8.2)."""
        return self.n_act - self.task_dof

    @property
    def task_dof(self) -> int:
        """``δ_p``: number of task coordinates."""
        return self.P_p.shape[1]

    @property
    def position_ref(self) -> np.ndarray:
        """The platform origin at the reference configuration in task position coordinates: along
        the axes of the platform frame at the reference configuration, ``R0ᵀ r0`` (world X Y Z
        where the platform frame is not rotated, as in the shipped PKMs). Task positions ``x``
        place the platform at ``R0 x`` (:meth:`platform_pose`), so velocities are the body-fixed
        twist's components at the reference orientation (eq. 82)."""
        return self.R0.T @ self.r0

    @property
    def x_ref(self) -> np.ndarray:
        """Task coordinates of the reference configuration."""
        local = self.position_ref
        x = np.zeros(self.task_dof)
        for i, c in enumerate(self.task.components):
            if c.startswith("v"):
                x[i] = local["xyz".index(c[1])]
        return x

    def mobility(self):
        """Mobility at the reference configuration (:func:`pkm.description.topology.mobility`)."""
        return mobility(self.spec)

    # ------------------------------------------------------------------ inverse kinematics
    def inverse_kinematics(self, x, xd=None, xdd=None, *, tol: float = 1e-12, max_iter: int = 50,
                           singularity_threshold: float = SINGULARITY_THRESHOLD, warm_start: bool = True, start=None,
                           on_branch_change: str = "warn", limits: bool = True) -> IKSolution:
        """Joint coordinates of every limb for task coordinates ``x`` of shape (δ_p,) or (N, δ_p).

        Each limb is solved by Newton's method (eq. 95–96) to a pose residual ≤ ``tol``. The first
        sample starts from ``start`` (the tree variables of every limb, a list of arrays as
        ``sol.joints[name][-1]`` of an earlier call; default: the reference configuration, all
        joint variables zero), each later one from the previous sample's solution
        (``warm_start``; ``False``: every sample from ``start``). A sample that does not converge
        from there is retried from the reference configuration along a straight path in task
        space. The result depends only on the arguments, never on earlier calls. With ``xd`` (and
        ``xdd``) the joint velocities (and accelerations) follow from eq. (86–88).

        **Branches** (assembly modes). A PKM has several IK solutions at a platform pose (e.g. each
        Delta arm's elbow out or in); they form branches, separated by the limbs' singularities.
        The first sample's branch is the reference configuration's: the solution Newton reaches
        from it, directly or along the straight task-space line from ``x_ref`` (another one: give
        ``start``, a configuration on it, e.g. ``sol.joints[name][-1]`` of an earlier call). Every
        later sample (``warm_start``) continues its predecessor's branch: a solution that moved a
        joint by more than ``BRANCH_STEP`` or turned a row of J_IK by more than 90° (it flips where
        a limb crosses a singularity) is checked by continuation along the straight line from the
        predecessor. A jump that Newton solved on another branch is solved on the predecessor's
        branch instead, with a :class:`pkm.BranchWarning` naming the sample; where no continuous
        path exists (it crosses a singularity or leaves the workspace) the branch changes with a
        warning, or :class:`pkm.BranchError` with ``on_branch_change="raise"``.

        Raises :class:`pkm.IKError` for an unreachable point, :class:`pkm.SingularityError` where
        ``G_y``, a limb's ``L_p`` or ``J_IK`` is ill conditioned (condition number above
        ``singularity_threshold``), and ValueError for NaN/inf or mis-shaped input. ``limits``: the robot
        file's joint limits checked on the solution, :class:`pkm.LimitError` (an IKError) naming the joint,
        value, range and first sample beyond them (:mod:`pkm.algorithms.limits`); False: not checked.
        """
        X = self._check_x(np.atleast_2d(_real(x, "x")), "x")
        N = X.shape[0]
        XD = None if xd is None else self._check_x(np.atleast_2d(_real(xd, "xd")), "xd", False)
        XDD = None if xdd is None else self._check_x(np.atleast_2d(_real(xdd, "xdd")), "xdd", False)
        if xdd is not None and xd is None:
            raise InputError("accelerations xdd need velocities xd")
        for name, arr in (("xd", XD), ("xdd", XDD)):
            if arr is not None and arr.shape != X.shape:
                raise InputError(f"{name} must have the shape of x {X.shape}, got {arr.shape}")

        check_solver(tol, max_iter, singularity_threshold)
        check_branch_policy(on_branch_change)
        _flag(warm_start, "warm_start")
        joints = {l.name: np.empty((N, l.n)) for l in self.limbs}
        joints_d = {l.name: np.empty((N, l.n)) for l in self.limbs} if XD is not None else {}
        joints_dd = {l.name: np.empty((N, l.n)) for l in self.limbs} if XDD is not None else {}
        q_act = np.empty((N, self.n_act))
        J_IK = np.empty((N, self.n_act, self.task_dof))
        iters = np.zeros((N, len(self.limbs)), dtype=np.int64)
        first = self._check_start(start)
        prev = list(first)
        square = self.n_act >= self.task_dof   # (or redundant: J_IK's rows and rank checked alike)
        for s in range(N):
            follow = warm_start and s > 0  # continue sample s − 1's branch
            try:
                sols, check = self._solve_sample(X, s, prev if follow else first, follow, tol, max_iter,
                                                 singularity_threshold, on_branch_change)
                J = ik_jacobian(self, sols, X[s])
                if check and square and branch_suspect(prev, [x.theta for x in sols], J_IK[s - 1], J):
                    cont = self._continue(X, s, prev, tol, max_iter, singularity_threshold)
                    if cont is None:
                        branch_event("changed", self.name, s, X[s - 1], X[s], on_branch_change)
                    elif max(float(np.max(np.abs(a.theta - b.theta))) for a, b in zip(cont, sols)) > SAME_SOLUTION:
                        branch_event("continued", self.name, s, X[s - 1], X[s])
                        sols, J = cont, ik_jacobian(self, cont, X[s])
                if square:
                    _check_condition(J, singularity_threshold, "the IK Jacobian J_IK")
            except (IKError, SingularityError) as exc:
                if N == 1 or getattr(exc, "sample", None) is not None:
                    raise
                raise _at_sample(exc, s, X[s]) from None
            J_IK[s] = J
            for k, (limb, sol) in enumerate(zip(self.limbs, sols)):
                prev[k] = sol.theta
                joints[limb.name][s] = sol.theta
                iters[s, k] = sol.iterations
                q_act[s, self._act_slices[k]] = sol.theta[limb.actuated]
                if XD is not None:
                    Vp, dVp = self.platform_twist(X[s], XD[s], None if XDD is None else XDD[s])
                    thd, thdd = limb_rates(limb, sol, Vp, dVp)
                    joints_d[limb.name][s] = thd
                    if thdd is not None:
                        joints_dd[limb.name][s] = thdd

        def act(d):
            return np.column_stack([d[l.name][:, l.actuated] for l in self.limbs]) if d else None

        if _flag(limits, "limits"):
            check_limits(self, [joints[l.name] for l in self.limbs], X, act(joints_d))
        return IKSolution(x=X, q_act=q_act, joints=joints, J_IK=J_IK, actuator_names=list(self.actuator_names),
                          variable_names={l.name: l.variable_names for l in self.limbs}, iterations=iters,
                          qd_act=act(joints_d), qdd_act=act(joints_dd), joints_d=joints_d, joints_dd=joints_dd)

    # ------------------------------------------------------------------ dynamics
    @with_drives   # + reflected rotor inertia and friction, motor side: pkm.algorithms.drive_dynamics
    def inverse_dynamics(self, x, xd, xdd, wrench=None, *, gravity=None, tol: float = 1e-12, max_iter: int = 50,
                         singularity_threshold: float = SINGULARITY_THRESHOLD, threads: int | None = None, t=None, start=None,
                         on_branch_change: str = "warn", progress=None, out=None, torques_only: bool = False,
                         simd=None, weights=None, preload=None, limits: bool = True):
        """Actuator forces/torques along samples of task coordinates, velocities, accelerations.

        ``x, xd, xdd``: arrays (δ_p,) or (N, δ_p) (a trajectory, ideally smooth: each sample's IK
        is warm-started from the previous one); ``wrench``: end-effector wrench acting on the
        platform, body-fixed ``(m; f)`` in ``F_p``, shape (6,) or (N, 6); ``gravity`` overrides the
        file's gravity vector. One numba kernel runs IK (eq. 95–96), velocity/acceleration IK
        (eq. 86–88) and the limb and platform dynamics (eq. 137–144) for all samples.

        Returns a :class:`pkm.algorithms.manipulator.DynamicsResult`: ``.tau`` (N, n_act) and ``.q_act``
        (N, n_act) in ``actuator_names`` order, the joint coordinates, rates and accelerations of
        every limb, each limb's contribution ``W̄_(l)`` and ``J_IK``. Raises :class:`pkm.IKError`,
        :class:`pkm.SingularityError` (naming the sample) and ValueError as
        :meth:`inverse_kinematics` does. ``threads``: number of trajectory chunks computed in
        parallel (default: all of numba's threads; short trajectories run in one chunk). ``t``: the
        sample times (N,), optional — each sample's IK starts from a prediction from the previous
        two samples (quintic Hermite extrapolation), accepted when it is already converged and
        then corrected by one Newton step with the rate IK's ``L_p⁺``; without ``t`` the time
        steps are inferred from ``x, xd, xdd`` (:func:`pkm.kernels.batch.infer_steps`). Same results
        to the IK's accuracy either way.
        ``start``: the tree variables of every limb (a list of arrays, as ``result.joints[name][-1]``
        of an earlier call) to start the first sample's IK from; default: the reference
        configuration (all joint variables zero), directly or by continuation along a straight line
        in task space, so that the result does not depend on earlier calls. Branches and
        ``on_branch_change`` as in :meth:`inverse_kinematics`: the trajectory is followed on its
        first sample's branch, and the result is the same for any ``threads`` (every chunk's
        start is checked against the end of the chunk before and solved again from there if it
        differs); a sample whose torques are not finite raises :class:`pkm.PkmError`.
        ``progress``: a callable receiving the number of samples each time a segment of the
        trajectory is done (e.g. a tqdm bar's ``update``; called from the worker threads); None or
        False: none.
        A task space that is not twist-closed (module docstring) runs the Python reference path
        (:func:`pkm.algorithms.manipulator.inverse_dynamics`, one sample at a time; ``threads``,
        ``t``, ``start``, ``on_branch_change`` and ``progress`` do not apply there).
        ``torques_only``: return only the actuator forces, an (N, n_act) array, computed in blocks
        of :data:`pkm.kernels.stream.STREAM` samples so that memory does not grow with N (any N;
        the full result is limited to 10⁷ samples and ~1 kB per sample). ``out``: an (N, n_act)
        C-contiguous float64 array that receives the actuator forces (returned, or as ``.tau``).
        ``simd``: None (the SIMD path from ``batch.SIMD_MIN_SAMPLES`` samples on, with or without ``t``), True, False or
        a lane count 2, 4, 8: the SIMD path (:mod:`pkm.kernels.simd_kernel`; width: :mod:`pkm.kernels.simd_width`) or not.
        Redundant actuation (``n_act > δ_p``, :attr:`redundancy`; Sec. 8.2): ``tau`` is the solution of
        ``J_IKᵀu = φ_t`` least in ``uᵀWu`` (``weights``: W, n_act positive numbers or an SPD matrix; default
        the identity) plus ``N z`` (``preload`` z: r numbers or (N, r); ``.null_space`` N, orthonormal,
        continuous along the samples): :mod:`pkm.algorithms.distribution`; the scalar kernel runs.
        ``limits`` as in :meth:`inverse_kinematics` (actuator velocities too; not with ``torques_only``).
        """
        from pkm.algorithms.distribution import check_preload, check_weights
        from pkm.kernels.batch import distribute_forces, inverse_dynamics_batch
        from pkm.kernels.platform import gather_actuated
        from pkm.algorithms.manipulator import DynamicsResult, inverse_dynamics as reference

        X = self._check_x(np.atleast_2d(_real(x, "x")), "x")
        XD = self._check_x(np.atleast_2d(_real(xd, "xd")), "xd", False)
        XDD = self._check_x(np.atleast_2d(_real(xdd, "xdd")), "xdd", False)
        if not X.shape == XD.shape == XDD.shape:
            raise InputError(f"x, xd and xdd must have the same shape, got {X.shape}, {XD.shape}, {XDD.shape}")
        if wrench is not None:
            w = _real(wrench, "wrench")
            if w.shape not in ((6,), (X.shape[0], 6)) or not np.all(np.isfinite(w)):
                raise InputError(f"wrench must be finite with shape (6,) or ({X.shape[0]}, 6), got {w.shape}")
        t = None if t is None else _real(t, "t")
        gravity = None if gravity is None else _real(gravity, "gravity")
        check_parallel(threads, simd)
        progress = _progress(progress)
        _flag(torques_only, "torques_only")
        if out is not None and not (isinstance(out, np.ndarray) and out.dtype == np.float64 and out.ndim == 2
                                    and out.shape == (X.shape[0], self.n_act) and out.flags.writeable):
            raise InputError(f"out must be a writeable float64 array of shape ({X.shape[0]}, {self.n_act}), got "
                             f"{getattr(out, 'dtype', type(out).__name__)} {getattr(out, 'shape', '')}")
        weights = check_weights(weights, self.n_act)
        preload = check_preload(preload, X.shape[0], self.redundancy)
        if not self._closed:  # V_p = P(x) V_t: the reference path (the kernels select twist rows)
            self.spec.check_actuation()
            res = reference(self, X, XD, XDD, wrench, gravity, tol=tol, weights=weights, preload=preload)
            _flag(limits, "limits") and check_limits(self, [res.joints[l.name] for l in self.limbs], X, res.qd_act)
            if out is not None:
                out[...] = res.tau
            return res.tau if torques_only else res
        if torques_only:
            from pkm.kernels.stream import torques_stream

            return torques_stream(self, X, XD, XDD, wrench, gravity, out=out, tol=tol, max_iter=max_iter,
                                  singularity_threshold=singularity_threshold, threads=threads, t=t, start=start,
                                  on_branch_change=check_branch_policy(on_branch_change), progress=progress,
                                  simd=simd, weights=weights, preload=preload)
        try:
            raw = inverse_dynamics_batch(
                self, X, XD, XDD, wrench, gravity, tol=tol, max_iter=max_iter, singularity_threshold=singularity_threshold,
                threads=threads, t=t, start=start, on_branch_change=check_branch_policy(on_branch_change),
                progress=progress, simd=simd)
            null = distribute_forces(self, raw, weights, preload, threshold=singularity_threshold)
            th, thd, thdd, tau, JIK, limbW, platW = raw
        except (IKError, SingularityError) as exc:
            raise with_time(exc, t) from None
        qa, qda, qdda = gather_actuated(th, thd, thdd, self._act_limb, self._act_var)  # actuator order, one pass
        try:
            _flag(limits, "limits") and check_limits(self, th, X, qda)
        except IKError as exc:
            raise with_time(exc, t) from None
        joints = {l.name: th[:, k, :l.n] for k, l in enumerate(self.limbs)}
        joints_d = {l.name: thd[:, k, :l.n] for k, l in enumerate(self.limbs)}
        joints_dd = {l.name: thdd[:, k, :l.n] for k, l in enumerate(self.limbs)}

        if out is not None:
            out[...] = tau
            tau = out
        return DynamicsResult(x=X, tau=tau, q_act=qa, qd_act=qda, qdd_act=qdda,
                              joints=joints, joints_d=joints_d, joints_dd=joints_dd, limb_wrenches=limbW,
                              platform_wrench=platW, J_IK=JIK, actuator_names=list(self.actuator_names), null_space=null)

    def _solve_sample(self, X, s, starts, follow, tol, max_iter, threshold, policy):
        """Every limb's IK at sample ``s`` from ``starts``; with ``follow``, a sample that does not
        converge from there is continued from sample ``s − 1``, else solved from the reference
        configuration (reported by :func:`branch_event`). Returns the solutions and whether they
        still need the branch check."""
        Cd = self.platform_pose(X[s])
        try:
            return [self._solve(limb, Cd, th0, X[s], tol, max_iter, threshold, reference=not follow)
                    for limb, th0 in zip(self.limbs, starts)], follow
        except IKError:
            if not follow:
                raise
        cont = self._continue(X, s, starts, tol, max_iter, threshold)
        if cont is not None:
            branch_event("continued", self.name, s, X[s - 1], X[s], stacklevel=4)
            return cont, False
        sols = [self._solve(limb, Cd, th0, X[s], tol, max_iter, threshold) for limb, th0 in zip(self.limbs, starts)]
        branch_event("changed", self.name, s, X[s - 1], X[s], policy, stacklevel=4)
        return sols, False

    def _continue(self, X, s, starts, tol, max_iter, threshold):
        """Every limb continued from its tree variables ``starts`` at sample ``s − 1`` along the straight
        task-space line to sample ``s`` in ``BRANCH_STEPS`` steps; None if a step does not converge."""
        K = BRANCH_STEPS
        poses = [self.platform_pose(X[s - 1] + k / K * (X[s] - X[s - 1])) for k in range(1, K + 1)]
        try:
            return [_along(limb, poses, theta, tol, max_iter, threshold) for limb, theta in zip(self.limbs, starts)]
        except IKError:
            return None

    # ------------------------------------------------------------------ forward dynamics
    def forward_dynamics(self, x, xd, u, wrench=None, *, gravity=None, start=None, **solver):
        """Task accelerations at states ``(x, xd)`` (δ_p,) or (N, δ_p) under actuator forces ``u``
        (n_act,) or (N, n_act) in ``actuator_names`` order (paper eq. 129): a
        :class:`pkm.sim.forward.ForwardDynamics` with ``.xdd``, ``.qd_act``, ``.qdd_act``, ``.J_IK``.
        One call of the batched inverse-dynamics kernel per batch (a task space that is not
        twist-closed: the reference path, eq. 129 with ``M_t``, ``C_t V_t``, ``W_t^grav`` of
        :meth:`eom`); ``xdd`` are the coordinate accelerations ``ẍ``; ``start`` and ``solver`` (``tol``,
        ``max_iter``, ``singularity_threshold``, ``threads``, ``on_branch_change``; any other keyword is
        an InputError) as for :meth:`inverse_dynamics`. Raises :class:`pkm.SingularityError` where
        J_IK degenerates, :class:`pkm.PkmError` where the accelerations overflow (forces, wrench or
        velocities too large for float64)."""
        from pkm.sim.forward import checked_forward_dynamics

        self.spec.check_actuation()
        check_keywords(solver, FORWARD_OPTIONS, "forward_dynamics")
        check_parallel(solver.get("threads"), None)
        return checked_forward_dynamics(self, x, xd, u, wrench, gravity, start=start, **solver)

    def simulate(self, u, t_span, x0=None, xd0=None, **options):
        """Integrate the motion under actuator forces ``u`` over ``t_span = (t0, t1)`` (paper §8.1.1): see
        :func:`pkm.sim.simulate.simulate` for ``u`` (constant, ``"zero"``, ``"hold"``, table, CSV, or a controller such as
        :class:`pkm.control.ComputedTorque`), the methods and the options. Returns a
        :class:`pkm.sim.simulate.SimulationResult` with energies, actuator work and loop closure (``result.health()``)."""
        from pkm.sim.simulate import simulate

        return simulate(self, u, t_span, x0, xd0, **options)

    def simulate_batch(self, u, t_span, x0=None, xd0=None, **options):   # many RK4 runs at once: pkm.sim.batch
        from pkm.sim.batch import simulate_batch
        return simulate_batch(self, u, t_span, x0, xd0, **options)

    def regressor(self, x, xd, xdd, t=None, **options):  # Y (N, n_act, P): tau = Y @ π, pkm.identification
        from pkm.identification import regressor
        return regressor(self, x, xd, xdd, t, **options)

    def dynamic_parameters(self):  # (names, π): 10 standard parameters per body, pkm.identification.parameters
        from pkm.identification import parameters
        return parameters(self)

    def _check_start(self, start) -> list[np.ndarray]:
        """``start`` as a list of each limb's tree variables (the reference configuration if None)."""
        return check_start(self.limbs, start)

    def _packed(self):
        if getattr(self, "_pack_cache", None) is None:
            from pkm.kernels.batch import pack
            self._pack_cache = pack(self)
        return self._pack_cache

    def mass_matrix(self, x) -> np.ndarray:
        """Task-space mass matrix ``M_t`` at task coordinates ``x`` (eq. 108)."""
        from pkm.algorithms.manipulator import mass_matrix

        self.spec.check_actuation()
        return mass_matrix(self, self._one_x(x, "x"))

    def eom(self, x, xd):
        """Terms of the task-space (eq. 107) and actuator-space (eq. 116) EOM at ``(x, V_t = xd)``."""
        from pkm.algorithms.manipulator import eom

        self.spec.check_actuation()
        return eom(self, self._one_x(x, "x"), self._one_x(xd, "xd", False))

    def continuation_poses(self, x, steps: int = CONTINUATION_STEPS) -> np.ndarray:
        """Platform poses (steps, 4, 4) at ``x_ref + t (x − x_ref)``, ``t = 1/steps, 2/steps, …, 1``:
        the straight line in task space along which an IK that does not converge from the
        reference configuration is continued (here and in :mod:`pkm.kernels.inverse_dynamics`); the last is
        the pose at ``x``."""
        x = self._one_x(x, "x")
        if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)) or not 1 <= steps <= 10**6:
            raise InputError(f"steps must be an integer from 1 to 10**6, got {steps!r}")
        x0 = self.x_ref
        return np.array([self.platform_pose(x0 + t * (x - x0)) for t in np.arange(1, steps + 1) / steps])

    def _solve(self, limb, Cd, theta0, x, tol, max_iter, threshold, reference=True):
        try:
            return solve_limb(limb, Cd, theta0, tol, max_iter, threshold)
        except (IKError, SingularityError) as first:
            if not reference:
                raise
            # continuation from the reference configuration along a straight line in task space
            try:
                return _along(limb, self.continuation_poses(x), np.zeros(limb.n), tol, max_iter, threshold)
            except SingularityError:
                raise
            except IKError:
                raise (explained(first, limb, Cd, self) if isinstance(first, IKError) else first) from None


#: (generalized force unit, joint variable unit) of an actuated axis of each kind.
ACTUATOR_UNITS = {"R": ("N·m", "rad"), "H": ("N·m", "rad"), "P": ("N", "m")}


def load(path, parameters: dict | None = None, *, check: bool = True, **options) -> Robot:
    """Load and compile a robot file: ``robot = pkm.load("robots/delta_3rr2rrr.toml")``; a ``.urdf`` with its
    closure YAML and side file, an MJCF ``.xml`` (``options``: platform, task, closures, side; :func:`pkm.formats.load_robot_spec`). With
    ``check``: one actuated joint per task coordinate (``RobotSpec.check_actuation``, a square ``J_IK``,
    eq. 116), a platform that can move in every task component and in no other direction unless the
    file declares an ideal constraint (``freedom.check_task_mobility``), else a one-line
    :class:`pkm.RobotFileError` (entry ``task``)."""
    from pkm.formats import load_robot_spec, warn_notes

    spec, notes = load_robot_spec(Path(path), parameters, **options)
    if _flag(check, "check"):
        from pkm.description.freedom import check_task_mobility

        spec.check_actuation()
        check_task_mobility(spec)
    robot = Robot(spec)
    return warn_notes(notes) or robot   # once the robot loads (a refused file: one error line)
