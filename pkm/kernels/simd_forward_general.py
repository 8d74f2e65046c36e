"""The task form's right-hand side in SIMD lanes for a limb with a configuration-dependent ``H``
(issue 32.2; general loops, paper Sec. 3.5–3.7, Sec. 4.2): the IK and the pieces that
:func:`pkm.kernels.simd_forward.lanes_state` runs for such a limb instead of the affine ones.

What :func:`pkm.kernels.forward._forward_state` does for a general limb (``_solve_general``, then
``_limb_geometry``, ``_limb_motion`` and ``_limb_unit`` with the dense ``H`` that
:func:`pkm.kernels.ik._build_H` forms), on the pieces of :mod:`pkm.kernels.simd_general` (the inverse
dynamics' general stage):

* the IK (:func:`vik_general`) from the lane's Taylor-predicted start (the scalar stage's, in ``TH``):
  Newton in ``q`` with the loops closed (eq. 83, 85; :func:`pkm.kernels.simd_general.vnewton_step`)
  with the geometry of each iterate (:func:`pkm.kernels.simd_general.vgeom_general`: pose error,
  loop rows, ``J_p``, ``H`` (eq. 48), ``L_p`` and ``L_p⁺``, eq. 94), every iterate accepted as
  :func:`pkm.kernels.ik._converged` accepts the scalar kernel's (after at least one step: pose error
  ≤ ``CHORD_MARGIN · tol``, or stalled at the rounding floor ``tol · max(1, max|θ|)``; loops ≤
  ``LOOP_TOL``). The scalar kernel steps by Gauss–Newton on the stacked ``[J_p; G]`` in all tree
  variables; both land ``O(|Δθ|²)`` from the same solution (a start off by ~1e-8 after an RK4 stage:
  both at the rounding floor after the step), so a lane's θ equals the scalar stage's to ~1e-15.
  The geometry of the accepted iterate is the solution's: ``vgeom_general`` is not evaluated again;
* the passes (:func:`pkm.kernels.simd_general.vht_phi`: ``Hᵀφ``, eq. 144; ``θ̈ = H L_p⁺ e_i`` by
  :func:`pkm.kernels.simd_general.vdense_h`; pass 0 by :func:`pkm.kernels.simd_general.vmotion_general`,
  with ``Ḣq̇ = −G_y⁻¹Ġθ̇``, eq. 46–47, 90–93).

A lane is left to the scalar kernel (the caller's fallback, which recovers or reports the failure as
the member alone) when an iterate's error is outside the near-identity logarithm or not finite, an
iterate's ``G_y`` or ``L_p`` is singular (the scalar Gauss–Newton needs neither: it may recover), a
step moves some ``θ_i`` by more than 0.5 (the scalar kernel scales such a step,
:func:`pkm.kernels.ik._take_step`), or Newton is not accepted within ``max_iter``; the solution's
``G_y`` and ``L_p`` must pass the scalar kernel's conditioning tests (``SINGULAR_GY``,
``SINGULAR_LP``) with the same ``thresh``.
"""
from __future__ import annotations

import numpy as np

from pkm.algorithms.inverse_kinematics import STALL
from pkm.kernels.ik import CHORD_MARGIN
from pkm.kernels.model import LOOP_TOL
from pkm.kernels.simd_general import vg_rows, vgeom_general, vnewton_step
from pkm.kernels.simd_pipeline import s_dmax, s_lmax, s_n, s_nmax, vm_rows
from pkm.kernels.simd_vec import lane_bits, splat, vabs, vload, vmax
from pkm.kernels.work import _internal, _piece

__all__ = ["vconverged", "vik_general"]


@_internal
def vconverged(perr, prev, it, tol, TH, tho, n, lanes):
    """:func:`pkm.kernels.ik._converged` in lanes for the iterate ``it ≥ 1`` with pose error ``perr``
    (``prev``: the step before) and ``θ`` in rows ``tho … tho + n − 1`` of ``TH``: the mask of the lanes
    at ``CHORD_MARGIN · tol``, or (from the second step on) stalled (error not below ``STALL · prev``)
    within ``tol · max(1, max|θ|)``."""
    conv = perr <= CHORD_MARGIN * tol
    if it >= 2:
        big = splat(1.0, lanes)
        for i in range(n):
            big = vmax(big, vabs(vload(TH, tho + i, lanes)))
        conv = conv | (~(perr <= STALL * prev) & (perr <= tol * big))
    return conv


@_piece
def vik_general(l, mi, S, mf, lay, d, dp_static, TH, VB, VM, SMP, FS, orow, tol, max_iter, thresh, todo, lanes):
    """Limb ``l``'s IK in the lanes ``todo`` (bits) from the starts in ``TH`` (module docstring); ``orow``:
    a row of ``FS`` for the mask of the lanes still iterating. Returns the bits of the lanes solved, with
    a regular geometry: their ``θ`` in ``TH``, the solution's poses in ``VB``, ``J_p``, ``L_p⁺``, ``H``,
    ``G_y⁻¹`` in ``VM`` (:func:`pkm.kernels.simd_general.vg_rows`)."""
    n, nmax, dmax = s_n(l, mi, S), s_nmax(lay, S), s_dmax(lay, S)
    tho = l * nmax
    opi = vm_rows(nmax, dmax)[6]
    _, _, _, oh, ogyi, _, _, _, _, _ = vg_rows(nmax, dmax, s_lmax(lay, S))
    W = len(lanes)
    left, bad, reg = todo, 0, splat(1.0, lanes) > 0.0
    prev = splat(np.inf, lanes)
    for it in range(max_iter + 1):
        perr, gmax, near, reg = vgeom_general(l, mi, S, mf, lay, d, dp_static, TH, VB, VM, SMP, thresh, it == 0,
                                              lanes)
        if it >= 1:
            left &= ~lane_bits(vconverged(perr, prev, it, tol, TH, tho, n, lanes) & (gmax <= LOOP_TOL))
        if it == max_iter:
            bad |= left
            left = 0
        lost = left & ~lane_bits(near & reg & (perr < np.inf) & (gmax < np.inf))
        bad |= lost
        left &= ~lost
        if left == 0:
            break
        for j in range(W):
            FS[orow, j] = 1.0 if left >> j & 1 else 0.0
        big = vnewton_step(l, mi, S, lay, d, TH, VM, vload(FS, orow, lanes) > 0.5, 0, opi, oh, ogyi, lanes)
        far = left & ~lane_bits(big <= 0.5)
        bad |= far
        left &= ~far
        prev = perr
    return todo & ~bad & lane_bits(reg)
