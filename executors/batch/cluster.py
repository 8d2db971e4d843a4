"""Reaching Ray: a loopback-only cluster on this machine, the one in ``RAY_ADDRESS``, or one named.

This module and ``pipeline.py`` are the only ones that import Ray, and only when a batch runs.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from ..core.errors import ConfigError, NetworkError, UnsupportedError

LOCAL, AUTO = "local", "auto"
# Ray's switch for "this machine only" (its default on macOS and Windows): every Ray server binds
# to 127.0.0.1 instead of the machine's routable address. Read when Ray is imported.
_LOOPBACK_ENV = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"
_INSTALL_HINT = "install the cluster extra: pip install 'ferrum-desktop[cluster]'"


@dataclass(frozen=True)
class ClusterInfo:
    address: str           # what was connected to ("local" for a cluster this process started)
    node_ip: str
    nodes: int
    cpus: float
    gpus: float
    started_here: bool     # this process started the cluster (and stops it when done)


def import_ray(cluster: str = LOCAL):
    """Ray, imported for ``cluster`` (for ``local``, with its servers kept on the loopback address)."""
    if cluster == LOCAL:
        os.environ.setdefault(_LOOPBACK_ENV, "0")
    try:
        import ray
        import ray.data  # noqa: F401 - the pipeline needs Ray Data, not only Ray core
        from ray._private import ray_constants
    except ImportError as exc:
        raise UnsupportedError(f"Ray is not installed ({exc.name} is missing)", _INSTALL_HINT) from exc
    if cluster == LOCAL and os.environ.get(_LOOPBACK_ENV) == "0":
        ray_constants.ENABLE_RAY_CLUSTER = False  # in case Ray was imported before the variable was set
    return ray


def quiet_ray_logs(cluster: str = LOCAL) -> None:
    """Only Ray's errors on the console (Ray Data logs its plans and timings at INFO/WARNING);
    its full logs stay in the session folder (/tmp/ray/session_latest/logs)."""
    import logging

    import_ray(cluster)
    for name in ("ray", "ray.data"):
        logging.getLogger(name).setLevel(logging.ERROR)


def _init_kwargs(cluster: str, num_cpus: int | None, temp_dir: str | None) -> dict:
    quiet = {"configure_logging": False, "log_to_driver": False, "namespace": "ferrum-batch"}
    if cluster == LOCAL:
        local = {"num_cpus": num_cpus, "include_dashboard": False}
        if temp_dir:
            local["_temp_dir"] = temp_dir
        return {**quiet, **local}
    if cluster == AUTO:
        if not os.environ.get("RAY_ADDRESS"):
            raise ConfigError("--cluster auto needs the RAY_ADDRESS environment variable",
                              "set RAY_ADDRESS to the head node (HOST:PORT or ray://HOST:PORT), "
                              "or use --cluster local")
        return {**quiet, "address": os.environ["RAY_ADDRESS"]}
    if cluster.startswith("ray://"):
        try:
            import grpc  # noqa: F401 - Ray Client's transport
        except ImportError as exc:
            raise UnsupportedError("Connecting with ray://HOST:PORT needs Ray Client", _INSTALL_HINT) from exc
    return {**quiet, "address": cluster}


def _info(ray, cluster: str, started_here: bool) -> ClusterInfo:
    resources = ray.cluster_resources()
    nodes = sum(1 for n in ray.nodes() if n.get("Alive"))
    node_ip = ray.util.get_node_ip_address() if not cluster.startswith("ray://") else ""
    return ClusterInfo(cluster, node_ip, nodes, float(resources.get("CPU", 0)), float(resources.get("GPU", 0)),
                       started_here)


@contextmanager
def ray_cluster(cluster: str = LOCAL, *, num_cpus: int | None = None,
                temp_dir: str | None = None) -> Iterator[ClusterInfo]:
    """Connect to (or, for ``local``, start) a Ray cluster for the duration of the block.

    If this process is already connected, that connection is used and left open. A local
    cluster this block started is stopped at its end, its raylet and GCS processes included."""
    ray = import_ray(cluster)
    if ray.is_initialized():
        yield _info(ray, cluster, started_here=False)
        return
    kwargs = _init_kwargs(cluster, num_cpus, temp_dir)
    try:
        ray.init(**kwargs)
    except (ConnectionError, TimeoutError, ValueError, RuntimeError) as exc:
        raise NetworkError(f"Could not reach the Ray cluster at {cluster}: {exc}",
                           "check the address and that the head node runs ('ray start --head'), "
                           "or use --cluster local") from exc
    try:
        info = _info(ray, cluster, started_here=cluster == LOCAL)
        if cluster == LOCAL and info.node_ip not in ("127.0.0.1", "::1"):
            raise ConfigError(f"The local Ray cluster came up on {info.node_ip}, not on the loopback address",
                              f"start ferrum with {_LOOPBACK_ENV}=0 set, before anything imports Ray")
        yield info
    finally:
        ray.shutdown()
