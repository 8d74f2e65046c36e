"""``pkm size ROBOT``: motor sizing over a cycle (:mod:`pkm.sweep.sizing`; the drives:
:mod:`pkm.description.drives`)."""
from __future__ import annotations

import argparse
import math

from pkm.cli.options import _finite, add_trajectory_options, load_trajectory, trajectory_dict
from pkm.errors import PkmError

EPILOG = """\
Per actuator with a drive (the robot file's drive = { gear_ratio, rotor_inertia, …, rated_torque,
peak_torque, rated_speed, max_speed }, docs/robot-file-format.md): the motor-side peak and RMS torque
and speed over the trajectory (the robot file's default, or the trajectory options as in pkm
inverse-dynamics), judged against a simple envelope: peak |torque| <= peak_torque, RMS torque <=
rated_torque, peak |speed| <= max_speed, RMS speed <= rated_speed (criteria without a rating are not
checked). The margin of a criterion is 1 - value/limit; a motor passes when its least margin is >= 0.
The exit status is 0 whether the motors pass or fail (2 for an error).

--cycle-times T1 T2 … runs the trajectory at each cycle time (pick-place; a line's or sine's duration),
with as many samples per cycle, and names the smallest that passes; --find-cycle-time finds the
smallest cycle time every motor passes by bisection (to 0.1 %). --param NAME=V1,V2,… (a [parameters]
entry of the robot file, in its units) repeats it for each design.

examples: pkm size examples/delta_servo.toml --plot envelope.png
          pkm size examples/delta_servo.toml --find-cycle-time
          pkm size examples/delta_servo.toml --cycle-times 0.5 0.55 0.6 --param a=220,250"""


def add_parser(sub) -> None:
    p = sub.add_parser("size", help="motor sizing: motor-side peak/RMS torque and speed against the drives' ratings",
                       formatter_class=argparse.RawDescriptionHelpFormatter, epilog=EPILOG,
                       description="Motor sizing over a cycle: pass/fail per motor with its margin.")
    p.add_argument("robot", help="path to a robot file (TOML) with drives")
    add_trajectory_options(p)
    p.add_argument("--payload", type=float, metavar="KG", help="a payload mass [kg] at the platform frame's origin")
    p.add_argument("--plot", metavar="PNG", help="save the operating points against each motor's envelope")
    p.add_argument("--cycle-times", nargs="+", type=float, metavar="T",
                   help="run the cycle at these cycle times [s] and name the smallest that passes")
    p.add_argument("--find-cycle-time", action="store_true",
                   help="the smallest cycle time at which every motor passes (bisection, 0.1 %%)")
    p.add_argument("--param", action="append", metavar="NAME=VALUES",
                   help="a design parameter of the robot file: NAME=V1,V2,… (repeatable: a grid)")
    p.set_defaults(func=run)


def _designs(args) -> list[dict]:
    """The grid of ``--param`` values as a list of dicts (one empty dict without ``--param``)."""
    from itertools import product

    from pkm.cli.sweep import parse_params

    params = parse_params(args.param, "NAME=V1,V2,…")
    grid = [dict(zip(params, vals)) for vals in product(*params.values())]
    if len(grid) > 1000:
        raise PkmError(f"--param: {len(grid)} designs, more than 1000")
    return grid


def _pct(v: float) -> str:
    """A margin as a percentage: ``+21.6 %``, or ``-1.4e+301 %`` for an absurd one."""
    return f"{100 * v:+.1f} %" if abs(v) < 1e4 else f"{100 * v:+.3g} %"


def _line(c) -> str:
    margins = ", ".join(f"{k} {_pct(v)}" for k, v in c.margins.items()) or "no ratings"
    verdict = "no ratings" if not c.margins else ("pass" if c.passed else "FAIL")
    return (f"  {c.name:<14} peak {c.peak_torque:.4g} N·m, RMS {c.rms_torque:.4g} N·m, peak {c.peak_speed:.4g} rad/s, "
            f"RMS {c.rms_speed:.4g} rad/s; margins: {margins} -> {verdict}"
            + (f" (least: {c.binding} {_pct(c.margin)})" if c.margins else ""))


def run(args: argparse.Namespace) -> int:
    from pkm.cli.options import _check_output
    from pkm.cli.output import outputs
    from pkm.robot import Robot, load
    from pkm.sweep.sizing import scaled, size, smallest_cycle_time

    if args.plot is not None:
        _check_output(args.plot, "--plot", "image")
    if args.cycle_times is not None:
        _finite(args.cycle_times, "--cycle-times")
        if any(not T > 0 for T in args.cycle_times):
            raise PkmError(f"--cycle-times must be positive, got {' '.join(f'{T:g}' for T in args.cycle_times)}")
        if args.find_cycle_time:
            raise PkmError("give --cycle-times or --find-cycle-time, not both")
        if args.cycle_time is not None:
            raise PkmError("give --cycle-time (one run) or --cycle-times (several), not both")
    designs = _designs(args)
    if args.plot is not None and (len(designs) > 1 or args.cycle_times or args.find_cycle_time):
        raise PkmError("--plot draws one run: not with --param lists, --cycle-times or --find-cycle-time")
    for design in designs:
        robot = load(args.robot, parameters=design or None)
        robot.spec.check_actuation()
        if args.payload is not None:   # as pkm inverse-dynamics --payload (pkm.cli.main.apply_load)
            _finite(args.payload, "--payload")
            if args.payload < 0:
                raise PkmError(f"--payload must be a mass >= 0 kg, got {args.payload!r}")
            robot = Robot(robot.spec.with_payload(args.payload))
        label = ", ".join(f"{k} = {v:g}" for k, v in design.items())
        spec = trajectory_dict(robot, args)
        head = f"{robot.name}{' (' + label + ')' if label else ''}: {spec['type']} trajectory"
        if args.find_cycle_time or args.cycle_times:
            key = "cycle_time" if "cycle_time" in spec else "duration" if "duration" in spec else None
            if key is None:
                raise PkmError(f"a {spec['type']} trajectory has no cycle time to vary (use pick-place, line or sine)")
            traj = load_trajectory(robot, args)          # checks the trajectory as given
            spec["dt"] = float(spec.get("dt", traj.t[1] - traj.t[0] if len(traj) > 1 else spec[key]))
        if args.find_cycle_time:
            T, checks = smallest_cycle_time(robot, spec)
            print(f"{head}: the smallest cycle time every motor passes is {T:.4g} s "
                  f"(bisection to 0.1 %; {math.ceil(float(spec[key]) / spec['dt'])} intervals per cycle). At it:")
            for c in checks:
                print(_line(c))
            continue
        if args.cycle_times:
            from pkm.sweep.sizing import require_ratings
            from pkm.trajectory import from_spec

            require_ratings(robot, "no cycle time can be judged")
            runs = []     # all runs first: an error leaves no half-printed table
            for T in sorted(args.cycle_times):
                _, checks = size(robot, from_spec(scaled(spec, T), robot.task.coordinate_names()))
                runs.append((T, all(c.passed for c in checks), min(checks, key=lambda c: c.margin if c.margins
                                                                     else math.inf)))
            print(f"{head} at {len(args.cycle_times)} cycle times:")
            for T, ok, least in runs:
                print(f"  {T:g} s: {'pass' if ok else 'FAIL'} (least margin {_pct(least.margin)}: "
                      f"{least.name} {least.binding})")
            best = next((T for T, ok, _ in runs if ok), None)
            print(f"  smallest passing cycle time: {best:g} s" if best is not None else "  none passes")
            continue
        traj = load_trajectory(robot, args)
        res, checks = size(robot, traj)
        span = float(traj.t[-1] - traj.t[0])
        print(f"{head}, {len(traj)} samples over {span:.6g} s: motor side")
        for c in checks:
            print(_line(c))
        rated = [c for c in checks if c.margins]   # (a motor without ratings is not judged: neither pass nor FAIL)
        if not rated:
            verdict = "no motor has a rating (rated_torque, peak_torque, rated_speed, max_speed): nothing judged"
        else:
            verdict = "all motors pass" if all(c.passed for c in rated) else "some motors FAIL"
            if len(rated) < len(checks):
                verdict += f" ({len(checks) - len(rated)} without ratings not judged)"
        print(f"  {verdict}.")
        if args.plot is not None:
            from pkm.plotting.sizing import plot_envelope

            with outputs(args.plot) as out:
                plot_envelope(robot.drives, res.tau_motor, res.speed_motor, checks, path=out[args.plot],
                              title=head)
            print(f"Wrote the torque–speed plot to {args.plot}.")
    return 0
