"""Shared look of pkm's plots: figure size and resolution, user-facing actuator names, a line style
and marker per line, axis labels by actuator kind (revolute: torque [N·m], angle [rad];
prismatic: force [N], position [m])."""

from __future__ import annotations

import zlib

#: Size [in] and resolution [dpi] of saved figures: 1500 × 1050 pixels.
FIGSIZE = (10.0, 7.0)
DPI = 150
#: Pillow's options for the PNGs :func:`save` writes: zlib's run-length strategy (``Z_RLE``), which
#: suits a plot's long runs of one colour: the main job's 1500 × 1050 figure is encoded in 27 ms of
#: CPU instead of 41 ms at the default strategy, 2 % larger (212 kB instead of 208 kB), the same pixels.
PNG_OPTIONS = {"compress_type": zlib.Z_RLE}
#: Line styles and markers cycled over the lines of a panel (curves that coincide stay visible).
STYLES = ("-", "--", "-.", ":")
MARKERS = ("o", "s", "^", "v", "D", "x", "P", "*")
#: (force, position) quantity and unit of an actuated axis of each kind.
_QUANTITIES = {"R": (("torque", "N·m"), ("angle", "rad")), "H": (("torque", "N·m"), ("angle", "rad")),
               "P": (("force", "N"), ("position", "m"))}


def display_name(name: str) -> str:
    """A user-facing actuator or joint name: ``"limb1/1"`` → ``"limb1, joint 1"``,
    ``"leg2/leg"`` → ``"leg2, leg"``; names without a mount are returned unchanged."""
    mount, sep, joint = str(name).rpartition("/")
    if not sep:
        return str(name)
    return f"{mount}, joint {joint}" if joint[:1].isdigit() else f"{mount}, {joint}"


def joint_labels(robot, names=None) -> list[str]:
    """Legend labels of the joints ``names`` (default: the robot's actuators) as the robot file names
    them: the limb, the joint and, in parentheses, the body it moves, e.g. ``"limb1/1"`` →
    ``"limb1, joint 1 (arm)"``, ``"leg1/leg"`` → ``"leg1, leg (rod)"``; the body is left out where
    it repeats the joint's name, and a name the file does not have is shown as
    :func:`display_name` shows it."""
    names = list(robot.actuator_names if names is None else names)
    child = {j.name: j.child for j in robot.spec.expanded()[1]}
    labels = []
    for name in names:
        body = str(child.get(name, "")).rpartition("/")[2]
        joint = str(name).rpartition("/")[2]
        labels.append(display_name(name) + (f" ({body})" if body and body != joint else ""))
    return labels


def styled(k: int, n_points: int) -> dict:
    """Keyword arguments for the ``k``-th line of a panel: its own line style and marker (about
    12 markers per line, staggered so that lines on top of each other show each one's)."""
    every = max(1, n_points // 12)
    return {"linestyle": STYLES[k % len(STYLES)], "marker": MARKERS[k % len(MARKERS)],
            "markevery": (min(k * max(1, every // 4), max(0, n_points - 1)), every), "markersize": 5}


def axis_labels(kinds, degrees: bool = False) -> tuple[str, str, list[str]]:
    """The y labels of the force and the position panel for actuators of ``kinds`` (one label
    when they agree, "torque [N·m] / force [N]" for a mixed robot), and each actuator's units
    ``"[N]"`` to add to its legend entry when they differ."""
    q = [(_QUANTITIES[k][0], _QUANTITIES[k][1]) for k in kinds]
    if degrees:
        q = [(f, ("angle", "deg") if p[1] == "rad" else p) for f, p in q]
    forces = list(dict.fromkeys(f for f, _ in q))
    positions = list(dict.fromkeys(p for _, p in q))
    force = "actuator " + " / ".join(f"{n} [{u}]" for n, u in forces)
    position = "actuator " + " / ".join(f"{n} [{u}]" for n, u in positions)
    mixed = len(forces) > 1 or len(positions) > 1
    return force, position, [f" [{f[1]}, {p[1]}]" if mixed else "" for f, p in q]


def check_kinds(kinds, n: int) -> list[str]:
    """``kinds`` (None: all ``"R"``) as a list of one actuator kind ``"R"``, ``"H"`` or ``"P"`` per
    actuator (as :attr:`pkm.Robot.actuator_kinds` gives them), else :class:`pkm.InputError`."""
    from pkm.errors import InputError

    if kinds is None:
        return ["R"] * n
    if isinstance(kinds, str) or not hasattr(kinds, "__iter__"):
        raise InputError(f"kinds must be a list of {n} actuator kinds ('R', 'H' or 'P', as robot.actuator_kinds), "
                         f"got {kinds!r}")
    kinds = list(kinds)
    bad = [k for k in kinds if not isinstance(k, str) or k not in _QUANTITIES]
    if len(kinds) != n or bad:
        why = f"unknown kind(s) {', '.join(map(repr, bad))}" if bad else f"{len(kinds)} given"
        raise InputError(f"kinds must give 'R', 'H' or 'P' for each of the {n} actuators ({why}; "
                         f"robot.actuator_kinds has them)")
    return kinds


#: Formats probed so far: (format, animation) -> None (writable here) or why not (one line).
_PROBED: dict = {}
#: Formats matplotlib writes with its own compiled Agg renderer, needing nothing else: not probed, which
#: would cost a figure and a save (~0.1 s of every command that plots a PNG, e.g. the main job's).
NATIVE = frozenset({"png"})
#: The formats of an animation (:func:`pkm.plotting.animate`).
ANIMATIONS = ("gif", "mp4")


def format_problem(path, animation: bool = False) -> str | None:
    """Why an image (``animation``: an animation, ``.gif`` or ``.mp4``) cannot be written to ``path``
    on this machine, by its suffix; None if it can. A figure format matplotlib knows is probed once,
    by saving a tiny figure with a line and text into memory: what it needs (LaTeX for ``.pgf``,
    Ghostscript or LaTeX for ``.ps``/``.eps`` under some settings, a Pillow plug-in for ``.webp`` or
    ``.avif``) is whatever makes that fail here, not a list kept by hand. An animation needs
    matplotlib's Pillow writer (``.gif``) or ffmpeg (``.mp4``)."""
    import io
    import logging
    import warnings
    from pathlib import Path

    from matplotlib.backend_bases import FigureCanvasBase

    suffix = Path(str(path)).suffix.lower().lstrip(".")
    formats = set(ANIMATIONS) if animation else set(FigureCanvasBase.get_supported_filetypes())
    if suffix not in formats:
        return (f"unsupported {'animation' if animation else 'image'} format "
                f"{('.' + suffix) if suffix else '(none)'!r} (use one of {', '.join('.' + s for s in sorted(formats))})")
    key = (suffix, animation)
    if not animation and suffix in NATIVE:
        return None
    if key in _PROBED:
        return _PROBED[key]
    if animation:
        from matplotlib.animation import writers

        writer = "pillow" if suffix == "gif" else "ffmpeg"
        _PROBED[key] = None if writers.is_available(writer) else \
            f".{suffix} needs {'Pillow' if writer == 'pillow' else 'ffmpeg'}, which is not installed here"
        return _PROBED[key]
    from matplotlib.figure import Figure

    fig = Figure(figsize=(1.0, 1.0), dpi=20)
    ax = fig.add_subplot()
    ax.plot([0.0, 1.0], [0.0, 1.0], alpha=0.5)
    ax.set_title("pkm [N·m]")
    log = logging.getLogger("matplotlib")
    level = log.level
    log.setLevel(logging.ERROR)   # the PostScript backend's notice about transparency
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fig.savefig(io.BytesIO(), format=suffix)
        _PROBED[key] = None
    except Exception as exc:   # whatever the backend lacks here (LaTeX, Ghostscript, a Pillow plug-in)
        why = " ".join(str(exc).split()) or type(exc).__name__
        _PROBED[key] = f"cannot write .{suffix} on this machine ({why[:200]}); use .png, .svg or .pdf"
    finally:
        log.setLevel(level)
    return _PROBED[key]


def save(fig, path) -> None:
    """``fig.savefig(path)`` at :data:`DPI` (a PNG with :data:`PNG_OPTIONS`); an image format that cannot be written here (unknown, or
    needing a program this machine lacks: :func:`format_problem`) is a :class:`pkm.InputError`,
    raised before the file is touched (file-system errors stay OSError)."""
    from pathlib import Path

    from pkm.errors import InputError

    problem = format_problem(path)
    if problem is not None:
        raise InputError(f"{path}: {problem}")
    png = Path(path).suffix.lower() == ".png"
    fig.savefig(Path(path), dpi=DPI, **({"pil_kwargs": dict(PNG_OPTIONS)} if png else {}))
