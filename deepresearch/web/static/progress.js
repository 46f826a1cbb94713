// The progress list (one line per event of the run, newest in view), the live budget line,
// and the thread's progress log kept in its metadata so a reopened thread shows it again.
import { $, state, el, api, actionWords } from "./core.js";

const MAX_LOG = 400; // lines kept in the thread's metadata

// sections are numbered from 1, as the outline's list shows them (events count from 0)
const secNo = (i) => (typeof i === "number" ? i + 1 : i);

export function describe(e) {
  const sec = e.section !== undefined && e.section !== null ? `[section ${secNo(e.section)}] ` : "";
  switch (e.type) {
    case "clarify": return `clarify: ${e.status}${e.note ? " (" + e.note + ")" : ""}`;
    case "started": return `${sec}researching: ${e.question}`;
    case "concepts": return `${sec}concepts: ${(e.concepts || []).map((c) => c.name || c).join(", ")}`;
    case "planning": return `planning the outline${e.comment ? ": " + e.comment : ""}`;
    case "outline": return `outline: ${(e.outline && e.outline.title) || ""}${e.note ? " (" + e.note + ")" : ""}`;
    case "section_started": return `section ${secNo(e.index)} started: ${e.title}`;
    case "searching": return `${sec}searching ${e.tool || ""}: ${e.query}`;
    case "search_complete": return `${sec}found ${e.results} result(s) for: ${e.query}`;
    case "indexing": return e.status === "reading" ? `reading ${e.index}: ${e.files}/${e.of} files, ${e.pages} pages`
      : e.status === "encoding" ? `encoding ${e.index}: ${e.done}/${e.items} texts`
      : e.status === "building" ? `building ${e.index} (${e.items} texts): once, later runs reuse them`
      : `built ${e.index}: ${e.items} texts in ${e.seconds} s`;
    case "judging": return `${sec}judging gaps (iteration ${e.iteration}); missing: ${(e.missing || []).join(", ") || "none"}`;
    case "looping": return `${sec}another round for: ${(e.gaps || []).join("; ")}`;
    case "budget": return `${sec}stopped by ${e.reason}`;
    case "writing": return `${sec}writing from ${e.sources} source(s)`;
    case "grounding": return `${sec}dropped ${e.dropped} unsupported sentence(s)`;
    case "section_complete": return `section ${secNo(e.index)} ${e.status}: ${e.title}${e.reason ? " (" + e.reason + ")" : ""}`;
    case "synthesizing": return `synthesizing ${e.sections} section(s)`;
    case "verifying": return `verifying citations against ${e.sources} source(s)`;
    case "complete": return `complete (${e.stopped_by}): ${e.verification || ""}`;
    case "edit": return `edit ${actionWords(e.action)}: ${e.status}${e.reason ? " (" + e.reason + ")" : ""}`;
    case "error": return `${sec}error in ${e.node}: ${e.cause}${e.retrying ? " (retrying)" : ""}`;
    default: return `${e.type || "event"}`;
  }
}

function showLine(type, text) {
  const list = $("progress");
  // the list follows the newest line unless the person scrolled up to read an older one
  const atEnd = list.scrollHeight - list.scrollTop - list.clientHeight < 30;
  list.append(el("li", { class: `ev ev-${String(type).replace(/[^a-z_]/g, "")}`, text }));
  $("progress-box").hidden = false;
  if (atEnd) list.scrollTop = list.scrollHeight;
  $("progress-count").textContent = `(${list.children.length})`;
}

export function addProgress(e) {
  const text = describe(e);
  state.log.push([String(e.type || "event"), text]);
  showLine(e.type, text);
  if (e.usage) noteUsage(e.usage, e.section);
}

export function showLog(lines) {
  $("progress").replaceChildren();
  state.log = Array.isArray(lines) ? lines.filter((l) => Array.isArray(l) && l.length === 2) : [];
  $("progress-box").hidden = !state.log.length;  // shown once a run has a line to show
  for (const [type, text] of state.log) showLine(type, String(text));
  $("progress-count").textContent = state.log.length ? `(${state.log.length})` : "";
}

// the log goes to the thread's metadata when a run ends (or waits for the person)
export async function saveLog() {
  if (!state.thread) return;
  try {
    await api(`/threads/${state.thread}`, { method: "PATCH",
      body: { metadata: { dr_progress: state.log.slice(-MAX_LOG) } } });
  } catch (e) { /* the log is a convenience: the run's own state is what matters */ }
}

// --- the budget line ----------------------------------------------------------------------
// The run's usage comes with its values (after each step) and with the events of sections
// (each section counts its own until the sections are collected): the line shows the larger.

const live = { usage: null, sections: {}, started: 0, timer: null };

export function startClock() {
  live.sections = {};
  live.started = Date.now();
  clearInterval(live.timer);
  live.timer = setInterval(showBudget, 1000);
  showBudget();
}

export function stopClock() {
  clearInterval(live.timer);
  live.timer = null;
  showBudget();
}

export function noteUsage(u, section) {
  if (!u) return;
  if (section !== undefined && section !== null) live.sections[section] = u;
  else live.usage = u;
  showBudget();
}

export function resetBudget(u = null) {
  live.usage = u;
  live.sections = {};
  live.started = 0;
  $("budget").textContent = "";
  if (u) showBudget();
}

function total(key) {
  const own = (live.usage && live.usage[key]) || 0;
  const parts = Object.values(live.sections).reduce((a, u) => a + ((u && u[key]) || 0), 0);
  return Math.max(own, parts);
}

// what applies: seconds and iterations always; tokens and model calls once a model is called
// (with the offline defaults none is, and a count that stays at 0 reads as stuck)
function showBudget() {
  if (!live.usage && !Object.keys(live.sections).length && !live.timer) return;
  const c = state.context;
  const elapsed = live.timer ? Math.round((Date.now() - live.started) / 1000) : 0;
  const seconds = Math.max(Math.round(total("seconds")), elapsed);
  const calls = total("llm_calls");
  const tokens = total("total_tokens");
  const iterations = total("iterations");
  const parts = [];
  if (calls || tokens) parts.push(`${tokens} of ${c.max_tokens || 40000} tokens`, `${calls} model call(s)`);
  parts.push(`${seconds} of ${c.max_seconds || 600} s`,
    `${iterations}${c.max_iterations && state.graph !== "deep" ? " of " + c.max_iterations : ""} iteration(s)`);
  $("budget").textContent = `budget used: ${parts.join(", ")}${calls || tokens ? "" : " (no model called)"}`;
}
