"""Nodal reparametrisation ``q_{n+1} = F_{q_n}(μ)`` of seed 002 (eqs. 15, 44, 75–78, 95, 118, 126,
136, 154, 188–189): a product of exponentials along the spanning tree.

Every body's new configuration is a rigid motion ``H_b = (R_b, t_b)`` (``x ↦ R_b x + t_b``) of its
old one: ``φ_{n+1} = R_b φ_n + t_b``, ``d_{I,n+1} = R_b d_{I,n}``. A free root moves by a translation
of its centre of mass and a rotation vector (eq. 44); a tree joint's child moves with its parent and
then relative to it, ``H_child = H_parent ∘ E₁(μ₁) ∘ E₂(μ₂) …`` with the joint's elements
(:func:`pkm.absolute.tree.joint_elements`) read at ``q_n`` — e.g. the cylindrical pair's
``d²_{n+1} = exp(θ̂¹) exp(θ² n̂¹_n) d²_n`` (eq. 116). Because every element keeps the joint's rows at
zero, ``Φ_tree(F(μ)) = 0`` for *every* μ (seed 002 §4.4), to round-off; the closure joints are left
to the caller.

:func:`reparametrize` also returns ``∂q_{n+1}/∂μ`` for Newton's method: the spatial twist of each
``H_b`` per unit of each coordinate (``δH H⁻¹``, composed with the adjoint map, exact derivative of
the exponential map by ``dexp``), turned into coordinate rates by
:func:`pkm.absolute.tree.body_rate_matrix` at ``q_{n+1}``.
"""
from __future__ import annotations

import numpy as np

from pkm.absolute.tree import Element, Tree, body_rate_matrix, cross3, joint_elements, root_elements
from pkm.lie import dexp_so3, exp_so3


def _cross_matrix(c) -> np.ndarray:
    return np.array([[0.0, -c[2], c[1]], [c[2], 0.0, -c[0]], [-c[1], c[0], 0.0]])


def _element(e: Element, amounts) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(R, t, J)`` of one element: the motion and its spatial twists per unit amount (6 × size)."""
    if e.kind == "trans":
        J = np.zeros((6, e.size))
        J[3:] = e.directions.T
        return np.eye(3), e.directions.T @ amounts, J
    if e.kind == "rot":
        R = exp_so3(np.ascontiguousarray(amounts[0] * e.axis))
        J = np.concatenate([e.axis, cross3(e.center, e.axis)])[:, None]
    else:  # rotation vector about the centre
        theta = np.ascontiguousarray(amounts, dtype=float)
        R = exp_so3(theta)
        T = dexp_so3(theta)
        J = np.concatenate([T, _cross_matrix(e.center) @ T])
    return R, e.center - R @ e.center, J


def adjoint(R, t, J) -> np.ndarray:
    """Spatial twists ``J`` (6 × k, (ω; v_o)) moved by the rigid motion ``(R, t)``:
    ``(Rω; Rv + t × Rω)``."""
    w = R @ J[:3]
    return np.concatenate([w, R @ J[3:] + _cross_matrix(t) @ w])


def compose(elements, amounts) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(R, t, J)`` of ``E₁ ∘ E₂ ∘ …`` with consecutive slices of ``amounts``; ``J`` (6 × total)
    the spatial twist ``δH H⁻¹`` per unit of each amount."""
    amounts = np.asarray(amounts, dtype=float)
    R, t = np.eye(3), np.zeros(3)
    cols, k = [], 0
    for e in elements:
        Re, te, Je = _element(e, amounts[k:k + e.size])
        cols.append(adjoint(R, t, Je))
        R, t = R @ Re, R @ te + t
        k += e.size
    return R, t, np.concatenate(cols, axis=1)


def motions(tree: Tree, q_n, mu) -> dict[int, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """``{id(body): (R, t, J)}``: each body's rigid motion over the step and its spatial twists per
    unit of each tree coordinate (6 × tree.size)."""
    q_n = np.asarray(q_n, dtype=float)
    mu = np.asarray(mu, dtype=float)
    out = {}
    for r, b in enumerate(tree.roots):
        cols = tree.root_columns(r)
        R, t, Je = compose(root_elements(tree.body_q(b, q_n)), mu[cols])
        J = np.zeros((6, tree.size))
        J[:, cols] = Je
        out[id(b)] = (R, t, J)
    for tj in tree.joints:
        Rr, tr, Jr = compose(joint_elements(tj, *tree.joint_q(tj, q_n)), mu[tj.columns])
        if tj.parent is None:
            Rp, tp, J = np.eye(3), np.zeros(3), np.zeros((6, tree.size))
        else:
            Rp, tp, Jp = out[id(tj.parent)]
            J = Jp.copy()
        J[:, tj.columns] += adjoint(Rp, tp, Jr)
        out[id(tj.child)] = (Rp @ Rr, Rp @ tr + tp, J)
    return out


def reparametrize(tree: Tree, q_n, mu, derivative: bool = True):
    """``q_{n+1} = F_{q_n}(μ)`` (n,) and, if ``derivative``, ``∂q_{n+1}/∂μ`` (n × tree.size)."""
    q_n = np.asarray(q_n, dtype=float)
    H = motions(tree, q_n, mu)
    q1 = np.empty_like(q_n)
    D = np.zeros((q_n.size, tree.size)) if derivative else None
    for b in tree.system.bodies:
        s = tree.system.body_slice(b)
        R, t, J = H[id(b)]
        Q = q_n[s].reshape(4, 3)
        new = Q @ R.T
        new[0] += t
        q1[s] = new.ravel()
        if derivative:
            D[s] = body_rate_matrix(q1[s]) @ J
    return (q1, D) if derivative else q1


def tangent(tree: Tree, q) -> np.ndarray:
    """``∂F_q/∂μ`` at ``μ = 0``: the continuous null space matrix ``P(q)`` of the tree (seed 002
    eqs. 61, 183–185): ``q̇ = P(q) ν`` for tree rates ν (root twists (translation, rotation) and joint
    rates, in :class:`~pkm.absolute.tree.Tree` order)."""
    return reparametrize(tree, q, np.zeros(tree.size))[1]
