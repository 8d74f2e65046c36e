"""The regressor ``Y`` of the inverse dynamics: ``τ = Y π`` (paper Sec. 8.2, eq. 137–140, 144).

Every term of the inverse dynamics is linear in the bodies' mass matrices ``M_i`` (eq. 167): the
limbs' Newton–Euler passes ``φ_(l)`` (App. B) with gravity, the platform residual ``φ_p``
(eq. 104–106), their projection ``W̄_(l) = Fᵀ Hᵀ φ_(l)`` through the loop constraints (eq. 144: ``H``
and ``L_p`` depend on the configuration only) and ``J_IKᵀ u = Σ W̄ + P_pᵀ φ_p`` (eq. 140); with
redundant actuation the forces ``u = (J_IKᵀ)⁺_W φ_t`` (fixed weights ``W``, no preload) are linear in
``φ_t`` as well. So column ``j`` of ``Y`` is the inverse dynamics of a robot whose standard
parameters are the unit vector ``e_j`` (:mod:`pkm.identification.parameters`; the kernel skips bodies of zero mass, so a column
other than a mass is run as ``e_m + e_j`` and the mass column subtracted): the batched numba
kernel (:func:`pkm.kernels.batch.inverse_dynamics_batch`) is run once per column on the packed model
with its inertia slots replaced, on a shallow copy of the robot (the kinematics, and so the branch
followed, are those of the robot itself). The IK is repeated per column (it costs about as much as
the dynamics passes; ``benchmarks/bench_regressor.py`` measures the whole).

Extension point (drives): :data:`EXTRA_TERMS` holds functions ``term(robot)`` returning ``None`` or
``(names, values, columns)`` with ``columns(q_act, qd_act, qdd_act) -> (N, n_act, k)``: further
parameters that enter the actuator forces linearly (rotor inertia ``q̈``, viscous ``q̇``, Coulomb
``sign q̇`` …). Their columns are appended to ``Y``, their names and values to :func:`parameters`.
"""
from __future__ import annotations

import copy
import warnings
from typing import NamedTuple

import numpy as np

from pkm.algorithms.inverse_kinematics import check_keywords
from pkm.errors import BranchWarning, InputError
from pkm.identification.joint_terms import joint_term_parameters
from pkm.identification.parameters import packed_inertia, standard
from pkm.kernels.model import BF_JT, BF_SIZE, LAY_NMAX

#: Keywords of :func:`regression` passed on to the inverse dynamics.
OPTIONS = ("tol", "max_iter", "singularity_threshold", "threads", "start", "on_branch_change", "simd", "limits")
#: Functions ``term(robot) -> None | (names, values, columns)`` of further linear parameters (module docstring).
EXTRA_TERMS: list = []


class Regression(NamedTuple):
    """``Y`` (N, n_act, P) with ``tau = Y @ values`` (``names`` (P,)); ``tau`` (N, n_act) the file's own
    inverse dynamics at the same states (the nominal run), ``q_act``, ``qd_act``, ``qdd_act``, ``J_IK``."""

    Y: np.ndarray
    names: tuple
    values: np.ndarray
    tau: np.ndarray
    q_act: np.ndarray
    qd_act: np.ndarray
    qdd_act: np.ndarray
    J_IK: np.ndarray


def _extra(robot):
    out = []
    for term in EXTRA_TERMS:
        got = term(robot)
        if got is not None:
            out.append(got)
    return out


def parameters(robot) -> tuple[tuple[str, ...], np.ndarray]:
    """``(names, π)`` of every parameter of the regressor: the standard inertial ones
    (:func:`pkm.identification.parameters.dynamic_parameters`), the drives' and the joints' friction
    (:mod:`pkm.identification.joint_terms`), then those of :data:`EXTRA_TERMS`."""
    std = standard(robot)
    jt = joint_term_parameters(robot)
    names, values = list(std.names) + [p.name for p in jt], [std.values, np.array([p.value for p in jt], float)]
    for n, v, _ in _extra(robot):
        names.extend(n)
        values.append(np.asarray(v, float))
    return tuple(names), np.concatenate(values)


def regression(robot, x, xd, xdd, t=None, *, weights=None, columns=None, **solver) -> Regression:
    """:class:`Regression` at the states ``x, xd, xdd`` ((δ_p,) or (N, δ_p)), see the module docstring.

    ``t``, ``weights`` and ``solver`` (``tol``, ``max_iter``, ``singularity_threshold``, ``threads``,
    ``start``, ``on_branch_change``, ``simd``, ``limits``) as for :meth:`pkm.robot.Robot.inverse_dynamics`; no
    end-effector wrench and no preload (they are not linear in the parameters). ``columns``: indices
    of the parameters (:func:`parameters`) whose columns to compute (default all): ``Y``, ``names`` and
    ``values`` hold those only (e.g. the base regressor's, the independent columns: fewer kernel runs).
    A task space that is not twist-closed runs the Python reference path (:mod:`pkm.identification.reference`)."""
    for key in ("wrench", "preload", "gravity", "torques_only", "out", "progress"):
        if key in solver:
            raise InputError(f"regressor: {key!r} is not an option (the regressor is that of the torques "
                             "without end-effector wrench and preload, at the file's gravity)")
    check_keywords(solver, OPTIONS, "regressor")
    std = standard(robot)
    names, values = parameters(robot)
    jt = joint_term_parameters(robot)
    P, S = len(names), len(std.names) + len(jt)   # S: the columns the kernel computes
    if columns is None:
        cols = list(range(P))
    else:
        cols = [int(c) for c in np.asarray(columns).ravel()] if np.asarray(columns).dtype.kind in "iu" else None
        if cols is None or any(not 0 <= c < P for c in cols):
            raise InputError(f"regressor: columns must be indices 0 … {P - 1} of the parameters, got {columns!r}")
    res = robot.inverse_dynamics(x, xd, xdd, t=t, weights=weights, **solver)
    N = res.tau.shape[0]
    X, XD, XDD = res.x, np.atleast_2d(np.asarray(xd, float)), np.atleast_2d(np.asarray(xdd, float))
    Y = np.empty((N, robot.n_act, len(cols)))
    if robot._closed:
        _kernel_columns(robot, std, jt, cols, X, XD, XDD, t, weights, solver, Y)
    else:   # V_p = P(x) V_t: the reference path (pkm.identification.reference)
        from pkm.identification.reference import reference_columns

        if jt:
            raise InputError("regressor: drive and friction parameters need a twist-closed task space (the kernel)")
        mine = [k for k, j in enumerate(cols) if j < S]
        Y[:, :, mine] = reference_columns(robot, std, X, XD, XDD, weights, [cols[k] for k in mine])[0]
    extra = _extra(robot)
    if extra and any(j >= S for j in cols):
        E = np.concatenate([np.asarray(f(res.q_act, res.qd_act, res.qdd_act), float) for _, _, f in extra], axis=2)
        for k, j in enumerate(cols):
            if j >= S:
                Y[:, :, k] = E[:, :, j - S]
    return Regression(Y=Y, names=tuple(names[j] for j in cols), values=values[cols], tau=res.tau,
                      q_act=res.q_act, qd_act=res.qd_act, qdd_act=res.qdd_act, J_IK=res.J_IK)


def _kernel_columns(robot, std, jt, cols, X, XD, XDD, t, weights, solver, Y):
    """The standard-parameter and joint-term columns of ``cols`` into ``Y`` by the batch kernel (module
    docstring; a joint-term column: every inertia zero, that parameter's joint terms 1)."""
    S = len(std.names)
    km = robot._packed()
    mf, Mp = km.mf.copy(), km.Mp.copy()
    nmax = int(km.lay[LAY_NMAX])
    jts = mf[:, :BF_SIZE * nmax].reshape(mf.shape[0], nmax, BF_SIZE)[:, :, BF_JT:BF_JT + 3]   # a view of mf
    jts[...] = 0.0   # the inertial columns without the joint terms
    proxy = copy.copy(robot)
    proxy.__dict__ = dict(robot.__dict__)
    proxy._pack_cache = km._replace(mf=mf, Mp=Mp)
    proxy._lane_work_pool = {}   # the SIMD scratch of this call's model, dropped with it
    e = np.zeros(S)
    mass = {}

    def run(j, g):   # the torques of e_j + e_m(g): the kernel skips a body of zero mass
        e[:] = 0.0
        e[10 * g] = 1.0
        e[j] = 1.0
        packed_inertia(std, km, e, mf, Mp)
        return proxy.inverse_dynamics(X, XD, XDD, t=t, weights=weights, torques_only=True, **solver)

    with warnings.catch_warnings():   # the branch is the nominal run's: its warnings were given once
        warnings.simplefilter("ignore", BranchWarning)
        for k, j in enumerate(cols):
            if S <= j < S + len(jt):   # a joint term's column
                e[:] = 0.0
                packed_inertia(std, km, e, mf, Mp)
                for (l, i, c) in jt[j - S].slots:
                    jts[l, i, c] = 1.0
                Y[:, :, k] = proxy.inverse_dynamics(X, XD, XDD, t=t, weights=weights, torques_only=True, **solver)
                jts[...] = 0.0
                continue
            if j >= S:
                continue
            g = j // 10
            if g not in mass:
                mass[g] = run(10 * g, g)
            Y[:, :, k] = mass[g] if j % 10 == 0 else run(j, g) - mass[g]


def regressor(robot, x, xd, xdd, t=None, **options) -> np.ndarray:
    """``Y`` (N, n_act, P): ``robot.inverse_dynamics(x, xd, xdd).tau == Y @ π`` with
    ``(names, π) = robot.dynamic_parameters()`` (:func:`regression`)."""
    return regression(robot, x, xd, xdd, t, **options).Y
