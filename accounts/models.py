from django.conf import settings
from django.db import models

# The length of django.contrib.auth's `User.username`, for inputs checked before a lookup.
USERNAME_MAX_CHARS = 150
# The longest password the log-in API will hash: a bound on the work one request can ask for.
PASSWORD_MAX_CHARS = 4096


class ApiToken(models.Model):
    """An API key for `Authorization: Token <key>`. Only the SHA-256 of the key is stored."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    key_hash = models.CharField(max_length=64, unique=True)
    # The first characters of the key, so a user can tell their keys apart; never enough to use.
    key_prefix = models.CharField(max_length=12)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True, help_text="None: never expires.")

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.key_prefix}… ({self.user})"
