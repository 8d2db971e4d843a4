"""FerrumError → OpenAI's error envelope ``{"error": {"message", "type", "param", "code"}}``."""

from __future__ import annotations

from aiohttp import web

from executors.core.errors import (
    ErrorKind,
    FerrumError,
    InvalidParameterError,
    wrap_unexpected,
)

INVALID_REQUEST = "invalid_request_error"
SERVER_ERROR = "server_error"

_STATUS = {
    ErrorKind.REQUEST_VALIDATION: 400,
    ErrorKind.INVALID_PARAMETER: 400,
    ErrorKind.INVALID_FORMAT: 400,
    ErrorKind.UNSUPPORTED: 400,
    ErrorKind.SERIALIZATION: 400,
    ErrorKind.NOT_FOUND: 404,
    ErrorKind.RESOURCE_EXHAUSTED: 503,
    ErrorKind.SCHEDULER: 503,
    ErrorKind.CANCELLED: 503,
    ErrorKind.TIMEOUT: 504,
}


class ApiError(Exception):
    """An HTTP error with OpenAI's fields; ``from_ferrum`` maps engine errors onto it."""

    def __init__(self, status: int, message: str, *, type: str = INVALID_REQUEST, param: str | None = None,
                 code: str | None = None):
        super().__init__(message)
        self.status, self.message, self.type, self.param, self.code = status, message, type, param, code

    @classmethod
    def from_ferrum(cls, err: FerrumError, param: str | None = None) -> ApiError:
        status = _STATUS.get(err.kind, 500)
        return cls(status, str(err), type=INVALID_REQUEST if status < 500 else SERVER_ERROR,
                   param=getattr(err, "param", None) or param, code=_code(err, status))

    def envelope(self) -> dict:
        return {"error": {"message": self.message, "type": self.type, "param": self.param, "code": self.code}}

    def response(self) -> web.Response:
        return web.json_response(self.envelope(), status=self.status)


def _code(err: FerrumError, status: int) -> str | None:
    if err.kind is ErrorKind.NOT_FOUND:
        return "not_found"
    if status == 400:
        return "invalid_value" if isinstance(err, InvalidParameterError) else err.kind.value.lower()
    return err.kind.value.lower()


def invalid(message: str, param: str | None = None, code: str = "invalid_value") -> ApiError:
    return ApiError(400, message, param=param, code=code)


def to_api_error(exc: BaseException, doing: str) -> ApiError:
    if isinstance(exc, ApiError):
        return exc
    if isinstance(exc, web.HTTPException):
        return ApiError(exc.status, exc.reason if exc.status != 404 else "Unknown URL; see GET /v1/models "
                        "and the OpenAI API reference for the supported routes",
                        type=INVALID_REQUEST if exc.status < 500 else SERVER_ERROR,
                        code="not_found" if exc.status == 404 else None)
    return ApiError.from_ferrum(wrap_unexpected(exc, doing))
