"""Patches to upstream components, declared as data, applied at vendoring and verified in the blob.

Three operations cover what the packages need: `set` a field of the objects a target selects, `add`
an object, and `replace-items` in a list (e.g. re-point RoleBinding subjects). Each one can also say
whether a component file carries it, which is how `vendor check` proves a fix reached the blob that
ships rather than only the YAML a reviewer reads (cozystack#2946 edited the YAML alone).
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Iterator, Sequence
from typing import Annotated, Any, Literal

from pydantic import Field

from tenantctl.providers.manifests import Manifest
from tenantctl.spec.base import SpecModel

__all__ = ["AddObject", "Patch", "PatchFailure", "ReplaceItems", "SetField", "Target", "apply", "missing"]

PathStep = str | dict[str, str]


class PatchFailure(ValueError):
    """A declared patch does not fit the upstream file: upstream changed and the patch needs review."""


class Target(SpecModel):
    kind: str
    name: str | None = None

    def selects(self, doc: dict[str, Any]) -> bool:
        meta = doc.get("metadata") or {}
        return doc.get("kind") == self.kind and (self.name is None or meta.get("name") == self.name)

    def __str__(self) -> str:
        return f"{self.kind}/{self.name}" if self.name else f"every {self.kind}"


class SetField(SpecModel):
    op: Literal["set"]
    target: Target
    path: list[PathStep]
    value: Any

    def describe(self) -> str:
        return f"{self.target} {_show_path(self.path)} = {json.dumps(self.value, sort_keys=True)}"


class AddObject(SpecModel):
    op: Literal["add"]
    object: dict[str, Any]

    def describe(self) -> str:
        meta = self.object.get("metadata", {})
        return f"{self.object.get('kind')} {meta.get('namespace', '')}/{meta.get('name')} exists"


class ReplaceItems(SpecModel):
    op: Literal["replace-items"]
    target: Target
    path: list[PathStep]
    match: dict[str, str]
    set: dict[str, str]

    def describe(self) -> str:
        return f"{self.target} {_show_path(self.path)}: items {self.match} carry {self.set}"


Operation = Annotated[SetField | AddObject | ReplaceItems, Field(discriminator="op")]


class Patch(SpecModel):
    id: str
    why: str
    operations: list[Operation]

    def digest(self) -> str:
        """SHA-256 of the definition: the lock records it, so a changed patch is a visible re-pin."""
        canonical = json.dumps(self.model_dump(mode="json", by_alias=True), sort_keys=True)
        return hashlib.sha256(canonical.encode()).hexdigest()


def _show_path(path: Sequence[PathStep]) -> str:
    out = ""
    for step in path:
        if isinstance(step, dict):
            out += "[" + ",".join(f"{k}={v}" for k, v in step.items()) + "]"
        else:
            out += f".{step}"
    return out


def _is_item(item: Any, selector: dict[str, str]) -> bool:
    return isinstance(item, dict) and all(item.get(k) == v for k, v in selector.items())


def _walk(node: Any, path: Sequence[PathStep], create: bool) -> Any:
    """The value at `path`, or None where it is absent (created as mappings when `create`)."""
    for step in path:
        if isinstance(step, dict):
            if not isinstance(node, list):
                return None
            node = next((item for item in node if _is_item(item, step)), None)
        else:
            if not isinstance(node, dict):
                return None
            if step not in node and create:
                node[step] = {}
            node = node.get(step)
        if node is None:
            return None
    return node


def _targets(manifest: Manifest, target: Target) -> Iterator[dict[str, Any]]:
    return (doc for doc in manifest.documents if target.selects(doc))


def _identity(doc: dict[str, Any]) -> tuple[Any, ...]:
    meta = doc.get("metadata") or {}
    return doc.get("apiVersion"), doc.get("kind"), meta.get("namespace"), meta.get("name")


def _apply_set(manifest: Manifest, op: SetField) -> None:
    docs = list(_targets(manifest, op.target))
    if not docs:
        raise PatchFailure(f"no {op.target} in the components")
    for doc in docs:
        parent = _walk(doc, op.path[:-1], create=True)
        leaf = op.path[-1]
        if not isinstance(parent, dict) or isinstance(leaf, dict):
            raise PatchFailure(f"{op.target} has no {_show_path(op.path[:-1])}")
        parent[leaf] = copy.deepcopy(op.value)
        manifest.mark_changed(doc)


def _apply_add(manifest: Manifest, op: AddObject) -> None:
    clash = [d for d in manifest.documents if _identity(d) == _identity(op.object)]
    if clash and clash[0] != op.object:
        raise PatchFailure(f"upstream now ships its own {op.describe().removesuffix(' exists')}")
    if not clash:
        manifest.append(copy.deepcopy(op.object))


def _apply_replace(manifest: Manifest, op: ReplaceItems) -> None:
    replaced = 0
    for doc in _targets(manifest, op.target):
        items = _walk(doc, op.path, create=False)
        for item in items if isinstance(items, list) else []:
            if _is_item(item, op.match):
                item.update(op.set)
                replaced += 1
                manifest.mark_changed(doc)
    if not replaced:
        raise PatchFailure(f"no item of {_show_path(op.path)} in {op.target} matches {op.match}")


def apply(manifest: Manifest, patches: Sequence[Patch]) -> None:
    """Apply every operation in order; a patch that no longer fits raises `PatchFailure` naming it."""
    for patch in patches:
        for op in patch.operations:
            try:
                if isinstance(op, SetField):
                    _apply_set(manifest, op)
                elif isinstance(op, AddObject):
                    _apply_add(manifest, op)
                else:
                    _apply_replace(manifest, op)
            except PatchFailure as exc:
                raise PatchFailure(f"patch {patch.id}: {exc}") from None


def _carries(manifest: Manifest, op: SetField | AddObject | ReplaceItems) -> bool:
    if isinstance(op, AddObject):
        return any(d == op.object for d in manifest.documents)
    docs = list(_targets(manifest, op.target))
    if isinstance(op, SetField):
        return bool(docs) and all(_walk(d, op.path, create=False) == op.value for d in docs)
    lists = [_walk(d, op.path, create=False) for d in docs]
    items = [i for lst in lists if isinstance(lst, list) for i in lst]
    wanted = {**op.match, **op.set}
    left_behind = [i for i in items if _is_item(i, op.match) and not _is_item(i, op.set)]
    return any(_is_item(i, wanted) for i in items) and not left_behind


def missing(manifest: Manifest, patches: Sequence[Patch]) -> list[str]:
    """`<patch id>: <operation>` for every declared operation the file does not carry."""
    return [
        f"{patch.id}: {op.describe()}"
        for patch in patches
        for op in patch.operations
        if not _carries(manifest, op)
    ]
