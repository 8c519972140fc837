/* assay workbench: small vanilla JS, no build step. All text goes into the DOM through
   textContent (never innerHTML with data), so document text, questions and critiques stay inert. */
(function () {
  "use strict";
  const CRITERIA = ["correct", "comprehensive", "faithful", "policy"];
  const $ = (sel, root) => (root || document).querySelector(sel);
  const $$ = (sel, root) => Array.from((root || document).querySelectorAll(sel));

  function csrf() { const m = $('meta[name="csrf-token"]'); return m ? m.content : ""; }
  function uid() {
    if (window.crypto && crypto.randomUUID) return crypto.randomUUID();
    const b = new Uint8Array(16); crypto.getRandomValues(b);
    return Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
  }
  function el(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") e.className = v;
      else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
      else if (k === "text") e.textContent = v;
      else e.setAttribute(k, v);
    }
    for (const k of kids) if (k != null) e.append(k instanceof Node ? k : document.createTextNode(String(k)));
    return e;
  }
  async function api(method, url, body) {
    const opts = { method, headers: { "X-CSRF-Token": csrf() }, credentials: "same-origin" };
    if (body !== undefined) { opts.headers["Content-Type"] = "application/json"; opts.body = JSON.stringify(body); }
    const r = await fetch(url, opts);
    let data = {};
    try { data = await r.json(); } catch (e) { data = {}; }
    if (r.status === 401) { location.href = "/login?next=" + encodeURIComponent(location.pathname); }
    if (!r.ok) throw new Error(typeof data.detail === "string" ? data.detail : "request failed (" + r.status + ")");
    return data;
  }
  function toast(msg) {
    const t = $("#toast"); if (!t) return;
    t.textContent = msg; t.classList.add("show");
    clearTimeout(toast._t); toast._t = setTimeout(() => t.classList.remove("show"), 1600);
  }
  function status(msg, kind) {
    const s = $("#status"); if (!s) return;
    s.textContent = msg; s.className = "status " + (kind || "");
  }
  function viewData() { const d = $("#view-data"); return d ? JSON.parse(d.textContent) : null; }

  /* ---------------------------------------------------------------- session timer */
  function startTimer() {
    const t = $("#timer"); if (!t || t.dataset.running) return;
    t.dataset.running = "1";
    const end = Date.parse(t.dataset.end);
    function tick() {
      const left = Math.round((end - Date.now()) / 1000);
      const a = Math.abs(left), m = Math.floor(a / 60), s = a % 60;
      t.textContent = (left < 0 ? "+" : "") + m + ":" + String(s).padStart(2, "0");
      t.classList.toggle("low", left >= 0 && left < 300);
      t.classList.toggle("over", left < 0);
      if (left < 0) t.title = "Session time is up: finish this item and take a break";
    }
    tick(); setInterval(tick, 1000);
  }

  /* ---------------------------------------------------------------- next item without reload */
  async function goNext(kind) {
    const nxt = await api("POST", "/api/next/" + kind);
    if (!nxt.url) { location.href = "/work/" + kind; return; }
    const r = await fetch(nxt.url, { credentials: "same-origin" });
    const doc = new DOMParser().parseFromString(await r.text(), "text/html");
    const main = doc.getElementById("main");
    if (!main) { location.href = nxt.url; return; }
    $("#main").replaceWith(main);
    document.title = doc.title;
    document.body.dataset.page = doc.body.dataset.page;
    history.pushState({}, "", nxt.url);
    window.scrollTo(0, 0);
    init();
  }

  /* ---------------------------------------------------------------- flags */
  function initFlags() {
    const b = $("#flag-send"); if (!b) return;
    b.addEventListener("click", async () => {
      try {
        await api("POST", "/api/flags", { item_id: b.dataset.item, flag: $("#flag-kind").value, note: $("#flag-note").value });
        $("#flag-note").value = ""; toast("Flag saved");
      } catch (e) { toast(e.message); }
    });
  }

  /* ---------------------------------------------------------------- chunk cards */
  function highlight(text, terms) {
    const frag = document.createDocumentFragment();
    if (!terms.length) { frag.append(text); return frag; }
    const re = new RegExp("(" + terms.map((t) => t.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|") + ")", "gi");
    let last = 0, m;
    while ((m = re.exec(text)) !== null) {
      if (m.index > last) frag.append(text.slice(last, m.index));
      frag.append(el("mark", { text: m[0] }));
      last = m.index + m[0].length;
      if (m[0].length === 0) re.lastIndex++;
    }
    frag.append(text.slice(last));
    return frag;
  }
  function chunkCard(c, terms, actions) {
    const head = el("header", {}, el("b", { class: "doc", text: c.doc_id }));
    for (const part of [c.form, c.period, c.pages && c.pages.length ? "p. " + c.pages.join(", ") : null]) {
      if (part) head.append(" · " + part);
    }
    if (c.version_date) head.append(" · ", el("span", { class: "muted", text: "version " + c.version_date }));
    head.append(el("span", { class: "cid", text: c.chunk_id }));
    const access = el("div", { class: "access" });
    if (c.restricted) {
      for (const a of c.access) {
        let t = "restricted: " + a.label;
        if (a.groups && a.groups.length) t += " · groups " + a.groups.join(", ");
        if (a.clearance) t += " · clearance " + a.clearance + "+";
        access.append(el("span", { class: "access-label restricted", text: t }));
      }
    } else access.append(el("span", { class: "access-label public", text: "public" }));
    const body = el("div", { class: "text" + (c.kind === "table" ? " table-text" : "") });
    body.append(highlight(c.text, terms));
    const card = el("article", { class: "chunk" + (c.restricted ? " restricted" : ""), "data-chunk": c.chunk_id }, head, access, body);
    if (actions) card.append(actions);
    return card;
  }

  function initSearch(makeActions) {
    const form = $("#search-form"); if (!form) return null;
    const results = $("#results");
    let lastHits = [];
    async function run() {
      const p = new URLSearchParams({ q: $("#search-q").value, company: $("#search-company").value,
        form: $("#search-form-type").value, period: $("#search-period").value });
      results.replaceChildren(el("p", { class: "muted", text: "Searching…" }));
      try {
        const data = await api("GET", "/api/search?" + p.toString());
        lastHits = data.hits;
        render();
      } catch (e) { results.replaceChildren(el("p", { class: "status err", text: e.message })); }
    }
    function render() {
      const terms = ($("#search-q").value.match(/[\w$%]+/g) || []).filter((t) => t.length > 1);
      if (!lastHits.length) { results.replaceChildren(el("p", { class: "muted", text: "No chunk matches. Try fewer words or clear a filter." })); return; }
      results.replaceChildren(...lastHits.map((c) => chunkCard(c, terms, makeActions(c))));
    }
    form.addEventListener("submit", (e) => { e.preventDefault(); run(); });
    for (const s of ["#search-company", "#search-form-type", "#search-period"]) $(s).addEventListener("change", run);
    return { render };
  }

  /* ---------------------------------------------------------------- submit helper */
  function submitter(view, buildPayload) {
    let clientId = uid();
    const started = Date.now();
    let busy = false, reviewed = false;
    return async function submit() {
      if (busy) return;
      if (reviewed) { await goNext(view.kind); return; }
      let payload;
      try { payload = buildPayload(); } catch (e) { status(e.message, "err"); return; }
      busy = true; status("Saving…");
      try {
        const res = await api("POST", "/api/labels", { task_id: view.task_id, payload, client_id: clientId,
          seconds: (Date.now() - started) / 1000 });
        clientId = uid();
        status("Saved", "ok"); toast("Saved");
        if (res.feedback && res.feedback.gold) {  // calibration: show the comparison first
          reviewed = true;
          showFeedback(res.feedback, payload, () => goNext(view.kind));
          return;
        }
        await goNext(view.kind);
      } catch (e) { status(e.message, "err"); }
      finally { busy = false; }
    };
  }

  /* ---------------------------------------------------------------- calibration feedback */
  function showFeedback(fb, mine, next) {
    const box = el("section", { class: "card calib-feedback", id: "calib-feedback" },
      el("h2", { text: "Calibration item: your label against the reference" }));
    if (fb.matches && fb.gold.tool_calls) {  // tool calls: per call made, per missing expected call
      const gc = fb.gold.tool_calls;
      box.append(el("p", { class: "small", text: "Gold calls" + (gc.ordered ? " (in this order)" : "") + ": " +
        gc.calls.map((c, i) => (i + 1) + ". " + c.name + " " + JSON.stringify(c.arguments)).join(" · ") +
        (gc.forbidden.length ? " · forbidden: " + gc.forbidden.join(", ") : "") }));
      const tbl = el("table", { class: "data", id: "calib-tool" }, el("thead", {}, el("tr", {},
        el("th", { text: "" }), el("th", { text: "you" }), el("th", { text: "reference" }), el("th", { text: "why" }), el("th", { text: "" }))));
      const body = el("tbody");
      const mark = (k) => (k in fb.matches ? (fb.matches[k] ? "✓" : "✗ differs") : "–");
      fb.gold.calls.forEach((g, i) => {
        const k = "call " + (i + 1), you = (mine.calls[i] || {}).verdict || "";
        body.append(el("tr", { "data-key": k, class: fb.matches[k] === false ? "diff" : "" }, el("td", { text: k + " (" + g.name + ")" }),
          el("td", { text: you }), el("td", { text: g.verdict || "no known verdict" }), el("td", { class: "small", text: g.why }), el("td", { text: mark(k) })));
      });
      fb.gold.missing.forEach((g, i) => {
        const k = "missing " + (i + 1), m = mine.missing[i];
        body.append(el("tr", { "data-key": k, class: fb.matches[k] === false ? "diff" : "" }, el("td", { text: k + " (" + g.name + ")" }),
          el("td", { text: m ? (m.needed ? "needed" : "not needed") : "" }), el("td", { text: g.needed ? "needed" : "not needed" }),
          el("td", { class: "small", text: g.why }), el("td", { text: mark(k) })));
      });
      tbl.append(body); box.append(tbl);
    } else if (fb.matches && fb.gold.verdict !== undefined) {  // one verdict (sql, policy)
      box.append(el("p", { text: "You: " + mine.verdict + " · reference: " + fb.gold.verdict + (fb.matches.verdict ? " ✓" : " ✗ differs") }));
      if (fb.gold.critique) box.append(el("p", { class: "small", text: fb.gold.critique }));
    } else if (fb.matches) {
      const tbl = el("table", { class: "data" }, el("thead", {}, el("tr", {},
        el("th", { text: "criterion" }), el("th", { text: "you" }), el("th", { text: "reference" }), el("th", { text: "" }))));
      const body = el("tbody");
      for (const c of Object.keys(fb.matches)) {
        body.append(el("tr", {}, el("td", { text: c }), el("td", { text: mine.verdicts[c] }),
          el("td", { text: fb.gold.verdicts[c] }), el("td", { text: fb.matches[c] ? "✓" : "✗ differs" })));
      }
      tbl.append(body); box.append(tbl);
      const crit = fb.gold.critiques || {};
      for (const c of Object.keys(crit)) box.append(el("p", { class: "small", text: c + ": " + crit[c] }));
    } else if (fb.found) {
      box.append(el("p", { text: "Found: " + (fb.found.join(", ") || "none") }));
      box.append(el("p", { text: "Missed: " + (fb.missed.join(", ") || "none") }));
    } else {
      box.append(el("p", { text: "Reference answer: " + (fb.gold.reference_answer || "") }));
    }
    box.append(el("button", { class: "primary", type: "button", onclick: next }, "Next item"));
    const row = $(".submit-row");
    row.after(box);
    box.scrollIntoView({ block: "nearest" });
  }

  /* ---------------------------------------------------------------- evidence path builder */
  function clonePaths(paths) { return (paths || []).map((p) => p.map((q) => q.slice())); }
  function pathBuilder(initial, initialGrades) {
    let paths = clonePaths(initial);
    let grades = { ...(initialGrades || {}) };
    let active = paths.length ? [0, 0] : null;
    function render() {
      const box = $("#paths");
      if (!paths.length) { box.replaceChildren(el("p", { class: "muted small", text: "No evidence yet: search on the right and add chunks." })); return; }
      box.replaceChildren(...paths.map((path, i) => {
        const p = el("div", { class: "path" }, el("header", {}, "Path " + (i + 1),
          el("button", { class: "x", type: "button", title: "Remove path", onclick: () => { paths.splice(i, 1); active = null; render(); } }, "×")));
        path.forEach((piece, j) => {
          const isActive = active && active[0] === i && active[1] === j;
          const pe = el("div", { class: "piece" + (isActive ? " active" : ""), onclick: () => { active = [i, j]; render(); } },
            el("span", { class: "label", text: "piece " + (j + 1) }));
          piece.forEach((cid, k) => {
            if (k) pe.append(el("span", { class: "or", text: "or" }));
            const grade = el("select", { class: "grade", title: "Relevance of this chunk: 0 not relevant, 1 marginal, 2 relevant, 3 highly relevant", "aria-label": "relevance of " + cid, "data-chunk": cid });
            grade.append(el("option", { value: "", text: "relevance" }));
            ["0 not", "1 marginal", "2 relevant", "3 highly"].forEach((t, g) => grade.append(el("option", { value: String(g), text: t })));
            grade.value = cid in grades ? String(grades[cid]) : "";
            grade.addEventListener("click", (e) => e.stopPropagation());
            grade.addEventListener("change", () => { if (grade.value === "") delete grades[cid]; else grades[cid] = Number(grade.value); });
            pe.append(el("span", { class: "chip" }, cid, grade, el("button", { type: "button", title: "Remove", onclick: (e) => {
              e.stopPropagation(); piece.splice(k, 1);
              if (!piece.length) { path.splice(j, 1); active = null; }
              if (!path.length) paths.splice(i, 1);
              render();
            } }, "×")));
          });
          p.append(pe);
        });
        return p;
      }));
    }
    function addPiece(cid) {
      if (!paths.length) paths.push([]);
      const i = active ? active[0] : paths.length - 1;
      paths[i].push([cid]); active = [i, paths[i].length - 1];
      const none = $("#no-evidence"); if (none) none.checked = false;
      render();
    }
    function addAlt(cid) {
      if (!active) { addPiece(cid); return; }
      const piece = paths[active[0]][active[1]];
      if (!piece.includes(cid)) piece.push(cid);
      render();
    }
    $("#new-path").addEventListener("click", () => { paths.push([]); active = null; render(); toast("New path: add its first piece"); });
    render();
    return {
      addPiece, addAlt,
      set(p) { paths = clonePaths(p); active = paths.length ? [0, 0] : null; render(); },
      addPath(p) { paths.push(...clonePaths([p])); render(); },
      paths() { return paths.map((p) => p.filter((q) => q.length)).filter((p) => p.length); },
      grades() {
        const named = new Set(this.paths().flat(2));
        return Object.fromEntries(Object.entries(grades).filter(([cid]) => named.has(cid)));
      },
      actions(cid) {
        return el("div", { class: "actions" },
          el("button", { type: "button", class: "add-piece", onclick: () => addPiece(cid) }, "+ piece"),
          el("button", { type: "button", class: "add-alt", onclick: () => addAlt(cid) }, "+ alternative"));
      },
    };
  }
  function evidencePayload(builder) {
    const clean = builder.paths();
    if (!clean.length && !$("#no-evidence").checked) throw new Error("Add evidence, or tick 'No chunk in the corpus answers this'.");
    return { paths: clean, note: $("#ev-note").value, relevance: builder.grades() };
  }

  function initEvidence() {
    const view = viewData();
    const own = view.own_label ? view.own_label.payload : { paths: [], note: "" };
    $("#ev-note").value = own.note || "";
    $("#no-evidence").checked = !!view.own_label && own.paths.length === 0;
    const builder = pathBuilder(own.paths, own.relevance);
    initSearch((c) => builder.actions(c.chunk_id));
    const submit = submitter(view, () => evidencePayload(builder));
    $("#submit").addEventListener("click", submit);
    return { submit };
  }

  /* ---------------------------------------------------------------- reference form */
  function referenceForm(initial) {
    let fromDraft = false;
    let facts = [];
    let active = null;
    function render() {
      const box = $("#facts");
      box.replaceChildren(...facts.map((f, i) => {
        const input = el("input", { type: "text", placeholder: "One atomic fact, e.g. FY2023 net interest margin was 3.1%", maxlength: "1000" });
        input.value = f.fact;
        input.addEventListener("input", () => { f.fact = input.value; });
        input.addEventListener("focus", () => { if (active !== i) { active = i; $$(".fact").forEach((x, k) => x.classList.toggle("active", k === i)); } });
        const crit = el("input", { type: "checkbox" }); crit.checked = f.critical;
        crit.addEventListener("change", () => { f.critical = crit.checked; });
        const sup = el("div", { class: "supports small" }, el("span", { class: "muted", text: "supported by: " }));
        if (!f.supporting.length) sup.append(el("span", { class: "muted", text: "(none yet)" }));
        f.supporting.forEach((cid, k) => sup.append(el("span", { class: "chip" }, cid,
          el("button", { type: "button", onclick: () => { f.supporting.splice(k, 1); render(); } }, "×"))));
        return el("div", { class: "fact" + (active === i ? " active" : ""), onclick: () => { if (active !== i) { active = i; render(); } } },
          input, el("label", { class: "check small" }, crit, "critical"),
          el("button", { type: "button", class: "x", title: "Remove fact", onclick: (e) => { e.stopPropagation(); facts.splice(i, 1); active = null; render(); } }, "×"), sup);
      }));
    }
    function set(p) {
      facts = p ? p.key_facts.map((f) => ({ ...f, supporting: f.supporting.slice() })) : [];
      active = facts.length ? 0 : null;
      if (p) {
        $("#ref-answer").value = p.reference_answer || "";
        $("#expected").value = p.expected_behavior;
        $$('input[name="answerable"]').forEach((r) => { r.checked = r.value === String(p.answerable); });
        $("#notes").value = p.acceptable_response_notes || "";
        if (p.structured_lookup) {
          $("#lookup-source").value = p.structured_lookup.source;
          $("#lookup-searched").value = p.structured_lookup.searched;
          $("#lookup-found").value = p.structured_lookup.found;
        }
      }
      render();
    }
    function addFacts(list) {
      for (const f of list) {
        if (!facts.some((x) => x.fact.trim() === f.fact.trim())) facts.push({ ...f, supporting: f.supporting.slice() });
      }
      render();
    }
    function support(cid) {
      if (active == null) { toast("Click a key fact first"); return; }
      const f = facts[active]; if (!f.supporting.includes(cid)) f.supporting.push(cid); render();
    }
    $("#add-fact").addEventListener("click", () => { facts.push({ fact: "", critical: true, supporting: [] }); active = facts.length - 1; render(); $$(".fact input[type=text]").pop().focus(); });
    set(initial);
    return {
      set, addFacts, support,
      setAnswer(text) { $("#ref-answer").value = text || ""; },
      actions(cid) { return el("div", { class: "actions" }, el("button", { type: "button", class: "add-support", onclick: () => support(cid) }, "+ support")); },
      payload() {
        const a = $('input[name="answerable"]:checked').value;
        return {
          reference_answer: $("#ref-answer").value,
          key_facts: facts.filter((f) => f.fact.trim()),
          answerable: a === "partial" ? "partial" : a === "true",
          expected_behavior: $("#expected").value,
          acceptable_response_notes: $("#notes").value,
          from_draft: fromDraft,
          // 'not disclosed' (wholly or partly) is backed by a structured-data lookup
          structured_lookup: a === "true" ? null : {
            source: $("#lookup-source").value, searched: $("#lookup-searched").value, found: $("#lookup-found").value,
          },
        };
      },
      markDraft(on) { fromDraft = !!on; },
    };
  }

  function initReference() {
    const view = viewData();
    const own = view.own_label ? view.own_label.payload : null;
    // no blank box: a task without a label of its own opens on the system's draft, marked so
    const draft = !own && view.draft ? {
      reference_answer: view.draft.reference_answer, answerable: true, expected_behavior: "answer",
      acceptable_response_notes: "", key_facts: (view.draft.key_facts || []).map((f) => ({ fact: f.fact, critical: f.critical !== false, supporting: [] })),
    } : null;
    const form = referenceForm(own || draft);
    form.markDraft(own ? own.from_draft : !!draft);
    initSearch((c) => form.actions(c.chunk_id));
    $$("#own-evidence .chunk").forEach((card) => card.append(form.actions(card.dataset.chunk)));
    const submit = submitter(view, form.payload);
    $("#submit").addEventListener("click", submit);
    return { submit };
  }

  /* ---------------------------------------------------------------- verdict table (judge + adjudicate) */
  function verdictTable(initial) {
    const state = {}, crit = {};
    let focus = 0;
    function set(c, v) {
      state[c] = v;
      const row = $('tr[data-criterion="' + c + '"]');
      $$("button[data-v]", row).forEach((b) => b.setAttribute("aria-pressed", String(b.dataset.v === v)));
      const inp = $("input[data-critique]", row);
      inp.required = v === "fail";
      inp.placeholder = v === "fail" ? "Required: one sentence on why it fails" : "Optional comment";
    }
    function setFocus(i) {
      focus = Math.max(0, Math.min(CRITERIA.length - 1, i));
      $$("tr.crit").forEach((r, k) => r.classList.toggle("focus", k === focus));
    }
    $$("tr.crit").forEach((row, i) => {
      $$("button[data-v]", row).forEach((b) => b.addEventListener("click", () => { set(row.dataset.criterion, b.dataset.v); setFocus(i);
        if (b.dataset.v === "fail") $("input[data-critique]", row).focus(); }));
    });
    if (initial) {
      for (const c of CRITERIA) {
        if (initial.verdicts && initial.verdicts[c]) set(c, initial.verdicts[c]);
        const inp = $('input[data-critique="' + c + '"]');
        if (inp) inp.value = (initial.critiques && initial.critiques[c]) || "";
      }
    }
    setFocus(0);
    function payload() {
      const missing = CRITERIA.filter((c) => !state[c]);
      if (missing.length) throw new Error("Give a verdict on: " + missing.join(", "));
      const critiques = {};
      for (const c of CRITERIA) {
        const v = $('input[data-critique="' + c + '"]').value.trim();
        if (state[c] === "fail" && !v) { $('input[data-critique="' + c + '"]').focus(); throw new Error("A Fail on " + c + " needs a one-sentence critique."); }
        if (v) critiques[c] = v;
      }
      return { verdicts: { ...state }, critiques };
    }
    function key(e) {
      const k = e.key.toLowerCase();
      if (k >= "1" && k <= "4") { setFocus(Number(k) - 1); return true; }
      if (k === "p") { set(CRITERIA[focus], "pass"); setFocus(focus + 1); return true; }
      if (k === "f") { set(CRITERIA[focus], "fail"); $('input[data-critique="' + CRITERIA[focus] + '"]').focus(); return true; }
      if (k === "a") { CRITERIA.forEach((c) => set(c, "pass")); return true; }
      if (k === "j" || k === "arrowdown") { setFocus(focus + 1); return true; }
      if (k === "k" || k === "arrowup") { setFocus(focus - 1); return true; }
      return false;
    }
    return { set, payload, key };
  }

  function initJudge() {
    const view = viewData();
    const initial = view.own_label ? view.own_label.payload : view.output && view.output.draft;
    const table = verdictTable(initial);
    const submit = submitter(view, table.payload);
    $("#submit").addEventListener("click", submit);
    return { submit, key: table.key };
  }

  /* ---------------------------------------------------------------- adjudication */
  function initAdjudicate() {
    const view = viewData();
    const first = view.labels[0] ? view.labels[0].payload : null;
    let table = null, builder = null, form = null, one = null, tool = null;
    if (view.kind === "judge") {
      table = verdictTable(first);
    } else if (view.kind === "tool") {
      tool = toolForm(first);
    } else if (view.kind === "sql" || view.kind === "policy") {
      one = verdictForm("#verdict", "#critique", first);
      if (view.kind === "sql") {
        goldRunner(view.task_id);
        const useQuery = (q) => { $("#gold-query").value = q; $("#use-edit").checked = true; };
        if (first && first.gold_query) useQuery(first.gold_query);
        $$("button.use-query").forEach((b) => b.addEventListener("click", () => {
          const lab = view.labels[Number(b.dataset.label)];
          useQuery(lab.payload.gold_query); toast("Gold query from " + lab.user);
        }));
      }
    } else if (view.kind === "evidence") {
      builder = pathBuilder(first ? first.paths : []);
      $("#ev-note").value = (first && first.note) || "";
      $("#no-evidence").checked = !!first && first.paths.length === 0;
      initSearch((c) => builder.actions(c.chunk_id));
      // the experts' own chunks, side by side, can be added to the final label directly
      $$(".label-col .chunk").forEach((card) => card.append(builder.actions(card.dataset.chunk)));
      $$("button.add-path").forEach((b) => b.addEventListener("click", () => {
        const lab = view.labels[Number(b.dataset.label)];
        builder.addPath(lab.payload.paths[Number(b.dataset.path)]);
        toast("Added " + lab.user + "'s path " + (Number(b.dataset.path) + 1));
      }));
    } else {
      form = referenceForm(first);
      initSearch((c) => form.actions(c.chunk_id));
      $$(".label-col .chunk").forEach((card) => card.append(form.actions(card.dataset.chunk)));
      $$("button.use-answer").forEach((b) => b.addEventListener("click", () => {
        const lab = view.labels[Number(b.dataset.label)];
        form.setAnswer(lab.payload.reference_answer); toast("Answer from " + lab.user);
      }));
      $$("button.add-facts").forEach((b) => b.addEventListener("click", () => {
        const lab = view.labels[Number(b.dataset.label)];
        form.addFacts(lab.payload.key_facts); toast("Key facts from " + lab.user + " added");
      }));
    }
    $$("button.take").forEach((b) => b.addEventListener("click", () => {
      const lab = view.labels[Number(b.dataset.take)];
      if (table) table = verdictTable(lab.payload);
      else if (tool) tool.load(lab.payload);
      else if (one) {
        one.load(lab.payload);
        if (view.kind === "sql") {
          $("#use-edit").checked = !!lab.payload.gold_query;
          if (lab.payload.gold_query) $("#gold-query").value = lab.payload.gold_query;
        }
      }
      else if (builder) { builder.set(lab.payload.paths); $("#ev-note").value = lab.payload.note || ""; $("#no-evidence").checked = lab.payload.paths.length === 0; }
      else form.set(lab.payload);
      toast("Starting from " + lab.user + "'s label");
    }));
    const rc = $("#root-cause");
    rc.addEventListener("change", () => $("#guideline-box").classList.toggle("hidden", rc.value !== "guideline_gap"));
    $("#adj-submit").addEventListener("click", async () => {
      try {
        let payload;
        if (table) payload = table.payload();
        else if (tool) payload = tool.payload();
        else if (one) {
          payload = one.payload();
          if (view.kind === "sql" && $("#use-edit").checked) payload.gold_query = $("#gold-query").value;
        } else payload = builder ? evidencePayload(builder) : form.payload();
        const res = await api("POST", "/api/adjudications", { task_id: view.task_id, payload, root_cause: rc.value,
          note: $("#adj-note").value, hard_case: $("#hard-case").checked, guideline_change: $("#guideline-change").value || null });
        status("Recorded" + (res.guideline_version ? "; guideline version " + res.guideline_version + " opened" : ""), "ok");
        setTimeout(() => { location.href = "/adjudicate"; }, 700);
      } catch (e) { status(e.message, "err"); }
    });
    return { key: table ? table.key : one ? one.key : null };
  }

  function initGuidelines() {
    const b = $("#gl-save"); if (!b) return {};
    b.addEventListener("click", async () => {
      try {
        const r = await api("POST", "/api/guidelines", { text: $("#gl-text").value, change: $("#gl-change").value });
        status("Saved version " + r.version, "ok"); setTimeout(() => location.reload(), 500);
      } catch (e) { status(e.message, "err"); }
    });
    return {};
  }

  /* ---------------------------------------------------------------- keyboard */
  let current = {};
  document.addEventListener("keydown", (e) => {
    const typing = /^(INPUT|TEXTAREA|SELECT)$/.test(e.target.tagName);
    if ((e.ctrlKey || e.metaKey) && e.key === "Enter" && current.submit) { e.preventDefault(); current.submit(); return; }
    if (e.key === "Escape" && typing) { e.target.blur(); return; }
    if (typing || e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.key.toLowerCase() === "n" && current.submit) { e.preventDefault(); current.submit(); return; }
    if (current.key && current.key(e)) e.preventDefault();
  });

  /* ---------------------------------------------------------------- one verdict (sql, policy, their adjudication) */
  function verdictForm(buttonsSel, critiqueSel, initial) {
    let verdict = null;
    const buttons = $$(buttonsSel + " button[data-v]");
    const critique = $(critiqueSel);
    function set(v) {
      verdict = v;
      for (const o of buttons) o.setAttribute("aria-pressed", String(o.dataset.v === v));
      critique.required = v === "fail";
      critique.placeholder = v === "fail" ? "Required: one sentence on why it fails" : "Optional comment";
    }
    for (const b of buttons) b.addEventListener("click", () => { set(b.dataset.v); if (b.dataset.v === "fail") critique.focus(); });
    function load(p) { if (p && p.verdict) set(p.verdict); critique.value = (p && p.critique) || ""; }
    load(initial);
    return {
      set, load,
      payload() {
        if (!verdict) throw new Error("Pick Pass or Fail");
        const text = critique.value.trim();
        if (verdict === "fail" && !text) { critique.focus(); throw new Error("A Fail needs a one-sentence critique."); }
        return { verdict, critique: text };
      },
      key(e) {
        const k = e.key.toLowerCase();
        if (k === "p") { set("pass"); return true; }
        if (k === "f") { set("fail"); critique.focus(); return true; }
        return false;
      },
    };
  }

  function sqlRows(res) {
    const tbl = el("table", { class: "data sqlrows" });
    tbl.append(el("thead", {}, el("tr", {}, ...res.columns.map((c) => el("th", { text: c })))));
    const body = el("tbody");
    for (const r of res.rows) body.append(el("tr", {}, ...r.map((v) => el("td", { text: v === null ? "NULL" : String(v) }))));
    tbl.append(body);
    return tbl;
  }
  function goldRunner(taskId) {
    const run = $("#run-gold"); if (!run) return;
    run.addEventListener("click", async () => {
      const box = $("#gold-run");
      box.textContent = "Running…";
      try {
        const res = await api("POST", "/api/tasks/" + taskId + "/sql/run", { query: $("#gold-query").value });
        box.textContent = "";
        if (res.matches_gold !== undefined) {
          box.append(el("p", { class: "small", text: res.matches_gold ? "Matches the stored gold result." : "Differs from the stored gold result: " + res.reason }));
        }
        box.append(sqlRows(res), el("p", { class: "small muted", text: res.n_rows + " row(s)" }));
      } catch (e) { box.textContent = e.message; }
    });
  }

  /* ---------------------------------------------------------------- SQL task */
  function initSql() {
    const view = viewData();
    const own = view.own_label ? view.own_label.payload : null;
    const form = verdictForm("#sql-verdict", "#sql-critique", own);
    if (own && own.gold_query) { $("#gold-query").value = own.gold_query; $("#use-edit").checked = true; }
    goldRunner(view.task_id);
    const submit = submitter(view, () => {
      const payload = form.payload();
      if ($("#use-edit").checked) payload.gold_query = $("#gold-query").value;
      return payload;
    });
    $("#submit").addEventListener("click", submit);
    return { submit, key: form.key };
  }

  /* ---------------------------------------------------------------- policy task */
  function initPolicy() {
    const view = viewData();
    const form = verdictForm("#verdict", "#critique", view.own_label ? view.own_label.payload : null);
    const submit = submitter(view, form.payload);
    $("#submit").addEventListener("click", submit);
    return { submit, key: form.key };
  }

  /* ---------------------------------------------------------------- tool task (and its adjudication) */
  function toolForm(initial) {
    const calls = $$("#tool-form .tool-call"), missing = $$("#tool-form .tool-missing");
    const verdicts = calls.map(() => null), needed = missing.map(() => null);
    function setCall(i, v) {
      verdicts[i] = v;
      $$("button[data-v]", calls[i]).forEach((b) => b.setAttribute("aria-pressed", String(b.dataset.v === v)));
      const inp = $(".call-critique", calls[i]);
      inp.required = v === "fail";
      inp.placeholder = v === "fail" ? "Required: one sentence on why it fails" : "Optional comment";
    }
    function setMissing(i, n) {
      needed[i] = n;
      $$("button[data-needed]", missing[i]).forEach((b) => b.setAttribute("aria-pressed", String(n !== null && b.dataset.needed === String(n))));
    }
    calls.forEach((row, i) => $$("button[data-v]", row).forEach((b) => b.addEventListener("click", () => {
      setCall(i, b.dataset.v); if (b.dataset.v === "fail") $(".call-critique", row).focus();
    })));
    missing.forEach((row, i) => $$("button[data-needed]", row).forEach((b) => b.addEventListener("click", () => setMissing(i, b.dataset.needed === "true"))));
    function load(p) {
      calls.forEach((row, i) => {
        const c = p && p.calls ? p.calls[i] : null;
        if (c) setCall(i, c.verdict); else { verdicts[i] = null; $$("button[data-v]", row).forEach((b) => b.setAttribute("aria-pressed", "false")); }
        $(".call-critique", row).value = (c && c.critique) || "";
      });
      missing.forEach((row, i) => {
        const m = p && p.missing ? p.missing[i] : null;
        setMissing(i, m ? !!m.needed : null);
        $(".missing-critique", row).value = (m && m.critique) || "";
      });
      $("#tool-note").value = (p && p.note) || "";
    }
    load(initial);
    return {
      load,
      payload() {
        const open = verdicts.map((v, i) => (v ? null : i + 1)).filter((i) => i !== null);
        if (open.length) throw new Error("Pass or Fail every call: call " + open.join(", ") + " has no verdict.");
        const out = { calls: [], missing: [], note: $("#tool-note").value.trim() };
        calls.forEach((row, i) => {
          const inp = $(".call-critique", row), text = inp.value.trim();
          if (verdicts[i] === "fail" && !text) { inp.focus(); throw new Error("A Fail on call " + (i + 1) + " needs a one-sentence critique."); }
          out.calls.push({ verdict: verdicts[i], critique: text });
        });
        missing.forEach((row, i) => {
          if (needed[i] === null) throw new Error("Say whether each missing expected call was needed.");
          out.missing.push({ needed: needed[i], critique: $(".missing-critique", row).value.trim() });
        });
        return out;
      },
    };
  }

  function initTool() {
    const view = viewData();
    const form = toolForm(view.own_label ? view.own_label.payload : null);
    const submit = submitter(view, form.payload);
    $("#submit").addEventListener("click", submit);
    return { submit };
  }

  function init() {
    const page = document.body.dataset.page;
    startTimer(); initFlags();
    const inits = { evidence: initEvidence, reference: initReference, judge: initJudge, sql: initSql, policy: initPolicy, tool: initTool, adjudicate: initAdjudicate, guidelines: initGuidelines };
    current = inits[page] ? inits[page]() || {} : {};
  }
  window.addEventListener("popstate", () => location.reload());
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init); else init();
})();
