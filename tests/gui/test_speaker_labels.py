"""Speakers in the Transcribe panel's widgets: the Speakers option and the transcript view's labels."""

from __future__ import annotations

from executors.transcripts.results import Segment, Word
from ferrum_gui.widgets.speaker_labels import speaker_color
from ferrum_gui.widgets.transcribe_options import TranscribeOptionsBar
from ferrum_gui.widgets.transcript_view import COL_SPEAKER, COL_TEXT, TranscriptView


def _segments() -> list[Segment]:
    return [Segment(0, 0.0, 1.0, " Hello.", words=[Word(0.0, 1.0, " Hello.", 0.9, "SPEAKER_00")],
                    speaker="SPEAKER_00"),
            Segment(1, 1.2, 2.0, " Hi.", speaker="SPEAKER_01"),
            Segment(2, 2.2, 3.0, " Bye.", speaker="SPEAKER_00")]


def test_speaker_option_asks_for_words_and_a_count(qtbot):
    bar = TranscribeOptionsBar(["whisper-tiny.en"], "whisper-tiny.en")
    qtbot.addWidget(bar)
    assert not bar.speaker_count.isEnabled() and "speakers" not in bar.options().extra
    bar.speakers.setChecked(True)
    bar.speaker_count.setCurrentIndex(bar.speaker_count.findData(3))
    options = bar.options()
    assert options.word_timestamps and options.extra["speakers"].num_speakers == 3
    bar.speaker_count.setCurrentIndex(0)
    assert bar.options().extra["speakers"].num_speakers is None  # auto


def test_view_shows_coloured_speaker_labels_and_renames_everywhere(qtbot):
    view = TranscriptView()
    qtbot.addWidget(view)
    view.set_segments([Segment(0, 0.0, 1.0, " Plain.")])
    assert view.isColumnHidden(COL_SPEAKER)  # undiarized: no empty column
    view.set_segments(_segments(), {"SPEAKER_01": "Ada"})
    assert not view.isColumnHidden(COL_SPEAKER)
    assert view.horizontalHeader().visualIndex(COL_SPEAKER) == 1  # between time and text
    names = [view.item(r, COL_SPEAKER).text() for r in range(3)]
    assert names == ["Speaker 1", "Ada", "Speaker 1"]
    colours = [view.item(r, COL_SPEAKER).background().color() for r in range(3)]
    assert colours[0] == colours[2] != colours[1]
    assert colours[0] == speaker_color(0, view.palette().base().color().lightness() < 128)
    with qtbot.waitSignal(view.speakerRenamed) as signal:
        view.rename_speaker("SPEAKER_00", "  Bo  Smith ")
    assert signal.args == ["SPEAKER_00", "Bo Smith"]
    assert [view.item(r, COL_SPEAKER).text() for r in range(3)] == ["Bo Smith", "Ada", "Bo Smith"]
    assert view.speaker_names() == {"SPEAKER_00": "Bo Smith", "SPEAKER_01": "Ada"}
    assert view.item(0, COL_TEXT).text() == "Hello."  # text column untouched
    view.rename_speaker("SPEAKER_01", "")
    assert view.item(1, COL_SPEAKER).text() == "Speaker 2" and "SPEAKER_01" not in view.speaker_names()


def test_speakers_found_at_the_end_join_the_rows_shown_while_decoding_and_keep_edits(qtbot):
    from dataclasses import replace

    view = TranscriptView()
    qtbot.addWidget(view)
    for seg in _segments():  # as decoded: no speakers yet
        view.append_segment(replace(seg, speaker=None, words=None))
    view.edit_segment_text(1, "Hi there.")
    unchanged = [view.item(r, COL_TEXT) for r in range(3)]
    view.complete([replace(s, speaker=None, words=None) for s in _segments()])  # nothing new: rows kept
    assert [view.item(r, COL_TEXT) for r in range(3)] == unchanged and view.isColumnHidden(COL_SPEAKER)

    view.complete(_segments())  # the finished transcript, speakers labelled
    assert not view.isColumnHidden(COL_SPEAKER)
    assert [view.item(r, COL_SPEAKER).text() for r in range(3)] == ["Speaker 1", "Speaker 2", "Speaker 1"]
    assert [view.segment_text(r) for r in range(3)] == ["Hello.", "Hi there.", "Bye."]
    assert view.is_edited(1) and not view.is_edited(0)
    view.revert_segment(1)
    assert view.segment_text(1) == "Hi."


def test_speaker_colours_stay_apart():
    hues = {speaker_color(i, False).hslHue() for i in range(8)}
    assert len(hues) == 8


def test_a_speaker_rename_is_undone_and_redone_from_the_edit_menu(main_window, qtbot):
    panel = main_window.show_panel("transcribe")
    view = panel.view
    view.set_segments(_segments(), {"SPEAKER_01": "Ada"})
    view.rename_speaker("SPEAKER_00", "Bo")
    assert panel.undo_action.isEnabled() and "Rename speaker" in panel.undo_action.text()

    with qtbot.waitSignal(view.speakerRenamed) as signal:  # the panel saves what the signal says
        panel.undo_action.trigger()
    assert signal.args == ["SPEAKER_00", ""]
    assert [view.item(r, COL_SPEAKER).text() for r in range(3)] == ["Speaker 1", "Ada", "Speaker 1"]
    assert view.speaker_names() == {"SPEAKER_01": "Ada"}

    with qtbot.waitSignal(view.speakerRenamed) as signal:
        panel.redo_action.trigger()
    assert signal.args == ["SPEAKER_00", "Bo"] and view.item(2, COL_SPEAKER).text() == "Bo"
    view.rename_speaker("SPEAKER_00", "Bo")  # no change: nothing to undo
    assert view.undo_stack.count() == 1
