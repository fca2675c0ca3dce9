"""Runs: a version sent through a provider in a Celery task, streamed, kept, continued.

- `services`: create (idempotent), execute (claim, stream, flush, finish), cancel, continue,
  reap runs whose worker vanished. Every status change is a conditional update.
- `selectors`: reads scoped to the user, and the stream reader.
- `dispatch`: enqueue after commit (Celery, or a thread of the web process when tasks are eager).
"""
