"""Where the benchmarks' jobs run: local worker processes of one torch thread each,
or a Dask cluster; results in completion order, Ctrl-C stopping the workers at once."""

from __future__ import annotations

import contextlib
import ipaddress
import os
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor, as_completed
from typing import Any
from urllib.parse import urlsplit

import torch

from botorch_bandits._io import ignore_sigint, stop_now


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


def run_kept(
    function: Callable[..., Any],
    specs: Sequence[Mapping[str, Any]],
    keep: Any | None,
    workers: int | None,
    show_progress: bool,
    desc: str,
) -> list[Any]:
    """Every job of ``specs`` (dicts with ``problem``, ``strategy``, ``seed``):
    those ``keep`` (a job store: ``load(specs)``, ``save(job)``; ``None``: none
    kept) holds are loaded, the others run as ``function(**spec)`` -- in this
    process when one worker is needed, else on a :func:`worker_pool` of
    ``workers`` (default: the CPU count) -- each saved as it finishes, so a killed
    run continues; a progress bar named ``desc`` when ``show_progress``. Returns
    the kept jobs, then the new ones in the order they finished."""
    kept = [] if keep is None else keep.load(list(specs))
    found = {(j["problem"], j["strategy"], j["seed"]) for j in kept}
    todo = [s for s in specs if (s["problem"], s["strategy"], s["seed"]) not in found]
    bar = None
    if show_progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(specs), initial=len(kept), desc=desc, unit="job")

    def each(job: Any) -> Any:
        if keep is not None:
            keep.save(job)
        if bar is not None:
            bar.update(1)
        return job

    n = max(1, min(workers or os.cpu_count() or 1, len(todo)))
    try:
        if n <= 1:
            new = [each(function(**s)) for s in todo]
        else:
            with worker_pool(n) as pool:
                new = pool_map(pool, function, todo, each)
    finally:
        if bar is not None:
            bar.close()
    return kept + new


#: the trust model of ``--dask``, for the help and the messages
DASK_TRUST = (
    "A Dask scheduler runs the code its clients send, and this process unpickles "
    "its replies: connect only to a cluster you trust, over a network you trust "
    "(Dask's own transport is unencrypted unless the cluster uses TLS). The local "
    "cluster listens on 127.0.0.1 only, with TLS and credentials made for the run "
    "(no other user of the machine can submit to it), and serves no dashboard."
)


def is_loopback(address: str) -> bool:
    """Whether a scheduler address (``[proto://]host[:port]``) names this machine."""
    host = urlsplit(address if "://" in address else f"tcp://{address}").hostname
    if host is None:
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_dask_address(address: str, allow_remote: bool) -> None:
    """``--dask ADDRESS``: ``"local"``, or a scheduler on this machine; another host
    only with ``allow_remote`` (``--dask-remote``), saying why."""
    if address == "local" or allow_remote or is_loopback(address):
        return
    raise ValueError(
        f"--dask {address!r} is not on this machine; pass --dask-remote as well to "
        f"use it. {DASK_TRUST}"
    )


def local_cluster(workers: int) -> tuple[Any, Any]:
    """A ``distributed.LocalCluster`` on 127.0.0.1 with ``workers`` one-thread
    processes, over TLS with temporary credentials (``Security.temporary()``), its
    HTTP servers on random loopback ports with no routes (no dashboard); returns
    ``(cluster, security)``."""
    import dask
    from distributed import LocalCluster
    from distributed.security import Security

    try:
        security = Security.temporary()
    except ImportError as err:  # pragma: no cover - cryptography is in the extra
        raise ImportError(
            "--dask needs the `cryptography` package for the local cluster's TLS: "
            "pip install '.[dask]' from a clone of the repository"
        ) from err
    routes = {
        "distributed.scheduler.http.routes": [],
        "distributed.worker.http.routes": [],
    }
    with dask.config.set(routes):
        cluster = LocalCluster(
            host="127.0.0.1",
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            protocol="tls",
            security=security,
            dashboard_address="127.0.0.1:0",
            scheduler_kwargs={"dashboard": False},
        )
    return cluster, security


#: seconds a scheduler has to answer ``--dask ADDRESS``
CONNECT_SECONDS = 30.0


def _connect(client_class: Any, address: str) -> Any:
    """A Dask client of the scheduler at ``address``, or a ``ValueError`` naming it
    when the peer refuses, closes, answers as no Dask scheduler does, or says
    nothing for :data:`CONNECT_SECONDS` (Dask's handshake would wait forever: the
    attempt runs in a daemon thread, left behind then)."""
    result: dict[str, Any] = {}

    def attempt() -> None:
        try:
            result["client"] = client_class(address, timeout=CONNECT_SECONDS)
        except BaseException as err:
            result["error"] = err

    thread = threading.Thread(target=attempt, daemon=True)
    thread.start()
    thread.join(CONNECT_SECONDS + 5.0)
    if "client" in result:
        return result["client"]
    err = result.get("error")
    why = (
        f"{type(err).__name__}: {err}"
        if err is not None
        else f"no answer in {CONNECT_SECONDS:g} s"
    )
    raise ValueError(f"--dask {address!r}: no Dask scheduler answered there ({why}).")


def dask_map(
    function: Callable[..., Any],
    specs: Sequence[Mapping[str, Any]],
    address: str,
    each: Callable[[Any], Any],
    workers: int | None = None,
    allow_remote: bool = False,
) -> list[Any]:
    """As :func:`pool_map` on a Dask cluster: ``address`` ``"local"`` starts a
    :func:`local_cluster` with ``workers`` processes (default: the CPU count, at
    most the number of jobs) and closes it afterwards; any other value is a
    scheduler's address, on this machine unless ``allow_remote``
    (:data:`DASK_TRUST`)."""
    try:
        from distributed import Client
        from distributed import as_completed as dask_completed
    except ImportError as err:  # pragma: no cover - distributed is in the dask extra
        raise ImportError(
            "--dask needs the `distributed` package: pip install '.[dask]' from a clone of the repository"
        ) from err
    check_dask_address(address, allow_remote)
    cluster = None
    if address == "local":
        n = workers or min(os.cpu_count() or 1, len(specs))
        cluster, security = local_cluster(n)
        client = Client(cluster, security=security)
    else:
        client = _connect(Client, address)
    try:
        futures = [client.submit(function, **spec, pure=False) for spec in specs]
        return [each(fut.result()) for fut in dask_completed(futures)]
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
