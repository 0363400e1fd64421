"""Webhooks: the owner events (OwnerEvent) sent to a project's HTTPS endpoints, signed per
the Standard Webhooks specification. `address` refuses what a tenant must not make us
reach (SSRF), `signing` signs, `client` connects to the address it checked, `delivery`
claims, sends and retries (docs/decisions/webhooks.md)."""
