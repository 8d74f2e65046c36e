"""Robot files in other formats: URDF + the Extended-URDF closure YAML (:mod:`.urdf_read`) and MJCF
(:mod:`.mjcf_read`, through MuJoCo's compiler) in, URDF
(:mod:`.urdf_write`) and pkm TOML (:mod:`.toml_write`) out. Layer 3: builds on ``description``."""

from __future__ import annotations

from pathlib import Path


def load_robot_spec(path, parameters=None, **options):
    """``(RobotSpec, notes)`` of a robot file: pkm TOML, a URDF (``.urdf``) with its closure YAML
    and side file (:func:`pkm.formats.urdf_read.urdf_document`; ``options``: platform, task, closures, side),
    or an MJCF (``.xml``, :func:`pkm.formats.mjcf_read.mjcf_document`; options platform, task, side)."""
    path = Path(path)
    unknown = sorted(set(options) - {"platform", "task", "closures", "side"})
    if unknown:
        from pkm.errors import InputError

        raise InputError(f"unknown option {unknown[0]!r} (a URDF or MJCF robot takes platform, task, closures, side)")
    if path.suffix.lower() == ".urdf":
        from .urdf_read import load_urdf_spec

        return load_urdf_spec(path, parameters, **options)
    if path.suffix.lower() == ".xml":
        from .mjcf_read import load_mjcf_spec

        return load_mjcf_spec(path, parameters, **options)
    from pkm.description.robotfile import load_spec

    if options:
        from pkm.errors import RobotFileError

        raise RobotFileError(path, "", f"{', '.join(options)}: options of a URDF robot only (or an MJCF)")
    return load_spec(path, parameters=parameters), []


class FormatNote(UserWarning):
    """A part of a robot file in another format that pkm does not read (one line; the CLI prints it
    as ``pkm: warning: …``)."""


def warn_notes(notes) -> None:
    """Issue each note as a :class:`FormatNote` warning."""
    import warnings

    for note in notes:
        warnings.warn(note, FormatNote, stacklevel=3)
