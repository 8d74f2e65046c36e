"""Symbols of numba's compiled code for Linux ``perf``: a ``/tmp/perf-<pid>.map`` file.

numba's machine code lives in anonymous memory, so ``perf report`` shows bare addresses. perf reads
``/tmp/perf-<pid>.map`` (lines ``START SIZE NAME``, hex) to name them. This module keeps the object
code of every numba library that this process compiles or loads from the cache, reads its function
symbols and sizes (``nm -S``, binutils), finds where the library was loaded (numba's
``get_pointer_to_function``), and writes the map.

Import it BEFORE any numba function is compiled or loaded from the cache (it patches two hooks of
``numba.core.codegen``); it relies on numba internals (checked with numba 0.59–0.68). A developer's
tool for ``benchmarks/profile_kernel.py``, not part of pkm.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile

import numba.core.codegen as _cg

_LIBRARIES: list = []


def _keep(library, buf) -> None:
    library._perfmap_object = bytes(buf)
    _LIBRARIES.append(library)


_set_compiled_object = _cg.CodeLibrary._set_compiled_object  # loaded from numba's cache


def _set_compiled_object_hook(self, value):
    _keep(self, value)
    return _set_compiled_object(self, value)


_object_compiled_hook = _cg.CPUCodeLibrary._object_compiled_hook.__func__  # compiled now


def _object_compiled_hook_hook(cls, ll_module, buf):
    library = getattr(ll_module, "_CPUCodeLibrary__library", None)
    if library is not None:
        _keep(library, buf)
    return _object_compiled_hook(cls, ll_module, buf)


_cg.CodeLibrary._set_compiled_object = _set_compiled_object_hook
_cg.CPUCodeLibrary._object_compiled_hook = classmethod(_object_compiled_hook_hook)


def demangle(name: str) -> str:
    """``_ZN3pkm7kernels16inverse_dynamics9run_rangeB3v38B…`` → ``pkm.kernels.inverse_dynamics.run_range`` (numba's
    Itanium-style names: length-prefixed parts, then the version and argument types)."""
    if not name.startswith("_ZN"):
        return name
    parts, i = [], 3
    while i < len(name) and name[i].isdigit():
        m = re.match(r"\d+", name[i:])
        n = int(m.group())
        i += len(m.group())
        parts.append(name[i:i + n])
        i += n
    return ".".join(parts) or name


def symbols() -> list[tuple[int, int, str]]:
    """``(address, size, mangled name)`` of every function in the kept libraries."""
    out = []
    for library in _LIBRARIES:
        try:
            obj = library._perfmap_object
        except ReferenceError:  # numba hands the hook a weak proxy: a library freed since (a probe's) has no code left
            continue
        with tempfile.NamedTemporaryFile(suffix=".o", delete=False) as f:
            f.write(obj)
            path = f.name
        try:
            text = subprocess.run(["nm", "-S", "--defined-only", path], capture_output=True, text=True,
                                  check=True).stdout
        finally:
            os.unlink(path)
        syms, strong = [], set()
        for line in text.splitlines():
            fields = line.split()
            if len(fields) == 4 and fields[2] in "tTwW":  # functions, weak ones too (callees' copies)
                syms.append((int(fields[0], 16), int(fields[1], 16), fields[3]))
                if fields[2] == "T":
                    strong.add(fields[3])
        base = None
        for value, _, name in syms:
            if name not in strong:  # a weak name resolves to whichever library defined it first
                continue
            try:
                address = library.get_pointer_to_function(name)
            except Exception:  # noqa: BLE001 - a symbol the engine does not export
                address = 0
            if address:
                base = address - value
                break
        if base is not None:
            out.extend((base + value, size, name) for value, size, name in syms if size > 0)
    return out


def write(pid: int | None = None) -> str:
    """Write ``/tmp/perf-<pid>.map`` for this process; returns its path."""
    path = f"/tmp/perf-{os.getpid() if pid is None else pid}.map"
    with open(path, "w") as f:
        for address, size, name in symbols():
            f.write(f"{address:x} {size:x} {name}\n")
    return path
