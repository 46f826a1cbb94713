"""Bad input refused before any work (issue 10, items 9 and 12)."""

import pytest

from tests.helpers import cli, one_line_error


@pytest.mark.parametrize("value", ["nan", "inf", "NaN", "1e999"])
def test_budgets_are_finite_positive_numbers(value, cli_env, tmp_path):
    db = tmp_path / "runs.sqlite"
    r = cli(["How do bees navigate?", "--max-seconds", value, "--db", str(db)], cli_env)
    assert "must be positive and finite" in one_line_error(r, 2)
    assert not db.exists()  # refused before any work


def test_a_context_refuses_a_budget_that_is_not_finite():
    from deepresearch.config import Context

    for bad in (float("nan"), float("inf")):
        with pytest.raises(ValueError, match="finite positive"):
            Context(max_seconds=bad)


def test_resume_with_a_missing_database_creates_nothing(cli_env, tmp_path):
    db = tmp_path / "nowhere" / "runs.sqlite"
    for args in (["resume", "abc123", "--db", str(db)],):
        r = cli(args, cli_env)
        assert "no such database" in one_line_error(r, 2)
    assert not db.exists() and not db.parent.exists()


def test_the_printed_resume_command_is_shell_quoted():
    from deepresearch.cli.common import resume_hint

    assert resume_hint("a b;rm -rf x", "my runs.sqlite") == "deepresearch resume 'a b;rm -rf x' --db 'my runs.sqlite'"
