"""Compile options shared by every numba function of pkm (the spatial layer and the kernels above it)."""
import numba

from pkm.lie import numba_cache

# Before any function below is compiled or loaded from numba's cache: clear caches built from other
# sources (a cached caller keeps its callees' old code; see pkm.lie.numba_cache).
numba_cache.check()

#: The fastmath flags of the batch kernel and of every helper it calls (:data:`pkm.kernels.work._OPTIONS`):
#: only ``contract``, which lets LLVM fuse ``a·b + c`` into one FMA instruction (one rounding
#: instead of two; ~10 % of the Delta's time, A/B alternated). Results stay reproducible bit for
#: bit: the same on a fresh compile, from numba's cache and with the caller recompiled against
#: cached callees (the kernel's pieces are always inlined or always calls, so the same code is
#: generated each time; ``tests/test_sweep.py`` compares a process pool to the serial run bit for
#: bit). No ``nnan``/``ninf`` (the kernel checks for NaN and inf); ``reassoc``/``arcp``/``nsz``
#: gained nothing more. The reference kernels (:func:`_jit`) use no fastmath.
KERNEL_FASTMATH = {"contract"}

_jit = numba.njit(cache=True, nogil=True, no_cfunc_wrapper=True)
# The small allocation-free ``*_into`` primitives are inlined into their numba callers at the
# Numba-IR level: a call that passes array views (``T[i]``, ``V[p]``) costs ~100 ns in reference
# counting and argument marshalling, several times the arithmetic it performs. Called from Python
# they behave like any other jitted function.
_jit_inline = numba.njit(cache=True, nogil=True, inline="always", no_cfunc_wrapper=True)
# Helpers called from numba code only: no Python entry point (no_cpython_wrapper: less compile in
# a first run). CALLING ONE FROM PYTHON CRASHES THE INTERPRETER; tests use conftest.numba_only.
# No numba runtime (_nrt=False): the batch kernel calls them (see pkm.kernels.work._OPTIONS).
_jit_only = numba.njit(cache=True, nogil=True, no_cfunc_wrapper=True, no_cpython_wrapper=True, _nrt=False,
                       fastmath=KERNEL_FASTMATH)
