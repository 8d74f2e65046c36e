"""The package layout is the architecture: each layer imports only from the layers below it.

The layers (README, "Architecture"), bottom to top::

    0 errors                     exceptions every layer may raise
    1 lie                        spatial math: SO(3)/SE(3), fixed-size kernels, small linear algebra
    2 description, trajectory    robot files → spec, topology, tree model; task-space motions
    3 algorithms, formats        recursive algorithms on trees and limbs (one sample); URDF in/out
    4 kernels                    batched numba kernels over trajectories
    5 sim, control, identification, planning  forward dynamics and time integration; controllers; dynamic
                                 parameters; time-optimal motion along a path
    6 robot                      the Robot facade
    7 sweep, plotting, export, viewer  applications
    8 cli                        the pkm command

A module may import its own sub-package and any *lower* layer; peers of one layer do not import
each other. Every import counts, also one inside a function (a lazy import is still a
dependency). ``sim``, ``control``, ``identification`` and ``planning`` take a robot as an argument (they never import the facade),
so that the Robot facade can offer them; ``absolute`` (the absolute-coordinate formulation,
beside ``algorithms``) has its place reserved.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

PKM = Path(__file__).resolve().parents[1] / "pkm"

#: Layer of each top-level part of ``pkm`` (a sub-package or a module directly in ``pkm/``).
LAYERS = {
    "errors": 0,
    "lie": 1,
    "description": 2, "trajectory": 2,
    "algorithms": 3, "absolute": 3, "formats": 3,
    "kernels": 4,
    "sim": 5, "control": 5, "identification": 5,
    "planning": 5,   # planning: time-optimal motion along a path under the drives' limits (pkm cycle, sweeps)
    "robot": 6,
    "sweep": 7, "plotting": 7, "workspace": 7, "export": 7,   # export: writers of a Robot (pkm convert .xml)
    "viewer": 7,   # viewer: the 3-D scene of a motion and its self-contained HTML page (pkm view)
    "cli": 8,
}
#: The package's own entry points may import anything (``pkm.load`` etc. are lazy re-exports).
TOP = {"__init__", "__main__"}
#: No module holds more than about 500 lines: a longer one usually holds two ideas.
MAX_LINES = 520


def _module_name(path: Path, root: Path) -> str:
    rel = path.relative_to(root.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path, root: Path, modules: set[str]):
    """(line, imported pkm module) of every import in ``path``, top-level or inside a function."""
    name = _module_name(path, root)
    is_pkg = path.name == "__init__.py"
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == root.name:
                    yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative import: resolve against this module's package
                base = name.split(".")
                base = base if is_pkg else base[:-1]
                base = base[: len(base) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            if mod.split(".")[0] != root.name:
                continue
            for alias in node.names:  # `from pkm.algorithms import constraints` imports a module
                sub = f"{mod}.{alias.name}"
                yield node.lineno, (sub if sub in modules else mod)


def _part(module: str) -> str:
    """Top-level part of a dotted pkm module name ("pkm.kernels.ik" → "kernels")."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _files(root: Path):
    return sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts)


def import_graph(root: Path) -> dict[str, list[tuple[int, str]]]:
    files = _files(root)
    modules = {_module_name(p, root) for p in files}
    return {_module_name(p, root): [(ln, m) for ln, m in _imports(p, root, modules)] for p in files}


def layering_violations(root: Path) -> list[str]:
    """Every import of a module in ``root`` (a package directory) that goes up or sideways."""
    out, unknown = [], set()
    for path in _files(root):
        name = _module_name(path, root)
        own = _part(name)
        if own in TOP or own in unknown:
            continue
        if own not in LAYERS:
            unknown.add(own)
            out.append(f"{path.parent.relative_to(root.parent)}: part {own!r} has no layer; add it to LAYERS "
                       f"(tests/test_layout.py) and to the README's architecture section")
            continue
        modules = {_module_name(p, root) for p in _files(root)}
        for line, target in _imports(path, root, modules):
            dep = _part(target)
            if dep == own:
                continue
            if dep not in LAYERS or dep in TOP:
                out.append(f"{path.relative_to(root.parent)}:{line}: imports {target}, which is in no layer")
            elif LAYERS[dep] >= LAYERS[own]:
                how = "up" if LAYERS[dep] > LAYERS[own] else "sideways"
                out.append(f"{path.relative_to(root.parent)}:{line}: imports {target} ({dep}, layer "
                           f"{LAYERS[dep]}) from {own} (layer {LAYERS[own]}): an import {how}")
    return out


def import_cycles(root: Path) -> list[list[str]]:
    """Cycles among modules (every import counts, lazy ones too): strongly connected components."""
    graph = {m: sorted({t for _, t in deps if t != m}) for m, deps in import_graph(root).items()}
    # a package's __init__ is imported on the way to any of its modules
    index, low, stack, on, comps, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return comps


def test_every_import_goes_down_the_layers():
    bad = layering_violations(PKM)
    assert not bad, "imports against the layering:\n" + "\n".join(bad)


def test_no_import_cycles():
    cycles = import_cycles(PKM)
    assert not cycles, "import cycles: " + "; ".join(" ↔ ".join(c) for c in cycles)


def test_every_part_has_a_layer():
    parts = {p.stem if p.is_file() else p.name for p in PKM.iterdir()
             if (p.suffix == ".py" or (p.is_dir() and (p / "__init__.py").exists()))}
    assert parts - TOP <= set(LAYERS), sorted(parts - TOP - set(LAYERS))


@pytest.mark.parametrize("path", _files(PKM), ids=lambda p: str(p.relative_to(PKM)))
def test_no_module_over_about_500_lines(path):
    n = len(path.read_text().splitlines())
    assert n <= MAX_LINES, f"{path.relative_to(PKM.parent)} has {n} lines: split it along its ideas"


# ------------------------------------------------------------------ the checks themselves can fail
def _fake_package(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "pkm"
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    for d in [root, *[p for p in root.rglob("*") if p.is_dir()]]:
        (d / "__init__.py").touch()
    return root


def test_an_upward_import_is_named(tmp_path):
    root = _fake_package(tmp_path, {
        "lie/groups.py": "import numpy as np\n",
        "description/model.py": "def f():\n    from pkm.algorithms.kinematics import fk\n    return fk\n",
        "algorithms/kinematics.py": "from pkm.lie.groups import np\nfk = 1\n",
    })
    bad = layering_violations(root)
    assert len(bad) == 1, bad
    assert "pkm/description/model.py:2: imports pkm.algorithms.kinematics (algorithms, layer 3) from " \
           "description (layer 2): an import up" in bad[0]


def test_a_sideways_import_and_an_unknown_part_are_named(tmp_path):
    root = _fake_package(tmp_path, {
        "trajectory/base.py": "from pkm.description import spec\n",
        "description/spec.py": "x = 1\n",
        "gadgets/thing.py": "x = 1\n",
        "lie/groups.py": "x = 1\n",
        "kernels/ik.py": "from pkm import lie\nfrom .model import y\n",
        "kernels/model.py": "y = 1\n",
    })
    bad = layering_violations(root)
    assert any("trajectory/base.py:1: imports pkm.description.spec" in b and "sideways" in b for b in bad), bad
    assert any("'gadgets' has no layer" in b for b in bad), bad
    assert len(bad) == 2, bad  # kernels → lie (down) and the relative import (own package) are fine


def test_a_cycle_is_found(tmp_path):
    root = _fake_package(tmp_path, {
        "algorithms/a.py": "from pkm.algorithms import b\n",
        "algorithms/b.py": "def f():\n    import pkm.algorithms.a\n",
    })
    assert import_cycles(root) == [["pkm.algorithms.a", "pkm.algorithms.b"]]
