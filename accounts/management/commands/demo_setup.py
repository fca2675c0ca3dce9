import secrets
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from accounts.services import user_create

DEMO_USERNAME = "demo"


class Command(BaseCommand):
    help = "Create the demo account once and print its credentials (only when it is created)."

    def handle(self, *args: Any, **options: Any) -> None:
        if get_user_model().objects.filter(username=DEMO_USERNAME).exists():
            self.stdout.write(
                f"Demo account '{DEMO_USERNAME}' exists; its password was printed when it was "
                "created (reset it with: python manage.py changepassword demo)."
            )
            return
        password = secrets.token_urlsafe(12)
        user_create(username=DEMO_USERNAME, password=password)
        self.stdout.write(self.style.SUCCESS("Demo account created — shown once:"))
        self.stdout.write(f"  username: {DEMO_USERNAME}\n  password: {password}")
