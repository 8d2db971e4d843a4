"""Ferrum Desktop's PySide6 + qasync app: panels talk to one ``ExecutorHost``; nothing here runs
model work on the GUI thread. Importing this package is cheap (no torch, no Qt)."""
