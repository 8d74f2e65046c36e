"""The README's two fresh-machine commands (install + main job, install + tests) work on a stock
Debian/Ubuntu Python: each creates and activates a virtual environment before it calls ``python``
or ``pip`` (such a Python refuses ``pip install`` outside one and has only ``python3``), and
``.ci/run`` — what CI runs — runs the README's test command exactly as written."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VENV = "python3 -m venv .venv && . .venv/bin/activate && "


def quick_start_commands() -> list[str]:
    """The bash code blocks of the README's "Quick start" section, in order."""
    text = (ROOT / "README.md").read_text()
    section = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    return [block.strip() for block in re.findall(r"```bash\n(.*?)```", section, flags=re.S)]


def ci_command() -> str:
    """The command line of .ci/run after its "the README's test command" marker."""
    lines = (ROOT / ".ci" / "run").read_text().splitlines()
    marker = next(i for i, l in enumerate(lines) if "the README's test command (keep" in l)
    body = [l for l in lines[marker + 1:] if l.strip() and not l.lstrip().startswith("#")]
    assert len(body) == 1, body
    return body[0].strip()


def steps(command: str) -> list[list[str]]:
    return [shlex.split(part) for part in command.split("&&")]


def test_two_commands_each_in_a_venv():
    commands = quick_start_commands()
    assert len(commands) == 2, commands
    for command in commands:
        assert "\n" not in command, command          # one line to paste
        assert command.startswith(VENV), command     # the venv before any python/pip
        for argv in steps(command)[2:]:
            # after activation: `python` is the venv's; no --user / --break-system-packages hacks
            assert argv[0] in ("python", "pkm"), argv
            assert "--user" not in argv and "--break-system-packages" not in argv, argv
        first = steps(command)[0]
        assert first[:3] == ["python3", "-m", "venv"], first   # a stock Debian has python3, not python


def test_main_job_command_runs_a_shipped_robot():
    install, main_job = steps(quick_start_commands()[0])[2:]
    assert install == ["python", "-m", "pip", "install", "-e", "."]
    assert main_job[:2] == ["pkm", "inverse-dynamics"] and (ROOT / main_job[2]).is_file(), main_job


def test_ci_runs_the_readme_test_command():
    test_command = quick_start_commands()[1]
    assert steps(test_command)[2:] == [["python", "-m", "pip", "install", "-e", ".[test,export,view,plan]"],
                                       ["python", "-m", "pytest"]]   # export: Pinocchio and MuJoCo; view: the viewer's bundle
    assert ci_command() == test_command


def test_every_timing_in_the_readme_names_its_cpu_and_how_to_rerun_it():
    """Issue 27, item 5: a figure measured on one machine is not the user's; every paragraph or
    status row of the README with a timing (µs, a ratio to a peer, a first-run or command time)
    names the CPU it was measured on and the command that reruns it."""
    text = (ROOT / "README.md").read_text()
    blocks = []
    for para in re.split(r"\n\s*\n", text):
        rows = [line for line in para.splitlines() if line.startswith("|")]
        blocks += rows if rows else [para]
    timing = re.compile(r"\d× one|× the paper|\d+(\.\d+)? µs|first run \d|takes (about )?\d+(\.\d+)?(–\d+(\.\d+)?)? s\b"
                        r"|about \d+(\.\d+)? s\b|\d+(\.\d+)? s on a")
    timed = [b for b in blocks if timing.search(b)]
    assert len(timed) >= 5  # the status rows with speed figures, the start-up paragraph, the workspace example
    for block in timed:
        assert re.search(r"EPYC|Xeon", block), block[:120]
        assert "benchmarks/" in block or "`pkm " in block, block[:120]
