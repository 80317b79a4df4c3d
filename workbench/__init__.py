"""GPU Workbench: see what a GPU does for your Python code.

The engine (``workbench.measure.engine``), the registry of workloads and backends and
the result table import no Qt; the window lives in ``panels.window`` and
``panels``.
"""
__version__ = "0.1.0"
