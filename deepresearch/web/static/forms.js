// The forms of the run's questions to the person: clarifying questions and the outline review.
import { $, el, actions } from "./core.js";

export function clarifyForm(box, request) {
  const form = el("form", { id: "clarify-form" });
  form.append(el("h2", { text: `Clarifying questions (round ${request.round} of ${request.max_rounds})` }));
  const inputs = (request.questions || []).map((q, i) => {
    const input = el("input", { class: "answer", id: `answer-${i}`, size: "60" });
    form.append(el("label", { for: `answer-${i}`, text: q }), input);
    return input;
  });
  const act = (action) => () => actions.resume(action === "answer"
    ? { action, answers: inputs.map((i) => i.value.trim()) } : { action });
  form.append(el("div", { class: "buttons" },
    el("button", { type: "button", id: "clarify-answer", text: "Answer", on: { click: act("answer") } }),
    el("button", { type: "button", id: "clarify-skip", text: "Skip", on: { click: act("skip") } }),
    el("button", { type: "button", id: "clarify-finish", text: "Finish", on: { click: act("finish") } })));
  box.append(form);
}

function sectionRow(list, s) {
  const t = el("input", { class: "sec-title", size: "30" });
  const q = el("input", { class: "sec-question", size: "50" });
  const d = el("input", { class: "sec-deps", size: "8", placeholder: "depends on" });
  t.value = s.title || ""; q.value = s.key_question || ""; d.value = (s.depends_on || []).map((x) =>
    (typeof x === "number" ? x + 1 : x)).join(", ");
  const remove = el("button", { type: "button", class: "remove-section", text: "remove" });
  const li = el("li", {}, t, " ", q, " ", d, " ", remove);
  remove.addEventListener("click", () => { li.remove(); numberRows(list); });
  list.append(li);
  numberRows(list);
}

// every box says which section it belongs to, numbered as the list shows it
function numberRows(list) {
  [...list.children].forEach((li, i) => {
    const n = i + 1;
    li.querySelector(".sec-title").setAttribute("aria-label", `Section ${n} title`);
    li.querySelector(".sec-question").setAttribute("aria-label", `Section ${n} question`);
    li.querySelector(".sec-deps").setAttribute("aria-label", `Section ${n} depends on (section numbers)`);
    li.querySelector(".remove-section").setAttribute("aria-label", `Remove section ${n}`);
  });
}

export function outlineForm(box, request) {
  const outline = request.outline || { title: "", sections: [] };
  const form = el("form", { id: "outline-form" });
  form.append(el("h2", { text: `Review the outline (round ${request.round} of ${request.max_rounds})` }));
  const title = el("input", { id: "outline-title", size: "60" });
  title.value = outline.title || "";
  form.append(el("label", { for: "outline-title", text: "Title" }), title);
  const list = el("ol", { id: "outline-sections" });
  (outline.sections || []).forEach((s) => sectionRow(list, s));
  form.append(list, el("button", { type: "button", id: "outline-add", text: "add a section",
    on: { click: () => sectionRow(list, { title: "", key_question: "" }) } }));
  const comment = el("textarea", { id: "outline-comment", rows: "2", placeholder: "a comment for the planner" });
  form.append(el("label", { for: "outline-comment", text: "Comment" }), comment);
  // the outline as the form shows it; a section's dependencies are typed as the list numbers them
  const edited = () => ({ title: title.value.trim(), sections: [...list.children].map((li) => {
    const deps = li.querySelector(".sec-deps").value.split(",").map((x) => x.trim()).filter(Boolean)
      .map((x) => (/^\d+$/.test(x) ? Number(x) - 1 : x));
    return { title: li.querySelector(".sec-title").value.trim(),
             key_question: li.querySelector(".sec-question").value.trim(), depends_on: deps };
  }) });
  const original = JSON.stringify(edited());
  // Accept goes ahead with the outline as shown: with the person's edits when there are some
  const accept = () => {
    const now = edited();
    return actions.resume(JSON.stringify(now) === original ? { action: "accept" } : { action: "accept", outline: now });
  };
  form.append(el("div", { class: "buttons" },
    el("button", { type: "button", id: "outline-accept", text: "Accept and research", on: { click: accept } }),
    el("button", { type: "button", id: "outline-revise", text: "Ask the planner to revise",
      on: { click: () => actions.resume({ action: "revise", comment: comment.value.trim() }) } })));
  form.append(el("p", { class: "hint", text: "Edit the title or the sections above and Accept: the research follows your outline. "
    + "Or write a comment and ask the planner to revise it." }));
  box.append(form);
}

export function showInterrupt(request) {
  const box = $("interrupt");
  box.replaceChildren();
  if (request.error) box.append(el("p", { class: "error", role: "alert", text: `not used: ${request.error}` }));
  if (request.type === "clarify") clarifyForm(box, request);
  else if (request.type === "outline_review") outlineForm(box, request);
  else if (request.type !== "report_feedback") box.append(el("pre", { text: JSON.stringify(request, null, 1) }));
  if (!box.children.length) box.replaceChildren();
}
