"""Error hierarchy for the engine.

Every error is a ``FerrumError`` carrying a ``kind`` (the same kinds as Ferrum's Rust
engine) and a ``hint`` that tells the user what to do next. Subclasses also derive from
the matching builtin so callers that only know ``ValueError`` or ``OSError`` still catch them.
"""

from __future__ import annotations

import enum


class ErrorKind(str, enum.Enum):
    CONFIG = "Config"
    MODEL = "Model"
    TOKENIZER = "Tokenizer"
    BACKEND = "Backend"
    DEVICE = "Device"
    SCHEDULER = "Scheduler"
    REQUEST_VALIDATION = "RequestValidation"
    RESOURCE_EXHAUSTED = "ResourceExhausted"
    TIMEOUT = "Timeout"
    IO = "IO"
    SERIALIZATION = "Serialization"
    INTERNAL = "Internal"
    CANCELLED = "Cancelled"
    NOT_FOUND = "NotFound"
    UNSUPPORTED = "Unsupported"
    INVALID_FORMAT = "InvalidFormat"
    INVALID_PARAMETER = "InvalidParameter"
    NETWORK = "Network"


_RETRYABLE = {ErrorKind.TIMEOUT, ErrorKind.RESOURCE_EXHAUSTED, ErrorKind.SCHEDULER, ErrorKind.NETWORK}
_CLIENT = {
    ErrorKind.REQUEST_VALIDATION,
    ErrorKind.INVALID_FORMAT,
    ErrorKind.INVALID_PARAMETER,
    ErrorKind.NOT_FOUND,
    ErrorKind.UNSUPPORTED,
    ErrorKind.CANCELLED,
}


class FerrumError(Exception):
    """Root of every engine error: ``str(err)`` says what failed, ``err.hint`` what to do."""

    kind: ErrorKind = ErrorKind.INTERNAL

    def __init__(self, message: str, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message} ({self.hint})" if self.hint else self.message

    def is_retryable(self) -> bool:
        return self.kind in _RETRYABLE

    def is_client_error(self) -> bool:
        return self.kind in _CLIENT

    def is_server_error(self) -> bool:
        return not self.is_client_error()

    def to_dict(self) -> dict:
        return {"kind": self.kind.value, "message": self.message, "hint": self.hint}


def _kind(kind: ErrorKind, *bases: type) -> type:
    """Build a thin subclass bound to one kind (and to a matching builtin, if any)."""
    name = kind.value + ("Error" if kind is not ErrorKind.CANCELLED else "")
    return type(name, (FerrumError, *bases), {"kind": kind, "__module__": __name__})


ConfigError = _kind(ErrorKind.CONFIG)
ModelError = _kind(ErrorKind.MODEL)
TokenizerError = _kind(ErrorKind.TOKENIZER)
BackendError = _kind(ErrorKind.BACKEND, RuntimeError)
DeviceError = _kind(ErrorKind.DEVICE, RuntimeError)
SchedulerError = _kind(ErrorKind.SCHEDULER)
RequestValidationError = _kind(ErrorKind.REQUEST_VALIDATION, ValueError)
ResourceExhaustedError = _kind(ErrorKind.RESOURCE_EXHAUSTED, MemoryError)
TimeoutError_ = _kind(ErrorKind.TIMEOUT, TimeoutError)
IOError_ = _kind(ErrorKind.IO, OSError)
SerializationError = _kind(ErrorKind.SERIALIZATION, ValueError)
InternalError = _kind(ErrorKind.INTERNAL, RuntimeError)
Cancelled = _kind(ErrorKind.CANCELLED)
NotFoundError = _kind(ErrorKind.NOT_FOUND, LookupError)
UnsupportedError = _kind(ErrorKind.UNSUPPORTED, NotImplementedError)
InvalidFormatError = _kind(ErrorKind.INVALID_FORMAT, ValueError)
InvalidParameterError = _kind(ErrorKind.INVALID_PARAMETER, ValueError)
NetworkError = _kind(ErrorKind.NETWORK, ConnectionError)

TimeoutError_.__name__ = TimeoutError_.__qualname__ = "FerrumTimeoutError"
IOError_.__name__ = IOError_.__qualname__ = "FerrumIOError"

_BY_KIND = {cls.kind: cls for cls in (
    ConfigError, ModelError, TokenizerError, BackendError, DeviceError, SchedulerError,
    RequestValidationError, ResourceExhaustedError, TimeoutError_, IOError_, SerializationError,
    InternalError, Cancelled, NotFoundError, UnsupportedError, InvalidFormatError,
    InvalidParameterError, NetworkError,
)}


def error_for(kind: ErrorKind | str, message: str, hint: str | None = None) -> FerrumError:
    """Make the error class of ``kind`` (used when errors cross a process or HTTP boundary)."""
    return _BY_KIND[ErrorKind(kind)](message, hint)


def wrap_unexpected(exc: BaseException, doing: str) -> FerrumError:
    """Turn a stray library exception into a FerrumError that says what we were doing."""
    if isinstance(exc, FerrumError):
        return exc
    if isinstance(exc, MemoryError):
        return ResourceExhaustedError(f"Out of memory while {doing}", "close other programs or pick a smaller model")
    if isinstance(exc, FileNotFoundError):
        return NotFoundError(f"{exc.filename or exc} not found while {doing}", "check the path")
    if isinstance(exc, OSError):
        return IOError_(f"I/O error while {doing}: {exc}", "check the file and its permissions")
    return InternalError(f"Unexpected {type(exc).__name__} while {doing}: {exc}",
                         "this is a bug; please report it with the log")
