"""What the batch kernel's pieces share: their numba compile options, the per-chunk scratch
(:class:`Work`, :func:`make_work`) with its slot layout, and accessors of array rows as tuples.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from pkm.kernels.model import LAY_DMAX, LAY_LMAX, LAY_NMAX, KernelModel
from pkm.lie import KERNEL_FASTMATH

# error_model="numpy": a division by zero gives inf/NaN (caught by the kernel's checks), not a
# Python exception. fastmath: only "contract" (FMA), for the kernel and every helper it calls, see
# pkm.lie.KERNEL_FASTMATH. (An earlier kernel, whose pieces LLVM inlined or not by its own
# heuristics, gave results differing in the last bit between a fresh compile and cached callees;
# with every piece forceinline or a call, the code and the bits are the same each way. A call is not
# proof of that by itself: with the lanes' general-limb stage a _piece, the IRSBot-2's SIMD torques
# still differed by 5e-15 between the compiling process and later ones; it is forceinline since,
# tests/test_simd_cache.py.)
# _nrt=False: no numba runtime, so no reference counting of the arrays passed between the kernel's
# functions (each NRT_incref/NRT_decref is an opaque call: LLVM spills every live register around
# it and reloads what it had read from arrays; ~8 % of the Delta's time) and no allocation.
_OPTIONS = dict(cache=True, nogil=True, error_model="numpy", no_cfunc_wrapper=True, _nrt=False,
                fastmath=KERNEL_FASTMATH)
_jit = njit(**_OPTIONS)
# Internal pieces have no Python entry point either (no_cpython_wrapper: ~1 s less compile): they are
# called only from numba code. CALLING ONE FROM PYTHON CRASHES THE INTERPRETER (numba does not check);
# test them through a small jitted caller (tests/conftest.py: numba_only).
# forceinline: LLVM inlines them into their caller (numba compiles every function on its own and
# LLVM's own heuristics inlined none of the larger ones). A call passed each array as ~9 machine
# words through the stack and hid the callee's constants (sizes, flags) from the caller; inlining
# _limb_dynamics, the leaves of the IK and the RNEA made the Delta ~20 % faster (A/B alternated).
# The IK solvers and _build_H stay calls (_piece): inlining them as well gained nothing measurable
# and made run_range, whose compile the first run waits for, larger. The SIMD path's per-step pieces
# (simd_general_limb.general_limb, simd_kernel._predict_lanes) are inlined into run_lanes: the
# 3R[2US]'s lanes 4-13 % faster, the Delta's 2-3 % (ABBA paired, benchmarks/README.md).
_internal = njit(**_OPTIONS, no_cpython_wrapper=True, forceinline=True)
_piece = njit(**_OPTIONS, no_cpython_wrapper=True)


def unliteral(dispatcher):
    """``dispatcher`` (a numba function called from numba code) compiled for the non-literal types
    of its arguments only: a caller passing the constant 12 uses the ``int64`` version (numba
    converts the argument), instead of compiling one for ``Literal[int](12)``.

    A constant argument (a slot offset such as ``BW_T``) reaches numba as a literal type, and numba
    compiled a piece once per value: the accessors below, ``_twist_at`` four times and ``_pose_at``
    three, 9 of the Delta's 92 specialisations, for code that LLVM inlines and constant-folds
    anyway (the Delta's torques are the same bits). Only these accessors: a piece whose literal
    flags let numba prune a branch before LLVM sees it compiles to other code without them (the
    SIMD path's torques moved by ~1e-13 when every piece was typed so)."""
    from numba.core import types

    get = dispatcher.get_call_template

    def get_call_template(args, kws):
        return get(tuple(types.unliteral(a) for a in args), {k: types.unliteral(v) for k, v in kws.items()})

    dispatcher.get_call_template = get_call_template
    return dispatcher


# Per-body scratch ``bw`` (n_max, BW_SIZE): joint-frame pose K_i and relative pose T_i (12 each,
# row-major R then p), twist V_i, acceleration A_i, wrench W_i (6 each), (cos, sin, θ) of the last
# evaluation, φ_i, (Ḣq̇)_i.
BW_K, BW_T, BW_V, BW_A, BW_W, BW_TRIG, BW_PHI, BW_HD, BW_SIZE = 0, 12, 24, 30, 36, 42, 45, 46, 47
# Slots of the square scratch matrices ``mat`` (M_GYI + λ_max + 2L, B, B): platform Jacobian J_p
# (6 × n), loop rows G (Σm × n), normal matrix, factor scratch, H (n × δ), L_p (6 × δ), Gram matrix
# L_pᵀL_p and its inverse, the chord step's matrix (δ × 6), F (δ × δ_p), G_y, J_IKᵀ and its inverse,
# then G_y⁻¹ of each loop, then each limb's L_p⁺ (δ × 6) of the last two samples
# (:func:`pkm.kernels.dynamics._pinv_slot`).
M_J, M_G, M_NM, M_SQ, M_H, M_LP, M_GRAM, M_GRAMI, M_CHORD, M_F, M_GY, M_JT, M_JTI, M_GYI = range(14)
# Slots of the scratch vectors ``vec`` (V_SIZE, B + 6): residual and right-hand side, step, q, q̇, q̈,
# loop residuals or Ġθ̇, right-hand side of eq. 140.
V_E, V_DX, V_Q, V_QD, V_QDD, V_G, V_RHS, V_SIZE = range(8)


class Work(NamedTuple):
    """Scratch with a leading chunk axis (:func:`make_work`): ``th`` (L, n_max) the current tree
    variables of every limb, ``bw`` per-body values (``BW_*``), ``mat`` square matrices (``M_*``),
    ``vec`` vectors (``V_*``)."""

    th: np.ndarray
    bw: np.ndarray
    mat: np.ndarray
    vec: np.ndarray


def make_work(km: KernelModel, chunks: int) -> Work:
    """Scratch for ``chunks`` chunks, allocated once per call of the kernel."""
    L, nmax, dmax, lmax, dp = km.mi.shape[0], km.lay[LAY_NMAX], km.lay[LAY_DMAX], km.lay[LAY_LMAX], len(km.dp_static)
    B = max(12, nmax, 6 * lmax, dmax, dp)
    return Work(th=np.zeros((chunks, L, nmax)), bw=np.zeros((chunks, nmax, BW_SIZE)),
                mat=np.zeros((chunks, M_GYI + lmax + 2 * L, B, B)), vec=np.zeros((chunks, V_SIZE, B + 6)))


# ----------------------------------------------------------------------------- array rows as tuples
@unliteral
@_internal
def _pose_at(A, i, o):
    """``A[i, o:o+12]`` as a pose ``(R, p)``; the identity for ``i < 0`` (the ground)."""
    if i < 0:
        return (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0), (0.0, 0.0, 0.0)
    return (A[i, o], A[i, o + 1], A[i, o + 2], A[i, o + 3], A[i, o + 4], A[i, o + 5], A[i, o + 6], A[i, o + 7],
            A[i, o + 8]), (A[i, o + 9], A[i, o + 10], A[i, o + 11])


@unliteral
@_internal
def _set_pose_at(A, i, o, R, p):
    A[i, o], A[i, o + 1], A[i, o + 2], A[i, o + 3], A[i, o + 4], A[i, o + 5], A[i, o + 6], A[i, o + 7], \
        A[i, o + 8] = R
    A[i, o + 9], A[i, o + 10], A[i, o + 11] = p


@unliteral
@_internal
def _vec_at(A, i, o):
    """``A[i, o:o+3]`` as a 3-tuple."""
    return (A[i, o], A[i, o + 1], A[i, o + 2])


@unliteral
@_internal
def _twist_at(A, i, o):
    """``A[i, o:o+6]`` as ``(ω, v)``; zero for ``i < 0`` (the ground)."""
    if i < 0:
        return (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)
    return (A[i, o], A[i, o + 1], A[i, o + 2]), (A[i, o + 3], A[i, o + 4], A[i, o + 5])


@unliteral
@_internal
def _set_twist_at(A, i, o, w, v):
    A[i, o], A[i, o + 1], A[i, o + 2] = w
    A[i, o + 3], A[i, o + 4], A[i, o + 5] = v
