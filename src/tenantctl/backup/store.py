"""Where sealed backups are kept: an S3-compatible bucket, one object per backup under
`<prefix><namespace>/<name>/`, named by the time and revision it was taken; listed by those, not by name
text (`-r10` sorts before `-r9`).

The object's user metadata repeats what `list`, `plan` and `describe` show (time, revision, keys): none
of it is secret, and reading it needs no key and no download.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tenantctl.backup.bundle import Manifest

__all__ = ["BackupStore", "S3Target", "StoreError", "Stored"]

SUFFIX = ".tctlbak"


class StoreError(Exception):
    pass


@dataclass(frozen=True)
class S3Target:
    endpoint: str
    bucket: str
    prefix: str
    access_key: str
    secret_key: str
    region: str = "us-east-1"


@dataclass(frozen=True)
class Stored:
    key: str
    size: int
    created: str
    revision: int
    keys: int

    def data(self) -> dict[str, Any]:
        return {"object": self.key, "bytes": self.size, "created": self.created, "revision": self.revision,
                "keys": self.keys}


def object_name(target: S3Target, manifest: Manifest) -> str:
    stamp = manifest.created.replace("-", "").replace(":", "")
    return f"{target.prefix}{manifest.namespace}/{manifest.name}/{stamp}-r{manifest.revision}{SUFFIX}"


_NAME = re.compile(r"(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z-r(\d+)")


def _from_name(key: str, revision: int) -> tuple[str, int]:
    """When and at which revision a backup was taken, read from its object name."""
    found = _NAME.search(key.rsplit("/", 1)[-1])
    if found is None:
        return "", revision
    year, month, day, hour, minute, second, named = found.groups()
    return f"{year}-{month}-{day}T{hour}:{minute}:{second}Z", int(named)


class BackupStore:
    def __init__(self, target: S3Target) -> None:
        import boto3
        from botocore.config import Config

        self.target = target
        self._s3: Any = boto3.client(
            "s3", endpoint_url=target.endpoint, region_name=target.region,
            aws_access_key_id=target.access_key, aws_secret_access_key=target.secret_key,
            config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 3},
                          connect_timeout=10, read_timeout=60),
        )

    def _call(self, what: str, fn: Any, **kwargs: Any) -> Any:
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            return fn(**kwargs)
        except ClientError as exc:
            error = exc.response.get("Error", {})
            raise StoreError(f"{what} s3://{self.target.bucket}: {error.get('Code')} {error.get('Message')}") from None
        except BotoCoreError as exc:
            raise StoreError(f"{what} s3://{self.target.bucket} at {self.target.endpoint}: {exc}") from None

    def put(self, manifest: Manifest, sealed: bytes) -> Stored:
        key = object_name(self.target, manifest)
        meta = {"created": manifest.created, "revision": str(manifest.revision), "keys": str(manifest.keys)}
        self._call("upload to", self._s3.put_object, Bucket=self.target.bucket, Key=key, Body=sealed, Metadata=meta)
        return Stored(key, len(sealed), manifest.created, manifest.revision, manifest.keys)

    def _meta(self, key: str, size: int) -> Stored:
        head = self._call("read", self._s3.head_object, Bucket=self.target.bucket, Key=key)
        meta: Mapping[str, str] = head.get("Metadata") or {}
        created, revision = meta.get("created") or "", int(meta.get("revision") or 0)
        if not created:  # copied by a tool that drops user metadata: the name holds both (`object_name`)
            created, revision = _from_name(key, revision)
        return Stored(key, size, created, revision, int(meta.get("keys") or 0))

    def backups(self, namespace: str, name: str) -> list[Stored]:
        """The tenant's backups, oldest first (by creation time, then revision)."""
        prefix = f"{self.target.prefix}{namespace}/{name}/"
        found: list[tuple[str, int]] = []
        token: str | None = None
        while True:
            kwargs: dict[str, Any] = {"Bucket": self.target.bucket, "Prefix": prefix}
            if token:
                kwargs["ContinuationToken"] = token
            page = self._call("list", self._s3.list_objects_v2, **kwargs)
            found += [(o["Key"], int(o["Size"])) for o in page.get("Contents") or [] if o["Key"].endswith(SUFFIX)]
            token = page.get("NextContinuationToken")
            if not token:
                break
        # Newest last by when it was taken, then by revision: not by key text, where `-r10` sorts before
        # `-r9` (two backups in one second: a manual one beside the CronJob's).
        return sorted((self._meta(key, size) for key, size in found), key=lambda s: (s.created, s.revision, s.key))

    def get(self, key: str) -> bytes:
        answer = self._call("download from", self._s3.get_object, Bucket=self.target.bucket, Key=key)
        body: bytes = answer["Body"].read()
        return body

    def prune(self, namespace: str, name: str, keep: int) -> list[str]:
        """Delete all but the newest `keep` backups; the names deleted."""
        if keep < 1:
            raise StoreError(f"keep is {keep}: a prune always keeps the newest backup")
        stale = [s.key for s in self.backups(namespace, name)][:-keep]
        for key in stale:
            self._call("delete from", self._s3.delete_object, Bucket=self.target.bucket, Key=key)
        return stale
