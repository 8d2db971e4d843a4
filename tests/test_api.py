"""The OpenAI-compatible API, driven by the official ``openai`` client against a real server on a
free loopback port (real bundled models, real dev-set speech)."""

from __future__ import annotations

import asyncio
import base64
import io
import json
import os
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

openai = pytest.importorskip("openai")

from executors.transcripts.exporters import parse_srt, parse_vtt

TOKEN = "test-token-0123456789"
LIMIT = 4 * 2**20
CLIP = "pocketsphinx/librivox_sense_and_sensibility_01_austen_64kb-0870.flac"
EIGHT = ["pocketsphinx/cards_005.flac", "pocketsphinx/goforward.flac", "pocketsphinx/forever_input_2.flac",
         "pocketsphinx/tidigits_dhd_2934z.flac", "pocketsphinx/librivox_sense_and_sensibility_01_austen_64kb-0880.flac",
         "pocketsphinx/librivox_sense_and_sensibility_01_austen_64kb-0930.flac", "asterisk/confbridge-invalid.flac",
         "asterisk/dir-welcome.flac"]
GUARD_S = 300  # hang guard for background conditions, not a timing assertion


@pytest.fixture(scope="module")
def api(whisper_tiny, minilm):
    """A real ApiServer on its own event-loop thread, sharing the session's models."""
    from executors.service import EngineService
    from ferrum_api.server import ApiConfig, ApiServer

    service = EngineService(executors={"whisper": whisper_tiny, "embedding": minilm})
    server = ApiServer(service, ApiConfig(port=0, token=TOKEN, max_upload_bytes=LIMIT))
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, name="api-test-loop", daemon=True)
    thread.start()
    url = asyncio.run_coroutine_threadsafe(server.start(), loop).result(60)
    yield SimpleNamespace(server=server, loop=loop, url=url, whisper=whisper_tiny, minilm=minilm, service=service)
    asyncio.run_coroutine_threadsafe(server.stop(), loop).result(60)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(60)
    service.close()


@pytest.fixture(scope="module")
def client(api):
    return openai.OpenAI(base_url=api.url, api_key=TOKEN, max_retries=0, timeout=GUARD_S)


def _transcribe(client, path: Path, **kw):
    with open(path, "rb") as fp:
        return client.audio.transcriptions.create(model="whisper-1", file=fp, **kw)


def _wait(predicate, what: str):
    deadline = time.monotonic() + GUARD_S
    while not predicate():
        if time.monotonic() > deadline:
            pytest.fail(f"gave up waiting for {what}")
        time.sleep(0.05)


def test_models_lists_both_loaded_models(client, api):
    ids = {m.id for m in client.models.list().data}
    assert ids == {api.whisper.model_id, api.minilm.model_id}


@pytest.mark.parametrize("fmt", ["json", "text", "srt", "vtt", "verbose_json"])
def test_transcription_in_every_response_format(client, api, speech_dir, fmt):
    expected = api.whisper.transcribe(speech_dir / CLIP).text.strip()
    assert "dashwood" in expected.lower()
    if fmt == "verbose_json":
        result = _transcribe(client, speech_dir / CLIP, response_format=fmt,
                             timestamp_granularities=["word", "segment"])
        assert result.text == expected
        assert result.language == "english" and result.duration == pytest.approx(7.1, abs=0.05)
        assert result.segments and all(s.end > s.start for s in result.segments)
        words = result.words
        assert len(words) == len(expected.split())
        assert all(0 <= w.start <= w.end <= result.duration + 0.05 for w in words)
        assert "".join(w.word for w in words).strip() == expected
        return
    result = _transcribe(client, speech_dir / CLIP, response_format=fmt)
    if fmt == "json":
        assert result.text == expected
        return
    text = result if isinstance(result, str) else str(result)
    if fmt == "text":
        assert text.strip() == expected
        return
    cues = (parse_srt if fmt == "srt" else parse_vtt)(text)
    assert cues and all(end > start for start, end, _ in cues)
    assert " ".join(c[2] for c in cues).split() == expected.split()


def test_verbose_json_carries_speakers_when_asked(client, tmp_path):
    import soundfile as sf
    from fixture_data import conversation

    conv = conversation(["asterisk", "librivox"], n_turns=4, seed=3)
    path = tmp_path / "two-voices.wav"
    sf.write(path, conv.audio, 16000)
    result = _transcribe(client, path, response_format="verbose_json", extra_body={"diarize": "true"})
    names = [s["name"] for s in result.speakers]
    assert names == ["Speaker 1", "Speaker 2"]
    assert {s.speaker for s in result.segments} == set(names)
    assert not getattr(result, "words", None)  # timed for speaker changes, not asked for
    text = _transcribe(client, path, response_format="text", extra_body={"diarize": "true", "num_speakers": "2"})
    assert str(text).startswith("Speaker 1: ")
    plain = _transcribe(client, path, response_format="verbose_json")
    assert not getattr(plain, "speakers", None) and all(getattr(s, "speaker", None) is None for s in plain.segments)


@pytest.mark.parametrize("fields,param", [({"diarize": "maybe"}, "diarize"), ({"num_speakers": "2"}, "num_speakers"),
                                          ({"diarize": "true", "num_speakers": "two"}, "num_speakers"),
                                          ({"diarize": "true", "min_speakers": "3", "max_speakers": "2"},
                                           "num_speakers")])
def test_bad_speaker_fields_are_400(client, speech_dir, fields, param):
    with pytest.raises(openai.BadRequestError) as info:
        _transcribe(client, speech_dir / CLIP, response_format="verbose_json", extra_body=fields)
    assert info.value.body["param"] == param


def test_fast_long_files_is_a_form_field(client, speech_dir):
    fast = _transcribe(client, speech_dir / CLIP, response_format="verbose_json",
                       extra_body={"fast_long_files": "true"})
    plain = _transcribe(client, speech_dir / CLIP, response_format="verbose_json")
    assert fast.text.strip() and len(fast.segments) == 1
    # decoded without timestamp tokens (tiny.en's special and timestamp ids start at 50257), unlike the default
    assert max(fast.segments[0].tokens) < 50257 <= max(plain.segments[0].tokens)
    assert 0.0 <= fast.segments[0].start < fast.segments[0].end <= fast.duration + 0.01
    with pytest.raises(openai.BadRequestError) as info:
        _transcribe(client, speech_dir / CLIP, extra_body={"fast_long_files": "maybe"})
    assert info.value.body["param"] == "fast_long_files"


def test_transcriptions_land_in_the_history_unless_the_request_opts_out(client, api, speech_dir):
    clip = speech_dir / "pocketsphinx/goforward.flac"
    before = {e.id for e in api.service.history.list()}
    text = _transcribe(client, clip, response_format="text")
    with open(clip, "rb") as fp:
        client.audio.transcriptions.create(model="whisper-1", file=fp, extra_body={"history": "false"})
    [entry] = [e for e in api.service.history.list() if e.id not in before]
    assert entry.source == "goforward.flac (API)" and entry.status.value == "done"
    assert api.service.history.load(entry.id).transcript.text == text.strip()
    with open(clip, "rb") as fp, pytest.raises(openai.BadRequestError) as info:
        client.audio.transcriptions.create(model="whisper-1", file=fp, extra_body={"history": "maybe"})
    assert info.value.body["param"] == "history"


def test_translation_refused_for_english_only_model(client, speech_dir):
    with open(speech_dir / CLIP, "rb") as fp, pytest.raises(openai.BadRequestError) as info:
        client.audio.translations.create(model="whisper-1", file=fp)
    assert info.value.status_code == 400
    error = info.value.body
    assert set(error) == {"message", "type", "param", "code"}
    assert error["type"] == "invalid_request_error" and error["param"] == "model"
    assert "English-only" in error["message"]


def test_unknown_model_and_dimensions_are_rejected(client):
    with pytest.raises(openai.NotFoundError) as info:
        client.embeddings.create(model="text-embedding-3-small", input="hello")
    assert info.value.body["code"] == "model_not_found"
    with pytest.raises(openai.BadRequestError) as info:
        client.embeddings.create(model="all-MiniLM-L6-v2", input="hello", dimensions=64)
    assert info.value.body["param"] == "dimensions"


def _ferrum_embed(texts: list[str]) -> np.ndarray:
    env = dict(os.environ, FERRUM_THREADS="1")
    done = subprocess.run([sys.executable, "-m", "ferrum_cli.main", "embed", "--json", "--device", "cpu",
                           "--threads", "1"], input="\n".join(texts), capture_output=True, text=True,
                          env=env, cwd=Path(__file__).resolve().parents[1], check=True)
    return np.array(json.loads(done.stdout)["embeddings"], dtype=np.float32)


def test_embeddings_match_ferrum_embed(client, api, text_dir):
    posts = [json.loads(line) for line in (text_dir / "newsgroups_mini.jsonl").read_text().splitlines()[:6]]
    texts = [p["subject"] + " " + p["body"][:300] for p in posts]
    texts = [" ".join(t.split()) for t in texts]  # one line each for the CLI
    floats = client.embeddings.create(model=api.minilm.model_id, input=texts, encoding_format="float")
    packed = client.embeddings.create(model=api.minilm.model_id, input=texts, encoding_format="base64")
    cli = _ferrum_embed(texts)
    as_floats = np.array([d.embedding for d in floats.data], dtype=np.float32)
    assert [d.index for d in floats.data] == list(range(len(texts)))
    np.testing.assert_allclose(as_floats, cli, atol=1e-5)
    decoded = np.array([np.frombuffer(base64.b64decode(d.embedding), dtype="<f4") for d in packed.data])
    np.testing.assert_array_equal(decoded, as_floats)
    assert floats.usage.prompt_tokens == sum(api.minilm.count_tokens(t) for t in texts)


def test_embeddings_base64_wire_format_and_token_arrays(api):
    import urllib.request

    ids = api.minilm.tokenizer("space shuttle launch", add_special_tokens=False)["input_ids"]
    body = json.dumps({"model": api.minilm.model_id, "input": ["space shuttle launch", ids],
                       "encoding_format": "base64"}).encode()
    request = urllib.request.Request(api.url + "/embeddings", data=body, headers={
        "Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=GUARD_S) as response:
        data = json.load(response)
    vectors = [np.frombuffer(base64.b64decode(d["embedding"]), dtype="<f4") for d in data["data"]]
    direct = api.minilm.embed(["space shuttle launch"], use_cache=False)[0]
    np.testing.assert_allclose(vectors[0], direct, atol=1e-6)
    np.testing.assert_allclose(vectors[1], direct, atol=1e-6)  # the token array decodes to the same text
    assert data["usage"]["prompt_tokens"] == 2 * api.minilm.count_tokens("space shuttle launch")


def test_wrong_token_is_401(api):
    bad = openai.OpenAI(base_url=api.url, api_key="wrong-token", max_retries=0)
    with pytest.raises(openai.AuthenticationError) as info:
        bad.models.list()
    assert info.value.status_code == 401
    assert info.value.body["code"] == "invalid_api_key"


def test_missing_token_is_401(api):
    import urllib.error
    import urllib.request

    with pytest.raises(urllib.error.HTTPError) as info:
        urllib.request.urlopen(api.url + "/models", timeout=GUARD_S)
    assert info.value.code == 401
    assert json.load(info.value)["error"]["code"] == "invalid_api_key"


def test_oversized_upload_is_413(client):
    blob = io.BytesIO(os.urandom(LIMIT + 2**20))
    blob.name = "big.wav"
    with pytest.raises(openai.APIStatusError) as info:
        client.audio.transcriptions.create(model="whisper-1", file=blob)
    assert info.value.status_code == 413
    assert info.value.body["code"] == "request_too_large"


def test_oversized_chunked_upload_is_413_while_streaming(api):
    """Without Content-Length the server counts the multipart body as it arrives."""
    import aiohttp

    async def post() -> tuple[int, dict]:
        async def body():
            yield (b"--B\r\nContent-Disposition: form-data; name=\"model\"\r\n\r\nwhisper-1\r\n"
                   b"--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.wav\"\r\n\r\n")
            for _ in range(LIMIT // 2**16 + 32):
                yield os.urandom(2**16)
            yield b"\r\n--B--\r\n"

        headers = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "multipart/form-data; boundary=B"}
        async with aiohttp.ClientSession() as session, \
                session.post(api.url + "/audio/transcriptions", data=body(), headers=headers) as r:
            return r.status, await r.json()

    status, data = asyncio.run(post())
    assert status == 413 and data["error"]["code"] == "request_too_large"


def test_eight_concurrent_transcriptions(client, api, speech_dir):
    expected = [api.whisper.transcribe(speech_dir / p).text.strip() for p in EIGHT]
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda p: _transcribe(client, speech_dir / p).text, EIGHT))
    assert results == expected
    assert all(results)


def _long_audio(speech_dir: Path, seconds: float) -> bytes:
    import soundfile as sf

    from executors.audio.decode import load_audio

    clips = [load_audio(p) for p in sorted((speech_dir / "pocketsphinx").glob("*.flac"))]
    audio = np.concatenate(clips)
    audio = np.tile(audio, int(np.ceil(seconds * 16000 / len(audio))))[: int(seconds * 16000)]
    out = io.BytesIO()
    sf.write(out, audio, 16000, format="FLAC")
    return out.getvalue()


def test_disconnect_cancels_the_job_and_frees_the_worker(client, api, speech_dir):
    import aiohttp

    stats = api.server.queue.stats
    long_flac = _long_audio(speech_dir, 120.0)
    assert len(long_flac) < LIMIT
    finished_before = stats.aborted + stats.completed

    async def post_then_hang_up():
        form = aiohttp.FormData()
        form.add_field("model", "whisper-1")
        form.add_field("file", long_flac, filename="long.flac", content_type="audio/flac")
        async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {TOKEN}"}) as session:
            task = asyncio.ensure_future(session.post(api.url + "/audio/transcriptions", data=form))
            while stats.running == 0 and not task.done():
                await asyncio.sleep(0.05)
            assert not task.done(), "the 2-minute transcription finished before the client could hang up"
            task.cancel()  # closes the connection mid-job
            await asyncio.gather(task, return_exceptions=True)

    asyncio.run(post_then_hang_up())
    _wait(lambda: stats.aborted + stats.completed > finished_before, "the cancelled job to end")
    assert stats.aborted == 1 and stats.running == 0
    result = _transcribe(client, speech_dir / "pocketsphinx/goforward.flac")
    assert result.text == api.whisper.transcribe(speech_dir / "pocketsphinx/goforward.flac").text.strip()


def test_concurrent_embedding_requests_are_coalesced(api):
    import aiohttp

    queue = api.server.queue
    calls_before, requests_before = queue.stats.embed_calls, queue.stats.embed_requests
    texts = [f"request number {i} about the space program" for i in range(12)]

    async def many():
        async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {TOKEN}"}) as session:
            async def one(text):
                async with session.post(api.url + "/embeddings",
                                        json={"model": api.minilm.model_id, "input": text}) as r:
                    assert r.status == 200
                    return (await r.json())["data"][0]["embedding"]
            return await asyncio.gather(*(one(t) for t in texts))

    vectors = np.array(asyncio.run(many()), dtype=np.float32)
    np.testing.assert_allclose(vectors, api.minilm.embed(texts, use_cache=False), atol=1e-5)
    assert queue.stats.embed_requests - requests_before == len(texts)
    assert queue.stats.embed_calls - calls_before < len(texts)


def test_client_default_encoding_round_trips(client, api):
    """The openai client asks for base64 by default and decodes it; the floats must survive."""
    texts = ["base64 on the wire", "decoded by the client"]
    default = client.embeddings.create(model=api.minilm.model_id, input=texts)
    np.testing.assert_allclose(np.array([d.embedding for d in default.data], dtype=np.float32),
                               api.minilm.embed(texts, use_cache=False), atol=1e-6)


def test_remote_address_needs_allow_remote(api):
    from executors.core.errors import InvalidParameterError
    from ferrum_api.server import ApiConfig, ApiServer

    with pytest.raises(InvalidParameterError, match="allow-remote"):
        ApiServer(api.server.service, ApiConfig(host="0.0.0.0", token=TOKEN))
    assert ApiServer(api.server.service, ApiConfig(host="0.0.0.0", token=TOKEN, allow_remote=True)).token == TOKEN
    done = subprocess.run([sys.executable, "-m", "ferrum_cli.main", "serve", "--host", "0.0.0.0", "--port", "0"],
                          check=False, capture_output=True, text=True, cwd=Path(__file__).resolve().parents[1],
                          timeout=GUARD_S)
    assert done.returncode == 1 and "--allow-remote" in done.stderr


def test_token_is_generated_once_and_kept(tmp_path):
    from ferrum_api.auth import load_or_create_token

    path = tmp_path / "api_token"
    first = load_or_create_token(path)
    assert len(first) > 30 and load_or_create_token(path) == first
    assert path.stat().st_mode & 0o777 == 0o600


def test_ferrum_serve_headless_end_to_end(speech_dir):
    """`ferrum serve` loads its own models (its own EngineService) and answers the official client."""
    env = dict(os.environ, FERRUM_THREADS="1")
    proc = subprocess.Popen([sys.executable, "-m", "ferrum_cli.main", "serve", "--port", "0", "--token", TOKEN,
                             "--threads", "1", "--device", "cpu"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            text=True, env=env, cwd=Path(__file__).resolve().parents[1])
    try:
        lines = []
        while not (lines and lines[-1].startswith("Loaded embedding")):
            line = proc.stdout.readline()
            assert line, f"ferrum serve exited early: {lines}"
            lines.append(line.strip())
        url = next(line.split(" at ", 1)[1] for line in lines if line.startswith("Ferrum API at "))
        assert url.startswith("http://127.0.0.1:") and f"Bearer token: {TOKEN}" in lines
        served = openai.OpenAI(base_url=url, api_key=TOKEN, max_retries=0, timeout=GUARD_S)
        assert {m.id for m in served.models.list().data} == {"whisper-tiny.en", "all-MiniLM-L6-v2"}
        text = _transcribe(served, speech_dir / "pocketsphinx/goforward.flac", response_format="text")
        assert "forward" in text.lower()
    finally:
        proc.terminate()
        proc.wait(GUARD_S)
