"""A deep run researched on one machine and finished on another, on PostgreSQL: as in
tests/test_resume_elsewhere.py (which says how), the texts are read from the run's store.
"""

from __future__ import annotations

from tests.test_postgres import pg  # noqa: F401 (a fresh database for the test)
from tests.test_resume_elsewhere import resumed_elsewhere


def test_deep_run_resumed_on_another_machine_on_postgres(cli_env, tmp_path, pg):  # noqa: F811
    state = resumed_elsewhere(cli_env, tmp_path, pg)
    import psycopg

    with psycopg.connect(pg) as conn:  # the texts are in PostgreSQL, under the run's label
        rows = conn.execute("SELECT prefix, key FROM store WHERE prefix LIKE 'deepresearch.texts.%'").fetchall()
    assert {p for p, _ in rows} == {"deepresearch.texts.t:whole", "deepresearch.texts.t:moved"}
    assert {k for p, k in rows if p.endswith("t:moved")} == {s["key"] for s in state["evidence"]}
