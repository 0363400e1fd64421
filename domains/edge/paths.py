"""The loopback endpoint's paths, shared by Caddy's configuration and the endpoint."""

CERTIFICATE_PATH = "/certificate"
PERMISSION_PATH = "/permission"
