"""What webhooks hear: a version saved, a label moved (the playground's rows, by `post_save`)
and an evaluation finished (evals' `evaluation_finished`, sent after its commit)."""

from __future__ import annotations

from typing import Any

from django.db.models.signals import post_save

from evals.selectors import evaluation_get_for_user, evaluation_summary
from evals.signals import evaluation_finished
from playground.models import LabelMove, Prompt, PromptVersion
from playground.selectors import prompt_get_for_user

from .models import Event, Webhook
from .services import event_emit


def _when(value: Any) -> str | None:
    return value.isoformat().replace("+00:00", "Z") if value is not None else None


def _version_saved(
    sender: Any, instance: PromptVersion, created: bool, raw: bool, **_: Any
) -> None:
    if not created or raw or not Webhook.objects.filter(prompt_id=instance.prompt_id).exists():
        return
    version = instance
    event_emit(
        prompt=Prompt.objects.get(pk=version.prompt_id),
        event=Event.VERSION_CREATED,
        data={
            "version": {
                "id": version.pk,
                "number": version.number,
                "parent": version.parent_id,
                "message": version.message,
                "author": version.author.username,
                "created_at": _when(version.created_at),
            }
        },
    )


def _label_moved(sender: Any, instance: LabelMove, created: bool, raw: bool, **_: Any) -> None:
    if not created or raw:
        return
    label = instance.label
    if not Webhook.objects.filter(prompt_id=label.prompt_id).exists():
        return
    event_emit(
        prompt=Prompt.objects.get(pk=label.prompt_id),
        event=Event.LABEL_MOVED,
        data={
            "label": label.name,
            "from_version": instance.from_version_id,
            "to_version": instance.to_version_id,
            "actor": instance.actor.username,
            "moved_at": _when(instance.moved_at),
        },
    )


def _evaluation_finished(
    sender: Any, evaluation_id: int, prompt_id: int, status: str, **_: Any
) -> None:
    hook = Webhook.objects.select_related("prompt__owner").filter(prompt_id=prompt_id).first()
    if hook is None:
        return
    owner = hook.prompt.owner
    prompt = prompt_get_for_user(user=owner, prompt_id=prompt_id)
    evaluation = evaluation_get_for_user(user=owner, evaluation_id=evaluation_id).evaluation
    event_emit(
        prompt=prompt,
        event=Event.EVALUATION_FINISHED,
        data={
            "evaluation": {
                "id": evaluation.pk,
                "status": status,
                "testset": evaluation.testset_revision.testset_id,
                "testset_revision": evaluation.testset_revision.number,
                "finished_at": _when(evaluation.finished_at),
                "summary": [c.as_json() for c in evaluation_summary(evaluation=evaluation)],
            }
        },
    )


def events_connect() -> None:
    post_save.connect(_version_saved, sender=PromptVersion, dispatch_uid="webhooks.version")
    post_save.connect(_label_moved, sender=LabelMove, dispatch_uid="webhooks.label")
    evaluation_finished.connect(_evaluation_finished, dispatch_uid="webhooks.evaluation")
