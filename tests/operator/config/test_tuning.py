"""The operator's tunable bounds: flags or environment variables, positive Go durations, else exit 2."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from tenantctl.cli import app
from tenantctl.operator.config.settings import OperatorSettings
from tenantctl.operator.config.sharding import Shard
from tenantctl.operator.config.tuning import TUNABLES, tuned_settings
from tenantctl.problems import InvalidInput

FLAGS = [t.flag for t in TUNABLES]


# What docs/operator.md promises, written out here rather than read from TUNABLES: each flag, its
# environment variable, and the bound it sets (read back by the setting's own name).
DOCUMENTED = {
    "--tenant-unreachable-grace": ("TENANTCTL_TENANT_UNREACHABLE_GRACE", lambda s: s.tenant_unreachable_grace),
    "--volume-release-timeout": ("TENANTCTL_VOLUME_RELEASE_TIMEOUT", lambda s: s.volume_release_timeout),
    "--control-plane-timeout": ("TENANTCTL_CONTROL_PLANE_TIMEOUT", lambda s: s.control_plane_timeout),
    "--cluster-deletion-timeout": ("TENANTCTL_CLUSTER_DELETION_TIMEOUT", lambda s: s.cluster_deletion_timeout),
    "--helm-release-timeout": ("TENANTCTL_HELM_RELEASE_TIMEOUT", lambda s: s.helm_release_timeout),
    "--requeue": ("TENANTCTL_REQUEUE", lambda s: s.requeue_delay),
    "--pool-rollout-timeout": ("TENANTCTL_POOL_ROLLOUT_TIMEOUT", lambda s: s.pool_rollout_timeout),
}


def test_every_bound_is_set_by_its_flag() -> None:
    assert {t.flag: t.env for t in TUNABLES} == {flag: env for flag, (env, _) in DOCUMENTED.items()}
    for i, (flag, (_, bound)) in enumerate(DOCUMENTED.items()):
        settings = tuned_settings({flag: f"{i + 1}m30s"}, "1/3")
        assert bound(settings) == (i + 1) * 60 + 30.0, flag
        others = {f: b for f, (_, b) in DOCUMENTED.items() if f != flag}
        assert all(b(settings) == b(OperatorSettings()) for b in others.values()), f"{flag} set another bound"
        assert settings.shard == Shard(1, 3)


def test_unset_bounds_keep_their_defaults() -> None:
    assert tuned_settings({}) == OperatorSettings()


@pytest.mark.parametrize("flag", FLAGS)
@pytest.mark.parametrize(("text", "why"), [("0s", "positive"), ("-5m", "positive"), ("5", "Go duration"),
                                           ("5 m", "Go duration"), ("", "Go duration")])
def test_bad_bounds_are_refused_naming_the_flag(flag: str, text: str, why: str) -> None:
    with pytest.raises(InvalidInput) as refused:
        tuned_settings({flag: text})
    (problem,) = refused.value.problems
    assert problem.path.startswith(flag) and why in problem.message and repr(text) in problem.message


def test_the_operator_command_exits_2_with_every_bad_value(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TENANTCTL_REQUEUE", "0s")
    result = CliRunner().invoke(app, ["operator", "--helm-release-timeout", "soon", "--shard", "2/2"])
    assert result.exit_code == 2
    assert "--requeue ($TENANTCTL_REQUEUE): '0s' must be a positive duration" in result.stderr
    assert "--helm-release-timeout ($TENANTCTL_HELM_RELEASE_TIMEOUT): 'soon'" in result.stderr
    assert "--shard ($TENANTCTL_SHARD): '2/2'" in result.stderr
    assert "Traceback" not in result.output
