"""A hostile-input corpus (issue 19's acceptance): malformed robot files, bad command lines and bad
API arguments end in one clear line — a :class:`pkm.PkmError` (the CLI: ``pkm: error: …``, exit
2) — never a traceback, a hang, a NaN/inf in a printed or written result, or a half-written file.

The corpus is generated, not listed: every robot file in ``robots/`` and ``tests/robots_ok/`` with
each key deleted in turn and each number replaced by NaN, ±inf, ±1e308, 1e-300, 5e-324, 0, −1, a
string, a list, a table or a bool; file-level garbage (empty, binary, NUL bytes, non-UTF-8, a
byte-order mark, a directory, a missing path, deep nesting) and structural defects (a body jointed
to itself, an unknown body, duplicated names, a joint loop without a cut, parallel axes); ~400
command lines over every sub-command; ~200 API calls with wrong shapes, types and values. All run
in this process (``main(argv)``, the Delta's kernels are the suite's); a few run in a subprocess
for real tracebacks and hangs.
"""
from __future__ import annotations

import contextlib
import copy
import io
import math
import os
import re
import subprocess
import sys
import threading
import tomllib
import warnings

import numpy as np
import pytest

import pkm
from pkm.cli.main import main
from pkm.description.robotfile import load_spec, parse_spec
from pkm.errors import InputError, PkmError, RobotFileError

from conftest import ROBOTS, TESTS

DELTA = ROBOTS / "delta_3rr2rrr.toml"
RPR = ROBOTS / "planar_3rpr.toml"
FILES = sorted(ROBOTS.glob("*.toml")) + sorted((TESTS / "robots_ok").glob("*.toml"))
#: A standalone NaN or inf in printed output ("info" and "inference" are words, not numbers).
NONFINITE = re.compile(r"(?<![\w.])[-+]?(nan|inf|infinity)(?![\w])", re.I)


# ====================================================================== helpers
def run(*argv) -> tuple[int, str, str]:
    """``pkm ARGV`` in this process: exit status (argparse's SystemExit included), stdout, stderr."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main([str(a) for a in argv])
        except SystemExit as exc:   # argparse: usage errors (2), --help/--version (0)
            code = exc.code
    return code, out.getvalue(), err.getvalue()


def check_run(argv, *, ok: bool | None = None) -> tuple[int, str, str]:
    """Run ``argv`` and check issue 19's rules: exit 0 with finite output, or exit 2 with exactly one
    error line, never a traceback or an 'internal error'. ``ok``: the status expected (None: either)."""
    code, out, err = run(*argv)
    lines = [l for l in err.splitlines() if l.strip() and "%|" not in l   # tqdm bars are not errors,
             and not l.startswith("pkm: compiling kernels (first run only")  # nor the compile message,
             and not l.startswith("pkm: warning: ")]                          # nor a warning
    assert "Traceback" not in err and "internal error" not in err, (argv, err[-2000:])
    assert code in (0, 2), (argv, code, err[-2000:])
    if ok is not None:
        assert (code == 0) == ok, (argv, code, err[-2000:])
    if code == 2:   # one line: pkm's 'pkm: error: …' or a usage error 'pkm ik: error: …'
        assert len(lines) == 1 and re.match(r"pkm( [\w-]+)?: error: ", lines[0]), (argv, lines)
    else:
        assert not NONFINITE.search(out), (argv, out[:2000])
    return code, out, err


def assert_finite_csv(path):
    """Every number in the CSV at ``path`` is finite (empty cells allowed, NaN/inf never)."""
    import csv

    with open(path, newline="") as fh:
        rows = list(csv.reader(fh))
    assert len(rows) >= 2, rows
    for row in rows[1:]:
        for cell in row:
            assert not NONFINITE.fullmatch(cell.strip()), (path, row)


def one_line_pkm_error(exc_info, kind=PkmError):
    assert isinstance(exc_info.value, kind), repr(exc_info.value)
    assert "\n" not in str(exc_info.value) and str(exc_info.value), repr(exc_info.value)


# ====================================================================== 1. robot files, mutated
def _paths(obj, path=()):
    """Every key path of a parsed TOML document (tables, arrays and leaves), depth first."""
    items = obj.items() if isinstance(obj, dict) else enumerate(obj) if isinstance(obj, list) else ()
    for k, v in items:
        yield path + (k,), v
        yield from _paths(v, path + (k,))


def _set(data, path, value=None, delete=False):
    for k in path[:-1]:
        data = data[k]
    if delete:
        del data[path[-1]]
    else:
        data[path[-1]] = value


#: What replaces a number: non-finite, huge, tiny, denormal, zero, negative, the wrong types.
NUMBERS = [math.nan, math.inf, -math.inf, 1e308, -1e308, 1e-300, 5e-324, 0, -1.0, "abc", [], {}, True]
#: What replaces a string, an array or a table.
OTHERS = [0, 1e308, math.nan, "", "abc", [], [1, 2], {}, True]


def _parse_outcome(data, source):
    """Parse ``data`` as the robot file ``source``: None if it loads (its numbers then all finite),
    else the one-line RobotFileError/PkmError; anything else fails the test."""
    try:
        spec = parse_spec(data, path=source)
        spec.check_actuation()
        from pkm.description.freedom import check_task_mobility

        check_task_mobility(spec)
        bodies, joints = spec.expanded()
    except PkmError as exc:
        assert "\n" not in str(exc) and str(exc).startswith(f"{source}: "), str(exc)
        return exc
    values = [spec.gravity] + [np.r_[b.mass, b.com, b.inertia.ravel()] for b in bodies]
    values += [np.r_[np.ravel(j.axes), np.ravel(getattr(j, "point", 0.0))] for j in joints]
    assert all(np.all(np.isfinite(v)) for v in values), source
    assert all(b.mass > 0 for b in bodies), source
    return None


#: Most mutations per file (a deterministic spread over its keys), so that the battery stays fast:
#: a parse and mobility check costs 2-35 ms. The Delta gets every deletion and 700 of its ~1500
#: value mutations (every key, each replacement in turn).
CAP = 90
DELTA_CAP = 700


def _spread(cases, cap):
    """At most ``cap`` of ``cases``, evenly spread over the list (first and last included)."""
    if len(cases) <= cap:
        return cases
    return [cases[round(k * (len(cases) - 1) / (cap - 1))] for k in range(cap)]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_key_deleted(path):
    """Each key of the file deleted in turn (a table, or a key of a table or of an array's table)."""
    base = tomllib.loads(path.read_text())
    keys = [key for key, _ in _paths(base) if not isinstance(key[-1], int)]   # array elements: below
    errors = 0
    for key in (keys if path == DELTA else _spread(keys, CAP)):
        data = copy.deepcopy(base)
        _set(data, key, delete=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            errors += _parse_outcome(data, path) is not None
    assert errors > 0


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_value_replaced(path):
    """Each number replaced by one of :data:`NUMBERS`, each string/array/table by one of
    :data:`OTHERS` (the Delta: each key by each, spread over :data:`DELTA_CAP` cases; the other files:
    one replacement per key in turn, spread over :data:`CAP`)."""
    base = tomllib.loads(path.read_text())
    cases = []
    for i, (key, value) in enumerate(_paths(base)):
        variants = NUMBERS if isinstance(value, (int, float)) and not isinstance(value, bool) else OTHERS
        cases += [(key, v) for v in variants] if path == DELTA else [(key, variants[i % len(variants)])]
    for key, new in _spread(cases, DELTA_CAP if path == DELTA else CAP):
        data = copy.deepcopy(base)
        _set(data, key, new)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            _parse_outcome(data, path)
    assert len(cases) > 20


def _toml(data) -> str:
    """``data`` (a parsed robot file) as TOML text (enough of TOML for robot files: tables, arrays of
    tables, inline tables, numbers including nan/inf, strings, booleans)."""
    def value(v):
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, float) and not math.isfinite(v):
            return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")
        if isinstance(v, (int, float)):
            return repr(v)
        if isinstance(v, str):
            return '"' + v.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
        if isinstance(v, list):
            return "[" + ", ".join(value(x) for x in v) + "]"
        return "{ " + ", ".join(f'"{k}" = {value(x)}' for k, x in v.items()) + " }"

    def tables(v):
        return isinstance(v, list) and v and all(isinstance(x, dict) for x in v)

    lines = []

    def table(prefix, t):
        lines.extend(f'"{k}" = {value(v)}' for k, v in t.items() if not (isinstance(v, dict) or tables(v)))
        for k, v in t.items():
            name = f'{prefix}."{k}"' if prefix else f'"{k}"'
            if isinstance(v, dict):
                lines.append(f"[{name}]")
                table(name, v)
            elif tables(v):
                for x in v:
                    lines.append(f"[[{name}]]")
                    lines.extend(f'"{kk}" = {value(vv)}' for kk, vv in x.items())

    table("", data)
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("path, count", [(DELTA, 8), (ROBOTS / "wrist_3rrr.toml", 6)], ids=["delta", "wrist"])
def test_loadable_mutations_through_the_commands(tmp_path, path, count):
    """Mutated files that still load (a tiny mass, a huge but finite gravity, a mount turned by 0°)
    run through pkm info, eom, show and inverse-dynamics: a result without NaN/inf, or one error
    line. (The wrist with a mount frame turned by 0° printed 'condition number inf'.)"""
    base = tomllib.loads(path.read_text())
    assert tomllib.loads(_toml(base)) == base
    loadable = []
    for i, (key, v) in enumerate(_paths(base)):
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            for new in (1e-300, 1e300, 0, -1.0):
                data = copy.deepcopy(base)
                _set(data, key, new)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", RuntimeWarning)
                    if _parse_outcome(data, path) is None:
                        loadable.append((key, new, data))
    assert len(loadable) > count
    robot = pkm.load(path)
    x = [repr(float(v)) for v in robot.x_ref]
    for k, (key, new, data) in enumerate(_spread(loadable, count)):
        f = tmp_path / f"m{k}.toml"
        f.write_text(_toml(data))
        check_run(["info", f])
        check_run(["eom", f, "--at", *x])
        check_run(["show", f, "--out", tmp_path / "m.png"])
        if path == DELTA:
            end = [repr(float(v) + 0.01) for v in robot.x_ref]
            check_run(["inverse-dynamics", f, "--trajectory", "line", "--end", *end, "--duration", 0.2, "--dt", 0.05,
                       "--out", tmp_path / "m.csv"])
    if (tmp_path / "m.csv").exists():
        assert_finite_csv(tmp_path / "m.csv")
    wrist = copy.deepcopy(base)
    if path != DELTA:
        wrist["limb"]["mounts"][1]["frame"]["angle_deg"] = 0
        f = tmp_path / "turned.toml"
        f.write_text(_toml(wrist))
        assert "condition number infinite (exactly singular)" in check_run(["info", f], ok=True)[1]


def test_regressions_found_by_the_mutations(tmp_path):
    """The corpus's finds, by name: an inertia entry of 1e308 (LinAlgError, or inf/NaN inertias),
    a trajectory whose duration/dt overflows (OverflowError), a point at 1e308 m (NaN in pkm info)."""
    hexapod = tomllib.loads((ROBOTS / "hexapod_6ups.toml").read_text())
    for k in range(6):
        for v in (1e308, -1e308):
            data = copy.deepcopy(hexapod)
            data["limb"]["bodies"][0]["inertia"][k] = v
            exc = _parse_outcome(data, ROBOTS / "hexapod_6ups.toml")
            assert isinstance(exc, RobotFileError) and ".inertia: " in str(exc), (k, v, exc)
    delta = tomllib.loads(DELTA.read_text())
    for key, v in (("duration", 1e308), ("dt", 5e-324)):
        data = copy.deepcopy(delta)
        data["trajectory"][key] = v
        assert "too many samples (the ratio overflows)" in str(_parse_outcome(data, DELTA))
    data = copy.deepcopy(delta)
    data["limb"]["joints"][0]["point"][1] = 1e300
    assert "m is out of range (lengths up to 1e+06 m" in str(_parse_outcome(data, DELTA))


# ====================================================================== 2. robot files, garbage
DELTA_TEXT = DELTA.read_text()
JOINT_2 = 'name = "2"\ntype = "R"\nparent = "arm"\nchild = "upper_link"'


def _garbage(tmp_path):
    """(name, path) of broken robot files; each must give one RobotFileError line."""
    files = {
        "empty": b"",
        "whitespace": b"   \n\n\t\n",
        "binary": bytes(range(256)) * 4,
        "nul": b'name = "x"\n\x00\x01\x02',
        "not_utf8": b'name = "\xff\xfe robot"\n',
        "utf16": DELTA_TEXT[:200].encode("utf-16"),
        "png": b"\x89PNG\r\n\x1a\n" + b"\x00" * 64,
        "deep_arrays": ("x = " + "[" * 50_000 + "]" * 50_000 + "\n").encode(),
        "deep_tables": ("x = " + "{a = " * 5_000 + "1" + "}" * 5_000 + "\n").encode(),
        "syntax": b"name = \n[[[",
        "json": b'{"name": "delta"}',
        "self_joint": DELTA_TEXT.replace(JOINT_2, 'name = "2"\ntype = "R"\nparent = "arm"\nchild = "arm"').encode(),
        "unknown_child": DELTA_TEXT.replace(JOINT_2, 'name = "2"\ntype = "R"\nparent = "arm"\nchild = "nobody"').encode(),
        "duplicate_joint": DELTA_TEXT.replace(JOINT_2, 'name = "1"\ntype = "R"\nparent = "arm"\nchild = "upper_link"').encode(),
        "zero_axis": DELTA_TEXT.replace("axis = [0, -1, 0]", "axis = [0, 0, 0]", 1).encode(),
        "nan_axis": DELTA_TEXT.replace("axis = [0, -1, 0]", "axis = [nan, 0, 0]", 1).encode(),
        "string_axis": DELTA_TEXT.replace("axis = [0, -1, 0]", 'axis = "up"', 1).encode(),
        "unknown_type": DELTA_TEXT.replace('type = "R"', 'type = "Q"', 1).encode(),
        "gravity_nan": DELTA_TEXT.replace("gravity = [0, 0, -9.81]", "gravity = [nan, 0, -9.81]").encode(),
        "units_bad": DELTA_TEXT.replace('units = "mm"', 'units = "furlong"').encode(),
        "parameter_self": DELTA_TEXT.replace("a = 250 ", 'a = "a + 1" ', 1).encode(),
        "parameter_nan": DELTA_TEXT.replace("a = 250 ", "a = nan ", 1).encode(),
        "parameter_div0": DELTA_TEXT.replace("a = 250 ", 'a = "1 / 0" ', 1).encode(),
        "parameter_pow": DELTA_TEXT.replace("a = 250 ", 'a = "10 ** 10 ** 10" ', 1).encode(),
        "parameter_code": DELTA_TEXT.replace("a = 250 ", "a = \"__import__('os')\" ", 1).encode(),
    }
    for name, old in (("units_bad", 'units = "mm"'), ("parameter_self", "a = 250 ")):
        assert old in DELTA_TEXT, name
    out = []
    for name, data in files.items():
        p = tmp_path / f"{name}.toml"
        p.write_bytes(data)
        out.append((name, p))
    out += [("directory", tmp_path), ("missing", tmp_path / "missing.toml"), ("dev_null", "/dev/null")]
    return out


def test_garbage_robot_files(tmp_path):
    """Every broken file: one RobotFileError line from pkm.load, one 'pkm: error:' line (exit 2) from
    each command; a byte-order mark before a good file is skipped."""
    cases = _garbage(tmp_path)
    png = tmp_path / "x.png"
    commands = (["info"], ["ik", "--at", 0, 0, -0.9], ["eom", "--at", 0, 0, -0.9], ["inverse-dynamics"],
                ["fk", "--q", 0, 0, 0], ["show", "--out", png], ["reactions"], ["workspace"],
                ["simulate", "--torques", "zero"], ["animate", "--out", tmp_path / "x.gif"], ["compile"],
                ["sweep", "--param", "a=1", "--workers", 1, "--no-progress"])
    for k, (name, path) in enumerate(cases):
        with pytest.raises(PkmError) as info:
            pkm.load(path)
        one_line_pkm_error(info)
        assert str(info.value).startswith(f"{path}"), (name, str(info.value))
        for command in (commands if k % 4 == 0 else commands[k % 3::3]):   # every command, spread over the files
            argv = [command[0], path, *command[1:]]
            code, _, err = check_run(argv, ok=False)
            assert str(path) in err, (name, argv, err)
    assert not png.exists()
    bom = tmp_path / "bom.toml"
    bom.write_bytes(b"\xef\xbb\xbf" + RPR.read_bytes())
    assert pkm.load(bom).name == pkm.load(RPR).name


def test_unreadable_robot_file(tmp_path, monkeypatch):
    """A file the user may not read (root reads anything, so the open is made to fail)."""
    import builtins

    real_open = builtins.open
    path = tmp_path / "secret.toml"
    path.write_text(DELTA_TEXT)

    def deny(file, *args, **kwargs):
        if str(file) == str(path):
            raise PermissionError(13, "Permission denied", str(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", deny)
    with pytest.raises(RobotFileError, match="cannot read file: Permission denied"):
        load_spec(path)
    check_run(["info", path], ok=False)


# ====================================================================== 3. the command line
def _csvs(tmp_path):
    rows = "t,x,y,z,xd,yd,zd,xdd,ydd,zdd\n"
    files = {
        "nan": rows + "0,0,0,-0.9,0,0,0,0,0,0\n0.1,nan,0,-0.9,0,0,0,0,0,0\n",
        "inf_cell": rows + "0,0,0,-0.9,0,0,0,0,0,0\n0.1,inf,0,-0.9,0,0,0,0,0,0\n",
        "ragged": rows + "0,0,0,-0.9,0,0,0,0,0,0\n0.1,0,0\n",
        "headers_only": rows,
        "empty": "",
        "non_monotonic": "t,x,y,z\n0,0,0,-0.9\n0.2,0,0,-0.9\n0.1,0,0,-0.9\n0.3,0,0,-0.9\n",
        "repeated_t": "t,x,y,z\n0,0,0,-0.9\n0.1,0,0,-0.9\n0.1,0,0,-0.9\n0.3,0,0,-0.9\n",
        "one_row": "t,x,y,z\n0,0,0,-0.9\n",
        "words": "t,x,y,z\n0,a,b,c\n0.1,0,0,-0.9\n",
        "wrong_columns": "t,q,w,e\n0,0,0,-0.9\n0.1,0,0,-0.9\n",
        "duplicate_column": "t,x,x,z\n0,0,0,-0.9\n0.1,0,0,-0.9\n",
        "binary": b"\x00\xff\xfe\x89PNG\r\n",
        "huge_values": "t,x,y,z\n0,0,0,-0.9\n0.1,1e308,0,-0.9\n0.2,0,0,-0.9\n0.3,0,0,-0.9\n",
        "huge_times": "t,x,y,z\n0,0,0,-0.9\n1e300,0,0,-0.9\n2e300,0,0,-0.9\n3e300,0,0,-0.9\n",
        "unreachable": "t,x,y,z\n0,0,0,-0.9\n0.1,5,0,-0.9\n0.2,0,0,-0.9\n0.3,0,0,-0.9\n",
    }
    out = {}
    for name, text in files.items():
        p = tmp_path / f"{name}.csv"
        p.write_bytes(text if isinstance(text, bytes) else text.encode())
        out[name] = p
    return out


def _bad_command_lines(tmp_path):
    """(argv, exit status expected: False for an error, None for either) of the corpus."""
    csvs = _csvs(tmp_path)
    png, gif = tmp_path / "o.png", tmp_path / "o.gif"
    cases = []

    def bad(*argv, ok=False):
        cases.append((list(argv), ok))

    D = DELTA
    for v in ["0", "-0.01", "nan", "inf", "-inf", "1e-320", "-1e-3", "1e308", "abc", ""]:
        odd = None if v in ("1e308", "1e-320") else False   # tiny or huge but finite: may be valid
        bad("inverse-dynamics", D, "--dt", v, ok=odd)
        bad("inverse-dynamics", D, "--trajectory", "sine", "--amplitude", 0.05, 0, 0, "--duration", v, ok=odd)
        bad("inverse-dynamics", D, "--trajectory", "sine", "--amplitude", 0.05, 0, 0, "--period", v, "--duration", 1, ok=odd)
        bad("inverse-dynamics", D, "--trajectory", "line", "--end", 0.1, 0, -0.9, "--duration", v, ok=odd)
        bad("inverse-dynamics", D, "--trajectory", "pick-place", "--cycle-time", v, ok=odd)
        bad("simulate", D, "--torques", "hold", "--duration", v, ok=odd)
        bad("simulate", D, "--torques", "hold", "--duration", 0.01, "--method", "RK4", "--step", v, ok=odd)
        bad("simulate", D, "--torques", "computed-torque", "--kp", v, ok=odd)
        bad("ik", D, "--at", 0, 0, -0.9, "--singularity-threshold", v, ok=None if v == "inf" else odd)
        bad("sweep", D, "--param", "a=250", "--cycle-time", v, "--workers", 1, "--no-progress", ok=odd)
        bad("sweep", D, "--param", "a=250", "--trajectory", "pick-place", "--dt", v, "--workers", 1, "--no-progress", ok=odd)
        bad("sweep", D, "--param", f"a=1:{v}:3", "--workers", 1, "--no-progress", ok=None)   # points may fail
        bad("sweep", D, "--param", f"a=1:2:{v}", "--workers", 1, ok=odd)
        bad("workspace", D, "--resolution", v, ok=odd)
        bad("animate", D, "--fps", v, "--out", gif, "--frames", 2, ok=odd)
        bad("animate", D, "--frames", v, "--out", gif, ok=odd)
        bad("reactions", D, "--samples", v, ok=odd)
    for v in ["nan", "inf", "-inf", "1e308", "-1e308", "abc"]:
        odd = None if "e308" in v else False
        bad("ik", D, "--at", 0, 0, v)
        bad("eom", D, "--at", 0, 0, v)
        bad("eom", D, "--at", 0, 0, -0.9, "--velocity", 0, 0, v)
        bad("fk", D, "--q", 0, 0, v)
        bad("show", D, "--at", 0, 0, v, "--out", png)
        bad("simulate", D, "--torques", "hold", "--duration", 0.01, "--x0", 0, 0, v)
        bad("simulate", D, "--torques", "hold", "--duration", 0.01, "--xd0", 0, 0, v)
        bad("inverse-dynamics", D, "--wrench", 0, 0, 0, 0, 0, v, "--dt", 0.5, ok=odd)
        bad("inverse-dynamics", D, "--payload", v, "--dt", 0.5)
        bad("inverse-dynamics", D, "--trajectory", "pick-place", "--lift", v)
        bad("inverse-dynamics", D, "--trajectory", "pick-place", "--travel", v)
        bad("workspace", D, "--range", f"x=-0.1:{v}", "--resolution", 3, ok=odd)
        bad("workspace", D, "--slice", f"y={v}", "--resolution", 3, ok=odd)
        bad("sweep", D, "--param", f"a={v}", "--workers", 1, ok=odd)
        bad("sweep", D, "--param", f"mass:platform={v}", "--workers", 1, ok=odd)
    for v in ["0", "-1", "1e-320"]:
        bad("inverse-dynamics", D, "--trajectory", "pick-place", "--lift", v, "--cycle-time", v)
        bad("simulate", D, "--torques", "hold", "--duration", 0.01, "--rtol", v)
        bad("inverse-dynamics", D, "--payload", "-1", "--dt", 0.5)
    for n in [0, 1, 2, 4, 7]:
        bad("ik", D, "--at", *([0] * n))
        bad("eom", D, "--at", *([0] * n))
        bad("fk", D, "--q", *([0] * n))
        bad("show", D, "--at", *([0] * n), "--out", png)
        bad("eom", D, "--at", 0, 0, -0.9, "--velocity", *([0] * n))
        bad("simulate", D, "--torques", "hold", "--x0", *([0] * n))
    bad("ik", D, "--at", 5, 5, 5)
    bad("ik", D, "--at", 0, 0, -1e300)
    bad("eom", D, "--at", 5, 5, 5)
    bad("eom", D, "--at", 0, 0, -0.9, "--velocity", 0, 0, 1e300)
    bad("fk", D, "--q", 1e300, 0, 0)
    bad("show", D, "--at", 5, 5, 5, "--out", png)
    bad("inverse-dynamics", D, "--trajectory", "line", "--end", 5, 5, 5)
    bad("inverse-dynamics", D, "--trajectory", "sine", "--amplitude", 0.05, 0, 0, "--period", "1e-320",
        "--duration", 1, "--dt", 0.5)
    bad("inverse-dynamics", D, "--trajectory", "pick-place", "--lift", "1e-320", "--dt", 0.05)
    bad("inverse-dynamics", D, "--trajectory", "pick-place", "--lift", "1e300", "--dt", 0.05)
    bad("simulate", D, "--torques", "hold", "--duration", 0.01, "--xd0", 0, 0, "1e300")
    bad("simulate", D, "--torques", "computed-torque", "--kp", "1e300", "--dt", 0.1)
    bad("simulate", D, "--torques", "bogus")
    bad("simulate", D, "--torques", tmp_path)
    bad("simulate", D, "--torques", tmp_path / "missing.csv")
    bad("simulate", D, "--method", "RK4", "--torques", "hold")
    for name, p in csvs.items():
        bad("inverse-dynamics", D, "--trajectory", "file", "--file", p)
        bad("simulate", D, "--torques", p, "--duration", 0.01)
        bad("reactions", D, "--trajectory", "file", "--file", p)
    for p in (tmp_path, tmp_path / "missing.csv", "/dev/null"):
        bad("inverse-dynamics", D, "--trajectory", "file", "--file", p)
    for opt in (["--trajectory", "file"], ["--trajectory", "line"], ["--lift", 0.1],
                ["--trajectory", "line", "--end", 0, 0, -0.9, "--amplitude", 1, 1, 1], ["--travel", 1, 2],
                ["--trajectory", "nope"]):
        bad("inverse-dynamics", D, *opt)
    for cmd in ["info", "ik", "inverse-dynamics", "eom", "simulate", "sweep", "show", "animate", "reactions",
                "workspace", "fk", "compile"]:
        bad(cmd, D, "--bogus")
        bad(cmd, "--bogus-first", D)
        if cmd != "compile":
            bad(cmd)
            bad(cmd, "")
    for argv in (["--bogus"], ["nosuch"], ["info", D, D], ["ik", D, "--at"], ["eom", D],
                 ["ik", D, "--at", 0, 0, -0.9, "--json", "--degrees", "--degrees", "x"],
                 ["sweep", D, "--param", "nosuch=1,2", "--workers", 1, "--no-progress"],
                 ["sweep", D, "--param", "=1", "--workers", 1], ["sweep", D, "--param", "a=", "--workers", 1],
                 ["sweep", D, "--param", "mass:nobody=1", "--workers", 1, "--no-progress"],
                 ["sweep", D, "--param", "a=250", "--param", "a=260", "--workers", 1],
                 ["sweep", D, "--param", "a=250", "--workers", 0], ["sweep", D, "--param", "a=250", "--workers", -1],
                 ["sweep", D, "--param", "a=250", "--workers", 2, "--scheduler", "tcp://127.0.0.1:1"],
                 ["sweep", D, "--param", "a=250", "--scheduler", "bogus"],
                 ["sweep", D, "--param", "a=1:2:1000000000000", "--workers", 1],   # MemoryError (7 TiB)
                 ["sweep", D, "--param", "a=1:2:1000", "--param", "c=1:2:1000", "--workers", 1],   # ran for days
                 ["workspace", D, "--range", "x=1:0"], ["workspace", D, "--range", "q=0:1", "--resolution", 3],
                 ["workspace", D, "--slice", "q=0", "--resolution", 3],
                 ["workspace", D, "--range", "x=0:1", "--slice", "x=0", "--resolution", 3],
                 ["workspace", D, "--resolution", "3,3,3,3"], ["workspace", D, "--resolution", "1"],
                 ["workspace", D, "--resolution", "100000"],
                 ["workspace", D, "--range", "x=0:1", "--resolution", 3, "--plot", png],
                 ["animate", D, "--out", tmp_path / "o.png"], ["animate", D, "--out", tmp_path / "o"],
                 ["show", D, "--out", tmp_path / "o.csv"], ["show", D, "--out", tmp_path / "o"],
                 ["inverse-dynamics", D, "--plot", tmp_path / "o.csv"],
                 ["inverse-dynamics", D, "--out", tmp_path / "o.csv", "--plot", tmp_path / "o.csv"],
                 ["compile", tmp_path / "missing.toml"]):
        bad(*argv)
    # output paths that cannot be written: a missing directory, a directory, below a file
    (tmp_path / "file").write_text("x")
    for out in [tmp_path / "missing" / "o.csv", tmp_path, tmp_path / "file" / "o.csv", ""]:
        bad("inverse-dynamics", D, "--dt", 0.5, "--out", out)
        bad("inverse-dynamics", D, "--dt", 0.5, "--plot", out)
        bad("simulate", D, "--torques", "hold", "--duration", 0.01, "--out", out)
        bad("show", D, "--out", out)
        bad("animate", D, "--out", out)
        bad("reactions", D, "--samples", 2, "--out", out)
        bad("workspace", D, "--resolution", 3, "--out", out)
        bad("sweep", D, "--param", "a=250", "--workers", 1, "--no-progress", "--out", out)
    return cases


def test_bad_command_lines(tmp_path):
    """~500 bad command lines: each one error line, exit 2; nothing written."""
    cases = _bad_command_lines(tmp_path)
    assert len(cases) > 400
    before = sorted(p.name for p in tmp_path.rglob("*"))
    for argv, ok in cases:
        check_run(argv, ok=ok)
    assert sorted(p.name for p in tmp_path.rglob("*")) == before   # no output, no temporary left


@pytest.mark.parametrize("argv", [
    ["ik", DELTA, "--at", 0, "1e-3", "-9e-1"],                   # argparse took -9e-1 for an option
    ["ik", RPR, "--at", "-5", 0, 0, "--degrees"],
    ["eom", RPR, "--at", 5, 0, 0, "--degrees", "--velocity", 30, 0, 0],
    ["inverse-dynamics", DELTA, "--dt", 0.5, "--payload", "1e-320"],
    ["inverse-dynamics", DELTA, "--trajectory", "pick-place", "--travel", "1e-320", "--dt", 0.05],
    ["simulate", DELTA, "--torques", "zero", "--duration", 0.01, "--kp", "1e-320"],
    ["workspace", DELTA, "--range", "x=-0.1:0", "--resolution", 3],
    ["fk", DELTA, "--q", 100, 100, 100],
    ["info", DELTA],
    ["--version"],
])
def test_odd_but_valid_command_lines(argv):
    """Odd values that are valid: exit 0, and nothing NaN or inf printed."""
    check_run(argv, ok=True)


def test_eom_degrees_is_radians_scaled():
    """`pkm eom --degrees`: rotations in --at in deg and rotational rates in deg/s (issue 19), the
    same terms as the radian command (JSON stays SI)."""
    import json

    assert list(pkm.load(RPR).task.coordinate_names()) == ["rz", "x", "y"]
    deg = check_run(["eom", RPR, "--at", 5, 0.01, 0.02, "--velocity", 30, 0.1, 0, "--degrees", "--json"], ok=True)[1]
    rad = check_run(["eom", RPR, "--at", math.radians(5), 0.01, 0.02, "--velocity", math.radians(30), 0.1, 0,
                     "--json"], ok=True)[1]
    a, b = json.loads(deg), json.loads(rad)
    assert a["x"] == pytest.approx(b["x"], abs=1e-15) and a["velocity"] == pytest.approx(b["velocity"], abs=1e-15)
    for key in ("M_t", "C_t_V_t", "W_t_grav", "J_IK", "M_a"):
        np.testing.assert_allclose(a[key], b[key], rtol=1e-12, atol=1e-12)
    text = check_run(["eom", RPR, "--at", 5, 0.01, 0.02, "--degrees"], ok=True)[1]
    assert "rz = 5" in text and "rotations in deg" in text


# ====================================================================== 4. outputs: all or nothing
@pytest.mark.parametrize("command", [
    ["inverse-dynamics", DELTA, "--trajectory", "line", "--end", 5, 0, -0.9, "--duration", 1, "--dt", 0.5],
    ["reactions", DELTA, "--trajectory", "line", "--end", 5, 0, -0.9, "--duration", 1, "--dt", 0.5],
    ["simulate", DELTA, "--torques", "hold", "--duration", 0.01, "--x0", 5, 0, -0.9],
    ["sweep", DELTA, "--param", "nosuch=250", "--workers", 1, "--no-progress"],
    ["workspace", DELTA, "--slice", "q=1", "--resolution", 3],
])
def test_a_failing_run_keeps_existing_outputs(tmp_path, command):
    """A command that fails after its options were accepted (an unreachable motion, an overflowing
    one) leaves an existing --out and --plot as they were, and no temporary file."""
    out, plot = tmp_path / "old.csv", tmp_path / "old.png"
    out.write_text("old results\n")
    plot.write_bytes(b"old picture")
    check_run([*command, "--out", out, "--plot", plot], ok=False)
    assert out.read_text() == "old results\n" and plot.read_bytes() == b"old picture"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old.csv", "old.png"]


def test_sweep_with_failed_points_writes_no_nan(tmp_path):
    """A failed point's cells are empty, not 'nan'; each torque column carries its unit (issue 19)."""
    out = tmp_path / "s.csv"
    check_run(["sweep", DELTA, "--param", "a=250,-1", "--trajectory", "pick-place", "--dt", 0.05, "--workers", 1,
               "--no-progress", "--out", out], ok=True)
    assert_finite_csv(out)
    header = out.read_text().splitlines()[0].split(",")
    assert header[:3] == ["a", "trajectory", "status"] and header[-1] == "message"
    assert header[3:9] == [f"{k}_limb{i}/1 [N·m]" for k in ("peak", "rms") for i in (1, 2, 3)]
    failed = out.read_text().splitlines()[2].split(",")
    assert failed[2] == "error" and failed[3:9] == [""] * 6


def test_outputs_through_links_and_special_files(tmp_path):
    """--out through a symbolic link replaces the link's target (the link stays); --out a FIFO (as
    /dev/stdout) is written directly: a temporary renamed onto it replaced the node itself (as
    root, `--out /dev/full` turned the device into a regular file)."""
    target, link = tmp_path / "real.csv", tmp_path / "link.csv"
    link.symlink_to(target)
    check_run(["inverse-dynamics", DELTA, "--dt", 0.5, "--out", link], ok=True)
    assert link.is_symlink() and target.read_text().startswith("t,x,y,z,xd,yd,zd,q_limb1/1 [rad]")
    assert_finite_csv(target)
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(open(fifo).read()), daemon=True)
    reader.start()
    check_run(["inverse-dynamics", DELTA, "--dt", 0.5, "--out", fifo], ok=True)
    reader.join(30)
    assert fifo.is_fifo() and got and got[0].startswith("t,x,y,z,xd,yd,zd,q_limb1/1 [rad]")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.csv", "pipe.csv", "real.csv"]


# ====================================================================== 5. the API
@pytest.fixture(scope="module")
def delta():
    return pkm.load(DELTA)


BAD_X = {"list_short": [0.0, 0.0], "int": 1, "nan": [np.nan, 0, -0.9], "inf": [np.inf, 0, -0.9],
         "complex": np.array([0, 0, -0.9 + 1j]), "empty": np.array([]), "empty2d": np.zeros((0, 3)),
         "0d": np.array(0.5), "str": "abc", "none": None, "object": np.array([object()] * 3),
         "wrong4": np.zeros(4), "3d": np.zeros((2, 2, 3)), "ragged": [[0, 0], [0]], "dict": {"a": 1}}


def _api_calls(r):
    x0, z = np.array([0.0, 0.0, -0.9]), np.zeros(3)
    X = np.repeat(x0[None], 3, axis=0)
    calls = []
    for k, v in BAD_X.items():
        calls += [(f"ik x={k}", lambda v=v: r.inverse_kinematics(v)),
                  (f"ik xd={k}", lambda v=v: r.inverse_kinematics(x0, v)),
                  (f"id x={k}", lambda v=v: r.inverse_dynamics(v, z, z)),
                  (f"id xdd={k}", lambda v=v: r.inverse_dynamics(x0, z, v)),
                  (f"id wrench={k}", lambda v=v: r.inverse_dynamics(x0, z, z, v)),
                  (f"id gravity={k}", lambda v=v: r.inverse_dynamics(x0, z, z, gravity=v)),
                  (f"id t={k}", lambda v=v: r.inverse_dynamics(X, 0 * X, 0 * X, t=v)),
                  (f"eom x={k}", lambda v=v: r.eom(v, z)),
                  (f"eom xd={k}", lambda v=v: r.eom(x0, v)),
                  (f"mass_matrix {k}", lambda v=v: r.mass_matrix(v)),
                  (f"fd x={k}", lambda v=v: r.forward_dynamics(v, z, z)),
                  (f"fd u={k}", lambda v=v: r.forward_dynamics(x0, z, v)),
                  (f"platform_pose {k}", lambda v=v: r.platform_pose(v)),
                  (f"continuation {k}", lambda v=v: r.continuation_poses(v)),
                  (f"show {k}", lambda v=v: pkm.plotting.show_robot(r, v)),
                  (f"start {k}", lambda v=v: r.inverse_kinematics(x0, start=v)),
                  (f"start per limb {k}", lambda v=v: r.inverse_kinematics(x0, start=[v, v, v]))]
    for v in [0, -1, math.nan, math.inf, "a", None, True, 2.5, 10**12, 1e300]:
        calls += [(f"ik tol={v!r}", lambda v=v: r.inverse_kinematics(x0, tol=v)),
                  (f"ik max_iter={v!r}", lambda v=v: r.inverse_kinematics([5.0, 5, 5], max_iter=v, tol=1e-300)),
                  (f"id threads={v!r}", lambda v=v: r.inverse_dynamics(x0, z, z, threads=v)),
                  (f"id simd={v!r}", lambda v=v: r.inverse_dynamics(x0, z, z, simd=v)),
                  (f"id branch={v!r}", lambda v=v: r.inverse_dynamics(x0, z, z, on_branch_change=v)),
                  (f"id out={v!r}", lambda v=v: r.inverse_dynamics(x0, z, z, out=v)),
                  (f"continuation steps={v!r}", lambda v=v: r.continuation_poses(x0, steps=v)),
                  (f"simulate dt={v!r}", lambda v=v: r.simulate("hold", (0.0, 0.002), method="RK4", dt=v)),
                  (f"simulate span={v!r}", lambda v=v: r.simulate("hold", (0.0, v), method="RK4", dt=1e-3))]
        if v not in (math.inf, 1e300):
            calls.append((f"ik threshold={v!r}", lambda v=v: r.inverse_kinematics(x0, singularity_threshold=v)))
    res = r.inverse_dynamics(X, 0 * X, 0 * X, t=np.arange(3) * 0.01)
    t = np.arange(3) * 0.01
    from pkm.plotting import animate, plot_actuators

    for v in [["R"], ["X", "R", "R"], "RRR", 3, ["P"] * 4, [1, 2, 3], [None] * 3]:
        calls.append((f"plot_actuators kinds={v!r}", lambda v=v: plot_actuators(res, t, kinds=v)))
    for v in [np.arange(2), None, "abc", [np.nan, 0, 1], np.arange(4)]:
        calls.append((f"plot_actuators t={v!r}", lambda v=v: plot_actuators(res, v)))
    calls += [("plot_actuators result=None", lambda: plot_actuators(None, t)),
              ("plot_actuators path=.xyz", lambda: plot_actuators(res, t, path="never_written.xyz"))]
    for v in [0, -1, math.nan, math.inf, 1e-320, "a", None, 10**6]:
        calls += [(f"animate fps={v!r}", lambda v=v: animate(r, X, t, fps=v, frames=2)),
                  (f"animate frames={v!r}", lambda v=v: animate(r, X, t, frames=v))]
    calls += [("animate t", lambda: animate(r, X, t[:2], frames=2)),
              ("animate x", lambda: animate(r, np.zeros((3, 2)), t, frames=2)),
              ("animate tau", lambda: animate(r, X, t, tau=np.zeros((2, 2)), frames=2))]
    path = str(DELTA)
    calls += [("sweep no values", lambda: pkm.sweep(path, {"a": []}, progress=False, workers=1)),
              ("sweep nan", lambda: pkm.sweep(path, {"a": [np.nan]}, progress=False, workers=1)),
              ("sweep unknown", lambda: pkm.sweep(path, {"zz": [1]}, progress=False, workers=1)),
              ("sweep trajectory", lambda: pkm.sweep(path, {"a": [250]}, [{"type": "nope"}], progress=False,
                                                     workers=1)),
              ("sweep workers", lambda: pkm.sweep(path, {"a": [250]}, progress=False, workers=0)),
              ("workspace resolution 0", lambda: pkm.workspace(r, resolution=0)),
              ("workspace resolution huge", lambda: pkm.workspace(r, resolution=10**6)),
              ("workspace range reversed", lambda: pkm.workspace(r, {"x": (1, 0)}, resolution=3)),
              ("workspace range nan", lambda: pkm.workspace(r, {"x": (np.nan, 0)}, resolution=3)),
              ("workspace unknown", lambda: pkm.workspace(r, {"q": (0, 1)}, resolution=3)),
              ("workspace fixed nan", lambda: pkm.workspace(r, fixed={"y": np.nan}, resolution=3)),
              ("load parameters str", lambda: pkm.load(path, parameters={"a": "x"})),
              ("load parameters nan", lambda: pkm.load(path, parameters={"a": math.nan})),
              ("load parameters unknown", lambda: pkm.load(path, parameters={"zz": 1}))]
    from pkm.trajectory import from_spec, line, pick_place, read_csv, sine

    calls += [("sine nan", lambda: sine([0, 0, -0.9], [np.nan, 0, 0], 1, 1, 0.1)),
              ("sine period 1e-320", lambda: sine([0, 0, -0.9], [0.1, 0, 0], 1e-320, 1, 0.1)),
              ("line duration 1e-320", lambda: line([0, 0, -0.9], [0.1, 0, -0.9], 1e-320, 1e-321)),
              ("pick_place lift 1e-320", lambda: pick_place([0, 0, -0.9], 1e-320, 0.3, 1.0, 0.01)),
              ("pick_place lift 1e300", lambda: pick_place([0, 0, -0.9], 1e300, 0.3, 1.0, 0.01)),
              ("from_spec missing", lambda: from_spec({"type": "sine"}, ["x", "y", "z"])),
              ("read_csv missing", lambda: read_csv("/nonexistent.csv"))]
    return calls


def test_bad_api_arguments(delta):
    """Each bad argument: one line, a pkm error (InputError for an argument's shape, type or range,
    IKError/SingularityError where the numbers are valid but the pose is not), no hang, no NaN."""
    calls = _api_calls(delta)
    assert len(calls) > 300
    accepted = []
    for name, call in calls:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                result = call()
            except PkmError as exc:
                assert "\n" not in str(exc) and str(exc), (name, str(exc))
                continue
        accepted.append(name)   # a valid call after all (e.g. a list for an array): finite results only
        for attr in ("tau", "q_act", "xdd", "x", "M_t"):
            value = getattr(result, attr, None)
            if isinstance(value, np.ndarray) and value.dtype.kind == "f":
                assert np.all(np.isfinite(value)), (name, attr)
    # the accepted ones are valid calls: None for an optional argument (its default), a loose but
    # finite tolerance, more threads than segments, a span or step given as True (1) or 2.5
    assert set(accepted) == {
        "ik xd=none", "id wrench=none", "id gravity=none", "id t=none", "show none", "start none",
        "id threads=None", "id simd=None", "id out=None", "id simd=True", "simulate span=True", "ik tol=2.5",
        "simulate dt=2.5", "simulate span=2.5", "ik tol=1000000000000", "id threads=1000000000000",
        "simulate dt=1000000000000", "ik threshold=1000000000000", "ik tol=1e+300", "simulate dt=1e+300"}, accepted


def test_api_errors_are_input_errors_and_value_errors(delta):
    """The kind: pkm.InputError, a PkmError and a ValueError (the documented error of bad input)."""
    for call in (lambda: delta.inverse_kinematics([np.nan, 0, -0.9]), lambda: delta.eom(np.zeros((0, 3)), [0, 0, 0]),
                 lambda: delta.inverse_dynamics([0, 0, -0.9], [0, 0, 0], [0, 0, 0], threads=math.inf),
                 lambda: delta.inverse_kinematics([[0, 0], [0]]), lambda: delta.inverse_kinematics([0, 0, -0.9], start=1),
                 lambda: pkm.plotting.plot_actuators(delta.inverse_dynamics([0, 0, -0.9], [0, 0, 0], [0, 0, 0]), [0.0],
                                                     kinds=["X", "R", "R"])):
        with pytest.raises(InputError) as info:
            call()
        assert isinstance(info.value, ValueError) and isinstance(info.value, PkmError)
        one_line_pkm_error(info, InputError)
    with pytest.raises(InputError, match=r"max_iter must be an integer from 1 to 10000, got 1000000000000"):
        delta.inverse_kinematics([5.0, 5.0, 5.0], max_iter=10**12, tol=1e-300)   # hung in the kernel


# ====================================================================== 6. real processes
def test_no_traceback_or_hang_in_a_fresh_process(tmp_path):
    """A few cases in a fresh interpreter (as a user runs them), each with a timeout: a binary robot
    file, a negative exponent, an unreachable point, an overflowing velocity, an internal error."""
    garbage = tmp_path / "garbage.toml"
    garbage.write_bytes(bytes(range(256)))
    cases = [(["info", garbage], 2), (["ik", DELTA, "--at", 0, 0, "-1e300"], 2),
             (["ik", DELTA, "--at", 0, "1e-3", "-9e-1", "--json"], 0)]
    for argv, status in cases:
        proc = subprocess.run([sys.executable, "-m", "pkm", *map(str, argv)], capture_output=True, text=True,
                              timeout=120, env={**os.environ, "PYTHONPATH": str(TESTS.parent)})
        assert proc.returncode == status, (argv, proc.stderr[-2000:])
        assert "Traceback" not in proc.stderr and not NONFINITE.search(proc.stdout), (argv, proc.stderr[-2000:])
        if status == 2:
            lines = [l for l in proc.stderr.strip().splitlines() if not l.startswith("pkm: compiling kernels (")]
            assert len(lines) == 1 and lines[0].startswith("pkm: error: "), proc.stderr


def test_an_unexpected_exception_is_one_line(monkeypatch, capsys):
    """A bug (any exception that is not a PkmError or OSError) prints one 'internal error' line and
    exits 1 instead of a traceback; PKM_TRACEBACK=1 re-raises it."""
    import pkm.cli.info

    def broken(path):
        raise ZeroDivisionError("division by zero\nsecond line")

    monkeypatch.setattr(pkm.cli.info, "robot_info", broken)
    code, _, err = run("info", DELTA)
    assert code == 1 and err.count("\n") == 1
    assert err.startswith("pkm: internal error: ZeroDivisionError: division by zero second line (a bug in pkm")
    monkeypatch.setenv("PKM_TRACEBACK", "1")
    with pytest.raises(ZeroDivisionError):
        main(["info", str(DELTA)])
