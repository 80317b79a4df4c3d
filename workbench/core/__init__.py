"""The lowest layer: statistics, verdicts between intervals, sizes, units, safe writes and the driver query.

Nothing here imports another part of the workbench, so every layer above may use it.
"""
