"""Hostile inputs: one module per class of attack (issue 10). Each test tries the attack and
asserts the status and that nothing changed: files on disk, refs, database rows."""
