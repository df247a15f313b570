"""`Problem`, `Problems` and `InvalidInput`: one line per finding, every finding kept, no empty refusal."""

from __future__ import annotations

import pytest

from tenantctl.problems import InvalidInput, Problem, Problems, Severity

WARNING = Problem("Platform/default.spec.packages.x", "x is not enabled", Severity.WARNING)
ERROR = Problem("NodePool/md0.spec.replicas", "-1 is below 0")


def test_a_problem_is_one_line_with_warnings_marked() -> None:
    assert str(ERROR) == "NodePool/md0.spec.replicas: -1 is below 0"
    assert str(WARNING) == "warning: Platform/default.spec.packages.x: x is not enabled"
    assert str(Problem("a\nb", "c\x1bd\te")) == "a\\nb: c\\x1bd\\te"


def test_raise_if_errors_raises_once_with_warnings_kept_for_context() -> None:
    problems = Problems()
    problems.warn(WARNING.path, WARNING.message)
    problems.raise_if_errors()
    problems.error(ERROR.path, ERROR.message)
    with pytest.raises(InvalidInput) as caught:
        problems.raise_if_errors()
    assert caught.value.problems == [WARNING, ERROR]
    assert caught.value.errors == [ERROR]
    assert str(caught.value) == f"{WARNING}\n{ERROR}"


@pytest.mark.parametrize("problems", [[], [WARNING]], ids=["nothing", "only a warning"])
def test_a_refusal_without_an_error_is_a_programming_error(problems: list[Problem]) -> None:
    """The operator's Ready message and the CLI's report are the errors; an empty one would say nothing."""
    with pytest.raises(ValueError, match="InvalidInput needs at least one error"):
        InvalidInput(problems)
