"""How the batch kernel is compiled: without numba's runtime (``_nrt=False``) and with its pieces
inlined (``forceinline``), see :mod:`pkm.kernels.ik`.

With the runtime, every array passed between the kernel's functions and every view of one is
reference counted: an opaque ``NRT_incref``/``NRT_decref`` call around which LLVM spills the live
registers and after which it reloads what it had read from arrays. The IK solvers are calls, and
the helpers of other modules are compiled on their own, so one callee compiled with the runtime
brings those calls back into the per-sample path. The tests walk the call graph from
:func:`pkm.kernels.inverse_dynamics.run_range` through the jitted functions each one names and check that
every one of them is compiled without the runtime, and which of the kernel's own are inlined.
"""

from __future__ import annotations

import numba
from numba.core.registry import CPUDispatcher

import pkm.kernels.inverse_dynamics as K


def _callees(disp):
    """The jitted functions named in ``disp``'s code (globals it reads, nested code included)."""
    g = disp.py_func.__globals__
    codes, names = [disp.py_func.__code__], set()
    while codes:
        c = codes.pop()
        names.update(c.co_names)
        codes.extend(k for k in c.co_consts if hasattr(k, "co_names"))
    return {g[n] for n in names if isinstance(g.get(n), CPUDispatcher)}


def _call_graph(root):
    seen, todo = set(), [root]
    while todo:
        d = todo.pop()
        if d not in seen:
            seen.add(d)
            todo.extend(_callees(d))
    return seen


def test_the_walk_finds_the_kernels_pieces():
    names = {f"{d.py_func.__module__}.{d.py_func.__name__}" for d in _call_graph(K.run_range)}
    for expected in ("pkm.kernels.dynamics._limb_dynamics", "pkm.kernels.dynamics._rnea", "pkm.kernels.ik._solve_affine",
                     "pkm.kernels.ik._solve_general", "pkm.kernels.ik._fk", "pkm.lie.small.log_pose", "pkm.lie.series._alpha",
                     "pkm.lie.linalg.spd_inverse_into", "pkm.lie.linalg._cholesky_into", "pkm.algorithms.constraints._bias_rho"):
        assert expected in names


def _with_runtime(root):
    return sorted(f"{d.py_func.__module__}.{d.py_func.__name__}" for d in _call_graph(root)
                  if d.targetoptions.get("_nrt", True) is not False)


def test_every_function_of_the_kernel_is_compiled_without_the_runtime():
    from pkm.kernels import forward

    assert _with_runtime(K.run_range) == []
    assert _with_runtime(forward.forward_range) == [] and _with_runtime(forward.rk4_run) == []
    names = {f"{d.py_func.__module__}.{d.py_func.__name__}" for d in _call_graph(forward.rk4_run)}
    assert {"pkm.kernels.forward._forward_state", "pkm.kernels.dynamics._limb_motion"} <= names


@numba.njit(no_cfunc_wrapper=True)
def _leaf_with_runtime(x):
    return x


@numba.njit(no_cfunc_wrapper=True, _nrt=False)
def _middle(x):
    return _leaf_with_runtime(x) + 1


@numba.njit(no_cfunc_wrapper=True, _nrt=False)
def _root(x):
    return _middle(x) * 2


def test_the_check_finds_a_callee_with_the_runtime():
    assert _with_runtime(_root) == [f"{__name__}._leaf_with_runtime"]
    assert _with_runtime(_middle) == [f"{__name__}._leaf_with_runtime"]
    assert _with_runtime(_leaf_with_runtime) == [f"{__name__}._leaf_with_runtime"]
    assert _root(3.0) == 8.0


def test_the_kernels_pieces_are_inlined_except_the_ik_solvers():
    """The batch kernel's own functions carry LLVM's alwaysinline (``forceinline``), except the entry
    point and the IK solvers, which stay calls (see :data:`pkm.kernels.work._piece`)."""
    calls = {"run_range", "_solve_affine", "_solve_general", "_build_H"}
    for d in _call_graph(K.run_range):
        if d.py_func.__module__ in ("pkm.kernels.ik", "pkm.kernels.inverse_dynamics"):
            name = d.py_func.__name__
            assert bool(d.targetoptions.get("forceinline")) == (name not in calls), name


def test_every_function_of_the_kernel_has_the_same_fastmath_flags():
    """Only ``contract`` (FMA), and in every function: where a product feeds a sum should not
    decide whether it is rounded once or twice (see :data:`pkm.lie.KERNEL_FASTMATH`)."""
    from pkm.lie import KERNEL_FASTMATH

    assert KERNEL_FASTMATH == {"contract"}
    flags = {f"{d.py_func.__module__}.{d.py_func.__name__}": set(d.targetoptions.get("fastmath") or ())
             for d in _call_graph(K.run_range)}
    assert {name: f for name, f in flags.items() if f != KERNEL_FASTMATH} == {}
