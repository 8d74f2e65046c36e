"""Scalar traffic between the SIMD lanes and per-sample arrays (issue 32): single lanes of the
structure-of-arrays scratch of :mod:`pkm.kernels.simd_vec` at addresses that are constants (:func:`lget`,
:func:`lset`), and cache prefetch hints (:func:`prefetch_read`, :func:`prefetch_write`).

The lanes hold ``W`` samples far apart (one per trajectory segment); each step copies every lane's
inputs (``C_d, V_p, V̇_p, h``) into the scratch and its results (``θ, θ̇, θ̈``, ``J_IK``, ``W̄``, ``u``)
out, ~12 arrays times ``W`` streams: more than the hardware prefetchers follow, so those copies
waited on cache misses (perf, AVX2 target, W = 4: ~13 % of the Delta's lane driver) until
:func:`pkm.kernels.simd_kernel.run_lanes` hinted each lane's next samples in (for robots whose limbs all
have a constant H; with general limbs the hints cost more than they saved).
"""
from __future__ import annotations

from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic

from pkm.kernels.simd_vec import _is_float, _width_of

__all__ = ["lget", "lset", "prefetch_read", "prefetch_write"]


def _lane_pointer(builder, context, aty, arr, i, j, w):
    """Pointer ``double*`` to ``arr.flat[i * W + j]`` (``W`` a constant: the address is the data pointer
    plus constants, where numba's ``arr[i, j]`` multiplies by the run-time row length and checks the
    sign of each index)."""
    ary = context.make_array(aty)(context, builder, arr)
    base = builder.bitcast(ary.data, ir.DoubleType().as_pointer())
    off = builder.add(builder.mul(i, ir.Constant(ir.IntType(64), w)), j)
    return builder.gep(base, [off])


@intrinsic
def lget(typingctx, arr, i, j, like):
    """Lane ``j`` of row ``i`` (``arr.flat[i*W + j]``) of a structure-of-arrays scratch (see :func:`vload`),
    a float: the scalar copies between the lanes and per-sample arrays (``arr[i, j]`` without the
    run-time row length)."""
    if not (isinstance(arr, types.Array) and arr.dtype == types.float64 and arr.layout == "C"
            and isinstance(i, types.Integer) and isinstance(j, types.Integer) and _width_of(like)):
        return None
    w = _width_of(like)

    def codegen(context, builder, sig, args):
        i, j = (context.cast(builder, a, t, types.intp) for a, t in zip(args[1:3], sig.args[1:3]))
        p = _lane_pointer(builder, context, sig.args[0], args[0], i, j, w)
        return builder.load(p, align=8)
    return types.float64(arr, i, j, like), codegen


@intrinsic
def lset(typingctx, arr, i, j, x, like):
    """``arr.flat[i*W + j] = x`` (see :func:`lget`)."""
    if not (isinstance(arr, types.Array) and arr.dtype == types.float64 and arr.layout == "C"
            and isinstance(i, types.Integer) and isinstance(j, types.Integer) and _is_float(x) and _width_of(like)):
        return None
    w = _width_of(like)

    def codegen(context, builder, sig, args):
        i, j = (context.cast(builder, a, t, types.intp) for a, t in zip(args[1:3], sig.args[1:3]))
        p = _lane_pointer(builder, context, sig.args[0], args[0], i, j, w)
        builder.store(context.cast(builder, args[3], sig.args[3], types.float64), p, align=8)
        return context.get_dummy_value()
    return types.none(arr, i, j, x, like), codegen


def _prefetch_intrinsic(rw):
    def typer(typingctx, arr, i, off):
        if not (isinstance(arr, types.Array) and isinstance(i, types.Integer) and isinstance(off, types.Integer)):
            return None

        def codegen(context, builder, sig, args):
            ary = context.make_array(sig.args[0])(context, builder, args[0])
            stride0 = builder.extract_value(ary.strides, 0)
            at = builder.add(builder.mul(context.cast(builder, args[1], sig.args[1], types.intp), stride0),
                             context.cast(builder, args[2], sig.args[2], types.intp))
            p = builder.gep(builder.bitcast(ary.data, ir.IntType(8).as_pointer()), [at])
            i32 = ir.IntType(32)
            fnty = ir.FunctionType(ir.VoidType(), [ir.IntType(8).as_pointer(), i32, i32, i32])
            fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0i8")
            builder.call(fn, [p, ir.Constant(i32, rw), ir.Constant(i32, 3), ir.Constant(i32, 1)])
            return context.get_dummy_value()
        return types.none(arr, i, off), codegen
    return intrinsic(typer)


prefetch_read, prefetch_write = _prefetch_intrinsic(0), _prefetch_intrinsic(1)
prefetch_read.__doc__ = ("A hint to bring the cache line of byte ``off`` of ``arr[i]`` (its first axis) in for reading "
                         "(LLVM's ``llvm.prefetch``; never faults, changes no value).")
prefetch_write.__doc__ = "As :func:`prefetch_read`, for writing."
