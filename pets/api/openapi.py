"""OpenAPI hooks of the pets resource."""

from __future__ import annotations


def name_pets_array(result, **kwargs):
    """Postprocessing hook: the page of listPets is the spec's `Pets` (array of Pet)."""
    schemas = result.get("components", {}).get("schemas", {})
    if "PaginatedPetList" in schemas:
        schemas["Pets"] = schemas.pop("PaginatedPetList")
        schemas["Pets"]["description"] = "A JSON array of Pet."
        for item in result["paths"].values():
            for operation in item.values():
                content = operation.get("responses", {}).get("200", {}).get("content", {})
                if content and not operation["responses"]["200"].get("description"):
                    operation["responses"]["200"]["description"] = "A page of pets."
                for media in content.values():
                    if media.get("schema") == {"$ref": "#/components/schemas/PaginatedPetList"}:
                        media["schema"] = {"$ref": "#/components/schemas/Pets"}
    return result
