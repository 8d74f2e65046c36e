"""Redundant actuation: the actuator forces that produce a task-space wrench (paper Sec. 5, Sec. 8.2).

A PKM with more actuators than task coordinates (``n_act > δ_p``, "redundantly actuated", Sec. 5,
eq. 97–98) has a rectangular ``J_IK`` (n_act × δ_p), and the inverse dynamics
``J_IKᵀ u = φ_t − W_t^EE`` (eq. 137–140) has an ``r = n_act − δ_p`` dimensional family of solutions.
The paper prescribes "a (weighted) pseudoinverse of ``J_IKᵀ``" (Sec. 8.2); here

* ``u_W = W⁻¹ J_IK (J_IKᵀ W⁻¹ J_IK)⁻¹ φ``: the solution of least ``uᵀ W u`` (``W`` symmetric
  positive definite, default the identity: the minimum-norm forces), computed through the
  Cholesky factor ``W = L Lᵀ`` and an SVD of ``L⁻¹ J_IK`` (never the normal equations, whose
  condition number is the square of ``J_IK``'s);
* ``N``: an orthonormal basis (n_act × r) of the null space of ``J_IKᵀ``, the internal forces:
  ``J_IKᵀ N = 0``, so ``N z`` moves nothing and does no work (``θ̇_actᵀ N z = V_tᵀ J_IKᵀ N z = 0``)
  but preloads the mechanism (antagonistic forces, e.g. against backlash);
* ``u = u_W + N z`` for a preload ``z`` (r,) or (N, r).

``u_W`` is ``W``-orthogonal to the null space (``Nᵀ W u_W = 0``), which characterises it.

The basis is made continuous along a trajectory: each sample's columns are rotated onto the
previous sample's (orthogonal Procrustes; for ``r = 1`` a sign), and the first sample's columns
each have their first entry of at least half the column's largest magnitude positive. A preload
``z`` held constant then gives continuous forces. ``J_IK`` must have full column rank ``δ_p``:
where its condition number (2-norm) exceeds the singularity threshold, :class:`pkm.SingularityError`
names the sample (the actuators together cannot move the platform in some direction: a type-II
singularity of the redundant machine, much rarer than one of any square subset).

:func:`min_peak` is the other common choice, stated as such: the preload that minimises the
largest ``|u_i|`` (a linear programme per sample, scipy's HiGHS); it is not continuous in general.
"""

from __future__ import annotations

import numpy as np

from pkm.errors import InputError, SingularityError

__all__ = ["check_weights", "check_preload", "distribute", "null_space", "internal_part", "min_peak"]


def check_weights(weights, n_act: int) -> np.ndarray | None:
    """``weights`` as a symmetric positive definite (n_act, n_act) matrix: None (identity), a vector
    of ``n_act`` positive finite numbers (a diagonal) or a matrix; a one-line InputError otherwise."""
    if weights is None:
        return None
    try:
        W = np.array(weights, dtype=float)
    except (TypeError, ValueError):
        raise InputError(f"weights must be {n_act} positive numbers or an {n_act}×{n_act} symmetric positive "
                         f"definite matrix, got {type(weights).__name__}") from None
    if W.shape == (n_act,):
        if not (np.all(np.isfinite(W)) and np.all(W > 0)):
            raise InputError(f"weights must be {n_act} positive finite numbers, got {np.array2string(W, precision=4)}")
        return np.diag(W)
    if W.shape != (n_act, n_act) or not np.all(np.isfinite(W)):
        raise InputError(f"weights must be {n_act} positive numbers or a finite {n_act}×{n_act} matrix, got shape "
                         f"{W.shape}")
    if not np.allclose(W, W.T, rtol=1e-12, atol=0.0):
        raise InputError("weights must be a symmetric matrix")
    try:
        np.linalg.cholesky(W)
    except np.linalg.LinAlgError:
        raise InputError("weights must be a positive definite matrix") from None
    return W


def check_preload(preload, n: int, r: int) -> np.ndarray | None:
    """``preload`` as an (n, r) array (``z`` per sample): None, r numbers (every sample) or (n, r)."""
    if preload is None:
        return None
    if r == 0:
        raise InputError("preload needs redundant actuation (more actuators than task coordinates); this robot "
                         "has none")
    try:
        z = np.array(preload, dtype=float)
    except (TypeError, ValueError):
        raise InputError(f"preload must be {r} finite numbers per sample, got {type(preload).__name__}") from None
    if z.ndim == 0 and r == 1:
        z = z.reshape(1)
    if z.shape not in ((r,), (n, r)):
        raise InputError(f"preload must be {r} finite number{'s' if r > 1 else ''} (the null-space coordinates z) or "
                         f"shape ({n}, {r}), got shape {z.shape}")
    if not np.all(np.isfinite(z)):
        raise InputError(f"preload must be {r} finite number{'s' if r > 1 else ''} (the null-space coordinates z), "
                         f"got {np.array2string(z.ravel()[:6], precision=4)}")
    return np.broadcast_to(z, (n, r))


def null_space(J: np.ndarray, previous: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Orthonormal bases ``N`` (n, n_act, r) of the null spaces of ``J[s]ᵀ`` for a stack ``J``
    (n, n_act, δ_p), continuous along the stack (module docstring; ``previous`` (n_act, r): the
    basis of the sample before ``J[0]``), and the singular values (n, δ_p) of ``J``."""
    N, S, _, _ = _null_space(J, previous)
    return N, S


def _null_space(J, previous):
    """:func:`null_space` and the SVD's ``U`` and ``Vᵀ`` (``J = U S Vᵀ``, full ``U``)."""
    n, m, d = J.shape
    U, S, Vt = np.linalg.svd(J, full_matrices=True)
    N = U[:, :, d:].copy()
    r = m - d
    if r == 0 or n == 0:
        return N, S, U, Vt
    if previous is None:   # the first sample: a fixed sign per column
        col = N[0]
        big = np.abs(col) >= 0.5 * np.abs(col).max(axis=0, keepdims=True)
        first = np.argmax(big, axis=0)
        N[0] *= np.sign(col[first, np.arange(r)])
    else:
        N[0] = _aligned(N[0], previous)
    if r == 1:   # a sign per sample, cumulative
        dots = np.einsum("si,si->s", N[1:, :, 0], N[:-1, :, 0])
        flips = np.cumprod(np.where(dots < 0, -1.0, 1.0))
        N[1:, :, 0] *= flips[:, None]
    else:
        for s in range(1, n):
            N[s] = _aligned(N[s], N[s - 1])
    return N, S, U, Vt


def _aligned(B, A):
    """``B Q`` with the orthogonal ``Q`` that brings the basis ``B`` closest to ``A`` (Procrustes)."""
    u, _, vt = np.linalg.svd(B.T @ A)
    return B @ (u @ vt)


def distribute(J, phi, weights=None, preload=None, *, threshold: float = np.inf, previous=None, sample0: int = 0):
    """Actuator forces ``u = u_W + N z`` (module docstring) for stacks ``J`` (n, n_act, δ_p) and
    ``phi`` (n, δ_p) (``J_IKᵀ u = phi``), ``weights`` as :func:`check_weights` returns (None: the
    identity), ``preload`` (n, r) or None. Returns ``(u, N)``. Raises :class:`pkm.SingularityError`
    at the first sample whose ``J`` has a condition number above ``threshold`` (``sample0``: the
    index of ``J[0]`` in the trajectory, for the message)."""
    J = np.asarray(J, float)
    phi = np.asarray(phi, float)
    n, m, d = J.shape
    N, S, U, Vt = _null_space(J, previous)
    with np.errstate(divide="ignore", invalid="ignore"):
        cond = S[:, 0] / S[:, -1]
    bad = np.flatnonzero(~(cond <= threshold))
    if len(bad):
        s = int(bad[0])
        raise SingularityError(f"the IK Jacobian J_IK ({m}×{d}, redundant actuation) has lost rank at sample "
                               f"{sample0 + s} (condition number {cond[s]:.3e} > {threshold:.1e}): the actuators "
                               "cannot move the platform in some direction", condition=float(cond[s]),
                               threshold=float(threshold), sample=sample0 + s)
    if weights is None:   # J = U S Vᵀ: (Jᵀ)⁺ = U S⁻¹ Vᵀ, from the SVD above
        U, St = U[:, :, :d], S
    else:
        Lc = np.linalg.cholesky(weights)
        U, St, Vt = np.linalg.svd(np.linalg.solve(Lc, J), full_matrices=False)   # L⁻¹J = U S Vᵀ
    v = np.einsum("sij,sj->si", U, np.einsum("sij,sj->si", Vt, phi) / St)
    u = v if weights is None else np.linalg.solve(Lc.T, v.T).T   # u = L⁻ᵀ v
    if preload is not None:
        u = u + np.einsum("sij,sj->si", N, preload)
    return u, N


def internal_part(J, u) -> np.ndarray:
    """The internal forces in ``u`` (n, n_act): its component in the null space of ``J_IKᵀ``
    (``N Nᵀ u``), which moves nothing; ``u`` minus it is the minimum-norm force that produces the
    same task wrench ``J_IKᵀ u``. Zero for a non-redundant robot."""
    J = np.asarray(J, float)
    N, _ = null_space(J)
    return np.einsum("sij,skj,sk->si", N, N, np.asarray(u, float))


def min_peak(u, N) -> np.ndarray:
    """The forces ``u + N z`` with the preload ``z`` of least ``max_i |u_i + (N z)_i|``, per sample: a
    linear programme (minimise ``t`` subject to ``−t ≤ u + N z ≤ t``; scipy's HiGHS), stated as such in
    the module docstring: the minimiser need not be unique nor continuous along a trajectory."""
    from scipy.optimize import linprog

    u = np.asarray(u, float)
    n, m, r = N.shape
    out = u.copy()
    if r == 0:
        return out
    c = np.zeros(r + 1)
    c[-1] = 1.0
    ones = np.ones((m, 1))
    for s in range(n):
        A = np.vstack([np.hstack([N[s], -ones]), np.hstack([-N[s], -ones])])
        b = np.concatenate([-u[s], u[s]])
        res = linprog(c, A_ub=A, b_ub=b, bounds=[(None, None)] * (r + 1), method="highs")
        if res.status != 0:
            raise SingularityError(f"the least-peak force distribution failed at sample {s}: {res.message}",
                                   sample=s)
        out[s] = u[s] + N[s] @ res.x[:r]
    return out
