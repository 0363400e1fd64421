from django.contrib import admin

from pets.models import Category, Pet


@admin.register(Category)
class CategoryAdmin(admin.ModelAdmin):
    list_display = ["id", "name"]
    search_fields = ["name"]
    ordering = ["id"]


@admin.register(Pet)
class PetAdmin(admin.ModelAdmin):
    list_display = ["id", "name", "category", "status", "created_at", "updated_at"]
    list_filter = ["status", "category"]
    search_fields = ["name", "=id"]
    list_select_related = ["category"]
    readonly_fields = ["created_at", "updated_at"]
    ordering = ["id"]
