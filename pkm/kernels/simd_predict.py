"""The IK start of the next sample in lanes (issue 18): :func:`pkm.kernels.inverse_dynamics._predict` over
the lane type, shared by the constant-``H`` limbs (:func:`pkm.kernels.simd_kernel._predict_lanes`, the
independent coordinates) and the general ones (:func:`pkm.kernels.simd_general_limb._vpredict_all`,
every tree variable)."""
from __future__ import annotations

from pkm.kernels.inverse_dynamics import MAX_STEP_RATIO
from pkm.kernels.simd_vec import select, vload
from pkm.kernels.work import _internal

__all__ = ["vstep_ratios", "vpredict_row", "ring_hist", "ring_pinv"]


@_internal
def ring_hist(p, nn):
    """The first row of slot ``p`` of the lanes' history ``HIST``: two slots, each ``θ, θ̇, θ̈`` in blocks of
    ``nn = L · n_max`` rows (limb ``l``'s variable ``i`` at ``l · n_max + i`` of a block). A ring: at lane step ``k``
    the slot of sample ``s − 1`` is ``k & 1``, and this sample is written over the other one, that of ``s − 2``
    (:func:`pkm.kernels.simd_kernel.run_lanes`)."""
    return p * 3 * nn


@_internal
def ring_pinv(p, l, L, dmax):
    """The first row of limb ``l``'s ``L_p⁺`` (``d × 6``, row-major, ``d ≤ d_max``) in slot ``p`` of the ring ``PH``
    (slots as :func:`ring_hist`'s)."""
    return (p * L + l) * dmax * 6


@_internal
def vstep_ratios(h, h1):
    """The lanes' prediction steps (:func:`pkm.kernels.inverse_dynamics._predict`): ``h1`` zeroed where the
    steps differ by more than ``MAX_STEP_RATIO``; ``(h1, both, moved, r = h/h1, r³)``, ``both``: two
    previous samples (quintic), ``moved``: one (Taylor)."""
    h1 = select((h1 * MAX_STEP_RATIO >= h) & (h * MAX_STEP_RATIO >= h1), h1, 0.0)
    both = (h > 0.0) & (h1 > 0.0)
    r = h / select(both, h1, 1.0)
    return h1, both, h > 0.0, r, r * r * r


@_internal
def vpredict_row(HIST, o1, o2, nn, h, h1, both, moved, r, r3, L):
    """A row of the history extrapolated to the next sample: ``o1`` its row in the slot of ``s − 1``, ``o2`` in
    the slot of ``s − 2`` (each slot θ, θ̇, θ̈ in blocks of ``nn`` rows; the two slots a ring,
    :func:`pkm.kernels.simd_kernel.run_lanes`): quintic Hermite through both samples, Taylor from the last,
    else the last value (:func:`pkm.kernels.inverse_dynamics._predict`; steps from :func:`vstep_ratios`).
    Returns ``(prediction, last value)``."""
    p0, v0, a0 = vload(HIST, o1, L), vload(HIST, o1 + nn, L), vload(HIST, o1 + 2 * nn, L)
    P = vload(HIST, o2, L) - p0 + h1 * (v0 - 0.5 * h1 * a0)
    V = h1 * (vload(HIST, o2 + nn, L) - v0 + h1 * a0)
    A = h1 * h1 * (vload(HIST, o2 + 2 * nn, L) - a0)
    c3 = -0.5 * A - 10.0 * P - 4.0 * V
    c4 = -A - 15.0 * P - 7.0 * V
    c5 = -0.5 * A - 6.0 * P - 3.0 * V
    quint = p0 + h * (v0 + 0.5 * h * a0) + r3 * (c3 + r * (c4 + r * c5))
    return select(both, quint, select(moved, p0 + h * (v0 + 0.5 * h * a0), p0)), p0
