"""Gate rules other apps put on labels, without the playground importing them
(docs/architecture.md, Dependency rules; docs/design.md, Prompt change review).

A label with `Label.gated` set moves only through a service that cleared its rules (the
`changes` app's merge passes `gate_cleared=True` to `playground.services.label_move`). Every
other move — the label API, the labels form, any role — is refused with a 409 whose message
names the rules, which the app that owns them describes through the provider it registers here
in its `AppConfig.ready()`. The owner alone may move a gated label directly with an explicit
`override` reason, which the move log keeps.
"""

from collections.abc import Callable

from common.registry import Registry

# (label_id) -> a one-line description of the label's rules, or None when it has none.
GateDescriber = Callable[[int], str | None]
gate_describers: Registry[GateDescriber] = Registry("gate describer")


def gate_describer_register(*, name: str, describer: GateDescriber) -> None:
    gate_describers.register(name, describer)


def gate_describe(*, label_id: int) -> str:
    """What every registered describer says about the label's gate, joined."""
    parts = [
        text for describer in gate_describers.values() if (text := describer(label_id)) is not None
    ]
    return " ".join(parts)
