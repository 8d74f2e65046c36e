"""One call of the SIMD path for many groups of segments (issue 18): :func:`run_groups` runs
segments ``m0 … m1 − 1`` of a trajectory ``W`` at a time through
:func:`pkm.kernels.simd_kernel.run_lanes`, so that Python calls the kernel once per chunk instead of
once per group of ``W`` segments (numba's dispatch of ~45 arguments and the per-group arrays cost
~50 µs a call: 0.02 µs per sample of the Delta with 8 lanes of 256 samples).
"""
from __future__ import annotations

from pkm.kernels.simd_kernel import run_lanes
from pkm.kernels.work import _jit

__all__ = ["run_groups"]


@_jit
def run_groups(m0, m1, bounds, has_first, TH1, Cs, mi, mf, lay, Mp, d_static, dp_static, Cd, Vp, dVp, Wee, dts, g0,
               theta, thetad, thetadd, tau, JIK, limbW, platW, th, bw, mat, vec, tol, max_iter, thresh, statuses,
               seg_a, seg_e, cold, TH0, lanes_Cs, status, TH, HIST, VB, VM, SMP, PH, sj, PL, lanes):
    """Segments ``m0 … m1 − 1`` (``bounds[m] … bounds[m + 1] − 1``) in groups of ``W`` consecutive
    ones, each group in the lanes of :func:`pkm.kernels.simd_kernel.run_lanes`: segment ``m`` starts
    cold (continuation along ``Cs[m]``) except segment 0 when ``has_first`` (from ``TH1`` (L, n_max)).
    Its status (``LANE_FAILED`` for a segment to run again on the scalar kernel) into
    ``statuses[m]``. ``seg_a … status``: the per-group arrays of ``run_lanes`` (scratch)."""
    W = len(lanes)
    for g in range(m0, m1, W):
        for j in range(W):
            m = g + j
            seg_a[j], seg_e[j], cold[j] = 0, 0, True
            for k in range(TH0.shape[1]):
                for i in range(TH0.shape[2]):
                    TH0[j, k, i] = TH1[k, i] if m == 0 and has_first else 0.0
            if m < m1:
                seg_a[j], seg_e[j] = bounds[m], bounds[m + 1]
                cold[j] = not (m == 0 and has_first)
                for k in range(Cs.shape[1]):
                    for a in range(4):
                        for b in range(4):
                            lanes_Cs[j, k, a, b] = Cs[m, k, a, b]
        run_lanes(seg_a, seg_e, cold, TH0, lanes_Cs, mi, mf, lay, Mp, d_static, dp_static, Cd, Vp, dVp, Wee, dts, g0,
                  theta, thetad, thetadd, tau, JIK, limbW, platW, th, bw, mat, vec, tol, max_iter, thresh, status,
                  TH, HIST, VB, VM, SMP, PH, sj, PL, lanes)
        for j in range(min(W, m1 - g)):
            for r in range(4):
                statuses[g + j, r] = status[j, r]
