"""One running app per user for commands from outside: ``ferrum-gui --toggle-dictation`` hands the
command to the running app (over a local socket) instead of starting a second one.  That is how
a Wayland desktop, which lets no app grab keys, starts and stops dictation from its own shortcut.
"""

from __future__ import annotations

import getpass
import os

from PySide6.QtCore import QObject, Signal
from PySide6.QtNetwork import QLocalServer, QLocalSocket

COMMANDS = ("toggle-dictation", "show")


def server_name() -> str:
    return os.environ.get("FERRUM_INSTANCE_NAME") or f"ferrum-desktop-{getpass.getuser()}"


def send_to_running(command: str, name: str | None = None, timeout_ms: int = 1500) -> bool:
    """True when a running app took ``command``; False when none is running."""
    socket = QLocalSocket()
    socket.connectToServer(name or server_name())
    if not socket.waitForConnected(timeout_ms):
        return False
    socket.write((command + "\n").encode())
    sent = socket.waitForBytesWritten(timeout_ms)
    socket.disconnectFromServer()
    return sent


def _answers(name: str) -> bool:
    socket = QLocalSocket()
    socket.connectToServer(name)
    alive = socket.waitForConnected(500)
    socket.abort()
    return alive


class InstanceServer(QObject):
    """Listens for commands from later launches; ``commandReceived(command)`` on the GUI thread."""

    commandReceived = Signal(str)

    def __init__(self, name: str | None = None, parent: QObject | None = None):
        super().__init__(parent)
        self.name = name or server_name()
        self.server = QLocalServer(self)
        self.server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        self.server.newConnection.connect(self._accept)
        if _answers(self.name):
            return  # another app has it (listening would take the name over: Qt renames the socket in)
        if not self.server.listen(self.name):
            QLocalServer.removeServer(self.name)  # a socket file left by an app that crashed
            self.server.listen(self.name)

    @property
    def listening(self) -> bool:
        return self.server.isListening()

    def _accept(self) -> None:
        while (socket := self.server.nextPendingConnection()) is not None:
            socket.readyRead.connect(self._read)
            socket.disconnected.connect(self._drop)
            self._read(socket)

    def _read(self, socket: QLocalSocket | None = None) -> None:
        socket = socket or self.sender()
        while socket.canReadLine():
            command = bytes(socket.readLine()).decode(errors="replace").strip()
            if command in COMMANDS:
                self.commandReceived.emit(command)

    def _drop(self) -> None:
        socket = self.sender()
        socket.readyRead.disconnect(self._read)
        socket.disconnected.disconnect(self._drop)
        socket.deleteLater()

    def close(self) -> None:
        for socket in self.server.findChildren(QLocalSocket):
            socket.abort()
        self.server.close()
