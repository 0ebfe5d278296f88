"""The Django admin for projects, memberships, tokens, share links and the audit log."""

from django.contrib import admin

from traces import models


class MembershipInline(admin.TabularInline):
    model = models.Membership
    extra = 1


@admin.register(models.Project)
class ProjectAdmin(admin.ModelAdmin):
    list_display = ("name", "slug", "keep_originals", "retention_days", "created_at")
    prepopulated_fields = {"slug": ("name",)}
    inlines = [MembershipInline]


@admin.register(models.ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    """Tokens are created on the token page (the secret is shown once there)."""

    list_display = (
        "name",
        "prefix",
        "user",
        "project",
        "scopes",
        "expires_at",
        "last_used_at",
        "revoked_at",
    )
    list_filter = ("project",)
    readonly_fields = ("prefix", "digest", "created_at", "last_used_at")

    def has_add_permission(self, request):
        return False


@admin.register(models.ShareLink)
class ShareLinkAdmin(admin.ModelAdmin):
    list_display = ("trace", "prefix", "created_by", "allow_original", "expires_at", "revoked_at")
    readonly_fields = ("prefix", "digest", "created_at")

    def has_add_permission(self, request):
        return False


@admin.register(models.AuditEvent)
class AuditEventAdmin(admin.ModelAdmin):
    list_display = ("at", "actor", "action", "target", "project")
    list_filter = ("action", "project")

    def has_change_permission(self, request, obj=None):
        return False

    def has_add_permission(self, request):
        return False
