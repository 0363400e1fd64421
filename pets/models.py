"""The animal store's data: categories and pets (the API keys and their Idempotency-Key
records: petstore/apikeys)."""

from __future__ import annotations

from django.db import models

NAME_MAX_LENGTH = 100
CATEGORY_NAME_MAX_LENGTH = 50


class PetStatus(models.TextChoices):
    AVAILABLE = "available", "Available"
    PENDING = "pending", "Pending"
    SOLD = "sold", "Sold"


# The API's answer to a status that is not one of these (createPet's body, listPets' filter).
PET_STATUS_INVALID = f"Must be one of: {', '.join(PetStatus.values)}."


class Category(models.Model):
    name = models.CharField(max_length=CATEGORY_NAME_MAX_LENGTH, unique=True)

    class Meta:
        ordering = ["id"]
        verbose_name_plural = "categories"

    def __str__(self) -> str:
        return self.name


class Pet(models.Model):
    # BigAutoField (DEFAULT_AUTO_FIELD): the spec's int64 identifier.
    name = models.CharField(max_length=NAME_MAX_LENGTH)
    category = models.ForeignKey(Category, on_delete=models.PROTECT, related_name="pets")
    status = models.CharField(max_length=16, choices=PetStatus.choices, default=PetStatus.AVAILABLE)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["id"]
        indexes = [
            # listPets filtered by status walks this index in id order
            # (WHERE status = %s AND id > %s ORDER BY id), whatever the page.
            models.Index(fields=["status", "id"], name="pets_pet_status_id_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.name} (#{self.pk})"
