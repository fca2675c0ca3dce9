"""The shared kernel: model bases, domain errors, selector helpers, API error handling, rate
limits and logging filters used by every app.

Dependency direction: apps import `common`; `common` imports no app of ours (and not `config`,
which holds settings and wiring).
"""
