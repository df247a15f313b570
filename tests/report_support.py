"""A doctor report (Proxmox or management) as one line per row: what the snapshot tests pin."""

from __future__ import annotations

from tenantctl.proxmox.report import Report


def report_text(report: Report) -> str:
    return "\n".join(f"{r.status} {r.check} [{r.subject}] {r.seen} -> {r.advice}" for r in report.rows)
