"""The ports the service listens on unless told otherwise, each written once.

A module that loads nothing, so that what cannot load the settings reads it too: `make run`
(devtools/devserver.py) before the settings file it writes, and the image's health check
(Dockerfile). The settings take their defaults from here. compose.yaml and the Dockerfile's
EXPOSE cannot read Python: tests/deploy/test_compose_and_image.py holds them to these numbers.
"""

# The web processes (PORT): the OpenAPI document's server, the edge's upstream and the
# redirects' port under DEBUG all follow it.
DEFAULT_PORT = 8000
# The TLS edge under `make run` (HTTPS_PORT): a port a user may bind; production's is 443.
MAKE_RUN_HTTPS_PORT = 8443
