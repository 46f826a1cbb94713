// What every part of the page shares: the page's state, building elements, the server's API
// (with the tab's sign-in token), the status line. Everything from a run is set as text.

export const $ = (id) => document.getElementById(id);

export const state = {
  thread: null, graph: "iterative", context: {}, report: "", citations: [], selection: null,
  run: null,        // the run going now: {id, controller, stopping}
  log: [],          // this thread's progress lines: [type, text]
  runError: "",     // why the last run failed, as the server said
};

export function el(tag, attrs = {}, ...children) {
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

export const TOKEN_KEY = "deepresearch-token";

export function authorized(headers = {}) {
  const token = sessionStorage.getItem(TOKEN_KEY);
  return token ? { ...headers, Authorization: `Bearer ${token}` } : headers;
}

// a refused call: the token (if any) is forgotten and the sign-in step shown with the reason
export async function refused(res) {
  let detail = res.statusText;
  try { const j = await res.json(); detail = j.detail || j.error || JSON.stringify(j); } catch (e) { /* not JSON */ }
  if (res.status === 401) {
    sessionStorage.removeItem(TOKEN_KEY);
    $("sign-in").hidden = false;
    $("sign-out").hidden = true;
    $("sign-in-note").textContent = detail;
  }
  const err = new Error(typeof detail === "string" ? detail : JSON.stringify(detail));
  err.status = res.status;
  return err;
}

export async function api(path, options = {}) {
  const res = await fetch(path, {
    ...options,
    headers: authorized({ "Content-Type": "application/json", ...(options.headers || {}) }),
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  if (!res.ok) throw await refused(res);
  return res.status === 204 ? null : res.json();
}

export function setStatus(text, kind = "") {
  const s = $("status");
  s.textContent = text;
  s.className = kind;
}

// the words the page uses for an edit (the graph's action names are identifiers)
export const ACTION_WORDS = {
  expand: "expand", shorten: "shorten", polish: "polish", fact_check: "fact check",
  supplementary_search: "search more", sync: "your own edit", finish: "finish editing",
};

export function actionWords(action) {
  return ACTION_WORDS[action] || String(action || "").replace(/_/g, " ");
}

// a finished thread's status in words, with why a partial report stopped
const STOP_WORDS = { stopped: "stopped by you: a partial report", max_tokens: "stopped by the token budget: a partial report",
  max_seconds: "stopped by the time budget: a partial report", max_cost: "stopped by the cost budget: a partial report",
  max_iterations: "", complete: "", error: "a model call failed: a partial report" };

export function finishedWords(values) {
  const why = STOP_WORDS[values.stopped_by];
  return why ? `finished, ${why}` : "finished";
}

// the run settings the form shows as lists and as choices
export const LIST_FIELDS = ["include_domains", "exclude_domains", "docs_include", "docs_exclude"];
export const CHOICE_FIELDS = ["time_range", "start_date", "search_depth", "citation_style"];

// What a lower module of the page asks of the run's module (runs.js, which imports them: a run
// shows their forms, report and threads), set by runs.js when it loads; so the imports run one
// way, from runs.js down.
export const actions = {};
