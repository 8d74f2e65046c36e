"""Task coordinates of a PKM's platform (paper Sec. 3.6, eq. 82–83, 85; eq. 7 and App. A; Sec. 8.1): the pose, the body-fixed twist and
its derivative for coordinates ``x`` and their rates, and the conversions between the rates ``ẋ``
and the task velocity ``V_t`` (see :mod:`pkm.robot` for the conventions).

:class:`TaskCoordinates` is a mixin of :class:`pkm.robot.Robot`; it needs ``R0``, ``r0`` (the
platform's reference pose), ``task`` (the :class:`pkm.description.spec.TaskSpec`), ``P_p``, ``name``,
``task_dof``, ``task`` and ``_closed``.
"""

from __future__ import annotations

import numpy as np

from pkm.errors import InputError, PkmError
from pkm.lie import dexp_so3, dexp_so3_dot, exp_so3
from pkm.lie.interpret import kernel


class TaskCoordinates:
    """Platform pose and twist from task coordinates (mixin of :class:`pkm.robot.Robot`)."""

    def _check_x(self, x, name):
        """``x`` (an array) unless it is not (δ_p,) or (N, δ_p) finite task coordinates: InputError."""
        if x.ndim > 2 or x.shape[-1] != self.task_dof:
            raise InputError(f"{name} must have {self.task_dof} task coordinates ({', '.join(self.task.coordinate_names())}), "
                             f"got shape {x.shape}")
        if x.size == 0:
            raise InputError(f"{name} holds no samples (shape {x.shape})")
        if not np.all(np.isfinite(x)):
            raise InputError(f"{name} contains NaN or inf")
        return x

    def _one_x(self, x, name) -> np.ndarray:
        """``x`` as one sample (δ_p,) of finite task coordinates (also given as (1, δ_p)), else InputError."""
        a = self._check_x(np.atleast_1d(_real(x, name)), name)
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
        _, rho = self._split(x)
        ld, rhod = self._split_rates(xd)
        R = kernel(exp_so3)(rho)
        w = kernel(dexp_so3)(-rho) @ rhod
        v = R.T @ ld
        V = np.concatenate([w, v])
        if xdd is None:
            return V, None
        ldd, rhodd = self._split_rates(xdd)
        dw = kernel(dexp_so3)(-rho) @ rhodd + kernel(dexp_so3_dot)(-rho, -rhod) @ rhod
        return V, np.concatenate([dw, R.T @ ldd - np.cross(w, v)])

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
        _, rho = self._split(np.asarray(x, float))
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
        return np.linalg.solve(self.P_p.T @ self.coordinate_jacobian(x), np.asarray(Vt, float))

    def coordinate_accelerations(self, x, xd, Vtd) -> np.ndarray:
        """``ẍ`` for task acceleration ``V̇_t`` at ``(x, ẋ)``: ``ẍ = A⁻¹(V̇_t − P_pᵀ V̇_p(x, ẋ, 0))``, the
        inverse of :meth:`platform_twist`'s derivative (``P_pᵀ V̇_p(x, ẋ, 0)`` holds the derivative of
        dexp, ``ω × v`` and, for a task space that is not twist-closed, ``Ȧ ẋ``)."""
        A = self.P_p.T @ self.coordinate_jacobian(x)
        dV0 = self.platform_twist(x, xd, np.zeros(self.task_dof))[1]
        return np.linalg.solve(A, np.asarray(Vtd, float) - self.P_p.T @ dV0)

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
