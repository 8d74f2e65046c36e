"""Task coordinates of a PKM's platform (paper Sec. 3.6, eq. 82–83, 85; eq. 7 and App. A; Sec. 8.1): the pose, the body-fixed twist and
its derivative for coordinates ``x`` and their rates, and the conversions between the rates ``ẋ``
and the task velocity ``V_t`` (see :mod:`pkm.robot` for the conventions).

:class:`TaskCoordinates` is a mixin of :class:`pkm.robot.Robot`; it needs ``R0``, ``r0`` (the
platform's reference pose), ``task`` (the :class:`pkm.description.spec.TaskSpec`), ``P_p``, ``name``,
``task_dof``, ``task`` and ``_closed``.
"""

from __future__ import annotations

import numpy as np

from pkm.errors import InputError, PkmError, SingularityError, fmt_array
from pkm.lie import dexp_so3, dexp_so3_dot, exp_so3
from pkm.lie.interpret import kernel

#: The domain of the rotation-vector task coordinates ``ρ`` (``R_p = R_0 exp(ρ)``): ``|ρ| ≤ MAX_ROTATION
#: = 2π(1 − 10⁻⁶)``. The rotation vector is singular at ``|ρ| = 2π``: there ``dexp_so3(ρ)`` (eq. 7, the
#: map between ``ρ̇`` and ``ω``) loses rank, its singular values being 1 along ``ρ`` and
#: ``|sin(|ρ|/2)|/(|ρ|/2)`` across it, so rates and accelerations of the coordinates grow without bound
#: (the forward dynamics' ``ẍ`` reached 1e18–1e34 there). At ``MAX_ROTATION`` its condition number
#: ``(|ρ|/2)/|sin(|ρ|/2)| ≈ 1/10⁻⁶`` reaches pkm's singularity threshold 10⁶. Every orientation has a
#: rotation vector with ``|ρ| ≤ π``; beyond ``π`` the coordinates go on continuously (a motion may turn
#: past 180°) up to this bound, where :class:`pkm.SingularityError` is raised (inverse kinematics and
#: dynamics, EOM, forward dynamics, simulation, workspace maps, the CLI alike).
MAX_ROTATION = 2.0 * np.pi * (1.0 - 1e-6)


class TaskCoordinates:
    """Platform pose and twist from task coordinates (mixin of :class:`pkm.robot.Robot`)."""

    def _check_x(self, x, name, coordinates: bool = True):
        """``x`` (an array) unless it is not (δ_p,) or (N, δ_p) finite task coordinates: InputError;
        ``coordinates`` (not rates): rotation vectors beyond :data:`MAX_ROTATION` are a
        :class:`pkm.SingularityError` (:meth:`_check_rotation`)."""
        if x.ndim > 2 or x.shape[-1] != self.task_dof:
            raise InputError(f"{name} must have {self.task_dof} task coordinates ({', '.join(self.task.coordinate_names())}), "
                             f"got shape {x.shape}")
        if x.size == 0:
            raise InputError(f"{name} holds no samples (shape {x.shape})")
        if not np.all(np.isfinite(x)):
            raise InputError(f"{name} contains NaN or inf")
        if coordinates:
            self._check_rotation(x, name)
        return x

    def _check_rotation(self, x, name):
        """:class:`pkm.SingularityError` (one line, naming the sample of a batch) where the rotation
        vector of task coordinates ``x`` (δ_p,) or (N, δ_p) leaves the domain ``|ρ| ≤ MAX_ROTATION``."""
        rot = [i for i, c in enumerate(self.task.components) if c.startswith("w")]
        if not rot:
            return
        X = np.reshape(x, (-1, x.shape[-1]))
        with np.errstate(over="ignore"):
            norm = np.sqrt(np.sum(X[:, rot] ** 2, axis=1))
        bad = np.flatnonzero(~(norm <= MAX_ROTATION))
        if not bad.size:
            return
        s, theta = int(bad[0]), float(norm[bad[0]])
        half = np.sin(theta / 2.0) if np.isfinite(theta) else 0.0
        cond = theta / 2.0 / abs(half) if half != 0.0 else np.inf
        names = ", ".join(self.task.coordinate_names()[i] for i in rot)
        where = f" at sample {s}" if X.shape[0] > 1 else ""
        raise SingularityError(
            f"{name}{where}: the rotation vector ({names}) = {fmt_array(X[s, rot], 9)} has |ρ| = "
            f"{theta:.9g} rad, outside the task coordinates' domain |ρ| <= 2π(1 - 1e-6) = {MAX_ROTATION:.9g} rad: at "
            f"|ρ| = 2π the rotation vector is singular (dexp_so3 loses rank); the same orientation has the rotation "
            f"vector ρ(1 - 2π/|ρ|)", condition=cond, threshold=1e6, sample=s if X.shape[0] > 1 else None)

    def _one_x(self, x, name, coordinates: bool = True) -> np.ndarray:
        """``x`` as one sample (δ_p,) of finite task coordinates (also given as (1, δ_p)), else InputError
        (``coordinates``: also the rotation vector's domain, :meth:`_check_rotation`)."""
        a = self._check_x(np.atleast_1d(_real(x, name)), name, coordinates)
        if a.shape not in ((self.task_dof,), (1, self.task_dof)):
            raise InputError(f"{name} must be one sample of {self.task_dof} task coordinates, got shape {a.shape}")
        return a.reshape(self.task_dof)

    def _split(self, x):
        local = self.R0.T @ self.r0
        rho = np.zeros(3)
        for i, c in enumerate(self.task.components):
            axis = "xyz".index(c[1])
            if c.startswith("v"):
                local[axis] = x[i]
            else:
                rho[axis] = x[i]
        return local, rho

    def platform_pose(self, x) -> np.ndarray:
        """The platform pose ``C_p`` (4×4) for task coordinates ``x``."""
        x = self._check_x(_real(x, "x").reshape(-1), "x")
        local, rho = self._split(x)
        C = np.eye(4)
        C[:3, :3] = self.R0 @ kernel(exp_so3)(rho)
        C[:3, 3] = self.R0 @ local
        return C

    def platform_twist(self, x, xd, xdd=None):
        """Body-fixed platform twist ``V_p`` at coordinates ``x`` with rates ``xd = ẋ`` and, with
        ``xdd = ẍ``, its derivative ``V̇_p`` (eq. 7, 82; module docstring):
        ``ω = dexp_{−ρ} ρ̇``, ``v = exp(ρ)ᵀ l̇``, ``ω̇ = dexp_{−ρ} ρ̈ + (d/dt dexp_{−ρ}) ρ̇``,
        ``v̇ = exp(ρ)ᵀ l̈ − ω × v``."""
        _, rho = self._split(self._vector(x, "x"))
        ld, rhod = self._split_rates(self._vector(xd, "xd"))
        R = kernel(exp_so3)(rho)
        with np.errstate(all="ignore"):
            w = kernel(dexp_so3)(-rho) @ rhod
            v = R.T @ ld
            V = np.concatenate([w, v])
            dV = None
            if xdd is not None:
                ldd, rhodd = self._split_rates(self._vector(xdd, "xdd"))
                dw = kernel(dexp_so3)(-rho) @ rhodd + kernel(dexp_so3_dot)(-rho, -rhod) @ rhod
                dV = np.concatenate([dw, R.T @ ldd - np.cross(w, v)])
        return self._finite(V, "the platform twist"), None if dV is None else self._finite(dV, "its derivative")

    def check_dynamics(self):
        """:class:`pkm.PkmError` unless the task space's twist components are closed under its
        rotations (``V_p = P_p V_t`` with the constant ``P_p``, module docstring of :mod:`pkm.robot`):
        the condition of the batched numba kernels (inverse and forward dynamics, simulation). Other
        task spaces run the reference path (:meth:`velocity_distribution`)."""
        if not self._closed:
            raise PkmError(f"{self.name}: the task components ({', '.join(self.task.components)}) are not closed under "
                           "the platform's rotations (the twist of the tilted platform has components outside them, "
                           "V_p = P(x) V_t): the batched kernels need a task space with no rotation, one rotation (with "
                           "translations along and/or across its axis) or all three rotations (with none or all three "
                           "translations); its inverse dynamics, EOM and forward dynamics run the reference path")

    def coordinate_jacobian(self, x) -> np.ndarray:
        """``H_p(x)`` (6 × δ_p) with ``V_p = H_p ẋ`` (eq. 7): a rotational coordinate's column is the
        column of ``dexp_{−ρ}`` for its axis (over ``ω``), a translational one's ``exp(ρ)ᵀ e_a`` (over ``v``)."""
        _, rho = self._split(self._vector(x, "x"))
        D, R = kernel(dexp_so3)(-rho), kernel(exp_so3)(rho)
        H = np.zeros((6, self.task_dof))
        for i, c in enumerate(self.task.components):
            a = "xyz".index(c[1])
            if c.startswith("w"):
                H[:3, i] = D[:, a]
            else:
                H[3:, i] = R[a]
        return H

    def velocity_distribution(self, x) -> np.ndarray:
        """``P(x)`` (6 × δ_p) with ``V_p = P(x) V_t`` (eq. 82 generalised): ``P_p`` for a twist-closed task
        space, else ``H_p A⁻¹`` with ``A = P_pᵀ H_p`` (its selected rows are the identity; the others give
        the platform twist's components outside the task, e.g. ``ω_z`` of a tilted tilt–heave platform).
        The virtual platform motions of the task space are its columns: ``F_(l) = L_p⁺ P(x)``, the
        platform enters as ``P(x)ᵀ φ_p`` (eq. 140)."""
        if self._closed:
            return self.P_p
        H = self.coordinate_jacobian(x)
        return H @ np.linalg.inv(self.P_p.T @ H)

    def task_velocity(self, x, xd) -> np.ndarray:
        """``V_t = P_pᵀ V_p`` at coordinates ``x`` with rates ``xd = ẋ`` (eq. 82)."""
        return self.P_p.T @ self.platform_twist(x, xd)[0]

    def coordinate_rates(self, x, Vt) -> np.ndarray:
        """``ẋ = A⁻¹ V_t`` for task velocity ``V_t`` at ``x``, ``A = P_pᵀ H_p(x)`` (:meth:`coordinate_jacobian`;
        e.g. ``ρ̇ = dexp_{−ρ}⁻¹ ω``, ``l̇ = exp(ρ) v`` for SE(3)): the inverse of :meth:`task_velocity`,
        eq. 130 (singular at ``|ρ| = 2π``)."""
        x = self._vector(x, "x")
        self._check_rotation(x, "x")   # dexp_so3 is singular at |ρ| = 2π
        with np.errstate(all="ignore"):
            xd = np.linalg.solve(self.P_p.T @ self.coordinate_jacobian(x), self._vector(Vt, "Vt"))
        return self._finite(xd, "the coordinate rates")

    def coordinate_accelerations(self, x, xd, Vtd) -> np.ndarray:
        """``ẍ`` for task acceleration ``V̇_t`` at ``(x, ẋ)``: ``ẍ = A⁻¹(V̇_t − P_pᵀ V̇_p(x, ẋ, 0))``, the
        inverse of :meth:`platform_twist`'s derivative (``P_pᵀ V̇_p(x, ẋ, 0)`` holds the derivative of
        dexp, ``ω × v`` and, for a task space that is not twist-closed, ``Ȧ ẋ``)."""
        x = self._vector(x, "x")
        self._check_rotation(x, "x")
        A = self.P_p.T @ self.coordinate_jacobian(x)
        dV0 = self.platform_twist(x, xd, np.zeros(self.task_dof))[1]
        with np.errstate(all="ignore"):
            xdd = np.linalg.solve(A, self._vector(Vtd, "Vtd", finite=False) - self.P_p.T @ dV0)
        return self._finite(xdd, "the coordinate accelerations")

    def _vector(self, v, name, finite: bool = True) -> np.ndarray:
        """``v`` as δ_p (``finite``: finite) floats, else :class:`pkm.InputError` (no copy, and quick, for
        a float64 array: the conversions run at every right-hand side of a simulation)."""
        a = v if isinstance(v, np.ndarray) and v.dtype == np.float64 else _real(v, name)
        if a.shape != (self.task_dof,) or (finite and not np.all(np.isfinite(a))):
            raise InputError(f"{name} must be {self.task_dof} finite numbers ({', '.join(self.task.coordinate_names())}), "
                             f"got shape {a.shape}" + ("" if a.shape != (self.task_dof,) else " with NaN or inf"))
        return a

    def _finite(self, a, what) -> np.ndarray:
        """``a`` if finite, else a one-line :class:`pkm.PkmError`: rates too large for float64."""
        if not np.all(np.isfinite(a)):
            raise PkmError(f"{self.name}: {what} overflow (rates or accelerations too large for float64)")
        return a

    def _split_rates(self, xd):
        lin, rot = np.zeros(3), np.zeros(3)
        for i, c in enumerate(self.task.components):
            (lin if c.startswith("v") else rot)["xyz".index(c[1])] = xd[i]
        return lin, rot


def twist_closed(components) -> bool:
    """Whether platform twists of the task space stay in its selected components (``V_p = P_p V_t``
    at every pose): no rotation; one rotation with the translations along its axis and/or both
    across it; or three rotations with none or all three translations."""
    rot = {c[1] for c in components if c.startswith("w")}
    lin = {c[1] for c in components if c.startswith("v")}
    if not rot:
        return True
    if len(rot) == 3:
        return len(lin) in (0, 3)
    if len(rot) == 1:
        return len(lin - rot) in (0, 2)
    return False


def _real(value, name: str) -> np.ndarray:
    """``value`` as a float array; :class:`pkm.InputError` (a ValueError) for complex, non-numeric
    or ragged input (never a silently dropped imaginary part)."""
    if value is None:
        raise InputError(f"{name} must be numbers, got None")
    try:
        a = np.asarray(value)
    except (TypeError, ValueError):   # ragged nested lists
        raise InputError(f"{name} must be a rectangular array of numbers, got {type(value).__name__} "
                         f"of uneven lengths") from None
    if np.iscomplexobj(a):
        raise InputError(f"{name} must be real numbers, got complex values")
    if a.dtype.kind not in "biuf":
        try:
            a = a.astype(float)
        except (TypeError, ValueError):
            raise InputError(f"{name} must be numbers, got {a.dtype} values") from None
    return a.astype(float, copy=False)
