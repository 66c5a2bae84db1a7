"""The git smart-HTTP transport: what `git clone`, `fetch` and `push` talk to."""
