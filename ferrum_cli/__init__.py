"""The headless ``ferrum`` command (imports no Qt)."""
