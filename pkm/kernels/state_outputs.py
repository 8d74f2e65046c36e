"""The limbs' energy and loop closure at many states of one robot in one numba call (issue 32.2).

:func:`pkm.sim.batch.simulate_batch` keeps, at every kept output of a member, the energy ``E = T + V``
body by body from the joint rates and the largest loop-closure residual of any limb. Per output and
limb in Python (:class:`pkm.sim.outputs.Energy`, :meth:`pkm.algorithms.limb.LimbModel.constraint_residual`)
that cost about half of the batch's time in SIMD lanes; here every kept state of a member is one call
of :func:`energies_closure_into`, which runs the reference algorithms' own compiled kernels, nothing
restated:

* the limbs' trees (:func:`pkm.algorithms.manipulator.dynamics_trees`: the platform massless, paper
  eq. 99) side by side as one forest (:class:`Forest`: the limbs' bodies one after the other, the
  parents shifted, every limb's root on the ground), so that one pass of
  :func:`pkm.algorithms.kinematics.relative_poses_into` and :func:`pkm.algorithms.kinematics.poses_into`
  serves all limbs;
* kinetic energy :func:`pkm.algorithms.dynamics.kinetic_energy_into` (eq. 3, 167, the rotors'
  armature included) and potential :func:`pkm.algorithms.dynamics.potential_energy_of` — the kernels
  of :func:`pkm.algorithms.dynamics.kinetic_energy` and :func:`pkm.algorithms.dynamics.potential_energy`;
* every loop's cut-joint residual :func:`pkm.algorithms.constraints.cut_residual_into` /
  :func:`pkm.algorithms.constraints.distance_residual_into` (eq. 12, 16, 33), its selected rows
  (``Loop.rows``) as :meth:`pkm.algorithms.limb.LimbModel.constraint_residual`, the largest ``|g|`` per limb
  (NaN if any is NaN, as ``np.max``).

:func:`pkm.sim.simulate.simulate` uses the same call for a single run's outputs (the closure per limb).

The results equal the per-output Python path to rounding (sums in another order; ``tests/
test_state_outputs.py``). The platform's own energy (the platform body, from its pose and twist) is
:meth:`pkm.sim.outputs.Energy.platform`, vectorised over the states in numpy.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from pkm.algorithms.constraints import cut_residual_into, distance_residual_into
from pkm.algorithms.dynamics import armature, body_mass_properties, kinetic_energy_into, potential_energy_of
from pkm.algorithms.kinematics import poses_into, relative_poses_into
from pkm.algorithms.manipulator import dynamics_trees

__all__ = ["Forest", "forest", "energies_closure", "energies_closure_limbs", "energies_closure_into"]


class Forest(NamedTuple):
    """A robot's limb trees side by side (``N`` bodies in all) and their loops (``nl``), as arrays.

    ``parent`` (N,) shifted by each limb's first body (roots stay −1), ``B`` (N,4,4), ``X`` (N,6), ``M``
    (N,6,6: the platform massless), ``arm`` (N,) armature, ``m`` (N,), ``d`` (N,3) masses and centres
    of mass; ``take`` (N,): the index of each body's tree variable in a (L·n_max) row of the limbs'
    padded variables. Loops: ``li`` (nl, 5) ``(distance?, k, r, p, q)`` with ``k``, ``r`` shifted
    (ground −1), ``dk``, ``dr`` (nl,3), ``n`` (nl,3,3) (first ``p`` rows), ``ek``, ``er`` (nl,3,3) and
    ``c0`` (nl,3) (first ``q``), ``length`` (nl,), ``rows`` (nl,6) 1 where a residual row is selected, ``limb``
    (nl,) the limb each loop belongs to (of ``n_limbs``)."""

    parent: np.ndarray
    B: np.ndarray
    X: np.ndarray
    M: np.ndarray
    arm: np.ndarray
    m: np.ndarray
    d: np.ndarray
    take: np.ndarray
    li: np.ndarray
    dk: np.ndarray
    dr: np.ndarray
    n: np.ndarray
    ek: np.ndarray
    er: np.ndarray
    c0: np.ndarray
    length: np.ndarray
    rows: np.ndarray
    limb: np.ndarray
    n_limbs: int


def forest(robot, nmax: int) -> Forest:
    """``robot``'s limbs as one :class:`Forest`; ``nmax``: the row length of the padded tree variables
    (L, nmax) the states come in (the kernels' ``theta``)."""
    trees = dynamics_trees(robot)
    offs = np.cumsum([0] + [t.n for t in trees])
    parent = np.concatenate([np.where(t.parent >= 0, t.parent + o, -1) for t, o in zip(trees, offs)])
    md = [body_mass_properties(t) for t in trees]
    take = np.concatenate([i * nmax + np.arange(t.n) for i, t in enumerate(trees)])
    loops = [(lp, o) for limb, o in zip(robot.limbs, offs) for lp in limb.loops]
    owner = np.array([j for j, limb in enumerate(robot.limbs) for _ in limb.loops], np.int64)
    nl = len(loops)
    li, rows = np.zeros((nl, 5), np.int64), np.zeros((nl, 6), np.int64)
    dk, dr, c0, length = np.zeros((nl, 3)), np.zeros((nl, 3)), np.zeros((nl, 3)), np.zeros(nl)
    n, ek, er = np.zeros((nl, 3, 3)), np.zeros((nl, 3, 3)), np.zeros((nl, 3, 3))
    for i, (lp, o) in enumerate(loops):
        cj = lp.cut
        shift = [int(b) + o if b >= 0 else -1 for b in (cj.k, cj.r)]
        if cj.is_distance:
            li[i] = (1, *shift, 0, 0)
            length[i] = cj.length
        else:
            p, q = cj.n.shape[0], cj.e_k.shape[0]
            li[i] = (0, *shift, p, q)
            n[i, :p], ek[i, :q], er[i, :q], c0[i, :q] = cj.n, cj.e_k, cj.e_r, cj.c0
        dk[i], dr[i] = cj.d_k, cj.d_r
        rows[i, np.asarray(lp.rows, int)] = 1
    c = np.ascontiguousarray
    return Forest(c(parent, np.int64), c(np.concatenate([t.B for t in trees]), float),
                  c(np.concatenate([t.X for t in trees]), float), c(np.concatenate([t.M for t in trees]), float),
                  c(np.concatenate([armature(t) for t in trees])), c(np.concatenate([a for a, _ in md])),
                  c(np.concatenate([b for _, b in md])), c(take, np.int64), li, dk, dr, n, ek, er, c0, length, rows, owner,
                  len(robot.limbs))


@njit(cache=True, nogil=True, no_cfunc_wrapper=True)
def energies_closure_into(parent, B, X, M, arm, m, d, g0, li, dk, dr, n, ek, er, c0, length, rows, limb, Q, QD, T, C,
                          V, g, kin, pot, closure):
    """For every state ``s`` (rows of the tree variables ``Q`` and rates ``QD``, (K, N)): the limbs'
    kinetic and potential energy ``kin[s]``, ``pot[s]`` and each limb ``j``'s largest selected loop residual
    ``closure[s, j]`` (0 without loops; module docstring; ``T``, ``C`` (N,4,4), ``V`` (N,6), ``g`` (6,) scratch)."""
    for s in range(Q.shape[0]):
        relative_poses_into(B, X, Q[s], T)
        poses_into(parent, T, C)
        kin[s] = kinetic_energy_into(parent, X, T, M, arm, QD[s], V)
        pot[s] = potential_energy_of(C, m, d, g0)
        for j in range(closure.shape[1]):
            closure[s, j] = 0.0
        for i in range(li.shape[0]):
            if li[i, 0] == 1:
                distance_residual_into(li[i, 1], li[i, 2], dk[i], dr[i], length[i], C, g)
                rm = 1
            else:
                p, q = li[i, 3], li[i, 4]
                cut_residual_into(li[i, 1], li[i, 2], dk[i], dr[i], n[i, :p], ek[i, :q], er[i, :q], c0[i, :q], C, g)
                rm = p + q
            worst = closure[s, limb[i]]
            for j in range(rm):
                if rows[i, j] == 1:
                    a = abs(g[j])
                    if worst == worst and not a <= worst:   # NaN propagates and stays, as np.max
                        worst = a
            closure[s, limb[i]] = worst


def energies_closure(f: Forest, TH, THD, g0):
    """``(kin, pot, closure)`` (K,) at the states ``TH``, ``THD`` (K, L, nmax) under gravity ``g0``
    (:func:`energies_closure_into`; ``closure``: the largest of any limb)."""
    kin, pot, closure = energies_closure_limbs(f, TH, THD, g0)
    return kin, pot, closure.max(axis=1)


def energies_closure_limbs(f: Forest, TH, THD, g0):
    """``(kin, pot, closure)``, (K,), (K,) and (K, L): :func:`energies_closure` with each limb's closure."""
    K = TH.shape[0]
    Q = np.ascontiguousarray(TH.reshape(K, -1)[:, f.take])
    QD = np.ascontiguousarray(THD.reshape(K, -1)[:, f.take])
    N = f.parent.shape[0]
    kin, pot, closure = np.empty(K), np.empty(K), np.empty((K, f.n_limbs))
    energies_closure_into(f.parent, f.B, f.X, f.M, f.arm, f.m, f.d, np.ascontiguousarray(g0, dtype=float), f.li, f.dk,
                          f.dr, f.n, f.ek, f.er, f.c0, f.length, f.rows, f.limb, Q, QD, np.empty((N, 4, 4)),
                          np.empty((N, 4, 4)), np.empty((N, 6)), np.empty(6), kin, pot, closure)
    return kin, pot, closure
