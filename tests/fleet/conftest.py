"""A real Dask cluster of worker processes on loopback, for the fleet tests that need one."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(scope="module")
def cluster_client() -> Iterator[object]:
    from distributed import Client, LocalCluster

    with (
        LocalCluster(
            n_workers=2,
            threads_per_worker=2,
            processes=True,
            host="127.0.0.1",
            dashboard_address="127.0.0.1:0",  # a free port: 8787 may be taken (another cluster)
            silence_logs=40,
        ) as cluster,
        Client(cluster) as client,
    ):
        yield client
