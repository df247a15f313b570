"""Commands on a tenant's own input: `render`, `validate`, `crds`."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from tenantctl.cli_support import print_problems, refusals_exit_2

if TYPE_CHECKING:
    from tenantctl.spec import TenantInput


class OutputFormat(StrEnum):
    yaml = "yaml"
    json = "json"


FileOption = Annotated[Path, typer.Option("-f", "--filename", help="TenantCluster/NodePool YAML ('-' for stdin).")]
ObservedOption = Annotated[
    Path | None,
    typer.Option("--observed", help="ObservedState YAML: runtime inputs that enable the TalosConfigTemplates."),
]
OutputOption = Annotated[OutputFormat, typer.Option("-o", "--output", help="Output format.")]


def _load(filename: Path, observed: Path | None) -> tuple[TenantInput, dict[tuple[str, str], Any]]:
    from tenantctl.documents import load_file
    from tenantctl.spec import parse_observed, parse_tenant_documents

    tenant = parse_tenant_documents(load_file(filename))
    observations = parse_observed(load_file(observed)) if observed is not None else {}
    if tenant.warnings:
        print_problems(tenant.warnings)
    return tenant, observations


@refusals_exit_2
def render(
    filename: FileOption,
    observed: ObservedOption = None,
    output: OutputOption = OutputFormat.yaml,
    in_tenant: Annotated[
        bool, typer.Option("--in-tenant", help="Print the objects applied inside the tenant (needs --observed).")
    ] = False,
) -> None:
    """Render every management-cluster object of the input to stdout, in a stable order."""
    from tenantctl.documents import dump_objects
    from tenantctl.problems import InvalidInput, Problem
    from tenantctl.render import render_tenant, render_tenant_bootstrap

    tenant, observations = _load(filename, observed)
    if in_tenant:
        if not observations:
            raise InvalidInput([Problem("--in-tenant", "needs --observed: the bootstrap token is a runtime input")])
        objects = [
            obj
            for c in tenant.clusters
            if (c.metadata.namespace, c.metadata.name) in observations
            for obj in render_tenant_bootstrap(c, observations[(c.metadata.namespace, c.metadata.name)])
        ]
    else:
        objects = render_tenant(tenant, observations)
    typer.echo(dump_objects(objects, output.value), nl=False)


@refusals_exit_2
def validate(
    filename: FileOption,
    crds: Annotated[
        list[Path] | None,
        typer.Option("--crds", help="Directory of upstream CRDs to validate against (repeatable)."),
    ] = None,
    observed: ObservedOption = None,
) -> None:
    """Check the input, render it and judge every object against the CRDs (schema + CEL) and core schemas."""
    from tenantctl.problems import InvalidInput
    from tenantctl.render import render_tenant
    from tenantctl.validate import SchemaCatalog, validate_objects

    tenant, observations = _load(filename, observed)
    objects = render_tenant(tenant, observations)
    catalog = SchemaCatalog.from_dirs(crds) if crds else None
    problems = validate_objects(objects, catalog)
    if problems:
        raise InvalidInput(problems)
    typer.echo("ok")


def crds(output: OutputOption = OutputFormat.yaml) -> None:
    """Print the CustomResourceDefinitions of TenantCluster and NodePool, generated from the models."""
    from tenantctl.documents import dump_objects
    from tenantctl.spec.crds import render_crds

    typer.echo(dump_objects(render_crds(), output.value), nl=False)


def register(app: typer.Typer) -> None:
    """Attach the tenant commands to the root app."""
    app.command()(render)
    app.command()(validate)
    app.command()(crds)
