"""Which files of a dropped or opened selection get transcribed (folders searched recursively)."""

from __future__ import annotations

from executors.audio.files import select_media


def test_folders_give_their_media_files_and_count_what_was_left_out(tmp_path):
    talks = tmp_path / "Talks"
    (talks / "2024" / "spring").mkdir(parents=True)
    (talks / ".cache").mkdir()
    for rel in ("b-intro.mp3", "a-keynote.wav", "2024/spring/panel.m4a", "2024/demo.MP4"):
        (talks / rel).write_bytes(b"x")
    for rel in ("notes.txt", "slides.pdf", "2024/agenda.txt", ".DS_Store", ".cache/thumb.wav"):
        (talks / rel).write_bytes(b"x")
    single = tmp_path / "voice-memo.dat"  # named explicitly: taken as it is, the decoder decides
    single.write_bytes(b"x")

    chosen = select_media([talks, single, tmp_path / "gone.wav", talks / "a-keynote.wav"])
    assert [p.relative_to(tmp_path).as_posix() for p in chosen.files] == [
        "Talks/a-keynote.wav", "Talks/b-intro.mp3", "Talks/2024/demo.MP4", "Talks/2024/spring/panel.m4a",
        "voice-memo.dat"]
    assert chosen.not_media == {".txt": 2, ".pdf": 1}
    assert chosen.hidden == 2 and chosen.skipped == 5 and chosen.folders == 1
    assert chosen.missing == [tmp_path / "gone.wav"]
    assert chosen.skipped_text() == "5 skipped: 3 not audio or video (.txt ×2, .pdf), 2 hidden"
    assert select_media([single]).skipped_text() == ""
