"""The engine service the app, the CLI and the API share."""
