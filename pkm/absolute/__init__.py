"""Absolute (maximal) coordinates: rigid bodies in director form (seed 002; issue 16)."""
from pkm.absolute.body import Body
from pkm.absolute.markers import Marker

__all__ = ["Body", "Marker"]
