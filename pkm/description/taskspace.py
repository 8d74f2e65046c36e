"""Task coordinates of a PKM's platform (spec §7, §1.7, §11.1): the pose, the body-fixed twist and
its derivative for coordinates ``x`` and their rates, and the conversions between the rates ``ẋ``
and the task velocity ``V_t`` (see :mod:`pkm.robot` for the conventions).

:class:`TaskCoordinates` is a mixin of :class:`pkm.robot.Robot`; it needs ``R0``, ``r0`` (the
platform's reference pose), ``task`` (the :class:`pkm.description.spec.TaskSpec`), ``P_p``, ``name``,
``task_dof``, ``_closed`` and ``_check_x``.
"""

from __future__ import annotations

import numpy as np

from pkm.errors import PkmError
from pkm.lie import dexp_inv_so3, dexp_so3, dexp_so3_dot, exp_so3


class TaskCoordinates:
    """Platform pose and twist from task coordinates (mixin of :class:`pkm.robot.Robot`)."""

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
        C[:3, :3] = self.R0 @ exp_so3(rho)
        C[:3, 3] = self.R0 @ local
        return C

    def platform_twist(self, x, xd, xdd=None):
        """Body-fixed platform twist ``V_p`` at coordinates ``x`` with rates ``xd = ẋ`` and, with
        ``xdd = ẍ``, its derivative ``V̇_p`` (eq. 7, 82; module docstring):
        ``ω = dexp_{−ρ} ρ̇``, ``v = exp(ρ)ᵀ l̇``, ``ω̇ = dexp_{−ρ} ρ̈ + (d/dt dexp_{−ρ}) ρ̇``,
        ``v̇ = exp(ρ)ᵀ l̈ − ω × v``."""
        _, rho = self._split(x)
        ld, rhod = self._split_rates(xd)
        R = exp_so3(rho)
        w = dexp_so3(-rho) @ rhod
        v = R.T @ ld
        V = np.concatenate([w, v])
        if xdd is None:
            return V, None
        self.check_dynamics()
        ldd, rhodd = self._split_rates(xdd)
        dw = dexp_so3(-rho) @ rhodd + dexp_so3_dot(-rho, -rhod) @ rhod
        return V, np.concatenate([dw, R.T @ ldd - np.cross(w, v)])

    def check_dynamics(self):
        """:class:`pkm.PkmError` unless the task space's twist components are closed under its
        rotations (``V_p = P_p V_t``, module docstring): the condition of accelerations, J_IK and
        the dynamics."""
        if not self._closed:
            raise PkmError(f"{self.name}: the task components ({', '.join(self.task.components)}) are not closed under "
                           "the platform's rotations (the platform twist of a tilted platform has components outside "
                           "them): accelerations and dynamics need a task space with no rotation, one rotation (with "
                           "translations along and/or across its axis) or all three rotations (with none or all three "
                           "translations)")

    def task_velocity(self, x, xd) -> np.ndarray:
        """``V_t = P_pᵀ V_p`` at coordinates ``x`` with rates ``xd = ẋ`` (eq. 82)."""
        return self.P_p.T @ self.platform_twist(x, xd)[0]

    def coordinate_rates(self, x, Vt) -> np.ndarray:
        """``ẋ`` for task velocity ``V_t`` at ``x``: ``ρ̇ = dexp_{−ρ}⁻¹ ω``, ``l̇ = exp(ρ) v``
        (the inverse of :meth:`task_velocity`, eq. 130; singular at ``|ρ| = 2π``)."""
        self.check_dynamics()
        _, rho = self._split(x)
        V = self.P_p @ np.asarray(Vt, float)
        return self._task_order(exp_so3(rho) @ V[3:], dexp_inv_so3(-rho) @ V[:3])

    def coordinate_accelerations(self, x, xd, Vtd) -> np.ndarray:
        """``ẍ`` for task acceleration ``V̇_t`` at ``(x, ẋ)``: ``ρ̈ = dexp_{−ρ}⁻¹(ω̇ − (d/dt dexp_{−ρ}) ρ̇)``,
        ``l̈ = exp(ρ)(v̇ + ω × v)`` (the inverse of :meth:`platform_twist`'s derivative)."""
        self.check_dynamics()
        _, rho = self._split(x)
        ld, rhod = self._split_rates(xd)
        R = exp_so3(rho)
        w, v = dexp_so3(-rho) @ rhod, R.T @ ld
        dV = self.P_p @ np.asarray(Vtd, float)
        rhodd = dexp_inv_so3(-rho) @ (dV[:3] - dexp_so3_dot(-rho, -rhod) @ rhod)
        return self._task_order(R @ (dV[3:] + np.cross(w, v)), rhodd)

    def _task_order(self, lin, rot) -> np.ndarray:
        return np.array([(lin if c.startswith("v") else rot)["xyz".index(c[1])] for c in self.task.components])

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
    """``value`` as a float array; ValueError for complex or non-numeric input (never a silently
    dropped imaginary part)."""
    a = np.asarray(value)
    if np.iscomplexobj(a):
        raise ValueError(f"{name} must be real numbers, got complex values")
    if a.dtype.kind not in "biuf":
        try:
            a = a.astype(float)
        except (TypeError, ValueError):
            raise ValueError(f"{name} must be numbers, got {a.dtype} values") from None
    return a.astype(float, copy=False)
