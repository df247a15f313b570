"""Commands on a tenant's own input: `render`, `validate`, `crds`, `audit`, `images`."""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from tenantctl.cli.commands import summary
from tenantctl.cli.support import command_group, print_problems, refusals_exit_2

if TYPE_CHECKING:
    from tenantctl.problems import Problem
    from tenantctl.render.chart_sources import ChartSourcesSpec
    from tenantctl.render.image_settings import ImagesSpec
    from tenantctl.spec import TenantInput
    from tenantctl.spec.compat import KamajiRelease


class OutputFormat(StrEnum):
    yaml = "yaml"
    json = "json"


class ListFormat(StrEnum):
    text = "text"
    json = "json"


FileOption = Annotated[Path, typer.Option("-f", "--filename", help="TenantCluster/NodePool YAML ('-' for stdin).")]
ObservedOption = Annotated[
    Path | None,
    typer.Option("--observed", help="ObservedState YAML: runtime inputs that enable the TalosConfigTemplates."),
]
OutputOption = Annotated[OutputFormat, typer.Option("-o", "--output", help="Output format.")]
PlatformOption = Annotated[
    Path | None,
    typer.Option("--platform", help="Platform YAML: spec.charts (chart sources) and spec.images (overrides, mirror)."),
]


def _load(filename: Path, observed: Path | None) -> tuple[TenantInput, dict[tuple[str, str], Any]]:
    from tenantctl.documents import load_file
    from tenantctl.spec import parse_observed, parse_tenant_documents

    tenant = parse_tenant_documents(load_file(filename))
    observations = parse_observed(load_file(observed)) if observed is not None else {}
    if tenant.warnings:
        print_problems(tenant.warnings)
    return tenant, observations


def platform_settings(
    platform: Path | None,
) -> tuple[ChartSourcesSpec | None, ImagesSpec | None, KamajiRelease]:
    """The Platform passes every check `providers render` makes (bundles, lock, contracts), so no
    command accepts a platform another refuses; its chart sources, images and Kamaji release matter here."""
    from tenantctl.spec.compat import DEFAULT_KAMAJI

    if platform is None:
        return None, None, DEFAULT_KAMAJI
    from tenantctl.providers.assemble import render_workspace
    from tenantctl.providers.workspace import open_workspace

    workspace = open_workspace(platform)
    render_workspace(workspace, with_components=False)
    return workspace.platform.charts, workspace.platform.images, workspace.platform.kamaji or DEFAULT_KAMAJI


@refusals_exit_2
def render(
    filename: FileOption,
    observed: ObservedOption = None,
    platform: PlatformOption = None,
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
    charts, images, kamaji = platform_settings(platform)
    if in_tenant:
        if not observations:
            raise InvalidInput([Problem("--in-tenant", "needs --observed: the bootstrap token is a runtime input")])
        render_tenant(tenant, observations, charts, images, kamaji)  # the same refusals as a management render
        objects = [
            obj
            for c in tenant.clusters
            if (c.metadata.namespace, c.metadata.name) in observations
            for obj in render_tenant_bootstrap(c, observations[(c.metadata.namespace, c.metadata.name)])
        ]
    else:
        objects = render_tenant(tenant, observations, charts, images, kamaji)
    typer.echo(dump_objects(objects, output.value), nl=False)


@refusals_exit_2
def validate(
    filename: FileOption,
    crds: Annotated[
        list[Path] | None,
        typer.Option("--crds", help="Directory of upstream CRDs to validate against (repeatable)."),
    ] = None,
    observed: ObservedOption = None,
    platform: PlatformOption = None,
    live: Annotated[
        Path | None,
        typer.Option("--live", help="The TenantClusters as the management cluster holds them (kubectl get -o yaml): "
                     "refuse the version changes Kamaji refuses."),
    ] = None,
    strict: Annotated[
        bool, typer.Option("--strict", help="Refuse (exit 2) when any rendered object could not be judged."),
    ] = False,
) -> None:
    """Check the input, render it and judge every object against the CRDs (schema + CEL) and core schemas.

    The CRDs are those `tenantctl crds pull` put in the cache, or the --crds directories. Exit 0 when
    every judged object passes, also when some could not be judged (CRDs not pulled): the summary then
    says how to get them, as a warning on stderr beside the CRDs' own (a deprecated version). Exit 2 on
    a refusal, and when a CRD of a rendered kind is missing from --crds or, under --strict, from anywhere.
    """
    from tenantctl.render import render_tenant

    tenant, observations = _load(filename, observed)
    charts, images, kamaji = platform_settings(platform)
    if live is not None:
        _refuse_changes_from(tenant, live)
    objects = render_tenant(tenant, observations, charts, images, kamaji)
    summary, warnings = judge_render(objects, crds, strict, "validate")
    typer.echo(f"ok: {summary}")
    if warnings:
        sys.stdout.flush()
        print_problems(warnings)


def judge_render(
    objects: Sequence[Mapping[str, Any]], crds: Sequence[Path] | None, strict: bool, command: str
) -> tuple[str, list[Problem]]:
    """Judge rendered objects against the --crds directories or the pulled CRDs; refuse what fails.

    Returns the coverage summary and the warnings to print (a deprecated version, CRDs not pulled);
    raises InvalidInput for a refusal, or for a kind nothing could judge when that is an error (a given
    --crds directory lacks it, or `strict`).
    """
    from tenantctl.problems import InvalidInput, Problem, Severity
    from tenantctl.validate import SchemaCatalog, schema_coverage, validate_objects
    from tenantctl.validate.upstream import pulled_dirs

    dirs = list(crds) if crds else pulled_dirs()
    catalog = SchemaCatalog.from_dirs(dirs) if dirs else None
    problems = validate_objects(objects, catalog)
    coverage = schema_coverage(objects, catalog)
    gap = coverage.gap(catalog)
    if any(p.severity is Severity.ERROR for p in problems) or (gap and strict):
        raise InvalidInput([*problems, *([Problem("--crds" if crds else command, gap)] if gap else [])])
    return coverage.summary(catalog), [*problems, *([Problem(command, gap, Severity.WARNING)] if gap else [])]


def _refuse_changes_from(tenant: TenantInput, live: Path) -> None:
    from tenantctl.documents import load_file
    from tenantctl.problems import Problems
    from tenantctl.spec.compat import check_input_against_live

    problems = Problems()
    check_input_against_live(tenant.clusters, load_file(live), problems)
    problems.raise_if_errors()


EXIT_FINDINGS = 1


@refusals_exit_2
def audit(
    filename: FileOption,
    observed: ObservedOption = None,
    platform: PlatformOption = None,
    credentials: Annotated[
        list[Path] | None,
        typer.Option(
            "--credentials",
            help="Secret manifests holding the real tokens: their values are searched for literally (repeatable).",
        ),
    ] = None,
) -> None:
    """Render and prove no credential reaches a tenant: exit 1 on a finding, 0 when clean (warnings allowed)."""
    from tenantctl.audit import audit_tenant, credential_values
    from tenantctl.documents import load_file
    from tenantctl.problems import Severity

    tenant, observations = _load(filename, observed)
    values = credential_values([d for path in credentials or [] for d in load_file(path)])
    findings = audit_tenant(tenant, observations, platform_settings(platform)[0], values)
    print_problems(findings)
    errors = [f for f in findings if f.severity is Severity.ERROR]
    if errors:
        raise typer.Exit(EXIT_FINDINGS)
    scope = "add-ons and bootstrap objects included" if observations else "no --observed: management objects only"
    typer.echo(f"ok: no credential reaches a tenant ({scope})")


@refusals_exit_2
def images(
    filename: FileOption,
    platform: PlatformOption = None,
    output: Annotated[ListFormat, typer.Option("-o", "--output", help="Output format.")] = ListFormat.text,
) -> None:
    """List every image and chart the platform and these tenants pull, deduplicated, with where it is used:
    what an air-gapped site mirrors."""
    import json

    from tenantctl.render.chart_sources import ChartSourcesSpec
    from tenantctl.render.image_list import tenant_charts, tenant_images
    from tenantctl.render.image_settings import ImagesSpec

    tenant, _ = _load(filename, None)
    charts, settings, _ = platform_settings(platform)
    pulled = tenant_images(tenant, settings or ImagesSpec())
    sources = tenant_charts(tenant, charts or ChartSourcesSpec(), settings or ImagesSpec())
    if output is ListFormat.json:
        listed = [{"kind": "image", "image": p.image, "source": p.source} for p in pulled]
        listed += [{"kind": "chart", "chart": c.artifact, "source": f"{c.addon}: tenant add-on chart"} for c in sources]
        typer.echo(json.dumps(listed, indent=2))
        return
    rows = [(p.image, p.source) for p in pulled] + [(c.artifact, f"{c.addon}: tenant add-on chart") for c in sources]
    width = max((len(what) for what, _ in rows), default=0)
    for what, source in rows:
        typer.echo(f"{what.ljust(width)}  {source}")


crds_app = command_group(name="crds", short_help=summary("crds"))


@crds_app.callback(invoke_without_command=True)
def crds(ctx: typer.Context, output: OutputOption = OutputFormat.yaml) -> None:
    """Print the CustomResourceDefinitions of TenantCluster, NodePool and Platform, generated from the models.

    `tenantctl crds pull` downloads the upstream CRDs validate judges the rest of a render against.
    """
    if ctx.invoked_subcommand is not None:
        return
    from tenantctl.documents import dump_objects
    from tenantctl.providers.platform import tenantctl_crds

    typer.echo(dump_objects(tenantctl_crds(), output.value), nl=False)


@crds_app.command("pull", short_help="Download the pinned upstream CRDs into the cache.")
@refusals_exit_2
def crds_pull(
    mirror: Annotated[
        str | None,
        typer.Option("--mirror", envvar="TENANTCTL_CRDS_MIRROR",
                     help="Base URL of a mirror serving the upstream paths (the pins still apply)."),
    ] = None,
    into: Annotated[
        Path | None,
        typer.Option("--dir", metavar="DIR", help="Where to put them (default: $TENANTCTL_CRDS_CACHE, else "
                     "~/.cache/tenantctl/crds)."),
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Download again what the cache holds already.")] = False,
) -> None:
    """Download the CRDs of every provider version tenantctl pins, each file from its repository at the
    pinned tag, verified against its pinned SHA-256; nothing is written unless every file verifies."""
    from tenantctl.providers.download import Downloader
    from tenantctl.validate.upstream import pull

    downloader = Downloader(mirror)
    try:
        result = pull(downloader, into, force=force)
    finally:
        downloader.close()
    typer.echo(result.summary())


def register(app: typer.Typer) -> None:
    """Attach the tenant commands to the root app."""
    app.command(short_help=summary("render"))(render)
    app.command(short_help=summary("validate"))(validate)
    app.add_typer(crds_app)
    app.command(short_help=summary("audit"))(audit)
    app.command(short_help=summary("images"))(images)
