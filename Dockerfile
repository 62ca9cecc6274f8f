# The lecture hall in one image: N Streamlit processes behind HAProxy (deploy/serve.sh) on the
# port the platform gives (PORT, default 8501), the class store on a volume (/data) or a Redis
# (XATTN_REDIS_URL). Recipes (a Hugging Face Space, a VM, several machines): docs/deploy.md.
#
#   docker build -t xattn .
#   docker run -p 8501:8501 -v xattn-data:/data --stop-timeout 30 \
#       -e XATTN_PUBLIC_URL=http://HOST:8501 xattn
#
# Read-only but for the volume and a tmpfs (docs/deploy.md: it writes nothing else; its logs
# go to /data/logs, kept and bounded):
#   docker run --read-only --tmpfs /tmp -p 8501:8501 -v xattn-data:/data --stop-timeout 30 xattn
#
# HEALTHCHECK is readiness: the store answers, a room can be made, /tmp can be written
# (deploy/health.py; `python deploy/health.py --live` is liveness only).
#
# Not built where it is tested (those machines have no Docker daemon): CI runs the entrypoint
# directly, as the container would, and reads this file's promises (tests/test_container.py).
FROM python:3.11-slim-bookworm

# HAProxy 2.6 (Debian bookworm's: the version deploy/serve.sh is tested with); bash 5.2, setsid
# (util-linux) and /proc come with the base image.
RUN apt-get update \
    && apt-get install -y --no-install-recommends haproxy \
    && rm -rf /var/lib/apt/lists/*

# A user of its own, uid 1000 (a Space runs its container as uid 1000), and its data folder.
RUN useradd --create-home --uid 1000 xattn \
    && mkdir -p /data \
    && chown xattn:xattn /data

WORKDIR /app
# The runtime requirements only: no torch, no test tools (real models are an extra,
# requirements-models.txt, that the image leaves out; the shipped toy-en-fr runs without it).
COPY requirements.txt .
RUN pip install --no-cache-dir -r requirements.txt
# The code, owned by root: the server cannot change it.
COPY . .

USER xattn
ENV PORT=8501 \
    XATTN_DATA=/data \
    XATTN_BIND=0.0.0.0 \
    PYTHONUNBUFFERED=1
VOLUME ["/data"]
EXPOSE 8501
HEALTHCHECK --interval=30s --timeout=10s --start-period=120s --retries=3 \
    CMD ["python", "deploy/health.py"]
STOPSIGNAL SIGTERM
ENTRYPOINT ["deploy/entrypoint.sh"]
