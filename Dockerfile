# syntax=docker/dockerfile:1
# prhub bot image. The install steps are the README's: the hashed lock file, then the
# project with --no-deps (tests/test_install.py repeats them in a fresh venv and checks
# that this file uses the same lock file as the README).

FROM python:3.11-slim AS builder
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1 \
    PYTHONDONTWRITEBYTECODE=1
WORKDIR /src
RUN python3 -m venv /opt/venv
COPY requirements.lock ./
RUN /opt/venv/bin/pip install --require-hashes -r requirements.lock
COPY pyproject.toml README.md ./
COPY bot ./bot
RUN /opt/venv/bin/pip install --no-deps .

FROM python:3.11-slim
ENV PATH=/opt/venv/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1
# Chromium prints `prhub digest --format pdf`; the CJK font draws the Chinese of the charts;
# git reads `git:` sources (prhub serve fetches them on a schedule and before each push).
RUN apt-get update \
    && apt-get install -y --no-install-recommends chromium fonts-noto-cjk fontconfig git ca-certificates \
    && rm -rf /var/lib/apt/lists/*
# /app/clones holds the clones of git:URL sources (a volume in docker-compose.yml), owned by the bot's user.
RUN useradd --create-home --uid 10001 --user-group prhub \
    && mkdir -p /app/clones && chown prhub:prhub /app/clones
COPY --from=builder /opt/venv /opt/venv
WORKDIR /app
# The example snapshot and the team configuration the README's digest command reads
# (prhub.toml in the working directory), so the default command prints the same digest.
COPY examples ./examples
COPY prhub.toml ./
USER prhub
# `prhub serve` answers GET /healthz on --port (200 while alive, with {"status": "ok" | "degraded", …});
# GET /readyz is 503 while a platform refuses the bot's credentials, Redis is down or the scheduler stopped.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
    CMD ["python3", "-c", "import sys, urllib.request; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:3000/healthz', timeout=4).status == 200 else 1)"]
ENTRYPOINT ["prhub"]
CMD ["digest", "--source", "jsonl:examples/verl-2026-W12-W16.jsonl.gz", "--repo", "verl-project/verl", "--week", "2026-W16"]
