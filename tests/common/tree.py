"""The project's tree as the source-reading tests see it: its root and its apps."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# The feature and supporting apps (`common`, the kernel, and `config` are not apps).
APPS = (
    "accounts",
    "changes",
    "critique",
    "evals",
    "playground",
    "questionbank",
    "reviews",
    "textstore",
    "webhooks",
)
