"""The loopback endpoint's paths and its secret's file, shared by Caddy's configuration,
`manage.py edge` and the endpoint."""

# GET /certificate/<secret>?server_name=<SNI>: only Caddy knows the secret.
CERTIFICATE_PATH = "/certificate"
PERMISSION_PATH = "/permission"
# GET /fallback/<secret>: the placeholder certificate (domains/edge/fallback.py), which Caddy
# asks for when /certificate had none for the name.
FALLBACK_PATH = "/fallback"
# Under EDGE_DIR, mode 0600: written by `manage.py edge` at each start, read by the endpoint.
SECRET_FILE = "endpoint-secret"
