"""Bare repositories on disk: layout, reads and writes. Imports nothing else of the app."""
