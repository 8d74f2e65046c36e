"""Exceptions raised by pkm. All derive from :class:`PkmError`."""


class PkmError(Exception):
    """Base class of every error pkm raises on purpose."""


class RobotFileError(PkmError, ValueError):
    """A robot file is malformed or inconsistent.

    The message is one line, ``FILE: ENTRY: what is wrong``; :attr:`path` and :attr:`entry` hold
    the parts.
    """

    def __init__(self, path, entry: str, what: str):
        self.path = str(path) if path is not None else "<robot>"
        self.entry = entry
        self.what = what
        where = f"{self.path}: {entry}: " if entry else f"{self.path}: "
        super().__init__(f"{where}{what}".replace("\n", " "))


class TopologyError(PkmError, ValueError):
    """The joint graph does not have the structure an algorithm needs (e.g. not a tree)."""
