"""Shared widgets used by several panels."""
