"""One running Ferrum Desktop per user and data folder. A later launch hands its work to the running
app over a local socket and exits: ``ferrum-gui FILES`` queues the files there and brings its window
to the front; ``ferrum-gui --toggle-dictation`` starts or stops dictation there (how a Wayland
desktop, which lets no app grab keys, drives dictation from its own shortcut).

The socket (``QLocalServer``) is named after the user and the data folder, so instances with their
own data folder (tests, portable installs) stay apart; ``FERRUM_INSTANCE_NAME`` overrides the name.
A launch sends one JSON line ``{"command": ..., "files": [...]}`` and waits for "ok". A socket left
behind by a crashed app answers nobody and is replaced; a live one is never taken over.
"""

from __future__ import annotations

import getpass
import hashlib
import json
import os
from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtNetwork import QLocalServer, QLocalSocket

from executors.core.paths import data_dir

SHOW = "show"  # bring the window to the front
TOGGLE_DICTATION = "toggle-dictation"
COMMANDS = (SHOW, TOGGLE_DICTATION)
TIMEOUT_MS = 3000


def server_name() -> str:
    if os.environ.get("FERRUM_INSTANCE_NAME"):
        return os.environ["FERRUM_INSTANCE_NAME"]
    key = f"{getpass.getuser()}:{data_dir().resolve()}"
    return f"ferrum-desktop-{hashlib.blake2b(key.encode(), digest_size=8).hexdigest()}"


def send_to_running(command: str = SHOW, files: list[str | Path] = (), name: str | None = None) -> bool:
    """Hand ``command`` and ``files`` to the running app; True once it took them, False if none runs."""
    socket = QLocalSocket()
    socket.connectToServer(name or server_name())
    if not socket.waitForConnected(TIMEOUT_MS):
        return False
    paths = [str(Path(f).expanduser().absolute()) for f in files]
    socket.write((json.dumps({"command": command, "files": paths}) + "\n").encode("utf-8"))
    socket.waitForBytesWritten(TIMEOUT_MS)  # False when flushed already: the answer tells
    answered = socket.bytesAvailable() > 0 or socket.waitForReadyRead(TIMEOUT_MS)
    reply = bytes(socket.readAll().data()).strip()
    socket.disconnectFromServer()
    return bool(answered and reply == b"ok")


def _answers(name: str) -> bool:
    socket = QLocalSocket()
    socket.connectToServer(name)
    alive = socket.waitForConnected(500)
    socket.abort()
    return alive


def _parse(line: bytes) -> tuple[str, list[str]] | None:
    try:
        message = json.loads(line.decode("utf-8"))
        command, files = message.get("command", SHOW), [str(f) for f in message.get("files", [])]
    except (ValueError, AttributeError, TypeError):
        return None
    return (command, files) if command in COMMANDS else None


class InstanceServer(QObject):
    """Listens for later launches: ``filesReceived(paths)`` then ``commandReceived(command)``, on the
    GUI thread."""

    filesReceived = Signal(list)
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
            message = _parse(bytes(socket.readLine().data()))
            socket.write(b"ok\n" if message else b"error\n")
            socket.flush()
            if message:
                command, files = message
                if files:
                    self.filesReceived.emit(files)
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


def run_command(window, command: str) -> None:
    """What a command does in the running app, from a later launch or this launch's own flag."""
    if command == SHOW:
        window.bring_to_front()
    elif command == TOGGLE_DICTATION and window.anywhere is not None:
        window.anywhere.toggle()


def accept_later_launches(window, name: str | None = None) -> InstanceServer:
    """Listen for later launches: their files go to ``window``'s queue, their command is run."""
    server = InstanceServer(name, window)
    server.filesReceived.connect(window.enqueue)
    server.commandReceived.connect(lambda command: run_command(window, command))
    return server
