"""Writes of test sets and evaluations (docs/evals.md), one module per concept.

- `testsets`: test sets and their revisions, rows from the API or a file, exports, promptfoo rows.
- `evaluations`: create (targets, budgets, sources checked up front), dispatch, cancel, and the
  periodic reaper that recovers stalled cells and evaluations.
- `cells`: executing one cell — claim, run, grade, close, time out.
- `sources`: the test set and judges an evaluation reads, checked visible to its author.
- `grader_registry`: the grader types other apps add (`grader_register`).

Import each service from its module (`from evals.services.cells import cell_execute`); this
package re-exports nothing, so a name says where it lives.
"""
