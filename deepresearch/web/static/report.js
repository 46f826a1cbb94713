// The report: shown from the server's rendering, its citation popovers, copying and exports,
// and the edit panel (a selection is found in the report's Markdown by where it is on the
// page: its block's lines and which copy of the words it is, never by the first match).
import { $, state, el, api, authorized, refused, setStatus, actionWords, actions } from "./core.js";

export function clearReport() {
  $("report").replaceChildren();
  $("sources-panel").replaceChildren();
  $("sources-panel").hidden = true;
  $("report-area").hidden = true;
  $("last-change").replaceChildren();
  $("history").replaceChildren();
  state.report = "";
  state.markdown = "";
  state.citations = [];
  state.selection = null;
}

export async function showReport(values) {
  const v = await api("/ui/api/view", { method: "POST", body: values });
  state.report = v.report || "";
  state.markdown = v.markdown || state.report;
  state.citations = v.citations || [];
  state.sourceTitles = Object.fromEntries((v.sources || []).map((s) => [String(s.id), s.title]));
  const report = $("report");
  report.innerHTML = v.html; // rendered and sanitized by the server: no link but the Sources list
  for (const block of report.querySelectorAll(".report-body [data-lines]")) {
    if (!block.querySelector("[data-lines]")) block.tabIndex = 0;  // a paragraph reached with Tab
  }
  const panel = $("sources-panel");
  panel.innerHTML = v.panel || "";  // rendered and escaped by the server (web/panel.py), like the report
  panel.hidden = !v.panel;
  $("report-area").hidden = false;
  $("history").replaceChildren(...(v.rewrite_history || []).map((h) =>
    el("li", { text: `${actionWords(h.action)}${h.scope ? " (" + h.scope.replace(/_/g, " ") + ")" : ""}: `
      + `characters ${h.start}–${h.end} became ${h.start}–${h.new_end}` })));
  lastChange(v.last_change);
}

function lastChange(c) {
  const box = $("last-change");
  box.replaceChildren();
  if (!c) return;
  box.append(el("h3", { text: `Last change: ${c.label}` }));
  if (c.fallback) box.append(el("p", { class: "hint", text: c.fallback }));
  if (c.html) {
    const changed = el("div", { class: "changed" });
    changed.innerHTML = c.html; // rendered and sanitized by the server, like the report
    box.append(changed);
  }
  for (const claim of c.claims || []) {
    const p = el("div", { class: "claim" });
    p.append(el("strong", { class: `verdict-${String(claim.verdict).replace(/[^a-z]/g, "")}`, text: `${claim.verdict}: ` }),
      el("span", { text: claim.claim }));
    if (claim.source) {
      p.append(el("div", { class: "claim-source", text: `source: ${claim.source}` }));
      if (claim.quote) p.append(el("blockquote", { class: "passage", text: claim.quote }));
    } else p.append(el("div", { class: "claim-source", text: "no source found for it" }));
    box.append(p);
  }
}

// --- copy and exports -------------------------------------------------------------------------

export async function copyReport() {
  const text = state.markdown || state.report;
  let done = false;
  try { await navigator.clipboard.writeText(text); done = true; } catch (e) { /* no clipboard access */ }
  if (!done) {  // the older way: a hidden text box, selected and copied
    const box = el("textarea", { "aria-hidden": "true", class: "visually-hidden" });
    box.value = text;
    document.body.append(box);
    box.select();
    done = document.execCommand("copy");
    box.remove();
  }
  $("copy-note").textContent = done ? "copied (Markdown)" : "could not copy: select the report and copy it";
}

// an export: the thread's current values, rendered to a file by the server, saved by the browser
export async function exportAs(fmt) {
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

// --- the citation popover ---------------------------------------------------------------------

function norm(s) { return String(s || "").replace(/\[[\d,;\s]+\]/g, "").replace(/\s+/g, " ").trim(); }

function checksFor(anchor, n) {
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
  const seen = new Set();
  return mine.filter((c) => { const k = `${c.verdict}|${c.passage}`; if (seen.has(k)) return false; seen.add(k); return true; });
}

// the panel beside the report scrolled to a cited source, marked as the current one (on a
// wide screen, where the panel scrolls on its own; on a phone the popover says it)
export function showInPanel(n) {
  const panel = $("sources-panel");
  const entry = document.getElementById(`panel-src-${n}`);
  for (const x of panel.querySelectorAll(".prov-source.current")) x.classList.remove("current");
  if (!entry) return;
  entry.classList.add("current");
  if (panel.scrollHeight > panel.clientHeight + 1) {
    panel.scrollTop += entry.getBoundingClientRect().top - panel.getBoundingClientRect().top - 8;
  }
}

export function showPopover(anchor) {
  const ids = (anchor.dataset.sources || anchor.dataset.source).split(",").map(Number);
  showInPanel(ids[0]);
  const pop = $("popover");
  pop.replaceChildren(el("button", { type: "button", class: "close", text: "×", "aria-label": "Close",
    on: { click: () => { pop.hidden = true; anchor.focus(); } } }));
  for (const n of ids) {
    const mine = checksFor(anchor, n);
    const title = (mine[0] && mine[0].title) || state.sourceTitles[String(n)] || "";
    pop.append(el("h3", { text: anchor.classList.contains("styled") ? title : `[${n}] ${title}` }));
    if (!mine.length) pop.append(el("p", { text: "No check of this citation was recorded." }));
    for (const c of mine.slice(0, 3)) {
      pop.append(el("p", { class: `verdict verdict-${String(c.verdict).replace(/[^a-z]/g, "")}`,
        text: `${c.verdict}${typeof c.score === "number" ? " (score " + c.score.toFixed(2) + ")" : ""}` }));
      pop.append(el("blockquote", { class: "passage", text: c.passage || "(no passage)" }));
    }
  }
  pop.hidden = false;
  // below the citation, inside the screen whatever its width
  const r = anchor.getBoundingClientRect();
  const width = document.documentElement.clientWidth;
  const left = Math.max(8, Math.min(r.left - 40, width - pop.offsetWidth - 8));
  pop.style.top = `${window.scrollY + r.bottom + 6}px`;
  pop.style.left = `${window.scrollX + left}px`;
}

// --- where a selection is in the report's Markdown --------------------------------------------

const CITE_RUN = /^\[\d{1,4}(?:\s*[,;]\s*\d{1,4})*\]/;
const UNVERIFIED = "^unverified^";
const LINE_PREFIX = /^\s*(?:#{1,6}\s+|>\s?|[-*+]\s+|\d{1,9}[.)]\s+)*/;

// the text a reader sees of some Markdown lines, with where each character came from
function project(md) {
  let text = "", map = [];
  let i = 0;
  const put = (ch, at) => { text += ch; map.push(at); };
  while (i < md.length) {
    if (i === 0 || md[i - 1] === "\n") {
      const m = md.slice(i).match(LINE_PREFIX);
      if (m && m[0].length) { i += m[0].length; continue; }
    }
    const rest = md.slice(i, i + 40);
    const cite = rest.match(CITE_RUN);
    if (cite) { i += cite[0].length; continue; }
    if (md.startsWith(UNVERIFIED, i)) { i += UNVERIFIED.length; continue; }
    const ch = md[i];
    if (ch === "\\" && /[!-/:-@[-`{-~]/.test(md[i + 1] || "")) { put(md[i + 1], i + 1); i += 2; continue; }
    if (ch === "*" || ch === "`") { i += 1; continue; }
    put(ch === "|" ? " " : ch, i);
    i += 1;
  }
  return { text, map };
}

// whitespace runs as one space, with where each character came from
function collapse(text, map = null) {
  let out = "", where = [];
  for (let i = 0; i < text.length; i++) {
    const space = /\s/.test(text[i]);
    if (space && (out.endsWith(" ") || !out.length)) continue;
    out += space ? " " : text[i];
    where.push(map ? map[i] : i);
  }
  return { text: out, map: where };
}

// what a reader sees of part of the page: without citation links and marks
function plainText(range) {
  const box = document.createElement("div");
  box.append(range.cloneContents());
  for (const x of box.querySelectorAll("sup.cites, a.cite, mark")) x.remove();
  return box.textContent;
}

function count(hay, needle) {
  let n = 0;
  for (let i = hay.indexOf(needle); i >= 0; i = hay.indexOf(needle, i + needle.length)) n++;
  return n;
}

export function locate(range) {
  const start = range.startContainer.nodeType === 1 ? range.startContainer : range.startContainer.parentElement;
  const block = start && start.closest("[data-lines]");
  if (!block || !block.contains(range.endContainer)) return null;
  const [a, b] = block.dataset.lines.split("-").map(Number);
  const lines = state.report.split("\n");
  const offset = lines.slice(0, a).reduce((n, l) => n + l.length + 1, 0);
  const md = lines.slice(a, b).join("\n");
  const whole = document.createRange();
  whole.selectNodeContents(block);
  whole.setEnd(range.startContainer, range.startOffset);
  const before = collapse(plainText(whole)).text;
  const chosen = collapse(plainText(range)).text.trim();
  if (!chosen) return null;
  const k = count(before, chosen);  // the copies of these words before the selection, in its block
  const p = project(md);
  const c = collapse(p.text, p.map);
  let at = -1;
  for (let i = 0, from = 0; i <= k; i++) {
    at = c.text.indexOf(chosen, from);
    if (at < 0) return null;
    from = at + chosen.length;
  }
  const s = offset + c.map[at];
  const e = offset + c.map[at + chosen.length - 1] + 1;
  return { selected_text: state.report.slice(s, e), start: s, end: e };
}

export function captureSelection() {
  const sel = window.getSelection();
  const body = document.querySelector("#report .report-body");
  if (!sel || sel.isCollapsed || !sel.rangeCount || !body || !body.contains(sel.anchorNode)) return;
  const found = locate(sel.getRangeAt(0));
  if (!found) {
    state.selection = null;
    $("selection-note").textContent = "That selection is not plain text of one paragraph: select words within one paragraph.";
    return;
  }
  state.selection = found;
  const shown = sel.toString().trim();
  $("selection-note").textContent = `Selected: “${shown.slice(0, 80)}${shown.length > 80 ? "…" : ""}”`;
}

// a paragraph reached with the keyboard: Enter selects it for an edit
export function selectBlock(ev) {
  const block = ev.target.closest && ev.target.closest(".report-body [data-lines]");
  if (!block || (ev.key !== "Enter" && ev.key !== " ") || $("edit-panel").hidden) return;
  ev.preventDefault();
  window.getSelection().selectAllChildren(block);
  captureSelection();
}

export function editAction(action) {
  if (action === "finish") return actions.resume({ action });
  if (!state.selection) { $("selection-note").textContent = "Select text in the report first."; return; }
  const request = { action, ...state.selection };
  if (action === "supplementary_search") {
    request.scope = $("edit-scope").value;
    const q = $("edit-query").value.trim();
    if (q) request.query = q;
  }
  state.selection = null;
  return actions.resume(request);
}

export function feedbackPanel(request) {
  $("edit-panel").hidden = false;
  $("selection-note").textContent = request.error ? `not used: ${request.error}` : "";
}
