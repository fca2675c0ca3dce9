"""Signals other apps listen to without evals importing them (webhooks, docs/architecture.md).

`evaluation_finished` is sent once per evaluation, after the commit that finished it (its last
cell graded: `done`; or `cancelled`), with `evaluation_id`, `prompt_id` and `status`.
Listeners read the evaluation through evals.selectors.
"""

from django.dispatch import Signal

evaluation_finished = Signal()
