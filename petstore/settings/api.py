"""The /v1 API platform: its servers, rate limits, DRF and the OpenAPI document."""

from __future__ import annotations

from petstore.env import Section
from petstore.settings.core import DEBUG, DEFAULT_PORT, PORT

env = Section("API")
API_BASE_URL = env.text(
    "API_BASE_URL",
    f"http://localhost:{PORT if DEBUG else DEFAULT_PORT}/v1",
    "The public base URL of the API: the OpenAPI document's first server.",
    shown=f"`http://localhost:{DEFAULT_PORT}/v1` (DEBUG: on `PORT`)",
    example="https://app.petstore.example/v1",
)
API_STAGING_BASE_URL = env.text(
    "API_STAGING_BASE_URL",
    "https://staging.petstore.example/v1",
    "The OpenAPI document's second server.",
)
API_RATE_LIMIT = env.text(
    "API_RATE_LIMIT",
    "600/min",
    "Requests per API key (DRF's rate syntax); empty: off. Fails open if the cache is down.",
)
API_ADDRESS_RATE_LIMIT = env.text(
    "API_ADDRESS_RATE_LIMIT",
    "3000/min",
    "Requests per client address (see `NUM_PROXIES`), whatever key they carry; empty: off. "
    "Fails open if the cache is down.",
)
# Past it the address is answered 429 before any key lookup until the window ends, whatever
# key it sends (a key its web process verified within the minute is still served).
API_FAILED_KEY_RATE_LIMIT = env.text(
    "API_FAILED_KEY_RATE_LIMIT",
    "30/min",
    "Refused bearer keys (unknown, revoked, wrong) per client address; past it the address "
    "is answered 429 with `Retry-After` before any key lookup. Empty: off; fails open.",
)
API_LIST_FAST_PATH = env.flag(
    "API_LIST_FAST_PATH",
    True,
    "listPets and createPet through their fast paths (`pets/api/hotpath.py`, "
    "`pets/api/createpath.py`), tested equal to stock DRF; off: stock DRF.",
)

REST_FRAMEWORK = {
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_RENDERER_CLASSES": ["petstore.api.renderers.ORJSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["petstore.api.parsers.JSONParser"],
    # Secure by default: every DRF view needs a bearer API key unless it opts out.
    "DEFAULT_AUTHENTICATION_CLASSES": ["petstore.api.authentication.BearerKeyAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_THROTTLE_CLASSES": [
        "petstore.api.throttles.KeyThrottle",
        "petstore.api.throttles.AddressThrottle",
    ],
    "EXCEPTION_HANDLER": "petstore.api.errors.exception_handler",
    "URL_FORMAT_OVERRIDE": None,  # `?format=` is an ordinary (ignored) parameter
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Petstore API",
    "VERSION": "1.0.0",
    "DESCRIPTION": (
        "The v1 animal-store API. Every operation needs `Authorization: Bearer <key>`; "
        "every error is the Error body `{code, message, status}`."
    ),
    "SCHEMA_PATH_PREFIX": r"/v1",
    "SCHEMA_PATH_PREFIX_TRIM": True,  # paths are relative to the servers' /v1
    "PREPROCESSING_HOOKS": ["petstore.api.openapi.only_v1_endpoints"],
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "pets.api.openapi.name_pets_array",
        "petstore.api.openapi.servers_from_settings",  # API_BASE_URL, API_STAGING_BASE_URL
        "petstore.api.openapi.service_unavailable",  # a 503 on every operation
        "petstore.api.openapi.rate_limit_headers",  # on every response
    ],
    "ENUM_GENERATE_CHOICE_DESCRIPTION": False,
    "ENUM_NAME_OVERRIDES": {
        "PetStatus": "pets.models.PetStatus",
        "ErrorCode": "petstore.api.exceptions.ErrorCode",
        "EventTypeEnum": "domains.choices.EventType",
        "WebhookDeliveryStateEnum": "domains.choices.DeliveryState",
        "DomainStateEnum": "domains.choices.State",
    },
    "COMPONENT_NO_READ_ONLY_REQUIRED": False,
    # The document and the docs page are public: no key, no throttle.
    "SERVE_AUTHENTICATION": [],
    "SERVE_PERMISSIONS": ["rest_framework.permissions.AllowAny"],
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "SERVE_INCLUDE_SCHEMA": False,
}
