"""Transcripts: result dataclasses, exporters, the SQLite history."""
