"""``pkm view ROBOT [trajectory options | --motion CSV] [--html FILE] [--frames] [--axes]``: the 3-D
viewer in the browser (:mod:`pkm.viewer`): a self-contained HTML page, written to a file or served
on a local port."""
from __future__ import annotations

import argparse

from pkm.errors import PkmError


def add_parser(sub) -> argparse.ArgumentParser:
    from pkm.cli.options import add_trajectory_options

    p = sub.add_parser(
        "view", help="a 3-D viewer in the browser: the bodies' shapes along a trajectory or a simulated motion",
        description="Show the robot in the browser: every body as its primitive shape (the robot file's 'shape'; a "
                    "small sphere at the centre of mass for a body without one) at its pose from the inverse and "
                    "forward kinematics, along the robot file's default trajectory (its reference pose if it has none; or the one set by the "
                    "trajectory options, as for inverse-dynamics) or the motion in a CSV (--motion), with a time "
                    "slider and a play button. --html writes a self-contained page (opens without a server or "
                    "network); without it the page is served on a local port until Ctrl-C. Needs the optional "
                    "extra 'view' (pip install 'pkm[view]': three.js from meshcat).",
        epilog="examples: pkm view robots/delta_3rr2rrr.toml --html delta.html\n"
               "          pkm simulate robots/delta_3rr2rrr.toml --torques zero --duration 0.2 --out fall.csv && "
               "pkm view robots/delta_3rr2rrr.toml --motion fall.csv --html fall.html")
    p.add_argument("robot", help="path to a robot file (TOML)")
    add_trajectory_options(p)
    p.add_argument("--motion", metavar="CSV",
                   help="show this motion instead of a trajectory: a CSV with columns t and the task coordinates "
                        "(as pkm simulate --out and pkm inverse-dynamics --out write them)")
    p.add_argument("--samples", type=int, default=200,
                   help="number of frames (evenly spaced samples of the motion; default 200, at most 5000)")
    p.add_argument("--html", metavar="FILE", help="write the self-contained page to FILE instead of serving it")
    p.add_argument("--frames", action="store_true", help="draw each body's frame (x red, y green, z blue)")
    p.add_argument("--axes", action="store_true", help="draw each joint's axis")
    p.add_argument("--port", type=int, default=0, help="serve on this local port (default: a free one)")
    p.set_defaults(func=_cmd_view)
    return p


def _motion(robot, args):
    """(t, x) of the motion to show: the CSV's columns or the trajectory's samples."""
    import numpy as np

    from pkm.cli.options import _ALL_TRAJ_OPTIONS, _opt, load_trajectory

    given = [_opt(d) for d in ("trajectory", *_ALL_TRAJ_OPTIONS) if getattr(args, d, None) is not None]
    if args.motion is None and not given and robot.spec.trajectory is None:
        return np.zeros(1), robot.x_ref.reshape(1, -1)   # no motion to play: the reference pose
    if args.motion is None:
        traj = load_trajectory(robot, args)
        return np.asarray(traj.t, dtype=float), np.asarray(traj.x, dtype=float).reshape(len(traj.t), -1)
    if given:
        raise PkmError(f"give either --motion or trajectory options, not both ({', '.join(given)})")
    from pkm.sim.inputs import read_table, table_columns

    names = list(robot.task.coordinate_names())
    try:
        if table_columns(args.motion, ["t", *names]) is None:
            raise PkmError(f"--motion {args.motion}: needs the columns t, {', '.join(names)} (as pkm simulate --out "
                           f"writes them)")
        table = read_table(args.motion, names)   # a column NAME is read for each "actuator" NAME: the task axes
    except PkmError as exc:   # the torque table's reader, its words for a motion
        raise PkmError(str(exc).replace("torque table", "motion").replace("actuator", "task coordinate")) from None
    return np.asarray(table.t, dtype=float), np.asarray(table.U, dtype=float)


def _cmd_view(args: argparse.Namespace) -> int:
    import numpy as np

    from pkm.cli.options import _check_output
    from pkm.cli.output import outputs
    from pkm.robot import load
    from pkm.viewer import html_page, scene, three_js

    if args.html is not None:
        _check_output(args.html, "--html")
    if not 1 <= args.samples <= 5000:
        raise PkmError(f"--samples must be from 1 to 5000, got {args.samples}")
    if not 0 <= args.port <= 65535:
        raise PkmError(f"--port must be from 0 to 65535, got {args.port}")
    three_js()   # the optional extra, before any work
    robot = load(args.robot)
    t, x = _motion(robot, args)
    pick = np.unique(np.linspace(0, len(t) - 1, min(args.samples, len(t))).round().astype(int))
    sc = scene(robot, x[pick], t[pick], axes=args.axes)
    page = html_page(sc, frames=args.frames, axes=args.axes)
    what = (f"{len(sc.names)} bodies, {len(pick)} frames over {t[pick[-1]] - t[pick[0]]:.6g} s" if len(pick) > 1
            else f"{len(sc.names)} bodies at one pose")
    if args.html is not None:
        with outputs(args.html) as out:
            with open(out[args.html], "w", encoding="utf-8") as fh:
                fh.write(page)
        print(f"{robot.name}: wrote the 3-D view ({what}) to {args.html}.")
        return 0
    return _serve(page, args.port, f"{robot.name}: the 3-D view ({what})")


def _serve(page: str, port: int, what: str) -> int:
    """Serve ``page`` on 127.0.0.1 until interrupted."""
    from http.server import BaseHTTPRequestHandler, HTTPServer

    body = page.encode("utf-8")

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):   # noqa: N802 (http.server's name)
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a):   # quiet
            pass

    try:
        server = HTTPServer(("127.0.0.1", port), Handler)
    except OSError as exc:
        raise PkmError(f"--port {port}: cannot serve there ({exc.strerror or exc})") from None
    print(f"{what} at http://127.0.0.1:{server.server_address[1]}/ (Ctrl-C stops)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0
