"""``pkm convert ROBOT OUT``: write a robot in another format, chosen by OUT's suffix.

* ``.toml``: a pkm robot file with every body and joint written out (world frame, SI units);
* ``.urdf``: URDF + the Extended-URDF closure YAML (``OUT.yaml``) + pkm's side file
  (``OUT.pkm.toml``: platform, task space, cut joints), read back by ``pkm.load(OUT.urdf)``;
* ``.xml``: MJCF, by :func:`pkm.export.mjcf.write_mjcf`.

ROBOT may itself be a URDF (``--platform``/``--task`` name what its side file does not). Every file
is written in full or not at all (a temporary file renamed into place).
"""
from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

SUFFIXES = (".toml", ".urdf", ".xml")


def add_parser(sub) -> None:
    p = sub.add_parser("convert", help="write a robot as pkm TOML, URDF + closure YAML, or MJCF",
                       description="Write ROBOT (a pkm TOML or a URDF) as OUT: .toml (pkm robot file, written out), "
                                   ".urdf (URDF + OUT.yaml closures + OUT.pkm.toml side file) or .xml (MJCF).")
    p.add_argument("robot", metavar="ROBOT", help="robot file (.toml, .urdf or .xml)")
    p.add_argument("out", metavar="OUT", help="output file: .toml, .urdf or .xml")
    p.add_argument("--platform", metavar="LINK", help="URDF input: the platform link (else from ROBOT.pkm.toml)")
    p.add_argument("--task", metavar="TYPE", help="URDF input: the task type, e.g. translational "
                                                  "(else from ROBOT.pkm.toml)")
    p.set_defaults(func=run)


def _write_all(files: dict) -> None:
    """Write every file to a temporary beside it, then rename them all into place: a failure leaves
    no output file half-written (and none written, unless a rename itself fails)."""
    mask = os.umask(0)
    os.umask(mask)
    temps = {}
    try:
        for path, text in files.items():
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
            temps[path] = tmp
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
            os.chmod(tmp, 0o666 & ~mask)   # as open() would create it (mkstemp makes it private)
        for path, tmp in temps.items():
            os.replace(tmp, path)
    finally:
        for tmp in temps.values():
            Path(tmp).unlink(missing_ok=True)


def run(args: argparse.Namespace) -> int:
    from pkm.errors import InputError, PkmError
    from pkm.formats import warn_notes
    from pkm.robot import load

    out = Path(args.out)
    suffix = out.suffix.lower()
    if suffix not in SUFFIXES:
        raise InputError(f"OUT {args.out!r}: unknown format {out.suffix or '(no suffix)'!r}; expected "
                         f"{', '.join(SUFFIXES)}")
    if out.is_dir():
        raise InputError(f"OUT {args.out!r} is a directory; give a file name")
    if not out.parent.is_dir():
        raise InputError(f"OUT {args.out!r}: directory {str(out.parent)!r} does not exist")
    options = {k: v for k, v in (("platform", args.platform), ("task", args.task)) if v is not None}
    if options and Path(args.robot).suffix.lower() not in (".urdf", ".xml"):
        raise InputError(f"--{next(iter(options))} applies to a URDF ROBOT only (or an MJCF ROBOT; a pkm "
                         f"robot file names its platform and task)")
    robot = load(args.robot, **options)
    written = [out]
    if suffix == ".toml":
        from pkm.formats.toml_write import toml_text

        text, notes = toml_text(robot.spec)
        files = {out: text}
    elif suffix == ".urdf":
        from pkm.formats.urdf_read import side_paths
        from pkm.formats.urdf_write import urdf_texts

        urdf, yaml, side, notes = urdf_texts(robot.spec)
        yaml_path, side_path = side_paths(out)
        files = {out: urdf, yaml_path: yaml, side_path: side}
        written = [out, yaml_path, side_path]
    else:
        try:
            from pkm.export.mjcf import write_mjcf
        except ImportError:
            raise PkmError("MJCF export needs pkm.export") from None
        notes, files = [], {}
        write_mjcf(robot, out)
    src = Path(args.robot).resolve()
    if any(p.resolve() == src for p in files):
        raise InputError(f"OUT {args.out!r} would overwrite the robot file ROBOT; choose another name")
    if robot.spec.parameters and suffix != ".xml":
        notes = [*notes, "the file's [parameters] are evaluated: the written robot holds their values"]
    warn_notes(notes)
    _write_all(files)
    print("wrote " + ", ".join(str(p) for p in written))
    return 0
