"""Reading a multipart upload with a size limit that holds before the body is read whole."""

from __future__ import annotations

from dataclasses import dataclass, field

from aiohttp import web

from .errors import ApiError, invalid

CHUNK = 64 * 1024
MAX_FIELD_BYTES = 64 * 1024  # a form field other than the file (prompt, language…)


@dataclass
class Upload:
    fields: dict[str, list[str]] = field(default_factory=dict)
    file: bytes | None = None
    filename: str = ""

    def get(self, name: str, default: str | None = None) -> str | None:
        values = self.fields.get(name)
        return values[-1] if values else default


def too_large(limit: int) -> ApiError:
    return ApiError(413, f"The request is larger than this server's limit of {limit / 2**20:.0f} MB; send a "
                    "shorter recording or raise the limit (ferrum serve --max-upload-mb, or the app's "
                    "API server settings)", code="request_too_large")


async def read_upload(request: web.Request, limit: int, file_field: str = "file") -> Upload:
    """Fields and the file of a ``multipart/form-data`` request, counting bytes as they stream in."""
    if request.content_length is not None and request.content_length > limit:
        raise too_large(limit)
    if request.content_type != "multipart/form-data":
        raise invalid(f"Expected a multipart/form-data body, got '{request.content_type}'; send the audio "
                      "as the 'file' part of a form", code="invalid_content_type")
    upload, total = Upload(), 0
    try:
        reader = await request.multipart()
        async for part in reader:
            is_file = part.name == file_field
            cap = limit if is_file else MAX_FIELD_BYTES
            data = bytearray()
            while chunk := await part.read_chunk(CHUNK):
                total += len(chunk)
                if total > limit:
                    raise too_large(limit)
                data += chunk
                if len(data) > cap:
                    raise invalid(f"The form field '{part.name}' is too long", param=part.name)
            if is_file:
                upload.file, upload.filename = bytes(data), part.filename or ""
            elif part.name:
                upload.fields.setdefault(part.name, []).append(data.decode("utf-8", errors="replace"))
    except ValueError as exc:  # aiohttp's multipart parser reports a malformed body this way
        raise invalid(f"Malformed multipart body: {exc}", code="invalid_multipart") from exc
    return upload
