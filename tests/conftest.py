"""Shared test set-up: offline model loading, throw-away data dirs, shared real models, and the two
test tiers (see tests/README.md).

* In-repo data (``tests/data``, the quick tier reads only this): fixtures ``speech_dir``, ``text_dir``,
  ``diarization_dir``, ``long_speech``; module ``fixture_data`` for the same paths and readers.
* Evaluation sets (``FERRUM_EVAL_DIR``; its default is ``bench.eval_data``'s): fixtures ``eval_dir``,
  ``eval_speech_dir``, ``eval_text_dir``, ``eval_diarization_dir`` (a test using one is marked ``eval``
  automatically); module ``speech_eval`` (``require_eval``, ``eval_slice``…) for tests marked
  ``@pytest.mark.eval`` by hand. Missing data skips such a test with the reason; an unmarked test that
  reaches for it fails, so the quick tier (``-m "not slow and not eval"``) provably needs no eval data.

Environment variables are set before anything imports transformers or Qt.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
_SESSION_TMP = Path(tempfile.mkdtemp(prefix="ferrum-tests-"))
os.environ["FERRUM_DATA_DIR"] = str(_SESSION_TMP / "data")
# Converted models are a pure cache keyed by content hash: reuse it across runs unless told not to.
os.environ.setdefault("FERRUM_CACHE_DIR", str(Path(tempfile.gettempdir()) / "ferrum-test-cache"))

from ferrum_gui.shell.singletons import make_singletons_immortal  # noqa: E402

make_singletons_immortal()  # as the app does: PySide6 6.12 wears None and True away on Python < 3.12

import fixture_data  # noqa: E402
import pytest  # noqa: E402
from speech_eval import require_eval  # noqa: E402

from bench.eval_data import MISSING_PREFIX  # noqa: E402

EVAL_FIXTURES = {"eval_dir", "eval_speech_dir", "eval_text_dir", "eval_diarization_dir"}


# ---- tiers: tests that read the evaluation sets carry the ``eval`` marker ----

@pytest.hookimpl(tryfirst=True)  # before ``-m`` deselects by marker
def pytest_collection_modifyitems(items):
    for item in items:
        if EVAL_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.eval)


def _eval_data_missing(call) -> str | None:
    """The message when this phase stopped because evaluation data is absent (a skip from
    ``require_eval`` or an ``EvalDataMissing`` raised by bench code)."""
    if call.excinfo is None:
        return None
    exc = call.excinfo.value
    message = str(getattr(exc, "msg", None) or exc)
    if type(exc).__name__ == "EvalDataMissing" or (call.excinfo.errisinstance(pytest.skip.Exception)
                                                    and message.startswith(MISSING_PREFIX)):
        return message
    return None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    report = (yield).get_result()
    missing = _eval_data_missing(call)
    if missing is None:
        return
    if item.get_closest_marker("eval") is None:
        report.outcome = "failed"
        report.longrepr = (f"{item.nodeid} reads the evaluation sets but is not marked eval: mark it "
                           f"@pytest.mark.eval (or use tests/data through fixture_data) [{missing}]")
    elif report.failed:
        report.outcome = "skipped"
        report.longrepr = (str(item.path), item.location[1] or 0, f"Skipped: {missing}")


# ---- data: in-repo fixtures (quick tier) and the evaluation sets (eval tier) ----

@pytest.fixture(scope="session")
def speech_dir() -> Path:
    """tests/data/speech: 50 short clips in speech-dev's layout (``transcripts.tsv``, ``asterisk/``,
    ``pocketsphinx/``)."""
    return fixture_data.SPEECH


@pytest.fixture(scope="session")
def text_dir() -> Path:
    """tests/data/text: ``newsgroups_mini.jsonl`` (the 200 posts of text-dev)."""
    return fixture_data.TEXT


@pytest.fixture(scope="session")
def diarization_dir() -> Path:
    """tests/data/diarization: one 4-speaker excerpt with its ``.rttm`` and ``.uem``."""
    return fixture_data.DIARIZATION


@pytest.fixture(scope="session")
def long_speech():
    """(audio, reference) of tests/data/speech/long: about a minute of whole sentences, 16 kHz float32."""
    return fixture_data.long_speech()


@pytest.fixture(scope="session")
def eval_dir() -> Path:
    """The evaluation folder (``FERRUM_EVAL_DIR``, else ``bench.eval_data``'s default); skips the test when absent."""
    return require_eval()


@pytest.fixture(scope="session")
def eval_speech_dir() -> Path:
    return require_eval("speech-dev")


@pytest.fixture(scope="session")
def eval_text_dir() -> Path:
    return require_eval("text-dev")


@pytest.fixture(scope="session")
def eval_diarization_dir() -> Path:
    return require_eval("diarization-dev")


@pytest.fixture(scope="session")
def minilm_path() -> Path:
    """Folder of the bundled all-MiniLM-L6-v2 (sentence-transformers format)."""
    from executors.models.store import resolve_model

    return Path(resolve_model("all-MiniLM-L6-v2", kind="embedding").path)


@pytest.fixture(scope="session")
def minilm(minilm_path):
    """One CPU BertModelExecutor of the bundled MiniLM shared by the session (fp32)."""
    from executors.bert import BertModelExecutor

    return BertModelExecutor.load(minilm_path, device="cpu")


# ---- GUI: qasync loop on pytest-qt's QApplication, the shared host, leak-checked main window ----

@pytest.fixture(scope="session")
def qasync_loop(qapp):
    """One qasync loop on the session QApplication; async host methods run on it via ``run_async``."""
    import asyncio

    import qasync

    loop = qasync.QEventLoop(qapp)
    asyncio.set_event_loop(loop)
    yield loop


@pytest.fixture(scope="session")
def run_async(qasync_loop):
    """``run_async(coro, timeout=120)``: drive the Qt + asyncio loop until ``coro`` is done."""
    import asyncio

    def run(awaitable, timeout: float = 120.0):
        asyncio.set_event_loop(qasync_loop)  # pytest-asyncio tests may have replaced it
        return qasync_loop.run_until_complete(asyncio.wait_for(_as_coro(awaitable), timeout))

    return run


async def _as_coro(awaitable):
    return await awaitable


@pytest.fixture(scope="session")
def wait_until(run_async):
    """``wait_until(predicate, timeout=60)``: run the loop until ``predicate()`` is true."""
    import asyncio

    def wait(predicate, timeout: float = 60.0, interval: float = 0.02):
        async def poll():
            while not predicate():
                await asyncio.sleep(interval)
        run_async(poll(), timeout)

    return wait


@pytest.fixture(scope="session")
def host(qapp, run_async):
    """One ExecutorHost on the real bundled models for the whole session (models load once).

    Tests that change its settings must restore them; a test needing other settings builds its own.
    """
    from ferrum_gui.host.executor_host import ExecutorHost

    shared = ExecutorHost()
    results = run_async(shared.start(), timeout=900)
    failed = [r for r in results if isinstance(r, BaseException)]
    if failed:
        pytest.fail(f"bundled models failed to load: {failed}")
    run_async(shared.list_history())  # start the I/O worker so leak checks see a stable thread set
    yield shared
    shared.close()


def _active_python_timers() -> set:
    import gc
    import warnings

    import shiboken6
    from PySide6.QtCore import QTimer

    # type(), not isinstance(): isinstance() goes through __class__, which a dead weakref.proxy in the
    # heap raises on, and some lazy torch attributes warn on.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {o for o in gc.get_objects()
                if issubclass(type(o), QTimer) and shiboken6.isValid(o) and o.isActive()}


def _receivers(obj) -> dict[str, int]:
    """Connections per signal declared by ``obj``'s own class."""
    from PySide6.QtCore import SIGNAL, QMetaMethod

    meta = obj.metaObject()
    methods = [meta.method(i) for i in range(meta.methodOffset(), meta.methodCount())]
    return {sig: obj.receivers(SIGNAL(sig)) for m in methods if m.methodType() == QMetaMethod.MethodType.Signal
            for sig in [m.methodSignature().data().decode()]}


@pytest.fixture
def listen():
    """``listen(signal, fn)``: connect for this test only (the session host outlives every test)."""
    connections = []

    def connect(signal, fn):
        signal.connect(fn)
        connections.append((signal, fn))

    yield connect
    import warnings

    with warnings.catch_warnings():  # a test may already have disconnected it itself
        warnings.simplefilter("ignore", RuntimeWarning)
        for signal, fn in connections:
            try:
                signal.disconnect(fn)
            except (RuntimeError, TypeError):
                pass


@pytest.fixture
def main_window(qtbot, host, tmp_path):
    """The real main window on the shared host, with QSettings in a tmp INI file (``window.qsettings``);
    fails the test if it leaks widgets, threads or timers."""
    import threading

    import shiboken6
    from PySide6.QtCore import QCoreApplication, QEvent, QSettings
    from PySide6.QtWidgets import QApplication

    from ferrum_gui.shell.main_window import MainWindow

    threads_before = set(threading.enumerate())
    receivers_before = _receivers(host)
    widgets_before = set(QApplication.topLevelWidgets())
    timers_before = _active_python_timers()
    window = MainWindow(host, QSettings(str(tmp_path / "ferrum-gui.ini"), QSettings.Format.IniFormat))
    window.show()
    qtbot.waitExposed(window)
    yield window
    window.close()
    question = getattr(window.panels.get("dictation"), "discard_question", None)
    if question is not None:  # the test left dictation unsaved: quit without it, as the user may
        question.button(question.StandardButton.Discard).click()
    window.deleteLater()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    QCoreApplication.processEvents()
    assert not shiboken6.isValid(window), "the main window was not deleted"
    leaked_widgets = [w for w in QApplication.topLevelWidgets()
                      if w not in widgets_before and shiboken6.isValid(w) and w.isVisible()]
    assert not leaked_widgets, f"top-level widgets outlived the main window: {leaked_widgets}"
    leaked_threads = [t for t in threading.enumerate() if t not in threads_before and t.is_alive()]
    assert not leaked_threads, f"threads outlived the main window: {leaked_threads}"
    leaked_timers = _active_python_timers() - timers_before
    assert not leaked_timers, f"active QTimers outlived the main window: {leaked_timers}"
    leaked_slots = {sig: n - receivers_before[sig] for sig, n in _receivers(host).items() if n > receivers_before[sig]}
    assert not leaked_slots, f"host signals still connected after the window closed (use `listen`): {leaked_slots}"


# ---- an engine service over the session's models, its history and index in the test's folder ----

@pytest.fixture()
def make_engine(tmp_path):
    """``make_engine(whisper=..., embedding=...)``: an ``EngineService`` over already loaded executors, its
    history and search index in ``tmp_path``, transcripts not indexed on their own; closed after the test."""
    from executors.service import EngineService, ServiceSettings

    made = []

    def make(**executors):
        settings = ServiceSettings(history_db=tmp_path / "history.db", search_db=tmp_path / "search.db",
                                   auto_index_transcripts=False)
        made.append(EngineService(settings, executors=executors))
        return made[-1]

    yield make
    for engine in made:
        engine.close()


# ---- Whisper: one real tiny.en executor for the session (CPU, fp32) ----

@pytest.fixture(scope="session")
def whisper_tiny():
    """The bundled whisper-tiny.en (converted once by the model store) as a CPU WhisperModelExecutor."""
    from executors.models.store import resolve_model
    from executors.whisper.executor import WhisperModelExecutor

    resolved = resolve_model("whisper-tiny.en", kind="whisper")
    return WhisperModelExecutor.from_path(resolved.path, device="cpu", dtype="float32",
                                          model_id=resolved.model_id)


@pytest.fixture(scope="session")
def whisper_tiny_int8():
    """The bundled whisper-tiny.en with the executor's int8 path (CPU), as live dictation runs it."""
    from executors.models.store import resolve_model
    from executors.whisper.executor import WhisperModelExecutor

    resolved = resolve_model("whisper-tiny.en", kind="whisper")
    return WhisperModelExecutor.from_path(resolved.path, device="cpu", dtype="float32", quantize="int8",
                                          model_id=resolved.model_id)
