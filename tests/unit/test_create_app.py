"""The application as uvicorn's factory makes it."""

from __future__ import annotations

import gc
import os

from codeyard.app import create_app


def test_what_start_up_built_is_kept_out_of_the_collectors_generations(session_config):
    umask = os.umask(0o022)  # create_app restricts the process's umask: the other tests keep theirs
    gc.unfreeze()
    app = create_app(session_config)
    try:
        assert gc.get_freeze_count() > 0  # a full collection no longer walks the models and routes
    finally:
        gc.unfreeze()
        app.rt.close()
        os.umask(umask)
