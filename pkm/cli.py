"""The ``pkm`` command (also ``python -m pkm``)."""

from __future__ import annotations

import argparse
import sys

from pkm.errors import PkmError


def _cmd_info(args: argparse.Namespace) -> int:
    from pkm.info import robot_info

    print(robot_info(args.robot))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pkm",
        description="Kinematics and dynamics of parallel kinematic machines (PKM) with hybrid complex limbs.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    p_info = sub.add_parser("info", help="describe a robot file: bodies, joints, DOF, masses")
    p_info.add_argument("robot", help="path to a robot file (TOML), e.g. robots/delta_3rr2rrr.toml")
    p_info.set_defaults(func=_cmd_info)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "func", None) is None:
        parser.print_help()
        return 0
    try:
        return args.func(args)
    except PkmError as exc:
        print(f"pkm: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"pkm: error: {exc.filename or ''}: {exc.strerror or exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
