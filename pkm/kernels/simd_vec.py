"""Explicit SIMD for the batch kernel (issue 18): a numba type for LLVM's ``<W x double>``.

LLVM does not vectorise numba's loops over independent samples (tried in four layouts: 0.8–1.07×),
so the SIMD path of the kernel writes its arithmetic on this type, ``W`` lanes that hold ``W``
independent trajectory chunks. :class:`VecType` (``f64xW``) is a numba type whose data model is
``<W x double>`` (one register: W = 8 on AVX-512, 4 on AVX2); :class:`MaskType` (``maskxW``) is
``<W x i1>``, the result of a comparison. The Python operators ``+ - * /`` and unary ``-`` work on
vectors and on a vector with a float (the float is broadcast), and ``< <= > >=`` give masks, so
that numba code written for floats (the tuple primitives of :mod:`pkm.lie.small`, the pieces of
:mod:`pkm.kernels.simd_pipeline`) compiles unchanged for vectors. Every other operation is an
``@intrinsic`` below: loads and stores of a row of a structure-of-arrays scratch (last axis W,
64-byte aligned, :func:`aligned_zeros`), broadcast, ``sqrt``, ``abs``, ``min``/``max``, ``fma``,
``sin``/``cos`` (LLVM's vector intrinsics: per-lane libm calls, or a vector library where numba
has one), select by mask, mask reductions (``any``, ``all``, the lane bit pattern) and single
lanes (extract, insert), for the scalar fallback of a lane that needs it.

``LANES`` is the widest width of numba's compile target (:func:`target_lanes`); the width the SIMD
path runs is chosen by measurement (:mod:`pkm.kernels.simd_width`). Arithmetic instructions
carry LLVM's ``contract`` flag only, as the scalar kernel (:data:`pkm.lie.KERNEL_FASTMATH`): a
product feeding a sum may become an FMA. A lane computes what the scalar kernel computes up to
that rounding.
"""
from __future__ import annotations

import operator

import numpy as np
from llvmlite import ir
from numba.core import cgutils, types
from numba.core.imputils import lower_builtin
from numba.core.typing.templates import AbstractTemplate, infer_global, signature
from numba.extending import intrinsic, models, overload, register_model

__all__ = ["VecType", "MaskType", "LANES", "host_lanes", "aligned_zeros", "vload", "vstore", "splat", "vzero",
           "vsqrt", "vabs", "vmin", "vmax", "vfma", "vsin", "vcos", "select", "any_lane", "all_lanes", "lane_bits",
           "get_lane", "set_lane", "width", "lanes", "target_lanes", "vrint", "vsincos", "SINCOS_RANGE"]

_FLAGS = ("contract",)
ALIGN = 64  # bytes: one AVX-512 register, a cache line


def host_lanes(features=None) -> int:
    """Lanes of ``double`` per register: 8 with AVX-512F, 4 with AVX (AVX2), else 2, from a dict of CPU
    features (``llvmlite.binding.get_host_cpu_features()``); None: numba's compile target
    (:func:`target_lanes`, which honours ``NUMBA_CPU_NAME`` and ``NUMBA_CPU_FEATURES``)."""
    if features is None:
        return target_lanes()
    if features.get("avx512f", False):
        return 8
    if features.get("avx", False):
        return 4
    return 2


def target_lanes() -> int:
    """Doubles per register of numba's compile target: the assembly LLVM emits for one
    ``<8 x double>`` addition with numba's triple, CPU name and features (its codegen's
    ``magic_tuple``) names ``zmm`` (8), ``ymm`` (4) or neither (2). So an AVX2 target on an AVX-512
    host (``NUMBA_CPU_NAME=haswell NUMBA_CPU_FEATURES=``) gives 4, where the host's features give 8."""
    import llvmlite.binding as llvm
    from numba.core.registry import cpu_target

    triple, cpu, features = cpu_target.target_context.codegen().magic_tuple()
    if not triple.startswith(("x86_64", "i386", "i686")):
        return 2
    mod = llvm.parse_assembly(
        f'target triple = "{triple}"\n'
        "define <8 x double> @f(<8 x double> %a, <8 x double> %b) {\n"
        "  %c = fadd <8 x double> %a, %b\n  ret <8 x double> %c\n}\n")
    asm = llvm.Target.from_triple(triple).create_target_machine(cpu=cpu, features=features).emit_assembly(mod)
    return 8 if "zmm" in asm else 4 if "ymm" in asm else 2


#: The widest lane count of numba's target (:func:`target_lanes`): the default width of the scratch
#: helpers. The SIMD path runs :func:`pkm.kernels.simd_width.simd_width` lanes, which on an AVX-512
#: target is measured (4 or 8) and which ``PKM_SIMD_LANES`` overrides. Compiled code depends on the
#: width only through the ``lanes`` tuple that the entry points take (:func:`lanes`), so numba's
#: cache keeps one version per width.
LANES = target_lanes()


def lanes(width=None):
    """The tuple ``(0.0,) * W`` that SIMD entry points take: its numba type (``UniTuple(float64, W)``)
    carries the width into their signatures, so :func:`vload` and :func:`splat` know it."""
    return (0.0,) * (LANES if width is None else int(width))


def _width_of(like):
    if isinstance(like, VecType):
        return like.width
    if isinstance(like, types.UniTuple) and isinstance(like.dtype, types.Float):
        return like.count
    return None


class VecType(types.Type):
    """``W`` doubles in one LLVM vector ``<W x double>``."""

    def __init__(self, width: int):
        self.width = int(width)
        super().__init__(name=f"f64x{self.width}")


class MaskType(types.Type):
    """``W`` booleans, LLVM's ``<W x i1>`` (a comparison of :class:`VecType`)."""

    def __init__(self, width: int):
        self.width = int(width)
        super().__init__(name=f"maskx{self.width}")


@register_model(VecType)
class _VecModel(models.PrimitiveModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, ir.VectorType(ir.DoubleType(), fe_type.width))


@register_model(MaskType)
class _MaskModel(models.PrimitiveModel):
    def __init__(self, dmm, fe_type):
        super().__init__(dmm, fe_type, ir.VectorType(ir.IntType(1), fe_type.width))


def _is_float(t):
    return isinstance(t, (types.Float, types.Integer))


def _lanes_of(*tys):
    ws = {t.width for t in tys if isinstance(t, VecType)}
    return ws.pop() if len(ws) == 1 else None


def _as_vec(builder, context, val, ty, vt):
    """``val`` of numba type ``ty`` as ``<W x double>``: a vector as it is, a number broadcast."""
    if isinstance(ty, VecType):
        return val
    x = context.cast(builder, val, ty, types.float64)
    return _broadcast(builder, x, vt.width)


def _broadcast(builder, x, w):
    vty = ir.VectorType(ir.DoubleType(), w)
    v = builder.insert_element(ir.Constant(vty, ir.Undefined), x, ir.Constant(ir.IntType(32), 0))
    return builder.shuffle_vector(v, ir.Constant(vty, ir.Undefined), ir.Constant(ir.VectorType(ir.IntType(32), w),
                                                                                  [0] * w))


def _row_pointer(builder, context, aty, arr, i, w):
    """Pointer ``<W x double>*`` to ``arr.flat[i * W]`` of a C-contiguous float64 array (``i`` intp)."""
    ary = context.make_array(aty)(context, builder, arr)
    base = builder.bitcast(ary.data, ir.DoubleType().as_pointer())
    off = builder.mul(i, ir.Constant(ir.IntType(64), w))
    p = builder.gep(base, [off])
    return builder.bitcast(p, ir.VectorType(ir.DoubleType(), w).as_pointer())


# ----------------------------------------------------------------------------- memory
def aligned_zeros(shape, width=LANES):
    """Zeros of ``shape + (width,)`` (float64, C order) starting on a 64-byte boundary: the
    structure-of-arrays scratch of the SIMD path (lane ``k`` of row ``i`` is ``a[..., i, k]``)."""
    shape = tuple(np.atleast_1d(shape).tolist()) + (width,)
    n = int(np.prod(shape))
    raw = np.zeros(n + ALIGN // 8)
    skip = (-raw.ctypes.data % ALIGN) // 8
    return raw[skip:skip + n].reshape(shape)


@intrinsic
def vload(typingctx, arr, i, like):
    """Row ``i`` (``arr.flat[i*W : i*W + W]``) of a C-contiguous float64 array whose last axis is W,
    ``W`` the width of ``like`` (a vector or the :func:`lanes` tuple)."""
    if not (isinstance(arr, types.Array) and arr.dtype == types.float64 and arr.layout == "C"
            and isinstance(i, types.Integer) and _width_of(like)):
        return None
    vt = VecType(_width_of(like))

    def codegen(context, builder, sig, args):
        p = _row_pointer(builder, context, sig.args[0], args[0], context.cast(builder, args[1], sig.args[1],
                                                                                types.intp), vt.width)
        return builder.load(p, align=8)
    return vt(arr, i, like), codegen


@intrinsic
def vstore(typingctx, arr, i, v):
    """``arr.flat[i*W : i*W + W] = v`` (see :func:`vload`)."""
    if not (isinstance(arr, types.Array) and arr.dtype == types.float64 and arr.layout == "C"
            and isinstance(i, types.Integer) and isinstance(v, VecType)):
        return None

    def codegen(context, builder, sig, args):
        p = _row_pointer(builder, context, sig.args[0], args[0], context.cast(builder, args[1], sig.args[1],
                                                                                types.intp), sig.args[2].width)
        builder.store(args[2], p, align=8)
        return context.get_dummy_value()
    return types.none(arr, i, v), codegen


@intrinsic
def splat(typingctx, x, like):
    """``x`` in every lane of a vector as wide as ``like`` (a vector or the :func:`lanes` tuple)."""
    if not (_is_float(x) and _width_of(like)):
        return None
    vt = VecType(_width_of(like))

    def codegen(context, builder, sig, args):
        return _as_vec(builder, context, args[0], sig.args[0], vt)
    return vt(x, like), codegen


@intrinsic
def vzero(typingctx, like):
    """A zero vector as wide as ``like`` (a vector or the :func:`lanes` tuple)."""
    w = _width_of(like)
    if not w:
        return None

    def codegen(context, builder, sig, args):
        return ir.Constant(ir.VectorType(ir.DoubleType(), w), [0.0] * w)
    return VecType(w)(like), codegen


@intrinsic
def width(typingctx, v):
    """The lane count of a vector (a compile-time constant)."""
    if not isinstance(v, VecType):
        return None

    def codegen(context, builder, sig, args):
        return ir.Constant(ir.IntType(64), sig.args[0].width)
    return types.intp(v), codegen


# ----------------------------------------------------------------------------- arithmetic
# The operators are typed by templates and lowered directly into the caller (numba's
# ``infer_global``/``lower_builtin``), not by ``@overload``: an overload is a function compiled once
# per combination of argument types, which cost seconds of a first run's compile.
_ARITH = {operator.add: "fadd", operator.sub: "fsub", operator.mul: "fmul", operator.truediv: "fdiv"}
_CMP = {operator.lt: "<", operator.le: "<=", operator.gt: ">", operator.ge: ">="}


def _vec_operands(args):
    """The lane count when ``args`` are two operands of a vector operation (one a vector, the
    other a vector of that width or a number), else None."""
    if len(args) != 2 or not any(isinstance(a, VecType) for a in args):
        return None
    if not all(isinstance(a, VecType) or _is_float(a) for a in args):
        return None
    return _lanes_of(*args)


def _register(op):
    class _Typer(AbstractTemplate):
        key = op

        def generic(self, args, kws):
            w = _vec_operands(args)
            if w is None or kws:
                return None
            return signature((VecType if op in _ARITH else MaskType)(w), *args)
    infer_global(op)(_Typer)

    def lower(context, builder, sig, args):
        vt = VecType(sig.return_type.width)
        x = _as_vec(builder, context, args[0], sig.args[0], vt)
        y = _as_vec(builder, context, args[1], sig.args[1], vt)
        if op in _ARITH:
            return getattr(builder, _ARITH[op])(x, y, flags=_FLAGS)
        return builder.fcmp_ordered(_CMP[op], x, y)  # ordered: a NaN lane compares False, as in Python
    for tys in ((VecType, VecType), (VecType, types.Number), (types.Number, VecType)):
        lower_builtin(op, *tys)(lower)


for _op in (*_ARITH, *_CMP):
    _register(_op)


class _NegTyper(AbstractTemplate):
    key = operator.neg

    def generic(self, args, kws):
        if len(args) == 1 and isinstance(args[0], VecType):
            return signature(args[0], args[0])


infer_global(operator.neg)(_NegTyper)


@lower_builtin(operator.neg, VecType)
def _lower_neg(context, builder, sig, args):
    return builder.fsub(ir.Constant(args[0].type, [-0.0] * sig.args[0].width), args[0], flags=_FLAGS)


def _register_mask(op, name):
    class _Typer(AbstractTemplate):
        key = op

        def generic(self, args, kws):
            if args and all(isinstance(a, MaskType) for a in args) and len({a.width for a in args}) == 1:
                return signature(args[0], *args)
    infer_global(op)(_Typer)

    def lower(context, builder, sig, args):
        if name == "not":
            return builder.xor(args[0], ir.Constant(args[0].type, [1] * sig.args[0].width))
        return getattr(builder, name)(args[0], args[1])
    lower_builtin(op, *([MaskType] * (1 if name == "not" else 2)))(lower)


_register_mask(operator.and_, "and_")
_register_mask(operator.or_, "or_")
_register_mask(operator.invert, "not")


def _llvm_call(builder, name, vty, args):
    fnty = ir.FunctionType(vty, [vty] * len(args))
    fn = cgutils.get_or_insert_function(builder.module, fnty, f"llvm.{name}.v{vty.count}f64")
    return builder.call(fn, args)


def _unary_llvm(name):
    def typer(typingctx, a):
        if not isinstance(a, VecType):
            return None

        def codegen(context, builder, sig, args):
            return _llvm_call(builder, name, args[0].type, [args[0]])
        return a(a), codegen
    return intrinsic(typer)


vsqrt, vabs, vsin, vcos, vrint = (_unary_llvm(n) for n in ("sqrt", "fabs", "sin", "cos", "rint"))
vsqrt.__doc__ = "Lane-wise square root (IEEE, as ``np.sqrt``)."
vabs.__doc__ = "Lane-wise ``|x|``."
vsin.__doc__ = "Lane-wise ``sin`` (LLVM's vector intrinsic: libm per lane, or a vector library)."
vcos.__doc__ = "Lane-wise ``cos`` (as :func:`vsin`)."
vrint.__doc__ = "Lane-wise rounding to the nearest integer (ties to even), a float."


def _binary_llvm(name):
    def typer(typingctx, a, b):
        w = _lanes_of(a, b)
        if w is None or not all(isinstance(t, VecType) or _is_float(t) for t in (a, b)):
            return None
        vt = VecType(w)

        def codegen(context, builder, sig, args):
            x = _as_vec(builder, context, args[0], sig.args[0], vt)
            y = _as_vec(builder, context, args[1], sig.args[1], vt)
            return _llvm_call(builder, name, x.type, [x, y])
        return vt(a, b), codegen
    return intrinsic(typer)


vmin, vmax = _binary_llvm("minnum"), _binary_llvm("maxnum")
vmin.__doc__ = "Lane-wise minimum (a NaN lane gives the other operand, as C's fmin)."
vmax.__doc__ = "Lane-wise maximum (as C's fmax)."


@intrinsic
def vfma(typingctx, a, b, c):
    """Lane-wise ``a·b + c`` rounded once."""
    w = _lanes_of(a, b, c)
    if w is None or not all(isinstance(t, VecType) or _is_float(t) for t in (a, b, c)):
        return None
    vt = VecType(w)

    def codegen(context, builder, sig, args):
        xs = [_as_vec(builder, context, v, t, vt) for v, t in zip(args, sig.args)]
        return _llvm_call(builder, "fma", xs[0].type, xs)
    return vt(a, b, c), codegen


# ----------------------------------------------------------------------------- masks and lanes
@intrinsic
def select(typingctx, m, a, b):
    """Lane-wise ``a if m else b``."""
    w = _lanes_of(a, b)
    if not (isinstance(m, MaskType) and w == m.width):
        return None
    vt = VecType(w)

    def codegen(context, builder, sig, args):
        x = _as_vec(builder, context, args[1], sig.args[1], vt)
        y = _as_vec(builder, context, args[2], sig.args[2], vt)
        return builder.select(args[0], x, y)
    return vt(m, a, b), codegen


@intrinsic
def lane_bits(typingctx, m):
    """The mask as an integer, bit ``k`` = lane ``k``."""
    if not isinstance(m, MaskType):
        return None

    def codegen(context, builder, sig, args):
        bits = builder.bitcast(args[0], ir.IntType(m.width))
        return builder.zext(bits, ir.IntType(64))
    return types.int64(m), codegen


def any_lane(m):
    """Whether some lane of the mask is set (numba code only)."""
    raise NotImplementedError  # replaced by the overload below when compiled


def all_lanes(m):
    """Whether every lane of the mask is set (numba code only)."""
    raise NotImplementedError


@overload(any_lane)
def _any_lane(m):
    if isinstance(m, MaskType):
        return lambda m: lane_bits(m) != 0


@overload(all_lanes)
def _all_lanes(m):
    if isinstance(m, MaskType):
        full = (1 << m.width) - 1
        return lambda m: lane_bits(m) == full


@intrinsic
def get_lane(typingctx, v, k):
    """Lane ``k`` of a vector, a float."""
    if not (isinstance(v, VecType) and isinstance(k, types.Integer)):
        return None

    def codegen(context, builder, sig, args):
        return builder.extract_element(args[0], context.cast(builder, args[1], sig.args[1], types.int32))
    return types.float64(v, k), codegen


@intrinsic
def set_lane(typingctx, v, k, x):
    """A copy of ``v`` with lane ``k`` set to ``x``."""
    if not (isinstance(v, VecType) and isinstance(k, types.Integer) and _is_float(x)):
        return None

    def codegen(context, builder, sig, args):
        xv = context.cast(builder, args[2], sig.args[2], types.float64)
        return builder.insert_element(args[0], xv, context.cast(builder, args[1], sig.args[1], types.int32))
    return v(v, k, x), codegen


# ----------------------------------------------------------------------------- sin and cos in lanes
#: Largest |x| for which :func:`vsincos` reduces the argument itself (beyond: libm per lane).
SINCOS_RANGE = 1e5
_PIO2_1, _PIO2_1T = 1.57079632673412561417e+00, 6.07710050650619224932e-11  # π/2 in two parts (fdlibm)
_INVPIO2 = 6.36619772367581382433e-01
_S1, _S2, _S3 = -1.66666666666666324348e-01, 8.33333333332248946124e-03, -1.98412698298579493134e-04
_S4, _S5, _S6 = 2.75573137070700676789e-06, -2.50507602534068634195e-08, 1.58969099521155010221e-10
_C1, _C2, _C3 = 4.16666666666666019037e-02, -1.38888888888741095749e-03, 2.48015872894767294178e-05
_C4, _C5, _C6 = -2.75573143513906633035e-07, 2.08757232129817482790e-09, -1.13596475577881948265e-11


def _make_vsincos():
    from pkm.kernels.work import _internal

    @_internal
    def vsincos(x):
        """``(sin x, cos x)`` in lanes: ``x = kπ/2 + r`` (Cody–Waite, π/2 in two parts) and fdlibm's
        kernel polynomials on ``|r| ≤ π/4`` (``__kernel_sin``, ``__kernel_cos``), the quadrant by
        selects: within ~1 ulp of libm, without its 2 calls per lane. Lanes beyond
        ``SINCOS_RANGE`` (or not finite) make every lane use libm (:func:`vsin`, :func:`vcos`)."""
        if any_lane(~(vabs(x) <= SINCOS_RANGE)):
            return vsin(x), vcos(x)
        k = vrint(x * _INVPIO2)
        r = (x - k * _PIO2_1) - k * _PIO2_1T
        z = r * r
        sn = r + r * z * (_S1 + z * (_S2 + z * (_S3 + z * (_S4 + z * (_S5 + z * _S6)))))
        hz = 0.5 * z
        w = 1.0 - hz
        cs = w + (((1.0 - w) - hz) + z * z * (_C1 + z * (_C2 + z * (_C3 + z * (_C4 + z * (_C5 + z * _C6))))))
        q = k - 4.0 * vrint(k * 0.25 - 0.375)  # k mod 4 in {0, 1, 2, 3} (k·¼ − ⅜ is never a tie)
        odd = (q > 0.5) & (q < 1.5) | (q > 2.5)
        neg_s = q > 1.5  # sin: s, c, −s, −c; cos: c, −s, −c, s
        neg_c = (q > 0.5) & (q < 2.5)
        s0 = select(odd, cs, sn)
        c0 = select(odd, sn, cs)
        return select(neg_s, -s0, s0), select(neg_c, -c0, c0)
    return vsincos


vsincos = _make_vsincos()
