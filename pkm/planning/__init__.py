"""Time-optimal motion along a geometric path under the drives' limits (issue 31): paths (pick-and-place,
lines, splines, CSV waypoints), the forces' coefficients along a path from one batched inverse dynamics,
the limits as constraints, the reachability analysis (TOPP-RA) and the result (trajectory, cycle time)."""
from pkm.planning.paths import (BlendedPolyline, LinePath, Path, ReversedPath, Route, SplinePath, pick_place_route,
                                read_path_csv, route_of_trajectory)
from pkm.planning.solve import time_optimal
from pkm.planning.result import CycleResult

__all__ = ["Path", "LinePath", "BlendedPolyline", "SplinePath", "ReversedPath", "read_path_csv", "pick_place_route", "route_of_trajectory",
           "Route", "time_optimal", "CycleResult"]
