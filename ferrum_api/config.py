"""The server's settings and the typed keys under which the app keeps its shared objects."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from aiohttp import web

from executors.whisper.options import DEFAULT_BATCH_WINDOWS

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
DEFAULT_MAX_UPLOAD_MB = 200


@dataclass(frozen=True)
class ApiConfig:
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT            # 0 = any free port
    token: str | None = None            # None = the saved token (generated on first start)
    auth: bool = True
    allow_remote: bool = False
    max_upload_bytes: int = DEFAULT_MAX_UPLOAD_MB * 2**20
    batch_size: int = DEFAULT_BATCH_WINDOWS   # 30 s windows of an upload decoded together; 1 = one at a time
    save_history: bool = True           # transcriptions land in the transcript history (a request
                                        # may opt out with the form field history=false)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


CONFIG = web.AppKey("ferrum_config", ApiConfig)
QUEUE = web.AppKey("ferrum_queue", object)   # work_queue.WorkQueue
METER = web.AppKey("ferrum_meter", object)   # server.RequestMeter
