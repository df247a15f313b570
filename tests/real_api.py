"""A small synchronous client for tests on the real control plane: set-up as admin, and the statuses a
test writes while it plays Kamaji and Cluster API. The product's own client (`operator.kube`) is what
the code under test uses; this one only prepares the world around it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import requests
import yaml

Obj = dict[str, Any]


class APIRefusal(Exception):
    def __init__(self, status: int, body: Mapping[str, Any] | str) -> None:
        self.status, self.body = status, body
        message = body.get("message", "") if isinstance(body, Mapping) else str(body)
        super().__init__(f"{status}: {message}")

    @property
    def causes(self) -> list[Mapping[str, Any]]:
        return list(((self.body.get("details") or {}).get("causes") or []) if isinstance(self.body, Mapping) else [])


@dataclass
class Api:
    server: str
    session: requests.Session
    _kinds: dict[tuple[str, str], tuple[str, bool]] = field(default_factory=dict)

    # -- discovery ---------------------------------------------------------------------------------------

    def _discover(self, api_version: str) -> None:
        path = "/api/v1" if api_version == "v1" else f"/apis/{api_version}"
        answer = self._request("GET", self.server + path, timeout=30)
        if answer.status_code == 404:
            return
        answer.raise_for_status()
        for res in answer.json().get("resources", []):
            if "/" not in res["name"]:
                self._kinds[(api_version, res["kind"])] = (res["name"], bool(res["namespaced"]))

    def plural(self, api_version: str, kind: str) -> tuple[str, bool]:
        key = (api_version, kind)
        if key not in self._kinds:
            self._discover(api_version)
        if key not in self._kinds:
            raise KeyError(f"the server serves no {kind} in {api_version}")
        return self._kinds[key]

    def path(self, api_version: str, kind: str, namespace: str | None = None, name: str | None = None) -> str:
        plural, namespaced = self.plural(api_version, kind)
        base = "/api/v1" if api_version == "v1" else f"/apis/{api_version}"
        where = f"/namespaces/{namespace}" if namespaced and namespace else ""
        return f"{self.server}{base}{where}/{plural}" + (f"/{name}" if name else "")

    def _of(self, obj: Mapping[str, Any]) -> str:
        meta = obj.get("metadata") or {}
        return self.path(obj["apiVersion"], obj["kind"], meta.get("namespace"), meta["name"])

    # -- requests ----------------------------------------------------------------------------------------

    def _request(self, method: str, url: str, **kwargs: Any) -> requests.Response:
        """One request; a 429 (a CRD's storage still initializing, priority and fairness) is asked again
        after the server's Retry-After, as any client does, for up to 30 s."""
        deadline = time.monotonic() + 30
        while True:
            answer = self.session.request(method, url, **kwargs)
            if answer.status_code != 429 or time.monotonic() > deadline:
                return answer
            time.sleep(min(float(answer.headers.get("Retry-After") or 1), 2.0))

    def _answer(self, answer: requests.Response) -> Obj:
        if answer.status_code >= 400:
            try:
                body: Mapping[str, Any] | str = answer.json()
            except ValueError:
                body = answer.text
            raise APIRefusal(answer.status_code, body)
        return dict(answer.json()) if answer.content else {}

    def apply(self, obj: Mapping[str, Any], *, manager: str = "tenantctl-test", dry_run: bool = False,
              subresource: str = "") -> Obj:
        """Server-side apply, forced (the test owns what it writes)."""
        params: dict[str, str] = {"fieldManager": manager, "force": "true"}
        if dry_run:
            params["dryRun"] = "All"
        return self._answer(self._request("PATCH",
            self._of(obj) + (f"/{subresource}" if subresource else ""), params=params,
            data=yaml.safe_dump(dict(obj)).encode(), headers={"Content-Type": "application/apply-patch+yaml"},
            timeout=60))

    def create(self, obj: Mapping[str, Any]) -> Obj:
        meta = obj.get("metadata") or {}
        return self._answer(self._request("POST",
            self.path(obj["apiVersion"], obj["kind"], meta.get("namespace")), json=dict(obj), timeout=60))

    def get(self, api_version: str, kind: str, namespace: str | None, name: str) -> Obj | None:
        answer = self._request("GET", self.path(api_version, kind, namespace, name), timeout=30)
        if answer.status_code == 404:
            return None
        return self._answer(answer)

    def list(self, api_version: str, kind: str, namespace: str | None = None, selector: str = "") -> list[Obj]:
        params = {"labelSelector": selector} if selector else {}
        return list(self._answer(self._request("GET", self.path(api_version, kind, namespace), params=params,
                                                  timeout=30))["items"])

    def merge_status(self, api_version: str, kind: str, namespace: str | None, name: str,
                     status: Mapping[str, Any]) -> Obj:
        """What a controller writes: a merge patch of the status subresource."""
        return self._answer(self._request("PATCH",
            self.path(api_version, kind, namespace, name) + "/status", json={"status": dict(status)},
            headers={"Content-Type": "application/merge-patch+json"}, timeout=30))

    def merge(self, api_version: str, kind: str, namespace: str | None, name: str, patch: Mapping[str, Any]) -> Obj:
        return self._answer(self._request("PATCH",
            self.path(api_version, kind, namespace, name), json=dict(patch),
            headers={"Content-Type": "application/merge-patch+json"}, timeout=30))

    def delete(self, api_version: str, kind: str, namespace: str | None, name: str) -> bool:
        answer = self._request("DELETE", self.path(api_version, kind, namespace, name), timeout=30)
        if answer.status_code == 404:
            return False
        self._answer(answer)
        return True

    # -- set-up ------------------------------------------------------------------------------------------

    def namespace(self, name: str) -> None:
        try:
            self.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
        except APIRefusal as exc:
            if exc.status != 409:
                raise

    def install_crds(self, crds: Iterable[Mapping[str, Any]], timeout: float = 60.0) -> list[str]:
        """Apply every CRD and wait until each is Established; its name, in order."""
        names = []
        for crd in crds:
            self.apply(crd)
            names.append(str(crd["metadata"]["name"]))
        deadline = time.monotonic() + timeout
        for name in names:
            while True:
                got = self.get("apiextensions.k8s.io/v1", "CustomResourceDefinition", None, name) or {}
                conditions = {c["type"]: c for c in (got.get("status") or {}).get("conditions") or []}
                if conditions.get("Established", {}).get("status") == "True":
                    break
                if conditions.get("NamesAccepted", {}).get("status") == "False" or time.monotonic() > deadline:
                    raise AssertionError(f"CRD {name} not established: {conditions}")
                time.sleep(0.05)
        self._kinds.clear()
        return names


def crd_documents(paths: Iterable[Path]) -> list[Obj]:
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    out: list[Obj] = []
    for path in paths:
        out += [d for d in yaml.load_all(path.read_text(), Loader=loader)
                if d and d.get("kind") == "CustomResourceDefinition"]
    return out


def wait_for(check: Callable[[], Any], timeout: float = 30.0, interval: float = 0.1, what: str = "") -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout:g}s: {what or check}")
        time.sleep(interval)
