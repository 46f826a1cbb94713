// The search sources as choices: a checkbox for each source this server offers (GET
// /ui/api/sources: the encyclopedia, its docs folders, web search when it has a key, the public
// literature services) and, under Settings, "Also search" for any other spec the CLI takes.
import { $, el, api } from "./core.js";

let shown = null;  // the search a reopened thread set, kept when the server's list comes later

// the sources the server offers; until they come (or without sign-in) the encyclopedia alone
export async function loadSources() {
  let offered;
  try { offered = (await api("/ui/api/sources")).sources; } catch (e) { return; }
  if (!Array.isArray(offered) || !offered.length) return;
  const chosen = new Set(boxes().filter((b) => b.checked).map((b) => b.value));
  const fresh = !boxes().some((b) => b.dataset.offered);  // the page's first list: the server's defaults
  $("source-boxes").replaceChildren(...offered.map((s) => {
    const box = el("input", { type: "checkbox", name: "source", value: s.spec, "data-offered": "1" });
    box.checked = fresh ? Boolean(s.checked) : chosen.has(s.spec);
    return el("label", { title: s.title || s.spec }, box, ` ${s.label || s.spec}`);
  }));
  if (shown !== null) showSearch(shown);
}

function boxes() {
  return [...document.querySelectorAll("#source-boxes input[name=source]")];
}

// the run's `search`: the ticked sources, then what "Also search" adds
export function searchSpec() {
  const specs = boxes().filter((b) => b.checked).map((b) => b.value);
  for (const s of $("search").value.split(",").map((x) => x.trim()).filter(Boolean)) if (!specs.includes(s)) specs.push(s);
  return specs.join(",");
}

// a reopened thread's sources: its specs ticked where there is a box, the rest in "Also search"
export function showSearch(spec) {
  shown = spec;
  const specs = String(spec || "wiki").split(",").map((x) => x.trim()).filter(Boolean);
  const listed = new Set(boxes().map((b) => b.value));
  for (const b of boxes()) b.checked = specs.includes(b.value);
  $("search").value = specs.filter((s) => !listed.has(s)).join(", ");
}
