// Runs: asking, streaming a run's events, resuming an interrupt, stopping a run (the server's
// run-cancel API, then the graph's own early-stop path writes what was found), and showing
// a thread's state when a run ends.
import { $, state, el, api, authorized, refused, setStatus, actions, finishedWords, LIST_FIELDS, CHOICE_FIELDS } from "./core.js";
import { addProgress, noteUsage, saveLog, startClock, stopClock, resetBudget, showLog } from "./progress.js";
import { showInterrupt } from "./forms.js";
import { showReport, feedbackPanel, clearReport } from "./report.js";
import { loadThreads, watchThreads } from "./threads.js";
import { searchSpec } from "./sources.js";

async function stream(body) {
  const controller = new AbortController();
  state.run = { id: null, controller, stopping: state.run && state.run.stopping };
  const res = await fetch(`/threads/${state.thread}/runs/stream`, {
    method: "POST", headers: authorized({ "Content-Type": "application/json" }), signal: controller.signal,
    body: JSON.stringify({ assistant_id: state.graph, context: state.context,
                           stream_mode: ["custom", "values"], ...body }),
  });
  if (!res.ok) throw await refused(res);
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true }).replace(/\r\n/g, "\n");
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      let event = "message", data = "";
      for (const line of block.split("\n")) {
        if (line.startsWith("event:")) event = line.slice(6).trim();
        else if (line.startsWith("data:")) data += line.slice(5).trim();
      }
      if (!data) continue;
      let parsed;
      try { parsed = JSON.parse(data); } catch (e) { continue; }
      if (event === "metadata" && parsed && parsed.run_id) state.run.id = parsed.run_id;
      else if (event === "custom" || event.startsWith("custom|")) addProgress(parsed);
      else if (event === "values" && parsed && parsed.usage) noteUsage(parsed.usage);
      else if (event === "error") {
        state.runError = String((parsed && (parsed.message || parsed.error)) || data);
        addProgress({ type: "error", node: "the run", cause: state.runError });
        setStatus(`the run failed: ${state.runError}`, "error");
      }
    }
  }
}

export async function run(body) {
  $("ask").disabled = true;
  $("stop").hidden = false;
  $("stop").disabled = false;
  $("interrupt").replaceChildren();
  $("progress-box").open = true;
  state.runError = "";
  state.run = null;
  setStatus("researching…", "busy");
  startClock();
  const stopWatching = watchThreads();
  try {
    await stream(body);
    if (state.run && state.run.stopping) await partialReport();
    await showThread();
  } catch (e) {
    if (state.run && state.run.stopping) {
      try { await partialReport(); await showThread(); } catch (e2) { setStatus(`cannot stop: ${e2.message}`, "error"); }
    } else setStatus(`the run failed: ${e.message}`, "error");
  } finally {
    state.run = null;
    stopWatching();
    stopClock();
    $("ask").disabled = false;
    $("stop").hidden = true;
    await saveLog();
    loadThreads();
  }
}

export function resume(value) {
  return run({ command: { resume: value } });
}

// Stop: the server cancels the run (its public cancel API); what the run found so far is kept
// in the thread's last checkpoint, and the graph's early-stop path writes the partial report
export async function stop() {
  const r = state.run;
  if (!r || r.stopping) return;
  r.stopping = true;
  $("stop").disabled = true;
  setStatus("stopping: the report is written from what was found…", "busy");
  addProgress({ type: "budget", reason: "you (Stop)" });
  if (!r.id) { r.controller.abort(); return; }
  try {
    await api(`/threads/${state.thread}/runs/${r.id}/cancel?wait=true&action=interrupt`, { method: "POST" });
  } catch (e) {
    if (e.status !== 404 && e.status !== 409) setStatus(`cannot stop: ${e.message}`, "error");
  }
  r.controller.abort();
}

const LOOP = ["thinking", "knowledge_gap", "tool_selector", "execute_tools"];
const WRITING = ["writer", "collect_drafts", "synthesizer", "proofreader", "source_tracer", "charts", "infer"];

// After a cancel: the steps that finished keep what they wrote (an update "as __end__" applies
// them and clears the ones cut short); then the research loop (or the deep graph's sections) is
// marked stopped as the loop's own budget check would (`stopped_by`), so the next step writes
// the report from what exists
async function partialReport() {
  const st = await api(`/threads/${state.thread}/state`);
  const next = st.next || [];
  let asNode = null;
  if (next.some((n) => LOOP.includes(n))) asNode = "knowledge_gap";
  else if (next.includes("section_research")) asNode = "section_research";
  else if (next.includes("layer_research") || next.includes("layer_write") || next.includes("next_layer")) asNode = "section_research";
  else if (!next.some((n) => WRITING.includes(n))) return;  // nothing researched yet, or already finished
  if (asNode) {
    await api(`/threads/${state.thread}/state`, { method: "POST", body: { values: null, as_node: "__end__" } });
    await api(`/threads/${state.thread}/state`, { method: "POST",
      body: { values: { stopped_by: "stopped" }, as_node: asNode } });
  }
  state.run.stopping = false;
  setStatus("writing the partial report…", "busy");
  await stream({ input: null });
}

// --- a thread's state: interrupts and report -----------------------------------------------

// why a thread's last run failed, as the server recorded it (a failed step's error)
export function failure(st) {
  const task = (st.tasks || []).find((t) => t && t.error);
  if (!task) return "";
  const text = String(task.error);  // kept as the exception's repr: `ModelConfigError("…")`
  const m = text.match(/^\w+\((["'])([\s\S]*)\1\)$/);
  return m ? m[2] : text;
}

export async function showThread() {
  const st = await api(`/threads/${state.thread}/state`);
  const values = st.values || {};
  if (values.usage) resetBudget(values.usage);
  const pending = (st.interrupts && st.interrupts.length ? st.interrupts
    : (st.tasks || []).flatMap((t) => t.interrupts || []));
  const request = pending.length ? pending[0].value || {} : null;
  if (values.report) await showReport(values);
  else clearReport();
  const error = state.runError || failure(st);
  if (request && request.type === "report_feedback") {
    feedbackPanel(request);
    setStatus(`${finishedWords(values)}; edit the report below or finish`, "waiting");
  } else if (request) {
    $("edit-panel").hidden = true;
    showInterrupt(request);
    setStatus(request.type === "clarify" ? "waiting for your answers" : "waiting for your review of the outline", "waiting");
  } else if (error) {
    $("edit-panel").hidden = true;
    setStatus(`the run failed: ${error}`, "error");
  } else {
    $("edit-panel").hidden = true;
    setStatus(values.report ? finishedWords(values) :
      values.stopped_by === "cancelled" ? "cancelled: no report" :
      values.stopped_by === "stopped" || st.next?.length ? "stopped before any research: no report" : "no report",
      values.report ? "done" : "error");
  }
  if (values.report) $("progress-box").open = false;
}

// --- asking ---------------------------------------------------------------------------------

// the source controls: only what was filled in is sent (an empty field keeps the run's default)

function sourceControls() {
  const out = {};
  for (const k of LIST_FIELDS) {
    const items = $(k).value.split(",").map((s) => s.trim()).filter(Boolean);
    if (items.length) out[k] = items;
  }
  for (const k of CHOICE_FIELDS) if ($(k).value && !(k === "citation_style" && $(k).value === "numeric")) out[k] = $(k).value;
  return out;
}

function contextFromForm() {
  const num = (id) => Number($(id).value);
  const extra = $("extra-context").value.trim();
  let more = {};
  if (extra) {
    try { more = JSON.parse(extra); } catch (e) { throw new Error("More settings: not JSON (" + e.message + ")"); }
    if (!more || typeof more !== "object" || Array.isArray(more)) throw new Error("More settings: give a JSON object");
  }
  return {
    ...sourceControls(),
    search: searchSpec(), max_iterations: num("max_iterations"),
    max_tokens: num("max_tokens"), max_seconds: num("max_seconds"), max_sections: num("max_sections"),
    outline_style: $("outline_style").value, clarify: $("clarify").checked,
    outline_review: $("outline_review").checked, edit_after_report: $("edit_after_report").checked,
    ...more,  // what is given here wins over the fields above
  };
}

export async function ask(ev) {
  ev.preventDefault();
  const question = $("question").value.trim();
  if (!question) return;
  setStatus("checking the settings…", "busy");
  const context = contextFromForm();
  // the server checks the settings as the CLI does (an unknown search source, a model it cannot
  // use) before any thread is made: one line saying what is wrong
  const check = await api("/ui/api/check", { method: "POST", body: context });
  if (check && check.error) { setStatus(check.error, "error"); return; }
  state.graph = $("graph").value;
  state.context = context;
  const chat = $("as_chat").checked;
  const thread = await api("/threads", { method: "POST", body: { metadata: {
    dr_question: question, dr_graph: state.graph, dr_context: JSON.stringify(state.context) } } });
  state.thread = thread.thread_id;
  resetView();
  loadThreads();
  const input = chat ? { messages: [{ role: "human", content: question }] } : { question };
  await run({ input });
}

export function resetView() {
  for (const id of ["interrupt", "history", "last-change", "selection-note"]) $(id).replaceChildren();
  showLog([]);
  resetBudget();
  clearReport();
  $("edit-panel").hidden = true;
  $("popover").hidden = true;
  state.runError = "";
}

export function markCurrent() {
  for (const li of document.querySelectorAll("#threads li")) li.classList.toggle("current", li.dataset.thread === state.thread);
}

Object.assign(actions, { resume, resetView, showThread, markCurrent });
