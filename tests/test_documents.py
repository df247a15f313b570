"""What `tenantctl render` prints is written by libyaml: byte for byte what PyYAML's own emitter writes."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from tenant_support import load_example
from tenantctl.documents import _Dumper, dump_objects
from tenantctl.render import render_tenant, render_tenant_bootstrap
from tenantctl.spec import parse_observed, parse_tenant_documents

EXAMPLES = [("kubevirt.yaml", "observed-kubevirt.yaml"), ("proxmox.yaml", "observed-proxmox.yaml")]


class _PureDumper(yaml.SafeDumper):
    """The emitter renders were printed with before: the reference."""


_PureDumper.add_representer(str, _Dumper.yaml_representers[str])


def pure(objects: list[dict[str, Any]]) -> str:
    return yaml.dump_all(objects, Dumper=_PureDumper, sort_keys=False, default_flow_style=False, width=4096)


def test_the_printed_renders_come_from_libyaml() -> None:
    assert issubclass(_Dumper, yaml.CSafeDumper)


@pytest.mark.parametrize(("example", "observed"), EXAMPLES)
def test_printed_renders_equal_the_pure_emitter(example: str, observed: str) -> None:
    tenant = parse_tenant_documents(load_example(example))
    observations = parse_observed(load_example(observed))
    management = render_tenant(tenant, observations)
    inside = [
        o for c in tenant.clusters
        for o in render_tenant_bootstrap(c, observations[(c.metadata.namespace, c.metadata.name)])
    ]
    for objects in (management, inside):
        assert dump_objects(objects) == pure(objects)


@pytest.mark.parametrize("value", ["a\nb", "a\n", "trailing \nspace", "  lead\nx", "x" * 5000 + " y", "é\nü", "\tx\n"])
def test_odd_strings_print_as_the_pure_emitter_prints_them(value: str) -> None:
    objects = [{"kind": "ConfigMap", "data": {"k": value, "list": [value]}}]
    assert dump_objects(objects) == pure(objects)
