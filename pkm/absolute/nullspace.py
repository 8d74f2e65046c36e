"""Discrete null space matrices ``P(q_n, q_{n+1})`` with ``G(q_{n+1/2}) P = 0`` (seed 002 §2.2.2,
§4.3, eqs. 11–14, 68–74).

The scheme's constraint Jacobian is the mid-point one, ``G(q_{n+1/2})`` (every constraint is at most
quadratic, eqs. 38, 67), so the discrete null space must annihilate it *exactly* — not only in the
limit — for the multipliers to drop out of the discrete equations (eq. 12). Two constructions:

* :func:`tree_null_space`, seed 002's explicit one: ``P = P_int(q_{n+1/2}) P_ext(q_n, q_{n+1})``
  (eqs. 68–70), ``P_ext`` by twist propagation down the tree (eqs. 57–59, 179–184) with the
  generators of each tree joint at the mid-point, including the seed's cross-product substitutes
  for the C, P and E pairs (eqs. 113, 133, 149; :mod:`pkm.absolute.tree`). Twists are spatial
  (about the world origin) and turned into coordinate rates by
  :func:`~pkm.absolute.tree.body_rate_matrix` at the mid-point, which is ``P_int(q_{n+1/2})``
  (eq. 40) times the change of reference point.
* :func:`numerical_null_space`: an orthonormal basis of ``null(G_ext P_int)`` at the mid-point by
  the SVD, times ``P_int(q_{n+1/2})``; for any joint set.

A closed loop adds closure rows ``G_c`` to an open tree (seed 002 §5.4.2 after Part I's App. C):
:func:`closure_null_space` completes the tree's ``P`` by the null space of the small matrix
``G_c(q_{n+1/2}) P_tree`` (numerical; the seed's six-body linkage uses its closed-form symmetry
instead, eq. 191, which does not generalise).
"""
from __future__ import annotations

import numpy as np

from pkm.absolute.body import NINT
from pkm.absolute.reparam import compose
from pkm.absolute.tree import Tree, body_rate_matrix, joint_elements, root_elements


def twist_propagation(tree: Tree, q) -> np.ndarray:
    """Spatial twists (6 per body, body order) per unit tree rate at configuration ``q``
    (6N × tree.size): ``P_ext`` of seed 002 eqs. 57–59 and 183–184, with the joints' generators at
    ``q`` (the caller passes the mid-point for the discrete matrix)."""
    system = tree.system
    index = {id(b): k for k, b in enumerate(system.bodies)}
    S = np.zeros((6 * len(system.bodies), tree.size))
    for r, b in enumerate(tree.roots):
        k = index[id(b)]
        S[6 * k:6 * k + 6, tree.root_columns(r)] = compose(root_elements(tree.body_q(b, q)), np.zeros(6))[2]
    for tj in tree.joints:
        c = index[id(tj.child)]
        if tj.parent is not None:
            p = index[id(tj.parent)]
            S[6 * c:6 * c + 6] = S[6 * p:6 * p + 6]
        els = joint_elements(tj, *tree.joint_q(tj, q))
        S[6 * c:6 * c + 6, tj.columns] += compose(els, np.zeros(tj.rates))[2]
    return S


def rate_matrix(system, q) -> np.ndarray:
    """Block diagonal ``body_rate_matrix`` (n × 6N): spatial twists → ``q̇``."""
    N = len(system.bodies)
    out = np.zeros((12 * N, 6 * N))
    for k in range(N):
        out[12 * k:12 * k + 12, 6 * k:6 * k + 6] = body_rate_matrix(q[12 * k:12 * k + 12])
    return out


def tree_null_space(tree: Tree, q_a, q_b=None) -> np.ndarray:
    """Seed 002's explicit null space matrix of the tree (n × tree.size): discrete,
    ``P(q_a, q_b)`` at the mid-point (eqs. 68–70, 90–92, 113–115, 125, 133–135, 149–151, 187), or
    continuous ``P(q_a)`` when ``q_b`` is None. ``G_tree(q_{n+1/2}) P = 0`` exactly for any two
    configurations (``G_int P_int = 0`` for every q, eq. 66; the joint rows by the design condition
    eq. 74)."""
    q_a = np.asarray(q_a, dtype=float)
    qm = q_a if q_b is None else 0.5 * (q_a + np.asarray(q_b, dtype=float))
    return rate_matrix(tree.system, qm) @ twist_propagation(tree, qm)


def null_basis(A, dim: int | None = None) -> np.ndarray:
    """Orthonormal basis (columns) of ``null(A)`` from the SVD; ``dim`` fixes its size (the last
    ``dim`` right singular vectors), otherwise the rank is taken at 1e-10 × the largest singular value."""
    A = np.asarray(A, dtype=float)
    _, s, Vt = np.linalg.svd(A)
    if dim is None:
        rank = int(np.sum(s > 1e-10 * s[0])) if s.size and s[0] > 0.0 else 0
        dim = A.shape[1] - rank
    return Vt[A.shape[1] - dim:].T.copy()


def numerical_null_space(system, q_a, q_b=None, dim: int | None = None, rows=None) -> np.ndarray:
    """``P_int(q_m) · null(G_ext(q_m) P_int(q_m))`` (n × dim), ``q_m`` the mid-point (or ``q_a``):
    exact ``G(q_m) P = 0`` for any joint set, through the SVD. ``rows``: a mask over the active rows
    to use (internal rows are always used)."""
    q_a = np.asarray(q_a, dtype=float)
    qm = q_a if q_b is None else 0.5 * (q_a + np.asarray(q_b, dtype=float))
    Pint = system.internal_null_space(qm)
    nint = NINT * len(system.bodies)
    G = system.jacobian(qm)
    G_ext = G[nint:] if rows is None else G[nint:][np.asarray(rows, bool)[nint:]]
    if G_ext.shape[0] == 0:
        return Pint
    return Pint @ null_basis(G_ext @ Pint, dim)


def closure_null_space(P_tree, G_closure, dim: int | None = None) -> np.ndarray:
    """``P_tree · null(G_c P_tree)``: the null space of a closed system from its tree's (Part I
    App. C's two-step construction, numerical in its second step)."""
    if G_closure.shape[0] == 0:
        return P_tree
    return P_tree @ null_basis(G_closure @ P_tree, dim)
