"""All-or-nothing output files of the ``pkm`` commands.

:func:`outputs` hands out a temporary file in the target's directory for each output; only when
every output has been written (and flushed to disk) are they moved onto their targets with
``os.replace``. If anything fails, the temporaries are removed: no output is written, and an
existing file at a target keeps its old content instead of being replaced by a half-written one.
A target that is a symbolic link is written through it (the link stays); one that is a device,
FIFO or socket (``/dev/stdout``) is written directly, never renamed onto.

>>> import pathlib, tempfile
>>> tmp = pathlib.Path(tempfile.mkdtemp())
>>> with outputs(tmp / "a.csv", None) as out:
...     _ = pathlib.Path(out[tmp / "a.csv"]).write_text("t\\n0\\n")
>>> sorted(p.name for p in tmp.iterdir())
['a.csv']
"""
from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path

from pkm.errors import PkmError


def _temporary(target: Path) -> str:
    """A new empty file beside ``target`` with the same suffix (matplotlib picks the image format
    from it), with the mode a new file at ``target`` would get (or the existing file's mode)."""
    fd, temp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=f".tmp{target.suffix}")
    os.close(fd)
    try:
        mode = target.stat().st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    os.chmod(temp, mode)
    return temp


def _special(path) -> bool:
    """Whether ``path`` exists and is not a regular file once links are followed (a device, FIFO or
    socket; ``/dev/stdout``'s magic link to a pipe too)."""
    try:
        return not stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


class _Temporaries(dict):
    """target -> temporary path; looking a target up marks it as the one being written."""

    current = None

    def __getitem__(self, target):
        self.current = target
        return super().__getitem__(target)


@contextlib.contextmanager
def outputs(*targets):
    """Context manager: ``with outputs(csv, png) as out: write(out[csv]); plot(out[png])``.

    ``targets`` are paths or None (skipped); ``out[target]`` is the path of the target's temporary
    file (look it up just before writing it: an OSError is reported against the target looked up
    last). An OSError while writing or moving becomes a one-line :class:`PkmError` naming the
    target (the temporary file's name means nothing to the user); any exception removes all
    temporaries, so no output is left behind.
    """
    given = [t for t in targets if t is not None]
    if len({Path(t).resolve() for t in given}) != len(given):
        raise PkmError(f"the output files {', '.join(map(str, given))} must differ")
    temps = _Temporaries()
    replaced = []
    # a symlink is written through (its target is replaced, the link stays); a device, FIFO or
    # socket (/dev/stdout, /dev/null) is written directly: renaming a temporary onto it would
    # replace the node itself (as root, --out /dev/full turned /dev/full into a regular file)
    real = {t: Path(os.path.realpath(t)) for t in given}
    direct = {t for t in given if _special(t)}
    try:
        for target in given:
            temps.current = target
            dict.__setitem__(temps, target, str(target) if target in direct else _temporary(real[target]))
        yield temps
        for target in given:   # flush to disk first: a full disk may only show here
            if target in direct:
                continue
            fd = os.open(temps[target], os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        for target in given:
            if target not in direct:
                os.replace(temps[target], real[target])
            dict.__setitem__(temps, target, None)
            replaced.append(str(target))
    except OSError as exc:
        done = f"only {', '.join(replaced)} was written" if replaced else "no output file was written"
        raise PkmError(f"cannot write {temps.current}: {exc.strerror or exc} ({done})") from None
    finally:
        for target, temp in dict.items(temps):
            if temp is not None and target not in direct:   # never unlink a device written directly
                with contextlib.suppress(OSError):
                    os.unlink(temp)
