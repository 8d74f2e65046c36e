"""Shared helpers of the benchmark scripts: machine facts, best-of timing, tables, JSON results."""

from __future__ import annotations

import json
import os
import platform
import re
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"


def add_repo_to_path():
    """This checkout first on ``sys.path`` (then ``benchmarks/``): a benchmark measures the pkm beside it. A script's
    own directory (``benchmarks/``) is what Python puts first, so ``import pkm`` found whichever pkm the environment
    had installed: in a second worktree of a venv with an editable install of the first, the first's code was
    measured and recorded as the second's. Called when this module is imported (every benchmark imports it before
    pkm); :func:`versions` records the pkm that was imported."""
    for p in (str(ROOT / "benchmarks"), str(ROOT)):
        while p in sys.path:
            sys.path.remove(p)
        sys.path.insert(0, p)


add_repo_to_path()


def cpu_info() -> dict:
    """CPU model, vendor, family/model numbers, nominal MHz, logical CPUs (from /proc/cpuinfo) and the
    CPUs this process may use."""
    info = {"model_name": platform.processor() or platform.machine(), "logical_cpus": os.cpu_count()}
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        text = ""
    for key, field in (("model_name", "model name"), ("vendor", "vendor_id"), ("family", "cpu family"),
                       ("model", "model"), ("mhz", "cpu MHz")):
        m = re.search(rf"^{field}\s*:\s*(.+)$", text, re.M)
        if m:
            info[key] = m.group(1).strip()
    info["hypervisor"] = "hypervisor" in text
    try:
        info["usable_cpus"] = len(os.sched_getaffinity(0))
    except AttributeError:
        info["usable_cpus"] = os.cpu_count()
    try:
        info["load_average_at_start"] = list(os.getloadavg())
    except OSError:
        pass
    return info


def machine_slug(cpu: dict) -> str:
    name = re.sub(r"\(r\)|\(tm\)|cpu|processor|@.*$", "", cpu.get("model_name", "cpu").lower())
    name = re.sub(r"[^a-z0-9]+", "-", name).strip("-") or "cpu"
    return f"{name}-{cpu.get('usable_cpus', 1)}c"


def versions() -> dict:
    import numba

    out = {"python": platform.python_version(), "numpy": np.__version__, "numba": numba.__version__,
           "platform": platform.platform()}
    for mod, key in (("pinocchio", "pin"), ("modern_robotics", "modern_robotics"), ("scipy", "scipy")):
        try:
            m = __import__(mod)
            out[key] = getattr(m, "__version__", "installed")
        except ImportError:
            out[key] = None
    import pkm

    out["pkm_source"] = str(Path(pkm.__file__).resolve().parent)
    try:
        import subprocess

        out["pkm_commit"] = subprocess.run(["git", "-C", out["pkm_source"], "rev-parse", "--short", "HEAD"],
                                           capture_output=True, text=True, timeout=10).stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        out["pkm_commit"] = None
    if out["modern_robotics"] == "installed":
        try:
            from importlib.metadata import version

            out["modern_robotics"] = version("modern-robotics")
        except Exception:
            pass
    return out


def best_of(fn, repeats: int = 5, number: int = 1) -> tuple[float, float]:
    """Smallest wall time and smallest process CPU time of ``repeats`` runs of ``number`` calls of
    ``fn()``, each divided by ``number`` (s per call).

    On a machine shared with other work the CPU time of a single-threaded run is the steadier figure
    (it leaves out the time the process waited for a core); with several threads it adds up the
    threads' times and is not a latency."""
    wall = cpu = np.inf
    for _ in range(repeats):
        c0, t0 = time.process_time(), time.perf_counter()
        for _ in range(number):
            fn()
        wall = min(wall, (time.perf_counter() - t0) / number)
        cpu = min(cpu, (time.process_time() - c0) / number)
    return wall, cpu


def per_call_loop(fn, args_list, repeats: int = 5) -> tuple[float, float]:
    """Best over ``repeats`` of the mean wall and CPU time of ``fn(*args)`` over ``args_list`` (s per call)."""
    wall = cpu = np.inf
    for _ in range(repeats):
        c0, t0 = time.process_time(), time.perf_counter()
        for a in args_list:
            fn(*a)
        wall = min(wall, (time.perf_counter() - t0) / len(args_list))
        cpu = min(cpu, (time.process_time() - c0) / len(args_list))
    return wall, cpu


def table(rows, headers) -> str:
    cells = [[str(c) for c in r] for r in rows]
    w = [max(len(h), *(len(r[i]) for r in cells)) if cells else len(h) for i, h in enumerate(headers)]
    line = "  ".join(h.ljust(w[i]) for i, h in enumerate(headers))
    out = [line, "  ".join("-" * x for x in w)]
    for r in cells:
        out.append("  ".join(c.rjust(w[i]) if i and _numeric(c) else c.ljust(w[i]) for i, c in enumerate(r)))
    return "\n".join(out)


def markdown_table(rows, headers) -> str:
    out = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    for r in rows:
        out.append("| " + " | ".join(str(c) for c in r) + " |")
    return "\n".join(out)


def _numeric(s: str) -> bool:
    try:
        float(s.replace(",", ""))
        return True
    except ValueError:
        return False


def fmt_us(seconds: float | None) -> str:
    if seconds is None or not np.isfinite(seconds):
        return "n/a"
    us = seconds * 1e6
    return f"{us:.3g}" if us < 100 else f"{us:,.0f}"


def write_json(path: Path, payload: dict) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(payload, indent=2, default=_jsonable) + "\n")
    return path


def _jsonable(o):
    if isinstance(o, (np.floating, np.integer)):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, Path):
        return str(o)
    raise TypeError(type(o))


def header(title: str, cpu: dict, vers: dict) -> str:
    return (f"{title}\nCPU: {cpu.get('model_name')} ({cpu.get('usable_cpus')} usable CPUs, {cpu.get('mhz', '?')} MHz"
            f"{', VM' if cpu.get('hypervisor') else ''}); load average at start "
            f"{', '.join(f'{x:.2f}' for x in cpu.get('load_average_at_start', []))}\n"
            f"python {vers['python']}, numpy {vers['numpy']}, numba {vers['numba']}, pin {vers['pin']}, "
            f"modern_robotics {vers['modern_robotics']}\n")
