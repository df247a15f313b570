"""A hand-written CRD that exercises every schema feature the validator honours, independent of upstream."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tenantctl.validate import SchemaCatalog

WIDGET_CRD = textwrap.dedent(
    """\
    apiVersion: apiextensions.k8s.io/v1
    kind: CustomResourceDefinition
    metadata:
      name: widgets.example.com
    spec:
      group: example.com
      scope: Namespaced
      names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}
      versions:
      - name: v1alpha1
        served: false
        storage: false
        schema:
          openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
      - name: v1beta1
        served: true
        storage: false
        deprecated: true
        deprecationWarning: example.com/v1beta1 Widget is deprecated; use example.com/v1 Widget
        schema:
          openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
      - name: v1
        served: true
        storage: true
        schema:
          openAPIV3Schema:
            type: object
            properties:
              apiVersion: {type: string}
              kind: {type: string}
              metadata: {type: object}
              spec:
                type: object
                required: [size]
                x-kubernetes-validations:
                - rule: self.minReplicas <= self.maxReplicas
                  message: minReplicas must not exceed maxReplicas
                  fieldPath: .minReplicas
                  reason: FieldValueForbidden
                - rule: "!has(self.mode) || self.mode != 'Legacy' || has(self.legacyConfig)"
                  messageExpression: "'mode ' + self.mode + ' needs legacyConfig'"
                - rule: self.size == oldSelf.size
                  message: size is immutable
                properties:
                  size: {type: string, enum: [small, large]}
                  minReplicas: {type: integer, format: int32, minimum: 0, default: 1}
                  maxReplicas: {type: integer, format: int32, maximum: 10, exclusiveMaximum: true, default: 3}
                  mode: {type: string}
                  legacyConfig: {type: string}
                  port:
                    x-kubernetes-int-or-string: true
                    anyOf: [{type: integer}, {type: string}]
                  handle: {type: string, pattern: '^(?i)[a-z]+$', maxLength: 8}
                  budget: {type: integer, format: int32}
                  note: {type: string, nullable: true}
                  startedAt: {type: string, format: date-time}
                  ratio: {type: number, x-kubernetes-validations: [{rule: self * 2.0 <= 1.0, message: ratio above 0.5}]}
                  extra: {type: object, x-kubernetes-preserve-unknown-fields: true}
                  template:
                    type: object
                    x-kubernetes-embedded-resource: true
                    x-kubernetes-preserve-unknown-fields: true
                  tags:
                    type: array
                    items: {type: string}
                    x-kubernetes-list-type: set
                  ports:
                    type: array
                    x-kubernetes-list-type: map
                    x-kubernetes-list-map-keys: [name]
                    items:
                      type: object
                      required: [name]
                      properties:
                        name: {type: string}
                        number: {type: integer, default: 80}
                  selector: {type: object, additionalProperties: {type: string}}
                  memory:
                    x-kubernetes-int-or-string: true
                    x-kubernetes-validations:
                    - rule: quantity(string(self)).isLessThan(quantity('10Gi'))
                      message: memory must be below 10Gi
                  hosts:
                    type: array
                    items:
                      type: string
                      x-kubernetes-validations:
                      - {rule: self.lowerAscii() == self, message: hosts must be lowercase}
              status: {type: object, x-kubernetes-preserve-unknown-fields: true}
    ---
    apiVersion: apiextensions.k8s.io/v1
    kind: CustomResourceDefinition
    metadata:
      name: gadgets.example.com
    spec:
      group: example.com
      scope: Cluster
      names: {kind: Gadget, plural: gadgets}
      versions:
      - name: v1
        served: true
        storage: true
        schema:
          openAPIV3Schema:
            type: object
            properties:
              apiVersion: {type: string}
              kind: {type: string}
              metadata: {type: object}
              spec: {type: object, properties: {enabled: {type: boolean}}}
    """
)


@pytest.fixture
def widget_dir(tmp_path: Path) -> Path:
    directory = tmp_path / "example-v1.0.0"
    directory.mkdir()
    (directory / "example.com_widgets.yaml").write_text(WIDGET_CRD)
    (directory / "kustomization.yaml").write_text("resources: [example.com_widgets.yaml]\n")
    return directory


@pytest.fixture
def widget_catalog(widget_dir: Path) -> SchemaCatalog:
    return SchemaCatalog.from_dirs([widget_dir])


@pytest.fixture
def widget() -> Callable[..., dict[str, Any]]:
    """A valid Widget; keyword arguments are merged into its spec."""

    def make(name: str = "w1", **spec: Any) -> dict[str, Any]:
        return {
            "apiVersion": "example.com/v1",
            "kind": "Widget",
            "metadata": {"name": name, "namespace": "tenant-acme", "labels": {"app.kubernetes.io/name": "w"}},
            "spec": {"size": "small", **spec},
        }

    return make


@pytest.fixture
def pmt() -> Callable[..., dict[str, Any]]:
    """A valid capmox ProxmoxMachineTemplate; keyword arguments are merged into its template spec."""

    def make(**spec: Any) -> dict[str, Any]:
        return {
            "apiVersion": "infrastructure.cluster.x-k8s.io/v1alpha1",
            "kind": "ProxmoxMachineTemplate",
            "metadata": {"name": "acme-md0-1a2b", "namespace": "tenant-acme"},
            "spec": {
                "template": {
                    "spec": {
                        "sourceNode": "pve1",
                        "templateID": 100,
                        "numSockets": 1,
                        "numCores": 2,
                        "memoryMiB": 4096,
                        "disks": {"bootVolume": {"disk": "scsi0", "sizeGb": 40}},
                        "network": {"default": {"bridge": "vmbr0", "model": "virtio"}},
                        **spec,
                    }
                }
            },
        }

    return make
