"""cudf.pandas's side of a workload: the pandas code, unchanged, on objects cuDF's pandas
accelerator holds on the GPU (the built-in dataframe workloads' ``cudf-pandas`` backend, and the
``cudf.pandas (drop-in)`` of a user's own function).

The accelerator itself is installed by the backend's engine preparation
(``workbench.measure.gpu.cudf_pandas.install``); what here needs cuDF imports it at run time.
"""
from __future__ import annotations

from typing import Any

from workbench.catalog.workloads import Phases


def real_pandas(inputs: Any) -> Any:
    """The inputs with every cudf.pandas proxy replaced by the pandas object it stands for (a host copy)."""
    from cudf.pandas import is_proxy_object
    if isinstance(inputs, tuple):
        return tuple(real_pandas(x) for x in inputs)
    return inputs._fsproxy_slow if is_proxy_object(inputs) else inputs


def accelerated(pandas_factory):
    """The cudf-pandas implementation: ``pandas_factory`` itself, unchanged, on frames that
    cudf.pandas holds on the GPU. So that its figures compare with cuDF's (pandas in, pandas out),
    the frames are made in the h2d phase from host columns, as a program under the accelerator
    makes them (``pd.DataFrame`` of NumPy arrays), and the result is brought back as a pandas
    object in d2h: without that, its end-to-end was the pandas calls alone on data already on the
    GPU, beside a cuDF end-to-end that paid both conversions (a speed-up chart 7x in its favour)."""
    def factory(inputs, ctx):
        hosts = real_pandas(inputs)            # plain pandas copies on the host, made once, untimed
        single = not isinstance(hosts, tuple)  # a user's setup may give one frame, not a tuple
        hosts = (hosts,) if single else hosts
        held: dict = {}

        def h2d():
            made = tuple(_through_the_accelerator(h) for h in hosts)
            held["run"] = pandas_factory(made[0] if single else made, ctx)

        def compute():
            held["out"] = held["run"]()

        def d2h():
            return real_pandas(held["out"])

        def close():
            held.clear()

        return Phases(h2d=h2d, compute=compute, d2h=d2h, close=close)

    factory.pandas_factory = pandas_factory
    return factory


def _through_the_accelerator(host):
    """A frame (or series) of the running process's pandas (cudf.pandas's proxies, on the GPU)
    with the columns and index of the plain pandas object ``host``; anything else as it is."""
    import pandas as pd
    if isinstance(host, pd.Series):
        return pd.Series(host.to_numpy(), index=host.index.to_numpy(), name=host.name)
    if not isinstance(host, pd.DataFrame):
        return host
    columns = {name: host[name].to_numpy() for name in host.columns}
    index = host.index
    default = isinstance(index, pd.RangeIndex) and index.start == 0 and index.step == 1
    return pd.DataFrame(columns) if default else pd.DataFrame(columns, index=index.to_numpy())
