"""``POST /v1/audio/transcriptions`` and ``/v1/audio/translations`` (OpenAI's request and response shapes).

Beyond OpenAI's fields: ``diarize=true`` labels the speakers (``speaker`` on each segment and word of
``verbose_json`` plus a top-level ``speakers`` list; ``[Name]`` / ``<v Name>`` in srt / vtt; ``Name:``
lines in text), with optional ``num_speakers``, or ``min_speakers`` / ``max_speakers``.
``fast_long_files=true`` decodes the speech in independent pieces of up to 30 s, several at a time
(``TranscribeOptions.chunked``): faster on long recordings, one segment per piece.
"""

from __future__ import annotations

import math

from aiohttp import web

from executors.service import WHISPER
from executors.transcripts.exporters import FORMATS as EXPORT_FORMATS_BY_NAME
from executors.transcripts.exporters import render_transcript, to_verbose_json
from executors.whisper.options import TranscribeOptions

from .config import CONFIG, QUEUE
from .errors import invalid
from .routes_models import checked_executor
from .upload import Upload, read_upload

# OpenAI's names: "json" is the text alone; the others are the files of executors' FORMATS
FORMATS = ("json", *(f.api_name for f in EXPORT_FORMATS_BY_NAME.values()))
_FILE_FORMAT = {f.api_name: f.name for f in EXPORT_FORMATS_BY_NAME.values()}
GRANULARITIES = ("word", "segment")


def _temperature(upload: Upload) -> tuple[float, ...] | None:
    raw = upload.get("temperature")
    if raw in (None, ""):
        return None
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not 0.0 <= value <= 1.0:
        raise invalid(f"temperature must be a number from 0 to 1, got '{raw}'", param="temperature")
    # OpenAI: 0 means "raise the temperature automatically when decoding fails" = our fallback ladder
    return None if value == 0 else (value,)


def _granularities(upload: Upload, fmt: str) -> set[str]:
    values = upload.fields.get("timestamp_granularities[]", []) + upload.fields.get("timestamp_granularities", [])
    chosen = {v.strip() for v in values if v.strip()}
    unknown = chosen - set(GRANULARITIES)
    if unknown:
        raise invalid(f"Unknown timestamp granularity {sorted(unknown)}; use 'word' and/or 'segment'",
                      param="timestamp_granularities")
    if chosen and fmt != "verbose_json":
        raise invalid("timestamp_granularities needs response_format 'verbose_json'",
                      param="timestamp_granularities")
    return chosen or {"segment"}


def _count(upload: Upload, name: str) -> int | None:
    raw = (upload.get(name) or "").strip()
    if not raw:
        return None
    try:
        return int(raw)
    except ValueError:
        raise invalid(f"{name} must be a whole number, got '{raw}'", param=name) from None


def _flag(upload: Upload, name: str) -> bool:
    """A true/false form field (absent: false)."""
    flag = (upload.get(name) or "").strip().lower()
    if flag not in ("", "false", "0", "true", "1"):
        raise invalid(f"{name} must be true or false, got '{flag}'", param=name)
    return flag in ("true", "1")


def _speakers(upload: Upload):
    """DiarizationOptions when the request asks for speakers (``diarize=true``), else None."""
    diarize = _flag(upload, "diarize")
    counts = {name: _count(upload, name) for name in ("num_speakers", "min_speakers", "max_speakers")}
    if not diarize:
        given = [name for name, value in counts.items() if value is not None]
        if given:
            raise invalid(f"{given[0]} needs diarize=true", param=given[0])
        return None
    from executors.core.errors import FerrumError
    from executors.diarization import DiarizationOptions

    try:
        return DiarizationOptions(num_speakers=counts["num_speakers"], min_speakers=counts["min_speakers"] or 1,
                                  max_speakers=counts["max_speakers"]).validate()
    except FerrumError as exc:
        raise invalid(exc.message, param="num_speakers") from exc


def _options(upload: Upload, task: str, granularities: set[str], batch_size: int,
             diarized: bool = False) -> TranscribeOptions:
    options = TranscribeOptions(task=task, initial_prompt=upload.get("prompt") or None,
                                word_timestamps="word" in granularities or diarized, batch_windows=max(1, batch_size),
                                chunked=_flag(upload, "fast_long_files"))
    if task == "transcribe":
        options.language = (upload.get("language") or "").strip().lower() or None
    temperatures = _temperature(upload)
    if temperatures is not None:
        options.temperatures = temperatures
    return options


def _respond(transcript, fmt: str, granularities: set[str]) -> web.Response:
    if fmt == "text":
        text = render_transcript(transcript, "txt") if transcript.speakers else transcript.text.strip() + "\n"
        return web.Response(text=text, content_type="text/plain")
    if _FILE_FORMAT.get(fmt) in ("srt", "vtt"):
        return web.Response(text=render_transcript(transcript, _FILE_FORMAT[fmt]), content_type="text/plain")
    usage = {"type": "duration", "seconds": math.ceil(transcript.duration)}
    if fmt == "json":
        return web.json_response({"text": transcript.text.strip(), "usage": usage})
    body = to_verbose_json(transcript)
    body["text"] = body["text"].strip()
    if "segment" not in granularities:
        body.pop("segments", None)
    if "word" in granularities:
        body.setdefault("words", [])
    else:
        body.pop("words", None)  # timed for speaker changes only
    body["usage"] = usage
    return web.json_response(body)


async def _handle(request: web.Request, task: str) -> web.Response:
    upload = await read_upload(request, request.app[CONFIG].max_upload_bytes)
    if not upload.file:
        raise invalid("The 'file' part is missing or empty; send the audio file as multipart field 'file'",
                      param="file", code="missing_required_parameter")
    fmt = (upload.get("response_format") or "json").strip()
    if fmt not in FORMATS:
        raise invalid(f"Unknown response_format '{fmt}'; use one of {', '.join(FORMATS)}", param="response_format")
    granularities = _granularities(upload, fmt)
    executor = await checked_executor(request, WHISPER, upload.get("model"))
    if task == "translate" and not executor.is_multilingual:
        raise invalid(f"The model '{executor.model_id}' is English-only and cannot translate; load a "
                      "multilingual Whisper model (e.g. whisper-base) to use /v1/audio/translations",
                      param="model", code="unsupported_model")
    speakers = _speakers(upload)
    options = _options(upload, task, granularities, request.app[CONFIG].batch_size, speakers is not None)
    title = f"{upload.filename or 'audio'} (API)"
    save = request.app[CONFIG].save_history and _history_wanted(upload)
    transcript = await request.app[QUEUE].transcribe(upload.file, options, title=title, save=save, speakers=speakers)
    return _respond(transcript, fmt, granularities)


def _history_wanted(upload: Upload) -> bool:
    """The optional form field ``history`` ("false" keeps this transcription out of the history)."""
    raw = (upload.get("history") or "true").strip().lower()
    if raw not in ("true", "false", "1", "0", "yes", "no"):
        raise invalid(f"history must be true or false, got '{raw}'", param="history")
    return raw in ("true", "1", "yes")


async def transcriptions(request: web.Request) -> web.Response:
    return await _handle(request, "transcribe")


async def translations(request: web.Request) -> web.Response:
    return await _handle(request, "translate")
