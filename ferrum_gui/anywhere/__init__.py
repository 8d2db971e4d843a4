"""Dictate anywhere: typing dictation into other apps, the caption overlay, the tray, the global shortcut."""
