"""Background work from a database table: the queue (`queue`), the worker (`worker`) and the job
kinds it knows (`handlers`). Services only enqueue, inside their own transaction."""
