"""One reconcile pass of a TenantCluster: a declared table of phases over a scope; status is built at the end.

`PHASES` is the pass, in order. Each phase reads what the ones before it put in the `Scope` and fills
its own part; `status.result` derives the status from the scope (what Ready summarises: `READY_FROM`).
A *guarded* phase's API error stops the pass as `Applied=False` (retried, backing off) and a refusal
as `Ready=False/InvalidSpec` (never retried until the spec changes, so nothing loops); an unguarded
phase reports its own failures in its condition, and anything it raises fails the pass for a retry.
docs/operator.md's lifecycle section is this table (`python -m tenantctl.operator.phases.reconcile`
prints it; tests/operator/test_phase_table.py keeps them in step).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from tenantctl.operator.kube.client import APIError
from tenantctl.operator.phases import render_pass, steps
from tenantctl.operator.phases.apply import MissingAPIError
from tenantctl.operator.phases.conditions import Reason
from tenantctl.operator.phases.scope import PassResult, Scope
from tenantctl.operator.phases.status import STATUS_KEYS, result, status_patch
from tenantctl.operator.phases.upgrade_pass import upgrade_stage
from tenantctl.problems import InvalidInput

__all__ = ["PHASES", "STATUS_KEYS", "PassPhase", "PassResult", "Scope", "lifecycle_table", "reconcile", "status_patch"]


@dataclass(frozen=True)
class PassPhase:
    """A row of the table (not the status `Phase`): its name, what runs, whether its errors stop the pass."""

    name: str
    run: Callable[[Scope], Awaitable[None]]
    guarded: bool
    does: str


PHASES: tuple[PassPhase, ...] = (
    PassPhase("platform", steps.platform, True, "a refused Platform stops every tenant's pass (InvalidSpec)"),
    PassPhase("validate", steps.validate, True, "the TenantCluster and its pools parsed and judged; a refusal stops"),
    PassPhase("rights", steps.rights, True, "the namespace opened to the operator (its tenant role bound there)"),
    PassPhase("restore-source", steps.restore_source, True, "spec.restore: the phase to render; a live source refused"),
    PassPhase("talos-secrets", steps.talos_secrets, True, "the Talos secrets, created once and never pruned"),
    PassPhase("observe", steps.observe_tenant, True, "the endpoint and CAs Kamaji and the cloud wrote"),
    PassPhase("upgrade-stage", upgrade_stage, True,
          "what runs where; the patch the policy allows; the stage (control plane, then one pool at a time)"),
    PassPhase("apply", render_pass.apply, True,
          "render (held pools at what they run, live templates kept), judge what CAPI builds, apply and prune"),
    PassPhase("restore", steps.restore, True, "spec.restore: one step of the restore"),
    PassPhase("chart-sources", render_pass.chart_sources, True, "the add-on charts' sources, given an endpoint"),
    PassPhase("credentials", steps.credentials, True, "the capmox credentials Secret and its key"),
    PassPhase("backup", steps.backup, True, "spec.backup: whether backups keep up with their schedule"),
    PassPhase("apiserver-flags", steps.apiserver_flags, True, "whether Kamaji's apiserver carries the extra flags"),
    PassPhase("announce-credentials", steps.announce_credentials, False, "a credentials finding, once per change"),
    PassPhase("trustd", steps.trustd, False, "the Talos API port on the TenantControlPlane, where Kamaji has it"),
    PassPhase("bootstrap", steps.bootstrap, False, "the tenant's own objects, once its apiserver answers"),
)


async def reconcile(scope: Scope) -> PassResult:
    for phase in PHASES:
        if phase.guarded:
            try:
                await phase.run(scope)
            except InvalidInput as exc:
                steps.refuse(scope, exc)
            except MissingAPIError as exc:
                scope.apply_error = (Reason.MISSING_API, str(exc))
            except APIError as exc:
                scope.apply_error = (Reason.API_ERROR, str(exc))
        else:
            await phase.run(scope)
        if scope.refusal is not None or scope.apply_error is not None:
            break
    return result(scope)


def lifecycle_table() -> str:
    """The table as docs/operator.md shows it."""
    rows = [f"| {n} | `{p.name}` | {'yes' if p.guarded else 'no'} | {p.does} |" for n, p in enumerate(PHASES, 1)]
    return "\n".join(["| # | phase | guarded | what it does |", "|---|---|---|---|", *rows])


if __name__ == "__main__":
    print(lifecycle_table())
