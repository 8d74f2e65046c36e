"""The numba kernels run as plain Python, for evaluations at a single point where compiling buys nothing.

``pkm eom ROBOT`` evaluates the reference algorithms (:mod:`pkm.algorithms`, the spatial layer) at
one state. Compiling the ~20 numba functions it calls takes ~4 s on a first run (an empty numba
cache) for a few milliseconds of work; run by the interpreter the same source takes ~0.1 s. So
inside ``with python_kernels():`` the Python wrappers of the reference algorithms call
:func:`kernel`'s choice, the *same source* run as Python (:func:`as_python`), instead of the
numba dispatcher. Nothing is compiled and no formula is written twice; the results equal the
compiled ones up to rounding (the compiled helpers may fuse ``a·b + c`` into one FMA,
:data:`pkm.lie.options.KERNEL_FASTMATH`; ``tests/test_interpret.py`` compares both to 1e-12).

The mode is a :class:`contextvars.ContextVar`: per thread (and asyncio task), off by default, so
batch users, tests and every other caller keep the compiled kernels.
"""
from __future__ import annotations

import contextlib
import contextvars
import threading
import types

from numba.core.dispatcher import Dispatcher

_PYTHON = contextvars.ContextVar("pkm_python_kernels", default=False)
_AS_PYTHON: dict = {}     # dispatcher → its finished plain-Python version
_BUILDING: dict = {}      # versions under construction (recursion), seen only under _LOCK
_LOCK = threading.RLock()


@contextlib.contextmanager
def python_kernels(on: bool = True):
    """Within the block, :func:`kernel` hands out the plain-Python versions (``on=False``: the
    compiled ones again). For one-off evaluations, e.g. the CLI's ``pkm eom``."""
    token = _PYTHON.set(bool(on))
    try:
        yield
    finally:
        _PYTHON.reset(token)


def interpreting() -> bool:
    """Whether :func:`kernel` currently hands out plain-Python versions."""
    return _PYTHON.get()


def kernel(f):
    """``f`` (a numba dispatcher), or its plain-Python version inside :func:`python_kernels`."""
    return as_python(f) if _PYTHON.get() else f


def _names(code) -> set:
    """Every global name a code object and the code objects nested in it (comprehensions,
    lambdas) refer to."""
    names = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names |= _names(c)
    return names


def as_python(f):
    """The plain-Python function of the numba dispatcher ``f``: its source function with every
    numba dispatcher it calls (a module global or a closure variable) replaced, recursively, by
    that one's plain-Python version; anything else (numpy, constants, overloaded pure-Python
    helpers such as :func:`pkm.lie.linalg.size`) is left as it is. Memoized; ``f`` itself if it is
    not a dispatcher. The dispatcher is neither compiled nor changed."""
    if not isinstance(f, Dispatcher):
        return f
    done = _AS_PYTHON.get(f)
    if done is not None:
        return done
    with _LOCK:  # another thread must not see a version whose callees are still dispatchers
        return _build(f)


def _build(f):
    done = _AS_PYTHON.get(f)
    if done is not None:
        return done
    py = f.py_func
    env = dict(py.__globals__)  # a copy: the module's own globals keep the dispatchers
    cells = None
    if py.__closure__:
        cells = tuple(types.CellType(_callee(c.cell_contents)) if isinstance(c.cell_contents, Dispatcher) else c
                      for c in py.__closure__)
    fn = types.FunctionType(py.__code__, env, py.__name__, py.__defaults__, cells)
    fn.__kwdefaults__, fn.__doc__, fn.__qualname__ = py.__kwdefaults__, py.__doc__, py.__qualname__
    fn.__module__ = py.__module__
    _BUILDING[f] = fn  # before the callees: a function that calls itself finds its own version
    try:
        for name in _names(py.__code__):
            value = env.get(name)
            if isinstance(value, Dispatcher):
                env[name] = _callee(value)
    finally:
        del _BUILDING[f]
    _AS_PYTHON[f] = fn  # published only when complete
    return fn


def _callee(f):
    """The plain-Python version of a callee: under construction further up (recursion) or built now."""
    return _BUILDING.get(f) or _build(f)
