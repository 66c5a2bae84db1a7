"""API v4: the second edge of the same services (`codeyard.routes` mounts it under `/api/v4`).

Each module declares its routes like v3's. A v4 handler calls the services v3's calls and answers
in v4's shapes (`entities/v4`); where request and answer are v3's own, v4 mounts v3's handler.
"""
