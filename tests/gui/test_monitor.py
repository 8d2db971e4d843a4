"""Monitor panel on the real host: Busy while a transcription runs, counters and plots after it."""

from __future__ import annotations

CLIP = "pocketsphinx/librivox_sense_and_sensibility_01_austen_64kb-0880.flac"


def _count(text: str | None) -> int:
    return int((text or "0").replace(",", ""))


def test_monitor_shows_busy_during_a_job_and_counters_after(main_window, host, run_async, listen, speech_dir):
    monitor = main_window.show_panel("monitor")
    assert monitor.state_text("whisper") in ("Ready", "Busy")
    decodes_before = _count(monitor.value("whisper", "Decode operations"))
    latencies_before = len(monitor.plots.buffers["job_latency_s"])
    seen = []
    # connected after the panel, so this runs after the panel has updated its table
    listen(host.statusUpdated, lambda name, _status: name == "whisper" and seen.append(monitor.state_text(name)))

    transcript = run_async(host.transcribe(speech_dir / CLIP), timeout=300)
    run_async(_next_poll(host), timeout=10)

    assert transcript.segments
    assert "Busy" in seen
    assert monitor.state_text("whisper") == "Ready"
    assert _count(monitor.value("whisper", "Decode operations")) > decodes_before
    assert float(monitor.value("whisper", "Avg decode").split()[0]) > 0
    assert monitor.value("whisper", "Model") == "whisper-tiny.en"
    assert monitor.value("whisper", "Parameters").endswith("M")
    assert len(monitor.plots.buffers["job_latency_s"]) == latencies_before + 1
    assert len(monitor.plots.buffers["rtf"]) > 0 and len(monitor.plots.buffers["memory_mb"]) > 0


def test_capabilities_cache_table_and_plots(main_window, host, run_async):
    monitor = main_window.show_panel("monitor")
    run_async(host.embed(["the shuttle reached orbit", "the shuttle reached orbit", "a different text"]))
    run_async(host.embed(["the shuttle reached orbit"]))  # a cache hit
    run_async(_next_poll(host), timeout=10)

    caps = {row[0]: row[1:] for row in monitor.capabilities.row_texts()}
    assert caps["Max sequence length"][1] == "256"
    assert "cpu" in caps["Devices"][0]
    embedding_rows = [row for row in monitor.caches.row_texts() if row[0] == "BERT"]
    assert len(embedding_rows) == 1
    assert _count(embedding_rows[0][2]) >= 1  # hits
    assert len(monitor.plots.buffers["texts_per_s"]) >= 2

    monitor.plots.refresh()
    assert monitor.plots._graphics is not None  # built when first shown
    xs, ys = monitor.plots._curves["memory_mb"].getData()
    assert len(xs) > 0 and max(ys) > 10 and max(xs) <= 0


async def _next_poll(host):
    import asyncio

    done = asyncio.Event()

    def on_status(*_):
        done.set()
    host.statusUpdated.connect(on_status)
    try:
        await done.wait()
    finally:
        host.statusUpdated.disconnect(on_status)
