"""Dask (issue 31): the local cluster of ``--dask local`` listens on 127.0.0.1 only,
over TLS with credentials made for the run (a client without them cannot submit),
with no dashboard; ``--dask ADDRESS`` on another host needs ``--dask-remote``; a
peer that is no Dask scheduler gets a clear error."""

from __future__ import annotations

import socket
import urllib.error
import urllib.request

import pytest

import bandit_experiments.common.executors as executors
from bandit_experiments.common.executors import (
    check_dask_address,
    dask_map,
    is_loopback,
    local_cluster,
)

pytest.importorskip("distributed")
pytest.importorskip("cryptography")


def _double(x: int) -> int:
    return 2 * x


def test_the_local_cluster_needs_its_credentials_and_serves_no_dashboard() -> None:
    """Before: the dashboard listened on 127.0.0.1:8787 and any local user could
    submit code to the unauthenticated scheduler."""
    from distributed import Client

    cluster, security = local_cluster(1)
    try:
        assert cluster.scheduler_address.startswith("tls://127.0.0.1:")
        with Client(cluster, security=security) as client:
            assert client.submit(_double, 21).result() == 42
        with pytest.raises(Exception, match=r"TLS|ssl|SSL"):
            Client(cluster.scheduler_address, timeout=5)
        port = cluster.scheduler.http_server._sockets  # the only HTTP socket
        ports = [s.getsockname()[1] for s in port.values()]
        for p in ports:
            with pytest.raises(urllib.error.HTTPError) as err:
                urllib.request.urlopen(f"http://127.0.0.1:{p}/status", timeout=5)
            assert err.value.code == 404  # no dashboard, no routes
        assert 8787 not in ports
    finally:
        cluster.close()


def test_dask_map_runs_on_the_local_cluster() -> None:
    out = dask_map(_double, [{"x": 1}, {"x": 2}], "local", lambda r: r, workers=1)
    assert sorted(out) == [2, 4]


def test_a_remote_address_needs_the_explicit_flag() -> None:
    assert is_loopback("tcp://127.0.0.1:8786") and is_loopback("localhost:8786")
    assert is_loopback("tls://[::1]:8786") and not is_loopback("10.0.0.5:8786")
    with pytest.raises(ValueError, match="--dask-remote"):
        check_dask_address("tcp://10.0.0.5:8786", allow_remote=False)
    check_dask_address("tcp://10.0.0.5:8786", allow_remote=True)
    check_dask_address("127.0.0.1:8786", allow_remote=False)


def test_a_peer_that_is_not_a_scheduler_is_named(monkeypatch) -> None:
    """Before: "Unable to allocate 3.07 EiB" (an HTTP server's reply unpickled); a
    silent peer kept the handshake waiting for ever."""
    monkeypatch.setattr(executors, "CONNECT_SECONDS", 3.0)
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    port = server.getsockname()[1]
    try:
        with pytest.raises(ValueError, match=r"no Dask scheduler answered there \(no"):
            dask_map(_double, [{"x": 1}], f"127.0.0.1:{port}", lambda r: r)
    finally:
        server.close()
