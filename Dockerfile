# The Petstore service: one image for the web processes, the TLS edge, the Celery workers and beat
# (compose.yaml, docs/operators/containers.md).

# The base image by tag until Renovate pins it by digest (renovate.json, `pinDigests`) and then
# keeps the digest current: a rebuild then starts from the very image the last one did.

# --- The dependencies: exactly the production lock, in a virtual environment of their own ---
FROM python:3.11-slim AS dependencies

ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

# Every package and its hashes from requirements/production.txt (the runtime dependencies,
# no development extras), nothing resolved here, and the build backend from
# requirements/build.txt, hashed too, which builds the project below. psycopg's binary wheel
# bundles libpq, so the image needs neither a compiler nor a system library. This layer
# changes with the locks only.
RUN python -m venv /venv
COPY requirements/build.txt requirements/production.txt /tmp/
RUN /venv/bin/pip install --require-hashes -r /tmp/build.txt -r /tmp/production.txt

# --- The image: that environment, then the code ----------------------------------------------
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PATH=/venv/bin:$PATH

RUN useradd --system --uid 10001 --home-dir /app --shell /usr/sbin/nologin petstore
# pg_dump for `manage.py backup` (compose's backup service): Debian's client, 17 on the base's
# Debian 13, newer than compose's PostgreSQL 16 as pg_dump must be (never older); the command
# takes the one that fits the server.
RUN apt-get update \
    && apt-get install -y --no-install-recommends postgresql-client \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /app

# Before the code: a change to the code reuses this layer.
COPY --from=dependencies /venv /venv

COPY pyproject.toml manage.py ./
COPY petstore ./petstore
COPY pets ./pets
COPY domains ./domains
COPY templates ./templates
# The translations, compiled: the .mo files are committed (docs/adr/0020-translations-compiled-and-committed.md).
COPY locale ./locale
# The project itself, not editable, and no dependency of its own choosing, built by the locked
# backend (no build isolation: it would download setuptools without a hash). The processes run
# from /app (the working directory comes first on the path), as from a checkout.
RUN pip install --no-deps --no-build-isolation . && rm -rf build ./*.egg-info

# Static files collected into the image; importing the settings needs a secret, never used.
RUN SECRET_KEY=collectstatic-only \
    python manage.py collectstatic --noinput \
    && mkdir -p var/ca var/backups \
    && chown -R petstore:petstore var

USER petstore
# petstore/ports.py's DEFAULT_PORT (tests/deploy/test_compose_and_image.py holds them equal).
EXPOSE 8000
# The web process answers /healthz while it is up (slim has no curl: Python asks), on PORT as
# the settings read it (set but empty: the default, from petstore/ports.py). The other
# services of this image (edge, workers, beat) say how they are checked in compose.yaml.
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; from petstore.ports import DEFAULT_PORT; urllib.request.urlopen('http://127.0.0.1:%s/healthz' % (os.environ.get('PORT', '').strip() or DEFAULT_PORT), timeout=3)"]
# The web server (petstore/webserver.py); WEB_BIND, PORT, WEB_CONCURRENCY from the environment.
# Procfile.production's web line: the edge in front writes the access lines.
CMD ["env", "WEB_ACCESS_LOG=0", "python", "-m", "petstore.webserver"]
