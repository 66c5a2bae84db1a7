"""Merge requests, one module per idea; callers import the module they use.

- `records`: create, edit, close and reopen; the request loaded to act on it;
- `reads`: the read path (a page, one request, what its comparison needs), prebuilt statements;
- `status`: the head ref and merge status, computed with no transaction open;
- `comparison`: the commits and changes a request shows, kept once it is merged or closed;
- `reactions`: what pushes, succeeded pipelines and deleted forks do to open requests;
- `accept`: accepting a request, and merge when build succeeds;
- `trail`: what changes leave behind (events, hooks, system notes).

Comments on requests are notes (`services/notes.py`).
"""
