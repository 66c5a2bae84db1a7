"""What both API versions' handlers share: parameters declared alike and request steps that
take the version's shape. Neither version imports the other (pyproject's import contracts)."""
