// The deepresearch page: plain JavaScript modules against the LangGraph server's own API.
// Everything that comes from a run (events, questions, outlines, sources, passages) is set
// as text (textContent, input values), never as HTML; the report's HTML comes rendered and
// sanitized by the server (POST /ui/api/view), and the page's policy runs no inline script.
//   core.js      state, elements, the API with the tab's token, the status line
//   runs.js      asking, streaming, resuming, Stop, a thread's state
//   progress.js  the progress list, its log in the thread's metadata, the budget line
//   forms.js     clarifying questions and the outline review
//   report.js    the report, its sources panel, citation popovers, copy, exports, the edit panel
//   sources.js   the search sources as checkboxes
//   threads.js   the thread list
import { $, state, setStatus, actions, TOKEN_KEY } from "./core.js";
import { ask, stop, resume, resetView } from "./runs.js";
import { captureSelection, copyReport, editAction, exportAs, selectBlock, showPopover } from "./report.js";
import { loadThreads, showThreads } from "./threads.js";
import { loadSources } from "./sources.js";

// on a phone the thread list is behind the header's Threads button
function showThreadsPanel(open) {
  document.body.classList.toggle("threads-open", open);
  $("threads-toggle").setAttribute("aria-expanded", String(open));
}

function signIn(ev) {
  ev.preventDefault();
  const token = $("token").value.trim();
  $("token").value = "";
  if (!token) return;
  sessionStorage.setItem(TOKEN_KEY, token);
  $("sign-in").hidden = true;
  $("sign-out").hidden = false;
  $("sign-in-note").textContent = "";
  loadThreads();
  loadSources();
}

function signOut() {
  sessionStorage.removeItem(TOKEN_KEY);
  state.thread = null;
  resetView();
  $("threads").replaceChildren();
  setStatus("signed out");
  $("sign-out").hidden = true;
  $("sign-in").hidden = false;
}

function init() {
  $("sign-in").addEventListener("submit", signIn);
  $("sign-out").addEventListener("click", signOut);
  $("sign-out").hidden = !sessionStorage.getItem(TOKEN_KEY);
  $("ask-form").addEventListener("submit", (ev) => ask(ev).catch((e) => setStatus(`cannot start: ${e.message}`, "error")));
  $("stop").addEventListener("click", stop);
  $("refresh-threads").addEventListener("click", loadThreads);
  $("thread-filter").addEventListener("input", showThreads);
  $("threads-toggle").addEventListener("click", () => {
    const open = !document.body.classList.contains("threads-open");
    showThreadsPanel(open);
    if (open) $("thread-filter").focus();
  });
  $("new-question").addEventListener("click", () => {
    if (state.run) return;
    state.thread = null; resetView(); setStatus(""); showThreads(); showThreadsPanel(false); $("question").focus();
  });
  $("report").addEventListener("click", (ev) => {
    const a = ev.target.closest("a.cite");
    if (a) { ev.preventDefault(); showPopover(a); }
  });
  document.addEventListener("click", (ev) => {  // a click elsewhere closes the citation's popover
    if (!ev.target.closest("#popover, a.cite")) $("popover").hidden = true;
  });
  document.addEventListener("keydown", (ev) => { if (ev.key === "Escape") $("popover").hidden = true; });
  document.addEventListener("selectionchange", () => { if (!$("edit-panel").hidden) captureSelection(); });
  $("report").addEventListener("mouseup", captureSelection);
  $("report").addEventListener("keydown", selectBlock);
  for (const b of document.querySelectorAll("#edit-panel [data-action]")) {
    b.addEventListener("click", () => editAction(b.dataset.action));
  }
  for (const fmt of ["md", "html", "docx", "pdf", "bibtex", "ris", "csljson"]) {
    $(`export-${fmt}`).addEventListener("click", (ev) => { ev.preventDefault(); exportAs(fmt); });
  }
  $("copy-report").addEventListener("click", copyReport);
  $("hand-edit").addEventListener("click", () => { $("hand-text").value = state.report; $("hand-edit-box").hidden = false; $("hand-text").focus(); });
  $("hand-save").addEventListener("click", () => { $("hand-edit-box").hidden = true; resume({ action: "sync", report: $("hand-text").value }); });
  actions.showThreadsPanel = showThreadsPanel;
  loadThreads();
  loadSources();
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
else init();
