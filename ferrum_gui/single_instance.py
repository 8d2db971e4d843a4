"""One Ferrum Desktop per user and data folder: a second launch hands its files to the running one,
which comes to the front, and exits.

The running app listens on a local socket (``QLocalServer``) named after the user and the data
folder, so instances with their own data folder (tests, portable installs) stay apart. A launch
first tries to connect; when somebody answers, it sends one JSON line ``{"files": [...]}`` and
waits for "ok". A socket left behind by a crashed instance answers nobody and is replaced.
"""

from __future__ import annotations

import getpass
import hashlib
import json
from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtNetwork import QLocalServer, QLocalSocket

from executors.core.paths import data_dir

TIMEOUT_MS = 3000


def server_name() -> str:
    key = f"{getpass.getuser()}:{data_dir().resolve()}"
    return f"ferrum-desktop-{hashlib.blake2b(key.encode(), digest_size=8).hexdigest()}"


def hand_over(files: list[str | Path], name: str | None = None) -> bool:
    """Give ``files`` to a running instance and ask it to come to the front; False if none runs."""
    socket = QLocalSocket()
    socket.connectToServer(name or server_name())
    if not socket.waitForConnected(TIMEOUT_MS):
        return False
    message = json.dumps({"files": [str(Path(f).expanduser().absolute()) for f in files]}) + "\n"
    socket.write(message.encode("utf-8"))
    socket.waitForBytesWritten(TIMEOUT_MS)  # False when flushed already: the answer tells
    answered = socket.bytesAvailable() > 0 or socket.waitForReadyRead(TIMEOUT_MS)
    reply = bytes(socket.readAll().data()).strip()
    socket.disconnectFromServer()
    return bool(answered and reply == b"ok")


class InstanceServer(QObject):
    """Receives hand-overs: ``filesReceived(paths)`` then ``activationRequested()``."""

    filesReceived = Signal(list)
    activationRequested = Signal()

    def __init__(self, name: str | None = None, parent: QObject | None = None):
        super().__init__(parent)
        self.name = name or server_name()
        self._server = QLocalServer(self)
        self._server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        if not self._server.listen(self.name):
            QLocalServer.removeServer(self.name)  # left behind by an instance that crashed
            self._server.listen(self.name)
        self._server.newConnection.connect(self._accept)

    @property
    def listening(self) -> bool:
        return self._server.isListening()

    def _accept(self) -> None:
        while self._server.hasPendingConnections():
            socket = self._server.nextPendingConnection()
            socket.readyRead.connect(lambda socket=socket: self._read(socket))
            socket.disconnected.connect(socket.deleteLater)

    def _read(self, socket: QLocalSocket) -> None:
        if not socket.canReadLine():
            return
        try:
            files = [str(f) for f in json.loads(bytes(socket.readLine().data()).decode("utf-8")).get("files", [])]
        except (ValueError, AttributeError):
            files = None
        socket.write(b"ok\n" if files is not None else b"error\n")
        socket.flush()
        if files is not None:
            if files:
                self.filesReceived.emit(files)
            self.activationRequested.emit()

    def close(self) -> None:
        self._server.close()


def accept_hand_overs(window, name: str | None = None) -> InstanceServer:
    """Listen for later launches: their files go to ``window``'s queue and the window comes forward."""
    server = InstanceServer(name, window)
    server.filesReceived.connect(window.enqueue)
    server.activationRequested.connect(window.bring_to_front)
    return server
