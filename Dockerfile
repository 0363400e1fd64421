# The Petstore service: one image for the web processes, the TLS edge, the Celery worker and beat
# (compose.yaml, README "Deploying with containers").
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

RUN useradd --system --uid 10001 --home-dir /app --shell /usr/sbin/nologin petstore
WORKDIR /app

# The runtime dependencies only (no development extras). psycopg's binary wheel bundles
# libpq, so the image needs neither a compiler nor a system library.
COPY pyproject.toml manage.py ./
COPY petstore ./petstore
COPY pets ./pets
COPY domains ./domains
COPY templates ./templates
RUN pip install -e .

# Static files collected into the image; importing the settings needs a secret, never used.
RUN SECRET_KEY=collectstatic-only \
    python manage.py collectstatic --noinput \
    && mkdir -p var/ca \
    && chown -R petstore:petstore var

USER petstore
EXPOSE 8000
CMD ["gunicorn", "petstore.wsgi", "--workers", "3", "--bind", "0.0.0.0:8000"]
