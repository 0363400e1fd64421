from django.contrib import admin

from petstore.models import TaskFailure


@admin.register(TaskFailure)
class TaskFailureAdmin(admin.ModelAdmin):
    """Read-only: the counts are written by the workers and the web processes only."""

    list_display = ["task_name", "kind", "count", "last_failed_at", "last_error_short"]
    list_filter = ["kind"]
    search_fields = ["task_name", "last_error"]
    readonly_fields = ["task_name", "kind", "count", "last_failed_at", "last_error"]

    @admin.display(description="Last error")
    def last_error_short(self, obj: TaskFailure) -> str:
        return obj.last_error[:120]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False
