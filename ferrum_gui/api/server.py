"""The API server inside the app: same qasync loop, same engine service (models, workers, history)
as the GUI.

The controller (one per host, a child QObject found with ``api_controller(host)``) starts and stops
the server when the API settings change.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QObject, Signal

from executors.core.errors import FerrumError, wrap_unexpected

from ..settings import load_group, save_group

_GROUP = "api"
_NAME = "ferrumApiServer"  # the host's child that is its controller


@dataclass(frozen=True)
class ApiSettings:
    enabled: bool = False
    port: int = 8765
    auth: bool = True
    max_upload_mb: int = 200
    save_history: bool = True

    @classmethod
    def load(cls, qsettings) -> ApiSettings:
        return load_group(cls, qsettings, _GROUP)

    def save(self, qsettings) -> None:
        save_group(self, qsettings, _GROUP)


class ApiServerController(QObject):
    stateChanged = Signal(str, str)   # "stopped" | "running" | "error", message (the URL when running)

    def __init__(self, host):
        super().__init__(host)
        self.setObjectName(_NAME)
        self.host = host
        self.server = None
        self.state, self.message = "stopped", "The API server is off"
        self.applied: ApiSettings | None = None

    @property
    def url(self) -> str | None:
        return self.server.url if self.server is not None else None

    @property
    def token(self) -> str | None:
        from ferrum_api.auth import load_or_create_token

        return self.server.token if self.server is not None else load_or_create_token()

    async def apply(self, settings: ApiSettings) -> None:
        """Stop the running server (if any) and start one for ``settings`` when enabled."""
        from ferrum_api.server import ApiConfig, ApiServer

        if settings == self.applied and (self.state == "running") == settings.enabled:
            return  # nothing changed: keep clients connected
        self.applied = settings
        await self.stop()
        if not settings.enabled:
            return
        try:
            config = ApiConfig(port=settings.port, auth=settings.auth, save_history=settings.save_history,
                               max_upload_bytes=int(settings.max_upload_mb) * 2**20,
                               batch_size=max(1, self.host.settings.batch_size))
            server = ApiServer(self.host.service, config)
            url = await server.start()
        except Exception as exc:  # noqa: BLE001 - shown in the settings page and as a notification
            err = exc if isinstance(exc, FerrumError) else wrap_unexpected(exc, "starting the API server")
            self._set("error", err.message)
            self.host.failure.emit(err)
            return
        self.server = server
        self._set("running", url)

    async def stop(self) -> None:
        if self.server is not None:
            server, self.server = self.server, None
            await server.stop()
        self._set("stopped", "The API server is off")

    def _set(self, state: str, message: str) -> None:
        self.state, self.message = state, message
        self.stateChanged.emit(state, message)


def api_controller(host) -> ApiServerController:
    """The host's controller, created on first use."""
    controller = host.findChild(ApiServerController, _NAME)
    return controller if controller is not None else ApiServerController(host)


async def stop_api_server(host) -> None:
    """Stop the server if one runs (the app quits): clients get a closed connection, not a dead loop."""
    controller = host.findChild(ApiServerController, _NAME)
    if controller is not None:
        await controller.stop()


def start_api_server(host, qsettings):
    """Start the server at app start when the user turned it on; returns the future (or None)."""
    settings = ApiSettings.load(qsettings)
    if not settings.enabled:
        return None
    import asyncio

    return asyncio.ensure_future(api_controller(host).apply(settings))
