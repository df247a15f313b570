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


def test_every_bound_is_set_by_its_flag() -> None:
    settings = tuned_settings({flag: f"{i + 1}m30s" for i, flag in enumerate(FLAGS)}, "1/3")
    assert [getattr(settings, t.field) for t in TUNABLES] == [(i + 1) * 60 + 30.0 for i in range(len(FLAGS))]
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
