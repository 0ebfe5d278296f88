"""Storage of who may see what: projects, memberships, API tokens, share links, the audit log.

Split from `traces.models` (which re-exports every name, so `models.Project` still reads
as one storage module) to keep each module to one job: this one is accounts, that one the
traces and their derived rows.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from traces.fields import NulSafeCharField, NulSafeJSONField

DEFAULT_PROJECT_SLUG = "default"


class Project(models.Model):
    """Who may see what: every trace belongs to one; local mode uses the default one."""

    slug = models.SlugField(max_length=60, unique=True)
    name = models.CharField(max_length=120)
    created_at = models.DateTimeField(auto_now_add=True)
    keep_originals = models.BooleanField(
        default=False,
        help_text="Keep uploaded originals byte-identical in shared mode (credentials "
        "included) instead of redacting them at ingest.",
    )
    retention_days = models.PositiveIntegerField(
        null=True, blank=True, help_text="Traces older than this are purged (empty: kept)."
    )

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    @classmethod
    def default(cls) -> Project:
        project, _ = cls.objects.get_or_create(
            slug=DEFAULT_PROJECT_SLUG, defaults={"name": "Default project"}
        )
        return project


def default_project_id() -> int:
    """New traces land in the default project unless a project is given (local mode)."""
    return Project.default().pk


class Membership(models.Model):
    class Role(models.TextChoices):
        VIEWER = "viewer"
        MEMBER = "member"
        OWNER = "owner"

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    role = models.CharField(max_length=10, choices=Role.choices, default=Role.VIEWER)

    class Meta:
        constraints = [models.UniqueConstraint("project", "user", name="unique_membership")]


class ApiToken(models.Model):
    """A bearer token for agents and scripts; only its SHA-256 is stored."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=120)
    prefix = models.CharField(
        max_length=16, help_text="The token's first characters, to recognise it."
    )
    digest = models.CharField(max_length=64, unique=True)
    can_read = models.BooleanField(default=False)
    can_ingest = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @property
    def scopes(self) -> list[str]:
        return [s for s, on in (("read", self.can_read), ("ingest", self.can_ingest)) if on]


class ShareLink(models.Model):
    """A read-only, revocable link to one trace for people without an account."""

    trace = models.ForeignKey("traces.Trace", on_delete=models.CASCADE, related_name="share_links")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    prefix = models.CharField(max_length=16)
    digest = models.CharField(max_length=64, unique=True)
    allow_original = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]


class AuditEvent(models.Model):
    """Who did what, when: uploads, deletions, token and share-link changes."""

    at = models.DateTimeField(auto_now_add=True, db_index=True)
    project = models.ForeignKey(
        Project, on_delete=models.SET_NULL, null=True, related_name="audit_events"
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    actor = models.CharField(max_length=200, help_text="User name, token or command.")
    action = models.CharField(max_length=40)
    target = NulSafeCharField(max_length=300, blank=True)
    detail = NulSafeJSONField(default=dict)

    class Meta:
        ordering = ["-at"]


class ModelPrice(models.Model):
    """A price a person set in the UI for a model, per project: it wins over the library
    and the price file for that project's later ingests and `reanalyze`."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="model_prices")
    model = NulSafeCharField(max_length=200, help_text="Model name as traces name it.")
    input = models.FloatField(help_text="USD per million uncached input tokens.")
    output = models.FloatField(help_text="USD per million output tokens.")
    cache_write = models.FloatField(null=True, blank=True)
    cache_read = models.FloatField(null=True, blank=True)
    cache_write_1h = models.FloatField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["model"]
        constraints = [
            models.UniqueConstraint("project", "model", name="unique_model_price_per_project")
        ]
