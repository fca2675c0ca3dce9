from celery import shared_task

from .dispatch import DELIVER_TASK
from .services import delivery_attempt_and_requeue


@shared_task(name=DELIVER_TASK, acks_late=True, ignore_result=True)
def deliver(delivery_id: int) -> None:
    """One attempt; a failed one that has attempts left is sent again with a countdown."""
    delivery_attempt_and_requeue(delivery_id=delivery_id)
