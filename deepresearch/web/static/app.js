// The deepresearch page: plain JavaScript against the LangGraph server's own API.
// Everything that comes from a run (events, questions, outlines, sources, passages) is set
// as text (textContent, input values), never as HTML; the report's HTML comes rendered and
// sanitized by the server (POST /ui/api/view), and the page's policy runs no inline script.
"use strict";

const $ = (id) => document.getElementById(id);
const state = { thread: null, graph: "iterative", context: {}, report: "", citations: [], selection: null };

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "text") node.textContent = v;
    else if (k === "on") for (const [ev, fn] of Object.entries(v)) node.addEventListener(ev, fn);
    else node.setAttribute(k, v);
  }
  for (const c of children) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return node;
}

// --- signing in: a server with users asks for a token, kept for this tab only -------------

const TOKEN_KEY = "deepresearch-token";

function authorized(headers = {}) {
  const token = sessionStorage.getItem(TOKEN_KEY);
  return token ? { ...headers, Authorization: `Bearer ${token}` } : headers;
}

// a refused call: the token (if any) is forgotten and the sign-in step shown with the reason
async function refused(res) {
  let detail = res.statusText;
  try { const j = await res.json(); detail = j.detail || j.error || JSON.stringify(j); } catch (e) { /* not JSON */ }
  if (res.status === 401) {
    sessionStorage.removeItem(TOKEN_KEY);
    $("sign-in").hidden = false;
    $("sign-out").hidden = true;
    $("sign-in-note").textContent = detail;
  }
  return new Error(`${res.status} ${detail}`);
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

async function api(path, options = {}) {
  const res = await fetch(path, {
    ...options,
    headers: authorized({ "Content-Type": "application/json", ...(options.headers || {}) }),
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  if (!res.ok) throw await refused(res);
  return res.status === 204 ? null : res.json();
}

function setStatus(text, kind = "") {
  const s = $("status");
  s.textContent = text;
  s.className = kind;
}

// --- progress ----------------------------------------------------------------------------

function describe(e) {
  const sec = e.section !== undefined && e.section !== null ? `[section ${e.section}] ` : "";
  switch (e.type) {
    case "clarify": return `clarify: ${e.status}${e.note ? " (" + e.note + ")" : ""}`;
    case "started": return `${sec}researching: ${e.question}`;
    case "concepts": return `${sec}concepts: ${(e.concepts || []).map((c) => c.name || c).join(", ")}`;
    case "planning": return `planning the outline${e.comment ? ": " + e.comment : ""}`;
    case "outline": return `outline: ${(e.outline && e.outline.title) || ""}${e.note ? " (" + e.note + ")" : ""}`;
    case "section_started": return `section ${e.index} started: ${e.title}`;
    case "searching": return `${sec}searching ${e.tool || ""}: ${e.query}`;
    case "search_complete": return `${sec}found ${e.results} result(s) for: ${e.query}`;
    case "judging": return `${sec}judging gaps (iteration ${e.iteration}); missing: ${(e.missing || []).join(", ") || "none"}`;
    case "looping": return `${sec}another round for: ${(e.gaps || []).join("; ")}`;
    case "budget": return `${sec}stopped by ${e.reason}`;
    case "writing": return `${sec}writing from ${e.sources} source(s)`;
    case "grounding": return `${sec}dropped ${e.dropped} unsupported sentence(s)`;
    case "section_complete": return `section ${e.index} ${e.status}: ${e.title}${e.reason ? " (" + e.reason + ")" : ""}`;
    case "synthesizing": return `synthesizing ${e.sections} section(s)`;
    case "verifying": return `verifying citations against ${e.sources} source(s)`;
    case "complete": return `complete (${e.stopped_by}): ${e.verification || ""}`;
    case "edit": return `edit ${e.action}: ${e.status}${e.reason ? " (" + e.reason + ")" : ""}`;
    case "error": return `${sec}error in ${e.node}: ${e.cause}${e.retrying ? " (retrying)" : ""}`;
    default: return `${e.type || "event"}`;
  }
}

function addProgress(e) {
  const li = el("li", { class: `ev ev-${String(e.type).replace(/[^a-z_]/g, "")}`, text: describe(e) });
  $("progress").append(li);
  if (e.usage) showBudget(e.usage);
}

function showBudget(u) {
  if (!u) return;
  const c = state.context;
  $("budget").textContent = `budget used: ${u.total_tokens || 0} of ${c.max_tokens || 40000} tokens, ` +
    `${u.llm_calls || 0} model call(s), ${Math.round(u.seconds || 0)} of ${c.max_seconds || 600} s, ` +
    `${u.iterations || 0} iteration(s)`;
}

// --- runs ---------------------------------------------------------------------------------

async function stream(body) {
  const res = await fetch(`/threads/${state.thread}/runs/stream`, {
    method: "POST", headers: authorized({ "Content-Type": "application/json" }),
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
      if (event === "custom" || event.startsWith("custom|")) addProgress(parsed);
      else if (event === "values" && parsed && parsed.usage) showBudget(parsed.usage);
      else if (event === "error") setStatus(`the run failed: ${parsed.message || parsed.error || data}`, "error");
    }
  }
}

async function run(body) {
  $("ask").disabled = true;
  $("interrupt").replaceChildren();
  setStatus("running…", "busy");
  try {
    await stream(body);
    await showThread();
  } catch (e) {
    setStatus(`the run failed: ${e.message}`, "error");
  } finally {
    $("ask").disabled = false;
    loadThreads();
  }
}

// the source controls: only what was filled in is sent (an empty field keeps the run's default)
const LIST_FIELDS = ["include_domains", "exclude_domains", "docs_include", "docs_exclude"];
const CHOICE_FIELDS = ["time_range", "start_date", "search_depth", "citation_style"];

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
  return {
    ...sourceControls(),
    search: $("search").value.trim() || "wiki", max_iterations: num("max_iterations"),
    max_tokens: num("max_tokens"), max_seconds: num("max_seconds"), max_sections: num("max_sections"),
    outline_style: $("outline_style").value, clarify: $("clarify").checked,
    outline_review: $("outline_review").checked, edit_after_report: $("edit_after_report").checked,
    ...(extra ? JSON.parse(extra) : {}),  // what is given here wins over the fields above
  };
}

// a reopened thread's settings shown in the form (those it has no field for go to More settings)
function settingsToForm(c) {
  const shown = ["search", "max_iterations", "max_tokens", "max_seconds", "max_sections", "outline_style",
    "clarify", "outline_review", "edit_after_report"];
  for (const k of shown) {
    if (c[k] === undefined) continue;
    if (typeof c[k] === "boolean") $(k).checked = c[k]; else $(k).value = c[k];
  }
  for (const k of LIST_FIELDS) $(k).value = (c[k] || []).join(", ");
  for (const k of CHOICE_FIELDS) $(k).value = c[k] || (k === "citation_style" ? "numeric" : "");
  const controls = [...LIST_FIELDS, ...CHOICE_FIELDS];
  const rest = Object.fromEntries(Object.entries(c).filter(([k]) => !shown.includes(k) && !controls.includes(k)));
  $("extra-context").value = Object.keys(rest).length ? JSON.stringify(rest) : "";
}

async function ask(ev) {
  ev.preventDefault();
  const question = $("question").value.trim();
  if (!question) return;
  state.graph = $("graph").value;
  state.context = contextFromForm();
  const chat = $("as_chat").checked;
  const thread = await api("/threads", { method: "POST", body: { metadata: {
    dr_question: question, dr_graph: state.graph, dr_context: JSON.stringify(state.context) } } });
  state.thread = thread.thread_id;
  resetView();
  const input = chat ? { messages: [{ role: "human", content: question }] } : { question };
  await run({ input });
}

function resume(value) {
  return run({ command: { resume: value } });
}

function resetView() {
  for (const id of ["progress", "interrupt", "report", "history", "last-change", "budget", "selection-note"]) $(id).replaceChildren();
  $("edit-panel").hidden = true;
  $("exports").hidden = true;
  $("popover").hidden = true;
  state.report = "";
}

// --- a thread's state: interrupts and report -----------------------------------------------

async function showThread() {
  const st = await api(`/threads/${state.thread}/state`);
  const values = st.values || {};
  if (values.usage) showBudget(values.usage);
  const pending = (st.interrupts && st.interrupts.length ? st.interrupts
    : (st.tasks || []).flatMap((t) => t.interrupts || []));
  if (values.report) await showReport(values);
  if (pending.length) {
    showInterrupt(pending[0].value || {});
    setStatus("waiting for you", "waiting");
  } else {
    $("edit-panel").hidden = true;
    setStatus(values.report ? `done (${values.stopped_by || "complete"})` :
      values.stopped_by === "cancelled" ? "cancelled" : "no report", values.report ? "done" : "");
  }
}

function showInterrupt(request) {
  const box = $("interrupt");
  box.replaceChildren();
  if (request.error) box.append(el("p", { class: "error", text: `not used: ${request.error}` }));
  if (request.type === "clarify") clarifyForm(box, request);
  else if (request.type === "outline_review") outlineForm(box, request);
  else if (request.type === "report_feedback") feedbackPanel(request);
  else box.append(el("pre", { text: JSON.stringify(request, null, 1) }));
}

function clarifyForm(box, request) {
  const form = el("form", { id: "clarify-form" });
  form.append(el("h2", { text: `Clarifying questions (round ${request.round} of ${request.max_rounds})` }));
  const inputs = (request.questions || []).map((q, i) => {
    const input = el("input", { class: "answer", id: `answer-${i}`, size: "60" });
    form.append(el("label", { for: `answer-${i}`, text: q }), input);
    return input;
  });
  const act = (action) => () => resume(action === "answer"
    ? { action, answers: inputs.map((i) => i.value.trim()) } : { action });
  form.append(el("div", { class: "buttons" },
    el("button", { type: "button", id: "clarify-answer", text: "Answer", on: { click: act("answer") } }),
    el("button", { type: "button", id: "clarify-skip", text: "Skip", on: { click: act("skip") } }),
    el("button", { type: "button", id: "clarify-finish", text: "Finish", on: { click: act("finish") } })));
  box.append(form);
}

function outlineForm(box, request) {
  const outline = request.outline || { title: "", sections: [] };
  const form = el("form", { id: "outline-form" });
  form.append(el("h2", { text: `Review the outline (round ${request.round} of ${request.max_rounds})` }));
  const title = el("input", { id: "outline-title", size: "60" });
  title.value = outline.title || "";
  form.append(el("label", { for: "outline-title", text: "Title" }), title);
  const list = el("ol", { id: "outline-sections" });
  const addRow = (s) => {
    const t = el("input", { class: "sec-title", size: "30" });
    const q = el("input", { class: "sec-question", size: "50" });
    const d = el("input", { class: "sec-deps", size: "8", placeholder: "depends on" });
    t.value = s.title || ""; q.value = s.key_question || ""; d.value = (s.depends_on || []).join(", ");
    const li = el("li", {}, t, " ", q, " ", d, " ");
    li.append(el("button", { type: "button", text: "remove", on: { click: () => li.remove() } }));
    list.append(li);
  };
  (outline.sections || []).forEach(addRow);
  form.append(list, el("button", { type: "button", text: "add a section",
    on: { click: () => addRow({ title: "", key_question: "" }) } }));
  const comment = el("textarea", { id: "outline-comment", rows: "2", placeholder: "a comment for the planner" });
  form.append(el("label", { for: "outline-comment", text: "Comment" }), comment);
  const edited = () => ({ title: title.value.trim(), sections: [...list.children].map((li) => {
    const deps = li.querySelector(".sec-deps").value.split(",").map((x) => x.trim()).filter(Boolean)
      .map((x) => (/^\d+$/.test(x) ? Number(x) : x));
    return { title: li.querySelector(".sec-title").value.trim(),
             key_question: li.querySelector(".sec-question").value.trim(), depends_on: deps };
  }) });
  form.append(el("div", { class: "buttons" },
    el("button", { type: "button", id: "outline-accept", text: "Accept", on: { click: () => resume({ action: "accept" }) } }),
    el("button", { type: "button", id: "outline-revise", text: "Revise with my comment",
      on: { click: () => resume({ action: "revise", comment: comment.value.trim() }) } }),
    el("button", { type: "button", id: "outline-replace", text: "Use my outline",
      on: { click: () => resume({ action: "replace", outline: edited() }) } })));
  box.append(form);
}

// --- the report -----------------------------------------------------------------------------

async function showReport(values) {
  const v = await api("/ui/api/view", { method: "POST", body: values });
  state.report = v.report || "";
  state.citations = v.citations || [];
  const report = $("report");
  report.innerHTML = v.html; // rendered and sanitized by the server: no link but the Sources list
  $("exports").hidden = false;
  const history = $("history");
  history.replaceChildren(...(v.rewrite_history || []).map((h) =>
    el("li", { text: `${h.action}${h.scope ? " (" + h.scope + ")" : ""}: characters ${h.start}–${h.end} became ${h.start}–${h.new_end}` })));
}

// an export: the thread's current values, rendered to a file by the server, saved by the browser
async function exportAs(fmt) {
  const st = await api(`/threads/${state.thread}/state`);
  const res = await fetch(`/ui/api/export?format=${encodeURIComponent(fmt)}`, {
    method: "POST", headers: authorized({ "Content-Type": "application/json" }), body: JSON.stringify(st.values || {}) });
  if (!res.ok) { setStatus(`cannot export: ${(await refused(res)).message}`, "error"); return; }
  const url = URL.createObjectURL(await res.blob());
  const ext = { bibtex: "bib", csljson: "json" }[fmt] || fmt;
  const a = el("a", { href: url, download: `report-${state.thread.slice(0, 8)}.${ext}` });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60000);
}

function norm(s) { return String(s || "").replace(/\[[\d,;\s]+\]/g, "").replace(/\s+/g, " ").trim(); }

function showPopover(anchor) {
  const n = Number(anchor.dataset.source);
  const block = anchor.closest("p, li, td, blockquote") || anchor.parentElement;
  // the sentence this citation closes: the checked sentence that ends last before the anchor
  const range = document.createRange();
  range.setStart(block, 0);
  range.setEndBefore(anchor);
  const before = norm(range.toString());
  let mine = state.citations.filter((c) => c.source_id === n);
  const ends = mine.map((c) => { const s = norm(c.sentence).replace(/[.!?]$/, "");
    const i = s ? before.lastIndexOf(s) : -1; return i < 0 ? -1 : i + s.length; });
  const best = Math.max(-1, ...ends);
  if (best >= 0) mine = mine.filter((c, i) => ends[i] === best);
  const pop = $("popover");
  pop.replaceChildren(el("button", { type: "button", class: "close", text: "×", on: { click: () => { pop.hidden = true; } } }));
  const title = (mine[0] && mine[0].title) || (document.querySelector(`#src-${n} .title`) || {}).textContent || "";
  pop.append(el("h3", { text: `[${n}] ${title}` }));
  if (!mine.length) pop.append(el("p", { text: "No check of this citation was recorded." }));
  const seen = new Set();
  mine = mine.filter((c) => { const k = `${c.verdict}|${c.passage}`; if (seen.has(k)) return false; seen.add(k); return true; });
  for (const c of mine.slice(0, 3)) {
    pop.append(el("p", { class: `verdict verdict-${String(c.verdict).replace(/[^a-z]/g, "")}`,
      text: `${c.verdict}${typeof c.score === "number" ? " (score " + c.score.toFixed(2) + ")" : ""}` }));
    pop.append(el("blockquote", { class: "passage", text: c.passage || "(no passage)" }));
  }
  const r = anchor.getBoundingClientRect();
  pop.style.top = `${window.scrollY + r.bottom + 6}px`;
  pop.style.left = `${Math.max(8, Math.min(window.scrollX + r.left - 40, window.innerWidth - 440))}px`;
  pop.hidden = false;
}

// --- edits of the finished report (report_feedback) ---------------------------------------

function feedbackPanel(request) {
  $("edit-panel").hidden = false;
  const last = $("last-change");
  last.replaceChildren();
  if (request.last_change) {
    const c = request.last_change;
    const changed = state.report.slice(c.start, c.new_end);
    last.append(el("h3", { text: `Last change: ${c.action}` }), el("p", { class: "changed", text: changed }));
    for (const claim of c.claims || []) {
      last.append(el("p", { class: "claim", text: `${claim.verdict}: ${claim.claim}` }));
    }
  }
  $("selection-note").textContent = request.error ? `not used: ${request.error}` : "";
}

function captureSelection() {
  const sel = window.getSelection();
  const body = document.querySelector("#report .report-body");
  if (!sel || sel.isCollapsed || !body || !body.contains(sel.anchorNode)) return;
  const text = sel.toString().trim();
  if (!text) return;
  const start = state.report.indexOf(text);
  if (start < 0) {
    state.selection = null;
    $("selection-note").textContent = "That selection is not plain text of one paragraph: select words without formatting.";
    return;
  }
  state.selection = { selected_text: text, start, end: start + text.length };
  $("selection-note").textContent = `Selected: “${text.slice(0, 80)}${text.length > 80 ? "…" : ""}”`;
}

function editAction(action) {
  if (action === "finish") return resume({ action });
  if (!state.selection) { $("selection-note").textContent = "Select text in the report first."; return; }
  const request = { action, ...state.selection };
  if (action === "supplementary_search") {
    request.scope = $("edit-scope").value;
    const q = $("edit-query").value.trim();
    if (q) request.query = q;
  }
  state.selection = null;
  return resume(request);
}

// --- threads ------------------------------------------------------------------------------

async function loadThreads() {
  let threads = [];
  try {
    threads = await api("/threads/search", { method: "POST", body: { limit: 30, sort_by: "updated_at", sort_order: "desc" } });
  } catch (e) { return; }
  const list = $("threads");
  list.replaceChildren(...threads.map((t) => {
    const meta = t.metadata || {};
    const status = t.status === "interrupted" ? "waiting" : t.status;
    const li = el("li", { class: `thread thread-${String(status).replace(/[^a-z]/g, "")}`, "data-thread": t.thread_id });
    li.append(el("button", { type: "button", class: "open-thread", text: threadLabel(t),
      on: { click: () => reopen(t) } }), el("span", { class: "thread-status", text: ` ${status} · ${meta.dr_graph || ""}` }));
    return li;
  }));
}

// what a thread is listed by: its question (from the page's metadata, the run's values or its
// first chat message); a thread with none yet (made by another client) says so, with its date
function threadLabel(t) {
  const meta = t.metadata || {};
  const values = t.values && typeof t.values === "object" ? t.values : {};
  const first = (Array.isArray(values.messages) ? values.messages : []).find((m) => m && ["human", "user"].includes(m.type || m.role));
  const said = first && typeof first.content === "string" ? first.content : "";
  const question = [meta.dr_question, values.question, said].find((q) => typeof q === "string" && q.trim());
  if (question) return question.trim();
  const when = t.created_at ? new Date(t.created_at).toLocaleString() : "";
  return `(no question yet)${when ? `, started ${when}` : ""}`;
}

async function reopen(t) {
  const meta = t.metadata || {};
  state.thread = t.thread_id;
  state.graph = meta.dr_graph || meta.graph_id || "iterative";
  try { state.context = JSON.parse(meta.dr_context || "{}"); } catch (e) { state.context = {}; }
  resetView();
  $("question").value = meta.dr_question || "";
  $("graph").value = state.graph === "deep" ? "deep" : "iterative";
  settingsToForm(state.context);
  await showThread();
}

function init() {
  $("sign-in").addEventListener("submit", signIn);
  $("sign-out").addEventListener("click", signOut);
  $("sign-out").hidden = !sessionStorage.getItem(TOKEN_KEY);
  $("ask-form").addEventListener("submit", (ev) => ask(ev).catch((e) => setStatus(`cannot start: ${e.message}`, "error")));
  $("refresh-threads").addEventListener("click", loadThreads);
  $("new-question").addEventListener("click", () => { state.thread = null; resetView(); setStatus(""); $("question").focus(); });
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
  for (const b of document.querySelectorAll("#edit-panel [data-action]")) {
    b.addEventListener("click", () => editAction(b.dataset.action));
  }
  for (const fmt of ["md", "html", "docx", "pdf", "bibtex", "ris", "csljson"]) {
    $(`export-${fmt}`).addEventListener("click", (ev) => { ev.preventDefault(); exportAs(fmt); });
  }
  $("hand-edit").addEventListener("click", () => { $("hand-text").value = state.report; $("hand-edit-box").hidden = false; });
  $("hand-save").addEventListener("click", () => { $("hand-edit-box").hidden = true; resume({ action: "sync", report: $("hand-text").value }); });
  loadThreads();
}

document.addEventListener("DOMContentLoaded", init);
