"""Sweeps on a Dask cluster: the points of a sweep measured by Dask distributed workers.

Nothing here is imported unless a sweep is asked to run on a cluster (``--cluster``, or the
window's "Run on" choice), and only ``connect``, ``runner`` and ``task`` import Dask, inside their
functions: without a cluster, Dask is never imported.

- ``places``: what a worker is (its host, its GPU) and the names of devices and series
  (``cupy @ node2:GPU1``); plain data, no Dask.
- ``hostlock``: the per-host and per-GPU locks that keep a point alone where it measures.
- ``task``: what runs on a worker: the survey of a worker, and one point in a supervised engine.
- ``connect``: addresses, TLS, and starting a local cluster.
- ``runner``: ``ClusterRunner``, the client side, with the interface of ``workbench.measure.supervisor``.
- ``assign``: which worker may measure which point (the sweep's tasks); no Dask.
- ``stream``: one sweep's tasks from submitted to answered, as protocol messages.
- ``options``: the cluster a sweep names, checked from plain values (no Dask; argparse is in ``workbench.cli``).
"""
