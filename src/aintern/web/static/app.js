// aintern's web app: small, hand-written, no dependencies. Each page's behaviour is set up by its
// data-page name; everything else is shared (the API helper, the status badge, shortcuts).
"use strict";

const $ = (sel, root = document) => root.querySelector(sel);
const $$ = (sel, root = document) => Array.from(root.querySelectorAll(sel));
const CSRF = $('meta[name="csrf-token"]').content;
const WS = document.body.dataset.ws;
const PAGE = document.body.dataset.page;

async function api(method, url, body) {
  const res = await fetch(url, {
    method, headers: { "X-CSRF-Token": CSRF, ...(body ? { "Content-Type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  let data = null;
  try { data = await res.json(); } catch (e) { data = {}; }
  if (!res.ok) { const err = new Error(data.error || res.statusText); err.data = data; err.status = res.status; throw err; }
  return data;
}

// Navigate away (a page's own live reloads stop: they would cancel the navigation).
let leaving = false;
function go(url) { leaving = true; location.href = url; }

function toast(text) {
  const t = $("#toast");
  t.textContent = text;
  t.classList.add("show");
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => t.classList.remove("show"), 3500);
}

function esc(s) {
  return String(s ?? "").replace(/[&<>"']/g, c => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));
}

/** "1 chunk", "2,048 chunks": a count with its noun in the right number. */
function count(n, noun) { return `${Number(n).toLocaleString()} ${noun}${n === 1 ? "" : "s"}`; }
function humanSize(n) {
  const units = ["B", "KB", "MB", "GB"];
  let i = 0;
  while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
  return i ? `${n.toFixed(1)} ${units[i]}` : `${n} B`;
}

function relativeTime(iso) {
  const s = (Date.now() - new Date(iso).getTime()) / 1000;
  if (isNaN(s)) return iso;
  if (s < 45) return "just now";
  const steps = [[60, "minute"], [3600, "hour"], [86400, "day"], [2592000, "month"], [31536000, "year"]];
  let unit = "second", value = s;
  for (const [size, name] of steps) { if (s >= size) { unit = name; value = s / size; } }
  const n = Math.round(value);
  return `${n} ${unit}${n === 1 ? "" : "s"} ago`;
}

function duration(s) {
  if (s == null) return "–";
  if (s < 10) return `${s.toFixed(1)} s`;  // (a small run: "0 s" would say nothing)
  s = Math.round(s);
  return s < 60 ? `${s} s` : `${Math.floor(s / 60)} min ${s % 60} s`;
}

function decorate(root = document) {
  $$("time[datetime]", root).forEach(t => { t.title = t.dateTime; t.textContent = relativeTime(t.dateTime); });
  $$("[data-bytes]", root).forEach(td => { td.textContent = humanSize(Number(td.dataset.bytes)); });
}

// -- live events: one EventSource per page, for the badge and whatever the page shows ----------------
const listeners = [];
function onEvent(fn) { listeners.push(fn); }
function connectEvents() {
  const url = WS ? `/api/events?ws=${WS}` : "/api/events";
  const source = new EventSource(url);
  // (Re)connected: what happened before the stream opened was not seen; pages catch up.
  source.addEventListener("open", () => listeners.forEach(fn => fn("open", {})));
  for (const kind of ["progress", "file", "state", "run", "model"]) {
    source.addEventListener(kind, e => { const data = JSON.parse(e.data); listeners.forEach(fn => fn(kind, data)); });
  }
  return source;
}

// -- the status badge (the seed's RagStatusIndicator) ----------------------------------------------
const badge = $("#badge");
function showBadge(state, label) {
  badge.dataset.state = state;
  $(".text", badge).textContent = label;
}
let badgeTimer = null;
async function refreshBadge() {
  try {
    // (no workspace on the page: the server's own state, e.g. a damaged database that lists no index)
    const s = await api("GET", WS ? `/api/status?ws=${WS}` : "/api/status");
    const watch = s.watching ? (s.auto_index ? " · auto-index" : " · watching") : "";
    const model = s.model_state;
    if (model && model.state === "loading" && s.state !== "indexing") showBadge("indexing", "loading model");
    else showBadge(s.state, s.label + (s.state === "up_to_date" ? watch : ""));
    const why = s.last_error || s.reindex_reason || (model && model.error);
    badge.title = `${s.name}: ${s.label}${why ? " — " + why : ""}`;
  } catch (e) { showBadge("error", "status unavailable"); }
}
function refreshBadgeSoon() { clearTimeout(badgeTimer); badgeTimer = setTimeout(refreshBadge, 250); }
onEvent((kind, data) => {
  if (kind === "progress" || kind === "run") {
    if (data.done) { refreshBadgeSoon(); return; }
    showBadge("indexing", data.label);  // (the server says the phase in words, as `aintern status` does)
  } else if (kind === "state" || kind === "open") {  // (open: what changed before the stream opened was not seen)
    refreshBadgeSoon();
  } else if (kind === "model") {  // the seed's ModelStateChanged
    if (data.state === "loading" && badge.dataset.state !== "indexing") showBadge("indexing", "loading model");
    else refreshBadgeSoon();
  }
});

// -- shared: workspace switch, shortcuts ----------------------------------------------------------
const switcher = $("#workspace-switch");
if (switcher) switcher.addEventListener("change", () => {
  const url = new URL(location.pathname.startsWith("/indexes/") || location.pathname === "/file" ? "/search" : location.pathname, location.origin);
  url.searchParams.set("ws", switcher.value);
  location.href = url.toString();
});
document.addEventListener("keydown", e => {
  const typing = /^(INPUT|TEXTAREA|SELECT)$/.test(document.activeElement.tagName);
  if (e.key === "/" && !typing) {
    const q = $("#q") || $("#message");
    if (q) { e.preventDefault(); q.focus(); q.select && q.select(); }
    else { location.href = `/search${WS ? "?ws=" + WS : ""}`; }
  }
  if (e.key === "Escape" && typing) document.activeElement.blur();
});

// -- Indexes page ----------------------------------------------------------------------------------
function confirmDialog(title, text, ok) {
  const dialog = $("#confirm-dialog");
  $("#confirm-title").textContent = title;
  $("#confirm-text").textContent = text;
  $("#confirm-yes").textContent = ok;
  dialog.returnValue = "";
  dialog.showModal();
  return new Promise(resolve => dialog.addEventListener("close", () => resolve(dialog.returnValue === "yes"), { once: true }));
}

function setupIndexes() {
  const dialog = $("#add-dialog");
  const pathInput = $("#add-path");
  const browser = $("#browser");
  let browsing = 0;  // only the latest request's answer is shown: an earlier one may arrive after it
  // The field shows the folder asked for at once; the answer may only normalise it (~, symlinks), and only
  // if nobody changed the field meanwhile and nobody is in it (a value written under a user's selection
  // would join the text they type over it: "~" selected, "/" typed, "/root/" sent).
  // fill=false lists a folder without choosing it: the dialog opens on the home folder's listing with the
  // field empty, so "Add and index" as it opens never takes the whole home folder.
  async function browse(path, fill = true) {
    const mine = ++browsing;
    if (fill) pathInput.value = path;
    try {
      const data = await api("GET", `/api/browse?path=${encodeURIComponent(path)}`);
      if (mine !== browsing) return;
      $("#browse-here").textContent = data.path;
      browser.dataset.parent = data.parent || "";
      $("#browse-list").innerHTML = data.folders.map(f => `<li data-path="${esc(f.path)}">${esc(f.name)}</li>`).join("")
        || '<li class="muted">no folders here</li>';
      if (fill && pathInput.value === path && data.path !== path && document.activeElement !== pathInput) pathInput.value = data.path;
    } catch (e) { if (mine === browsing) $("#add-error").textContent = e.message; }
  }
  $("#add-open").addEventListener("click", () => { $("#add-error").textContent = ""; dialog.showModal(); browse(pathInput.value || browser.dataset.home, !!pathInput.value); });
  $("#add-cancel").addEventListener("click", () => dialog.close());
  $("#browse-up").addEventListener("click", () => browser.dataset.parent && browse(browser.dataset.parent));
  $("#browse-list").addEventListener("click", e => { const li = e.target.closest("li[data-path]"); if (li) browse(li.dataset.path); });
  // Typing makes any listing still on its way stale: its answer would overwrite the path being typed.
  pathInput.addEventListener("input", () => { browsing++; });
  // (A click in the list blurs the field, which fires "change" again: the folder already listed is not asked for.)
  pathInput.addEventListener("change", () => { if (pathInput.value !== $("#browse-here").textContent) browse(pathInput.value); });
  // Only the options the user changed: the rest stay as the folder's own .aintern.toml (or defaults) say.
  function changedOptions() {
    const out = {};
    $$("#add-options [name]").forEach(el => {
      if (el.type === "checkbox") { if (el.checked !== el.defaultChecked) out[el.name] = el.checked ? "true" : "false"; }
      else if (el.tagName === "SELECT") { const o = el.options[el.selectedIndex]; if (!o.defaultSelected) out[el.name] = el.value; }
      else if (el.value !== el.defaultValue) out[el.name] = el.value;
    });
    return out;
  }
  $("#add-form").addEventListener("submit", async e => {
    e.preventDefault();
    const form = new FormData(e.target);
    const folder = String(form.get("path") || "").trim().replace(/(.)\/+$/, "$1");
    // (The server refuses these too; saying so here spares a round trip and explains the empty field.)
    if (!folder) { $("#add-error").textContent = "choose a folder: type the path of a project folder or pick one below"; return; }
    if (folder === "~" || folder === browser.dataset.home) { $("#add-error").textContent = `${folder}: that is your whole home folder: choose a project folder`; return; }
    if (folder === "/") { $("#add-error").textContent = "/: that is the whole filesystem: choose a project folder"; return; }
    try {
      const made = await api("POST", "/api/indexes", { path: form.get("path"), name: form.get("name"), settings: changedOptions() });
      go(made.progress);
    } catch (err) { $("#add-error").textContent = err.message; }
  });

  document.addEventListener("click", async e => {
    const button = e.target.closest("button[data-act]");
    if (!button) return;
    const id = button.dataset.id, act = button.dataset.act;
    try {
      if (act === "update" || act === "reindex") {
        if (act === "reindex" && !(await confirmDialog("Re-index all", "Every file will be read, chunked and embedded again. This can take a while on a large workspace.", "Re-index"))) return;
        const started = await api("POST", `/api/indexes/${id}/${act}`);
        go(started.progress);
      } else if (act === "clear" || act === "remove") {
        const ok = act === "clear"
          ? await confirmDialog("Clear Index", "Are you sure you want to clear the index? You will need to re-index the workspace.", "Clear index")
          : await confirmDialog("Remove index", "The folder of this index is gone. Remove its index from the database?", "Remove");
        if (!ok) return;
        await api("DELETE", `/api/indexes/${id}`);
        toast(act === "clear" ? "Index cleared" : "Index removed");
        button.closest("tr").remove();
      } else if (act === "cancel") {
        await api("POST", `/api/indexes/${id}/cancel`);
        toast("Stopping after the current batch…");
      }
    } catch (err) { toast(err.message); }
  });

  $$("[data-rename]").forEach(el => el.addEventListener("click", () => {
    if (el.isContentEditable) return;
    const before = el.textContent;
    el.contentEditable = "true";
    el.focus();
    document.getSelection().selectAllChildren(el);
    const finish = async save => {
      el.contentEditable = "false";
      const name = el.textContent.trim();
      if (!save || !name || name === before) { el.textContent = before; return; }
      try { await api("POST", `/api/indexes/${el.dataset.rename}/rename`, { name }); toast("Renamed"); }
      catch (err) { el.textContent = before; toast(err.message); }
    };
    el.addEventListener("keydown", e => { if (e.key === "Enter") { e.preventDefault(); el.blur(); } if (e.key === "Escape") { el.textContent = before; el.blur(); } });
    el.addEventListener("blur", () => finish(true), { once: true });
  }));

  // A run moving or ending anywhere changes the table: reload it (cheap, and keeps one source of truth).
  let reload = null;
  onEvent(kind => {
    if (kind === "state" && !leaving) { clearTimeout(reload); reload = setTimeout(() => leaving || location.reload(), 600); }
  });
}

// -- Progress page -----------------------------------------------------------------------------------
function setupProgress() {
  const box = $("#progress");
  const id = box.dataset.id;
  const log = $("#log");
  // Lines arrive by the thousand on a large workspace: they are added once per frame, and only the
  // last LOG_LINES stay on the page.
  const LOG_LINES = 1000;
  let pending = [];
  const seen = new Set();  // lines already shown (a catch-up and the live events may both bring one)
  function addLog(line) {
    const key = `${line.path}\u0000${line.chunks ?? ""}\u0000${line.skipped ?? ""}\u0000${line.error ?? ""}`;
    if (seen.has(key)) return;
    seen.add(key);
    pending.push(line);
    if (pending.length === 1) requestAnimationFrame(flushLog);
  }
  function flushLog() {
    const follow = log.scrollHeight - log.scrollTop < log.clientHeight + 80;
    const fragment = document.createDocumentFragment();
    for (const line of pending.slice(-LOG_LINES)) {
      const li = document.createElement("li");
      if (line.skipped !== undefined) { li.className = "skipped"; li.textContent = `${line.path} — skipped: ${line.skipped}`; }
      else if (line.error !== undefined) { li.className = "error"; li.textContent = `${line.path} — ${line.error}`; }
      else { li.textContent = `${line.path} — ${count(line.chunks, "chunk")}`; }
      fragment.appendChild(li);
    }
    pending = [];
    log.appendChild(fragment);
    while (log.childElementCount > LOG_LINES) log.firstElementChild.remove();
    if (follow) log.scrollTop = log.scrollHeight;
  }
  function show(p, fromOtherProcess) {
    // (the indexer says "complete" before its run ends, settling the full tier: nothing is left to stop from then)
    const running = !p.done && !["complete", "cancelled", "error"].includes(p.phase);
    $("#phase").textContent = p.doing + (fromOtherProcess ? ` (pid ${p.pid})` : "");
    const pct = p.done && p.phase === "complete" ? 100 : (p.percent || 0);
    // (a percent only where the run's counts say how far it is, as its label: never "100 %" while file vectors go)
    $("#pct").textContent = p.counted || p.done ? `${Math.round(pct)} %` : "";
    $("#fill").style.width = `${pct}%`;
    // (a fill of the full tier counts chunks, kept in the run's file counts: said as chunks, not as files)
    const counts = p.total_files ? `${(p.processed_files || 0).toLocaleString()} / ${p.total_files.toLocaleString()}` : null;
    const tier = p.phase === "full_tier";
    $("#files").textContent = counts && !tier ? counts : (p.result ? `${p.result.files_indexed.toLocaleString()} indexed` : "–");
    $("#chunks").textContent = counts && tier ? counts : (p.result ? p.result.chunks_created : p.processed_chunks || 0).toLocaleString();
    $("#elapsed").textContent = duration(p.elapsed);
    $("#remaining").textContent = running ? duration(p.remaining) : "–";
    $("#current").textContent = running ? (p.current_file || p.message || "") : (p.result ? summary(p.result) : "");
    $("#run-error").textContent = p.error || "";
    $("#cancel-run").hidden = !running || fromOtherProcess;
    $("#cancel-run").disabled = !!p.cancel_requested;
    $("#start-update").hidden = !p.done;  // (another run of it is refused until this one ends)
    $("#background").hidden = !running;
    box.dataset.state = running ? "indexing" : p.phase;
  }
  function summary(r) {
    return `${count(r.files_indexed, "file")} indexed (${count(r.chunks_created, "chunk")}, ${r.chunks_embedded} embedded), ${r.files_unchanged} unchanged, ` +
      `${r.files_removed} removed, ${r.files_skipped} skipped, ${r.files_errored} with errors in ${duration(r.duration)}` +
      (r.tier_chunks_embedded != null ? `; full tier: ${count(r.tier_chunks_embedded, "chunk")} embedded in ${duration(r.tier_duration)}` +
        (r.tier_complete ? ", searches use it" : ", not complete yet") : "") +
      (r.cancelled ? " — cancelled: what was finished is kept" : "");
  }
  const initial = JSON.parse(box.dataset.initial || "{}");
  const foreign = JSON.parse(box.dataset.run || "{}");
  if (initial.phase) { (initial.log || []).forEach(addLog); show(initial, false); }
  else if (foreign.phase) { show({ ...foreign, done: false }, true); }
  else { $("#phase").textContent = box.dataset.label; $("#cancel-run").hidden = true; $("#background").hidden = true; }
  onEvent((kind, data) => {
    if (kind === "progress") { show(data, false); }
    else if (kind === "run") { show({ ...data, done: false }, true); }
    else if (kind === "file") { addLog(data); }
    else if (kind === "state" || kind === "open") { catchUp(); }
  });
  // The run may have moved (or ended) between the page's rendering and the events stream opening:
  // take its state and its whole log from the server.
  async function catchUp() {
    try {
      const s = await api("GET", `/api/indexes/${id}/run`);
      if (s.job) { (s.job.log || []).forEach(addLog); show(s.job, false); }
      else if (s.run) { show({ ...s.run, done: false }, true); }
      else { $("#phase").textContent = (await api("GET", `/api/indexes/${id}`)).label; }
    } catch (e) { /* the next event tries again */ }
  }
  $("#cancel-run").addEventListener("click", async () => {
    try { await api("POST", `/api/indexes/${id}/cancel`); $("#cancel-run").disabled = true; toast("Stopping after the current batch…"); }
    catch (e) { toast(e.message); }
  });
  $("#start-update").addEventListener("click", async () => {
    try { const started = await api("POST", `/api/indexes/${id}/update`); log.innerHTML = ""; seen.clear(); show(started.job, false); }
    catch (e) { toast(e.message); }
  });
}

// -- Search and Context pages -------------------------------------------------------------------------
/** A question form sent with no question says so under its box, rather than reloading the page as it was. */
function needQuestion(form) {
  const q = $("input[name=q]", form);
  const note = document.createElement("p");
  note.className = "error-text"; note.id = "q-error"; note.setAttribute("role", "alert"); note.hidden = true;
  $(".searchbox", form).after(note);
  q.addEventListener("input", () => { note.hidden = true; });
  form.addEventListener("submit", e => {
    if (q.value.trim()) return;
    e.preventDefault(); e.stopImmediatePropagation();
    note.textContent = "Type a question first: what you want to find in the code."; note.hidden = false; q.focus();
  });
}

function setupSearch() {
  needQuestion($("#search-form"));
  const q = $("#q");
  const list = $("#suggestions");
  let timer = null, last = "";
  q.addEventListener("input", () => {
    clearTimeout(timer);
    const word = q.value.trim().split(/\s+/).pop() || "";
    if (!WS || word.length < 2 || word === last) return;
    timer = setTimeout(async () => {
      last = word;
      try {
        const names = await api("GET", `/api/suggest?ws=${WS}&q=${encodeURIComponent(word)}`);
        const prefix = q.value.trim().split(/\s+/).slice(0, -1).join(" ");
        list.innerHTML = names.map(n => `<option value="${esc(prefix ? prefix + " " + n : n)}">`).join("");
      } catch (e) { list.innerHTML = ""; }
    }, 120);
  });
  $$(".tabs button").forEach(b => b.addEventListener("click", () => {
    $$(".tabs button").forEach(x => x.classList.toggle("on", x === b));
    $("#tab-chunks").hidden = b.dataset.tab !== "chunks";
    $("#tab-files").hidden = b.dataset.tab !== "files";
  }));
  // A snippet whose first lines hold nothing the question matched (a licence header) opens scrolled to
  // the lines that do, as `aintern search` shows them.
  $$("pre.snippet[data-focus-row]").forEach(pre => {
    const row = Number(pre.dataset.focusRow);
    if (row > 0) pre.scrollTop = row * parseFloat(getComputedStyle(pre).lineHeight);
  });
  // Filters left empty stay out of the URL.
  $("#search-form").addEventListener("submit", e => {
    $$("input, select", e.target).forEach(el => { if (el.name && el.value === "" ) el.disabled = true; });
  });
}

// -- Context page ------------------------------------------------------------------------------------
function setupContext() {
  needQuestion($("form.search"));
  const copy = $("#copy");
  if (copy) copy.addEventListener("click", async () => {
    const text = $("#context-text").textContent;
    try { await navigator.clipboard.writeText(text); }
    catch (e) {  // http on another host: no clipboard API; fall back to a selection
      const area = document.createElement("textarea"); area.value = text; document.body.appendChild(area); area.select();
      document.execCommand("copy"); area.remove();
    }
    copy.textContent = "Copied"; setTimeout(() => { copy.textContent = "Copy"; }, 1500);
  });
}

// -- Chat page ---------------------------------------------------------------------------------------
const CITATION = /(^|[\s(`'"\[])((?:[\w.-]+\/)*[\w.-]+\.[A-Za-z0-9]+):(\d+)(?:-(\d+))?/g;

function renderAnswer(text) {
  // Code fences become <pre>; file:line citations become links to the file view; the rest stays text.
  const parts = String(text).split(/```[^\n]*\n?/);
  return parts.map((part, i) => i % 2 ? `<pre><code>${esc(part)}</code></pre>` : linkCitations(esc(part))).join("");
}

function linkCitations(html) {
  return html.replace(CITATION, (all, before, path, start, end) => {
    const lines = end ? `${start}-${end}` : start;
    return `${before}<a class="cite" href="/file?ws=${WS}&path=${encodeURIComponent(path)}&lines=${lines}#L-${start}">${path}:${lines}</a>`;
  });
}

function sourcesHtml(sources) {
  if (!sources || !sources.length) return "";
  const items = sources.map(s => `<li><a href="/file?ws=${WS}&path=${encodeURIComponent(s.path)}&lines=${s.start_line}-${s.end_line}#L-${s.start_line}">${esc(s.path)}:${s.start_line}-${s.end_line}</a> <span class="muted">${Number(s.relevance).toFixed(2)}</span></li>`);
  return `<details class="sources"><summary>${count(sources.length, "source")}</summary><ul>${items.join("")}</ul></details>`;
}

async function* events(response) {
  // Server-sent events from a fetch() body (EventSource cannot POST).
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    let at;
    while ((at = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, at); buffer = buffer.slice(at + 2);
      let kind = "message", data = "";
      for (const line of block.split("\n")) {
        if (line.startsWith("event: ")) kind = line.slice(7);
        else if (line.startsWith("data: ")) data += line.slice(6);
      }
      if (data) yield [kind, JSON.parse(data)];
    }
  }
}

function setupChat() {
  const chat = $("#chat");
  const messages = $("#messages");
  const input = $("#message");
  const send = $("#send"), stop = $("#stop");
  let conversation = chat.dataset.conversation || null;
  let controller = null;
  $$("[data-markdown]").forEach(el => { el.innerHTML = renderAnswer(el.textContent); });
  messages.lastElementChild && messages.lastElementChild.scrollIntoView({ block: "end" });

  function add(role, html) {
    const li = document.createElement("li");
    li.className = `msg ${role}`;
    li.innerHTML = `<div class="body">${html}</div>`;
    messages.appendChild(li);
    li.scrollIntoView({ block: "end" });
    return li;
  }

  async function ask(text) {
    add("user", esc(text));
    const li = add("assistant", '<span class="muted">…</span>');
    const body = $(".body", li);
    send.hidden = true; stop.hidden = false;
    controller = new AbortController();
    let answer = "";
    try {
      const res = await fetch("/api/chat", {
        method: "POST", signal: controller.signal,
        headers: { "Content-Type": "application/json", "X-CSRF-Token": CSRF },
        body: JSON.stringify({ ws: WS, conversation_id: conversation, message: text, rag: $("#rag").checked }),
      });
      if (!res.ok) { const err = await res.json().catch(() => ({})); throw new Error(err.error || res.statusText); }
      for await (const [kind, data] of events(res)) {
        if (kind === "start") {
          if (!conversation) {
            conversation = data.conversation_id;
            const url = new URL(location.href); url.searchParams.set("c", conversation); history.replaceState(null, "", url);
          }
          li.insertAdjacentHTML("beforeend", sourcesHtml(data.sources));
          if (data.notice) li.insertAdjacentHTML("beforeend", `<div class="muted small">${esc(data.notice)}</div>`);
          body.textContent = "";
        } else if (kind === "token") {
          answer += data.text;
          body.innerHTML = renderAnswer(answer);
        } else if (kind === "error") {
          li.insertAdjacentHTML("beforeend", `<div class="error-text">${esc(data.error)}</div>`);
        } else if (kind === "done") {
          body.innerHTML = renderAnswer(data.answer || answer);
          if (!(data.answer || answer).trim()) body.innerHTML = '<span class="muted">(the model gave no answer)</span>';
        }
        li.scrollIntoView({ block: "end" });
      }
    } catch (e) {
      if (e.name === "AbortError") li.insertAdjacentHTML("beforeend", '<div class="muted small">stopped</div>');
      else li.insertAdjacentHTML("beforeend", `<div class="error-text">${esc(e.message)}</div>`);
    } finally {
      send.hidden = false; stop.hidden = true; controller = null;
      refreshList();
    }
  }

  async function refreshList() {
    try {
      const list = await api("GET", `/api/conversations${WS ? "?ws=" + WS : ""}`);
      $("#conversation-list").innerHTML = list.map(c => `<li class="${c.id === conversation ? "on" : ""}" data-id="${c.id}"><a href="/chat?ws=${WS}&c=${c.id}">${esc(c.title)}</a>` +
        `<span class="row-actions"><button class="icon" data-rename-chat="${c.id}" title="Rename">✎</button><button class="icon" data-delete-chat="${c.id}" title="Delete">×</button></span></li>`).join("");
    } catch (e) { /* the list stays as it was */ }
  }

  $("#composer").addEventListener("submit", e => {
    e.preventDefault();
    const text = input.value.trim();
    if (!text || controller) return;
    input.value = "";
    $("#preview").textContent = "";
    ask(text);
  });
  input.addEventListener("keydown", e => {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) { e.preventDefault(); $("#composer").requestSubmit(); }
  });
  stop.addEventListener("click", () => controller && controller.abort());
  $("#new-chat").addEventListener("click", () => { location.href = `/chat${WS ? "?ws=" + WS : ""}`; });

  let previewTimer = null;
  input.addEventListener("input", () => {
    clearTimeout(previewTimer);
    const text = input.value.trim();
    if (text.length < 4 || !WS) { $("#preview").textContent = ""; return; }
    previewTimer = setTimeout(async () => {
      try {
        const p = await api("GET", `/api/chat/preview?ws=${WS}&rag=${$("#rag").checked ? 1 : 0}&q=${encodeURIComponent(text)}`);
        $("#preview").textContent = p.is_enabled
          ? `Context: ${count(p.sources.length, "chunk")} above relevance ${p.min_relevance} from ${count(new Set(p.sources.map(s => s.path)).size, "file")}, ${count(p.estimated_tokens, "token")}`
          : `No code context: ${p.reason}`;
      } catch (e) { $("#preview").textContent = ""; }
    }, 400);
  });

  document.addEventListener("click", async e => {
    const rename = e.target.closest("[data-rename-chat]"), del = e.target.closest("[data-delete-chat]");
    try {
      if (rename) {
        const li = rename.closest("li");
        const title = prompt("Rename the conversation", $("a", li).textContent);
        if (title && title.trim()) { await api("POST", `/api/conversations/${rename.dataset.renameChat}/rename`, { title }); refreshList(); }
      } else if (del) {
        if (!confirm("Delete this conversation?")) return;
        await api("DELETE", `/api/conversations/${del.dataset.deleteChat}`);
        if (del.dataset.deleteChat === conversation) { location.href = `/chat${WS ? "?ws=" + WS : ""}`; return; }
        refreshList();
      }
    } catch (err) { toast(err.message); }
  });

  $("#model-change").addEventListener("click", () => { $("#model-form").hidden = !$("#model-form").hidden; });
  $("#model-form").addEventListener("submit", async e => {
    e.preventDefault();
    const f = new FormData(e.target);
    const kind = f.get("kind");
    const values = kind === "endpoint" ? { llm_endpoint: f.get("endpoint"), llm_model: f.get("model") || "" }
      : kind === "gguf" ? { llm_endpoint: "", llm_model: f.get("gguf") } : { llm_endpoint: "", llm_model: "" };
    try { await api("POST", "/api/settings", { scope: "user", values }); location.reload(); }
    catch (err) { $("#model-error").textContent = err.message; }
  });
}

// -- Settings page -----------------------------------------------------------------------------------
function setupSettings() {
  const form = $("#settings-form");
  // Where each setting comes from now (a save moves it from "default" to the file it went to), as a reload shows it.
  async function showOrigins() {
    try {
      const listed = await api("GET", `/api/settings${WS ? "?ws=" + WS : ""}`);
      for (const s of listed.settings) {
        const card = $(`.setting[data-key="${s.key}"]`, form);
        if (card) { card.dataset.origin = s.origin; $(".origin", card).textContent = s.origin; }
      }
    } catch (e) { /* a reload shows them */ }
  }
  const initial = new Map();
  const valueOf = el => el.type === "checkbox" ? (el.checked ? "true" : "false") : el.tagName === "TEXTAREA" ? el.value.split("\n").map(s => s.trim()).filter(Boolean).join(",") : el.value;
  $$(".setting [name]", form).forEach(el => initial.set(el.name, valueOf(el)));
  form.addEventListener("submit", async e => {
    e.preventDefault();
    $$("[data-error-for]").forEach(p => { p.textContent = ""; });
    const values = {};
    $$(".setting [name]", form).forEach(el => { const v = valueOf(el); if (v !== initial.get(el.name)) values[el.name] = v; });
    if (!Object.keys(values).length) { $("#settings-status").textContent = "Nothing changed"; return; }
    const scope = new FormData(form).get("scope");
    try {
      const saved = await api("POST", `/api/settings${WS ? "?ws=" + WS : ""}`, { scope, values });
      $("#settings-status").textContent = `Saved ${saved.saved.join(", ")} to ${saved.file}` + (saved.to_apply ? `. ${saved.to_apply}.` : "");
      Object.entries(values).forEach(([k, v]) => initial.set(k, v));  // (the status line says so: no toast over it)
      refreshBadge();  // (a chunk size the index was not built with: "needs re-index" now, not at a reload)
      showOrigins();
    } catch (err) {
      const errors = (err.data && err.data.errors) || {};
      Object.entries(errors).forEach(([k, msg]) => { const p = $(`[data-error-for="${k}"]`); if (p) p.textContent = msg; });
      $("#settings-status").textContent = err.message;
    }
  });
}

decorate();
refreshBadge();
connectEvents();
({ indexes: setupIndexes, progress: setupProgress, search: setupSearch, context: setupContext, chat: setupChat, settings: setupSettings }[PAGE] || (() => {}))();
