"""Sweeps on a Dask cluster: the points of a sweep measured by Dask distributed workers.

Nothing here is imported unless a sweep is asked to run on a cluster (``--cluster``, or the
window's "Run on" choice), and only ``connect``, ``stream`` and ``task`` import Dask, inside their
functions: without a cluster, Dask is never imported. ``runner.ClusterRunner`` is the client side,
with the interface of ``workbench.measure.supervisor``; ``task`` measures a point on a worker in a
supervised engine, alone on its host or GPU (``hostlock``).
See docs/ARCHITECTURE.md, "workbench/cluster/__init__.py", for every module of the package.
"""
