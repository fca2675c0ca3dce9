"""Lengths that several apps share, named once.

Each app's model field, API serializer and service check import the same name, so the column,
the 400 and the service's own check cannot drift apart. Limits that belong to one app live in
that app (`playground.text.content`, `playground.models`, `reviews.services.*`); JSON limits live in
`common.jsonlimits`.
"""

# The note saved with an immutable version or revision ("what changed").
MESSAGE_MAX_CHARS = 500
# The title of a prompt or a design document.
TITLE_MAX_CHARS = 200
