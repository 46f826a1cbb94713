// The thread list: each past question with its date, mode and a status in words; a search box;
// delete; kept up to date while a run goes; a thread reopened shows its report and progress log.
import { $, state, el, api, actions, finishedWords, LIST_FIELDS, CHOICE_FIELDS } from "./core.js";
import { showLog } from "./progress.js";
import { showSearch } from "./sources.js";

let threads = [];

// a thread's status as a person says it
export function statusWords(t) {
  const values = t.values && typeof t.values === "object" ? t.values : {};
  const waiting = Object.values(t.interrupts || {}).flat().map((i) => (i && i.value && i.value.type) || "");
  if (t.status === "busy") return "running";
  if (t.status === "error") return "failed";
  if (waiting.includes("clarify")) return "needs your answers";
  if (waiting.includes("outline_review")) return "outline to review";
  if (values.report) return waiting.includes("report_feedback") ? `${finishedWords(values)} (edits open)` : finishedWords(values);
  if (values.stopped_by === "cancelled") return "cancelled";
  return t.status === "interrupted" ? "waiting for you" : "no report";
}

// what a thread is listed by: its question (from the page's metadata, the run's values or its
// first chat message); a thread with none yet (made by another client) says so
export function threadLabel(t) {
  const meta = t.metadata || {};
  const values = t.values && typeof t.values === "object" ? t.values : {};
  const first = (Array.isArray(values.messages) ? values.messages : []).find((m) => m && ["human", "user"].includes(m.type || m.role));
  const said = first && typeof first.content === "string" ? first.content : "";
  const question = [meta.dr_question, values.question, said].find((q) => typeof q === "string" && q.trim());
  return question ? question.trim() : "(no question yet)";
}

function when(t) {
  const d = new Date(t.updated_at || t.created_at || 0);
  return isNaN(d) || !d.getTime() ? "" : d.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}

function row(t) {
  const meta = t.metadata || {};
  const status = statusWords(t);
  const label = threadLabel(t);
  const li = el("li", { class: `thread thread-${t.status}`, "data-thread": t.thread_id });
  const open = el("button", { type: "button", class: "open-thread", text: label, on: { click: () => reopen(t) } });
  const mode = meta.dr_graph || meta.graph_id || "";
  const del = el("button", { type: "button", class: "delete-thread", text: "delete",
    "aria-label": `Delete the thread: ${label.slice(0, 80)}`, on: { click: () => confirmDelete(li, t, label) } });
  li.append(open, el("div", { class: "thread-meta" },
    el("span", { class: "thread-status", text: status }),
    el("span", { class: "thread-mode", text: mode ? `· ${mode}` : "" }),
    el("time", { class: "thread-date", datetime: t.updated_at || "", text: when(t) }), del));
  return li;
}

function confirmDelete(li, t, label) {
  const note = el("div", { class: "confirm-delete", role: "group", "aria-label": "Delete this thread?" });
  const yes = el("button", { type: "button", class: "confirm-yes", text: "Delete it", on: { click: () => removeThread(t) } });
  note.append(el("span", { text: "Delete this thread? " }), yes,
    el("button", { type: "button", text: "Keep it", on: { click: () => note.remove() } }));
  li.append(note);
  yes.focus();
}

async function removeThread(t) {
  try { await api(`/threads/${t.thread_id}`, { method: "DELETE" }); } catch (e) { /* listed again below */ }
  if (state.thread === t.thread_id) { state.thread = null; actions.resetView(); }
  await loadThreads();
}

export function showThreads() {
  const words = $("thread-filter").value.trim().toLowerCase();
  const shown = threads.filter((t) => !words || `${threadLabel(t)} ${statusWords(t)} ${(t.metadata || {}).dr_graph || ""}`
    .toLowerCase().includes(words));
  $("threads").replaceChildren(...shown.map(row));
  if (!shown.length) $("threads").append(el("li", { class: "no-threads", text: words ? "no thread matches" : "no threads yet" }));
  actions.markCurrent();
}

export async function loadThreads() {
  try {
    threads = await api("/threads/search", { method: "POST", body: { limit: 100, sort_by: "updated_at", sort_order: "desc" } });
  } catch (e) { return; }
  showThreads();
}

// while a run goes the list is refreshed every few seconds (its status, a new thread)
export function watchThreads() {
  const timer = setInterval(loadThreads, 4000);
  return () => clearInterval(timer);
}

// a reopened thread's settings shown in the form (those it has no field for go to More settings)
function settingsToForm(c) {
  showSearch(c.search);
  const shown = ["search", "max_iterations", "max_tokens", "max_seconds", "max_sections", "outline_style",
    "clarify", "outline_review", "edit_after_report"];
  for (const k of shown) {
    if (c[k] === undefined || k === "search") continue;
    if (typeof c[k] === "boolean") $(k).checked = c[k]; else $(k).value = c[k];
  }
  for (const k of LIST_FIELDS) $(k).value = (c[k] || []).join(", ");
  for (const k of CHOICE_FIELDS) $(k).value = c[k] || (k === "citation_style" ? "numeric" : "");
  const controls = [...LIST_FIELDS, ...CHOICE_FIELDS];
  const rest = Object.fromEntries(Object.entries(c).filter(([k]) => !shown.includes(k) && !controls.includes(k)));
  $("extra-context").value = Object.keys(rest).length ? JSON.stringify(rest) : "";
}

export async function reopen(t) {
  if (state.run) return;  // a run is going: it finishes (or is stopped) first
  const meta = t.metadata || {};
  state.thread = t.thread_id;
  state.graph = meta.dr_graph || meta.graph_id || "iterative";
  try { state.context = JSON.parse(meta.dr_context || "{}"); } catch (e) { state.context = {}; }
  actions.resetView();
  actions.markCurrent();
  actions.showThreadsPanel(false);  // on a phone the list goes away: the thread's report shows
  $("question").value = threadLabel(t) === "(no question yet)" ? "" : threadLabel(t);
  $("graph").value = state.graph === "deep" ? "deep" : "iterative";
  settingsToForm(state.context);
  showLog(meta.dr_progress || []);
  await actions.showThread();
}
