"""The host: the one Qt adapter between the engine service and the widgets (model work off the GUI
thread, typed signals)."""
