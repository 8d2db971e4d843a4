"""The watch folder in the app: its controller (new recordings to the Transcribe queue) and preferences page."""
