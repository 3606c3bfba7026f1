"""Where the benchmarks' jobs run: local worker processes of one torch thread each,
or a Dask cluster; results in completion order, Ctrl-C stopping the workers at once."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor, as_completed
from typing import Any

import torch

from botorch_bandits._io import ignore_sigint


def init_worker() -> None:
    """One torch thread per worker; Ctrl-C is left to the main process."""
    torch.set_num_threads(1)
    ignore_sigint()


@contextlib.contextmanager
def worker_pool(workers: int) -> Iterator[ProcessPoolExecutor]:
    """A pool of ``workers`` processes (:func:`init_worker`); on Ctrl-C, which the
    workers ignore, its processes are stopped at once."""
    with ProcessPoolExecutor(max_workers=workers, initializer=init_worker) as pool:
        try:
            yield pool
        except KeyboardInterrupt:  # the workers ignore it: stop them now
            stop_now(pool)
            raise


def stop_now(pool: ProcessPoolExecutor) -> None:
    """Stop ``pool``'s processes without waiting for their work (on Ctrl-C: a
    worker still starting may have died of the signal, and a waiting shutdown
    can then hang)."""
    for proc in list((pool._processes or {}).values()):
        proc.terminate()
    pool.shutdown(wait=False, cancel_futures=True)


def pool_map(
    pool: Executor,
    function: Callable[..., Any],
    specs: Sequence[Mapping[str, Any]],
    each: Callable[[Any], Any],
) -> list[Any]:
    """``each(function(**spec))`` for every spec, run on ``pool``, in the order the
    jobs complete."""
    futures = [pool.submit(function, **spec) for spec in specs]
    return [each(fut.result()) for fut in as_completed(futures)]


def run_specs(
    function: Callable[..., Any], specs: Sequence[Mapping[str, Any]], workers: int
) -> list[Any]:
    """``function(**spec)`` for every spec: in this process, in order, when
    ``workers`` is 1; else on a :func:`worker_pool` of ``workers`` processes, in the
    order the jobs complete."""
    if workers > 1:
        with worker_pool(workers) as pool:
            return pool_map(pool, function, specs, lambda j: j)
    return [function(**spec) for spec in specs]


def dask_map(
    function: Callable[..., Any],
    specs: Sequence[Mapping[str, Any]],
    address: str,
    each: Callable[[Any], Any],
    workers: int | None = None,
) -> list[Any]:
    """As :func:`pool_map` on a Dask cluster: ``address`` ``"local"`` starts a
    ``distributed.LocalCluster`` on 127.0.0.1 with ``workers`` processes of one
    thread each (default: the CPU count, at most the number of jobs) and closes it
    afterwards; any other value is a scheduler's address."""
    try:
        from distributed import Client, LocalCluster
        from distributed import as_completed as dask_completed
    except ImportError as err:  # pragma: no cover - distributed is in the dask extra
        raise ImportError(
            "--dask needs the `distributed` package: pip install 'botorch-bandits[dask]'"
        ) from err
    cluster = None
    if address == "local":
        cluster = LocalCluster(
            host="127.0.0.1",
            n_workers=workers or min(os.cpu_count() or 1, len(specs)),
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
        )
        client = Client(cluster)
    else:
        client = Client(address)
    try:
        futures = [client.submit(function, **spec, pure=False) for spec in specs]
        return [each(fut.result()) for fut in dask_completed(futures)]
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
