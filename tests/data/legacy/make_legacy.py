"""Write small history and search databases with the code at the current commit (fixtures)."""
import json, os, sys, tempfile, time
from pathlib import Path

out = Path(sys.argv[1]); out.mkdir(parents=True, exist_ok=True)
os.environ.setdefault("HF_HUB_OFFLINE", "1")
from executors.transcripts.history import TranscriptHistory
from executors.transcripts.results import Segment, Transcript, Word
from executors.whisper.options import TranscribeOptions

def seg(i, text, words=False):
    w = [Word(i * 2.0 + 0.1, i * 2.0 + 0.6, text.split()[0], 0.91)] if words else None
    return Segment(id=i, start=i * 2.0, end=i * 2.0 + 1.8, text=text, tokens=[50364 + i, 11, 12],
                   avg_logprob=-0.21, compression_ratio=1.3, no_speech_prob=0.02, temperature=0.0, words=w)

hist_path = out / "history-0dcdfdb.sqlite3"
for p in out.glob("history-0dcdfdb.sqlite3*"): p.unlink()
h = TranscriptHistory(hist_path)
a = h.begin("/recordings/standup.flac", "whisper-tiny.en", TranscribeOptions(language="en", word_timestamps=True))
h.append_segment(a, seg(0, " Good morning, everyone.", words=True))
h.update_segment_text(a, 0, " Good morning, team.")
h.finish(a, Transcript("en", 0.98, 5.9, [seg(0, " Good morning, everyone.", words=True),
                                         seg(1, " The release ships on Friday.", words=True),
                                         seg(2, " Questions go to the tracker.", words=True)],
                       model_id="whisper-tiny.en"))
b = h.begin("/recordings/broken.mp4", "whisper-tiny.en", {"language": None})
h.fail(b, "Could not decode /recordings/broken.mp4: no audio stream")
c = h.add_dictation("/data/dictation/2024-01-01.flac",
                    Transcript("en", 1.0, 3.6, [seg(0, " Buy milk and eggs."), seg(1, " Call the dentist.")]),
                    model_id="whisper-base")
d = h.begin("/recordings/interrupted.wav", "whisper-tiny.en", TranscribeOptions(language="en"))
h.append_segment(d, seg(0, " This job never finished."))
h.close()

from executors.bert.executor import BertModelExecutor
from executors.search import SearchStore, index_paths, index_text, index_transcript
emb = BertModelExecutor.load("all-MiniLM-L6-v2", device="cpu")
search_path = out / "search-0dcdfdb.db"
for p in out.glob("search-0dcdfdb.db*"): p.unlink()
store = SearchStore(search_path)
index_text(store, emb, "The shuttle reached orbit after a smooth launch from the coast.", source="note:shuttle",
           title="Shuttle")
index_text(store, emb, "Sourdough needs a lively starter, flour, water and salt, and a long slow rise.",
           source="note:bread", title="Bread")
with tempfile.TemporaryDirectory() as tmp:
    f = Path(tmp) / "garden.txt"
    f.write_text("Tomatoes want full sun and deep watering twice a week.\n", encoding="utf-8")
    index_paths(store, emb, [f], collection="files")
h = TranscriptHistory(hist_path)
index_transcript(store, emb, h.load(a))
h.close()
store.close()
import shutil
shutil.rmtree(out / "search-0dcdfdb.db-vectors", ignore_errors=True)
print("ok", a, b, c, d)
