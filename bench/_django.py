"""Django set-up shared by the in-process benchmarks: a throwaway SQLite database and object
store inside `workdir`, migrated."""

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def setup_django(workdir: Path) -> None:
    os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings"
    os.environ["REDLINE_DATA_DIR"] = str(workdir / "data")
    os.environ["OBJECT_STORE_DIR"] = str(workdir / "objects")
    os.environ["S3_BUCKET"] = ""
    os.environ["DATABASE_URL"] = f"sqlite:///{workdir / 'bench.sqlite3'}"
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0, skip_checks=True)
