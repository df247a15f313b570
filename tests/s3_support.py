"""A real S3-compatible server on loopback: moto in server mode, in a process of its own."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import requests

from real_control_plane import free_port
from tenantctl.backup.store import S3Target


@contextlib.contextmanager
def s3_server(workdir: Path) -> Iterator[str]:
    """The endpoint URL of a fresh moto S3 server."""
    port = free_port()
    log = (workdir / "moto.log").open("wb")
    env = {**os.environ, "MOTO_ALLOW_NONEXISTENT_REGION": "true"}
    popen = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                             stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                             start_new_session=True, env=env)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                requests.get(f"{url}/moto-api/", timeout=1)
                break
            except requests.RequestException:
                if time.monotonic() > deadline or popen.poll() is not None:
                    raise RuntimeError((workdir / "moto.log").read_text()) from None
                time.sleep(0.1)
        yield url
    finally:
        os.killpg(popen.pid, signal.SIGTERM)
        popen.wait(10)
        log.close()


def bucket(endpoint: str, name: str, prefix: str = "tenants/") -> S3Target:
    """A new bucket on the server, and the target naming it (moto takes any key pair)."""
    import boto3

    client = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                          aws_access_key_id="test-access", aws_secret_access_key="test-secret")
    client.create_bucket(Bucket=name)
    return S3Target(endpoint, name, prefix, "test-access", "test-secret")
