"""The search backends, each declared once: its spec, the class that searches, whether it takes
a base URL, what the model is told it is for, what a model may call it, and the help text. The
checks, the factory, the tool descriptions and every help text are derived from this table."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Backend:
    name: str  # what tasks, events and sources carry
    module: str  # deepresearch.tools.<module>
    cls: str
    description: str  # shown to the model by the tool selector
    help: str  # the short form in help texts
    spec: str = ""  # how it is written in `--search` when not its bare name
    http: bool = False  # takes a base-URL override
    aliases: tuple[str, ...] = ()  # what a model may write for it, normalized (lower case, letters and digits)

    @property
    def written(self) -> str:
        return self.spec or self.name


BACKENDS = (
    Backend(
        "wiki",
        "wiki",
        "WikiSearch",
        "an encyclopedia of Wikipedia article summaries: people, places, history, general topics; "
        "query with topic names",
        "offline encyclopedia, the default",
        aliases=("wikipedia", "encyclopedia", "encyclopaedia"),
    ),
    Backend(
        "docs",
        "docs",
        "DocsSearch",
        "the user's own documents",
        "your own files",
        spec="docs:<folder>",
        aliases=("documents", "mydocuments", "userdocuments", "files"),
    ),
    Backend(
        "tavily",
        "tavily",
        "TavilySearch",
        "web search: current events, organizations, products, anything on the web",
        "TAVILY_API_KEY",
        http=True,
        aliases=("web", "websearch", "internet"),
    ),
    Backend(
        "pubmed",
        "pubmed",
        "PubMedSearch",
        "PubMed: biomedical and life-science journal articles (titles and abstracts): diseases, "
        "drugs, treatments, biology",
        "NCBI_API_KEY optional",
        http=True,
        aliases=("medline", "ncbi"),
    ),
    Backend(
        "clinicaltrials",
        "clinicaltrials",
        "ClinicalTrialsSearch",
        "ClinicalTrials.gov: registered clinical studies of treatments, with status, phase, "
        "conditions and interventions",
        "ClinicalTrials.gov",
        http=True,
        aliases=("clinicaltrialsgov", "clinicaltrial", "ctgov", "trials"),
    ),
    Backend(
        "europepmc",
        "europepmc",
        "EuropePMCSearch",
        "Europe PMC: life-science literature, including preprints and open-access articles",
        "Europe PMC",
        http=True,
        aliases=("europmc", "epmc"),
    ),
    Backend(
        "arxiv",
        "arxiv",
        "ArxivSearch",
        "arXiv: preprints in physics, mathematics, computer science, statistics and quantitative biology",
        "arXiv",
        http=True,
        aliases=("arxivorg",),
    ),
)
BY_NAME = {b.name: b for b in BACKENDS}
SEARCH_SPECS = tuple(b.written for b in BACKENDS)
HTTP_BACKENDS = tuple(b.name for b in BACKENDS if b.http)
DESCRIPTIONS = {b.name: b.description for b in BACKENDS}
ALIASES = {alias: b.name for b in BACKENDS for alias in b.aliases}


def search_help() -> str:
    """The `--search` help: every backend with its short note."""
    listed = ", ".join(f"'{b.written}' ({b.help})" for b in BACKENDS)
    return f"Search backends, one or several comma-separated: {listed}; e.g. 'wiki,pubmed,clinicaltrials'."


def base_url_help() -> str:
    return f"({', '.join(HTTP_BACKENDS)})"
