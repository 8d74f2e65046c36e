"""The closure YAML of the Extended-URDF convention (Gepetto's example-parallel-robots, ``robot.yaml``).

A URDF describes a tree; the YAML beside it names the loop closures::

    closed_loop: [['closedloop1_A', 'closedloop1_B'], ['loop2_A', 'loop2_B']]   # pairs of frame (link) names
    type: ['6d', '3d']            # per pair: 6d welds the two frames, 3d makes their origins coincide
    name_mot: ['mot1', 'mot2']    # the actuated joints

Only this subset of YAML is read (top-level ``key: value`` with flow lists ``[...]``, possibly over
several lines, or block lists ``- item``; ``#`` comments; quoted or bare strings), by a small parser
of our own so that pkm needs no YAML package. ``joint_name``/``joint_type`` (the convention's joint
type overrides) are refused in one line: pkm reads the joints as the URDF gives them.
"""

from __future__ import annotations

import re
from pathlib import Path

from pkm.errors import RobotFileError

#: Keys the closure YAML may hold.
KEYS = ("closed_loop", "type", "name_mot")
_KEY = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)\s*:(.*)$")


def _strip_comment(line: str) -> str:
    quote = None
    for k, c in enumerate(line):
        if quote:
            quote = None if c == quote else quote
        elif c in "'\"":
            quote = c
        elif c == "#" and (k == 0 or line[k - 1].isspace()):
            return line[:k]
    return line


def _flow(path, key: str, text: str):
    """Parse a YAML flow value (nested lists of scalars)."""
    tokens = re.findall(r"\[|\]|,|'(?:[^']|'')*'|\"(?:[^\"\\]|\\.)*\"|[^\[\],'\"\s][^\[\],]*", text)
    if "".join(re.sub(r"\s", "", t) for t in tokens) != re.sub(r"\s", "", text):
        raise RobotFileError(path, key, f"cannot read the value {text.strip()[:60]!r}: expected a list such as "
                                        f"['a', 'b']")
    pos = 0

    def value():
        nonlocal pos
        if pos >= len(tokens):
            raise RobotFileError(path, key, "unexpected end of the list (a ']' missing?)")
        tok = tokens[pos]
        pos += 1
        if tok == "[":
            items = []
            if pos < len(tokens) and tokens[pos] == "]":
                pos += 1
                return items
            while True:
                items.append(value())
                if pos >= len(tokens):
                    raise RobotFileError(path, key, "unexpected end of the list (a ']' missing?)")
                sep = tokens[pos]
                pos += 1
                if sep == "]":
                    return items
                if sep != ",":
                    raise RobotFileError(path, key, f"expected ',' or ']' in the list, got {sep!r}")
                if pos < len(tokens) and tokens[pos] == "]":   # a trailing comma
                    pos += 1
                    return items
        if tok in ("]", ","):
            raise RobotFileError(path, key, f"unexpected {tok!r} in the list")
        return _scalar(tok)

    out = value()
    if pos != len(tokens):
        raise RobotFileError(path, key, f"unexpected text after the value: {''.join(tokens[pos:])[:40]!r}")
    return out


def _scalar(tok: str):
    tok = tok.strip()
    if len(tok) >= 2 and tok[0] == tok[-1] == "'":
        return tok[1:-1].replace("''", "'")
    if len(tok) >= 2 and tok[0] == tok[-1] == '"':
        return tok[1:-1].replace('\\"', '"').replace("\\\\", "\\")
    return tok


def parse_closures(text: str, path=None) -> dict:
    """``{"closed_loop": [(a, b), ...], "type": [...], "name_mot": [...]}`` from the YAML text."""
    entries: dict[str, list[str]] = {}
    current = None
    for number, raw in enumerate(text.splitlines(), 1):
        line = _strip_comment(raw).rstrip()
        if not line.strip() or line.strip() == "---":
            continue
        m = _KEY.match(line)
        if m:
            current = m[1]
            if current in entries:
                raise RobotFileError(path, current, f"key given twice (line {number})")
            entries[current] = [m[2]]
        elif current is None or not raw[:1].isspace():
            raise RobotFileError(path, "", f"line {number}: expected 'key: value' (closed_loop, type, name_mot)")
        else:
            entries[current].append(line)
    data = {}
    for key, lines in entries.items():
        if key not in KEYS:
            hint = (" (joint type overrides are not read: write the joints in the URDF as pkm should take them)"
                    if key in ("joint_name", "joint_type") else "")
            raise RobotFileError(path, key, f"unknown key (expected {', '.join(KEYS)}){hint}")
        body = [s.strip() for s in lines if s.strip()]
        if body and all(s.startswith("- ") or s == "-" for s in body):
            data[key] = [_flow(path, key, s[1:].strip()) if s[1:].strip().startswith("[") else _scalar(s[1:])
                         for s in body]
        else:
            data[key] = _flow(path, key, " ".join(body)) if body else []
        if not isinstance(data[key], list):
            raise RobotFileError(path, key, f"expected a list, got {data[key]!r}")
    return _check(data, path)


def _check(data: dict, path) -> dict:
    pairs = data.get("closed_loop", [])
    for k, pair in enumerate(pairs):
        if not (isinstance(pair, list) and len(pair) == 2 and all(isinstance(s, str) and s for s in pair)):
            raise RobotFileError(path, f"closed_loop[{k}]", f"expected a pair of frame names, got {pair!r}")
    types = data.get("type", ["6d"] * len(pairs) if "type" not in data else [])
    if len(types) != len(pairs):
        raise RobotFileError(path, "type", f"{len(types)} closure types for {len(pairs)} closed_loop pairs "
                                           f"(one '3d' or '6d' per pair)")
    for k, t in enumerate(types):
        if t not in ("3d", "6d"):
            raise RobotFileError(path, f"type[{k}]", f"unknown closure type {t!r} (expected '3d' or '6d')")
    mot = data.get("name_mot", [])
    if not all(isinstance(s, str) and s for s in mot):
        raise RobotFileError(path, "name_mot", f"expected a list of joint names, got {mot!r}")
    return {"closed_loop": [tuple(p) for p in pairs], "type": list(types), "name_mot": list(mot)}


def read_closures(path) -> dict:
    """Read the closure YAML at ``path`` (one-line :class:`RobotFileError` on any problem)."""
    path = Path(path)
    try:
        text = path.read_bytes().removeprefix(b"\xef\xbb\xbf").decode("utf-8")
    except FileNotFoundError:
        raise RobotFileError(path, "", "file not found") from None
    except UnicodeDecodeError:
        raise RobotFileError(path, "", "file is not UTF-8 text") from None
    except OSError as exc:
        raise RobotFileError(path, "", f"cannot read file: {exc.strerror or exc}") from None
    return parse_closures(text, path)


def _q(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def closures_text(pairs, types, motors) -> str:
    """The closure YAML for frame ``pairs``, their ``types`` ('3d'/'6d') and the actuated joints."""
    lines = ["# Loop closures of the URDF beside this file (Extended-URDF convention), written by pkm convert",
             "closed_loop: [" + ", ".join(f"[{_q(a)}, {_q(b)}]" for a, b in pairs) + "]",
             "type: [" + ", ".join(_q(t) for t in types) + "]",
             "name_mot: [" + ", ".join(_q(m) for m in motors) + "]"]
    return "\n".join(lines) + "\n"
