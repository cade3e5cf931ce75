// a2a dashboard page. Live through one EventSource (/events): a snapshot, then changes.
// Rule: store data is untrusted and reaches the DOM only through textContent (via el()/put());
// this file never assigns markup from data (no innerHTML, outerHTML, insertAdjacentHTML or
// document.write; tests/e2e/ui.test.ts checks). Agent-written text carries the "agent" class.
"use strict";
(() => {
  // The session's action token, sent with each POST (the session itself is an HttpOnly cookie).
  const TOKEN = document.querySelector('meta[name="a2a-token"]').content;
  const $ = (id) => document.getElementById(id);
  const q = (path, params = {}) => path + "?" + new URLSearchParams(params);
  // Names in code-unit order, as the CLI lists them (lib/fs/paths.ts byName).
  const byName = (a, b) => (a < b ? -1 : a > b ? 1 : 0);

  // ---- rendering helpers -------------------------------------------------------------------
  // Control characters (ANSI escapes, NULs, bells) shown in caret notation (ESC is ^[); bidi
  // overrides shown as codes, so agent text cannot reorder what is around it.
  const CTRL = /[\u0000-\u0008\u000b-\u001f\u007f]/g;
  const BIDI = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
  const visible = (s) =>
    String(s ?? "")
      .replace(CTRL, (c) => (c === "\u007f" ? "^?" : "^" + String.fromCharCode(0x40 + c.charCodeAt(0))))
      .replace(BIDI, (c) => "\u27e8U+" + c.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0") + "\u27e9");
  const oneLine = (s, n = 160) => {
    const t = visible(String(s ?? "").replace(/[\r\n\t]+/g, " ")).trim();
    return t.length > n ? t.slice(0, n - 1) + "…" : t;
  };
  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  const agentEl = (tag, text, extra = "") => {
    const e = el(tag, "agent" + (extra ? " " + extra : ""), text);
    e.title = "written by an agent";
    return e;
  };
  // The files a message hands over (attachments): each name (the sender's words: inert text),
  // size and digest, and the command that fetches it.
  function attachmentsEl(list) {
    const box = el("span", "attachments");
    if (list && list.length) box.append(el("span", "sub-line", " attached:"));
    for (const a of list || []) {
      const item = agentEl("span", a.name, "attachment");
      item.dataset.digest = a.digest;
      item.title = `${a.size} bytes, ${a.type}: a2a get ${a.digest} -o FILE`;
      box.append(" ", item, el("span", "sub-line", ` (${a.size} bytes)`));
    }
    return box;
  }
  const put = (e, text) => {
    const t = String(text ?? "");
    if (e.textContent !== t) e.textContent = t;
  };
  const now = () => Date.now() / 1000;
  function age(sec) {
    if (sec == null) return "-";
    const d = Math.max(0, now() - sec);
    if (d < 60) return Math.floor(d) + "s";
    if (d < 3600) return Math.floor(d / 60) + "m";
    if (d < 86400) return Math.floor(d / 3600) + "h";
    return Math.floor(d / 86400) + "d";
  }
  const left = (sec) => (sec == null ? "-" : sec <= now() ? "expired" : age(2 * now() - sec));
  function size(b) {
    if (b < 1024) return b + "B";
    if (b < 1048576) return (b / 1024).toFixed(1) + "K";
    return (b / 1048576).toFixed(1) + "M";
  }
  const clock = (sec) => new Date(sec * 1000).toTimeString().slice(0, 8);
  const lastLine = (s) => {
    const lines = String(s).split("\n").filter((l) => l.trim() !== "");
    return lines.length ? lines[lines.length - 1] : "";
  };
  function toast(text, bad = false) {
    const t = $("toast");
    t.textContent = text;
    t.className = "toast show" + (bad ? " err" : "");
    clearTimeout(toast.timer);
    toast.timer = setTimeout(() => (t.className = "toast"), 4000);
  }

  // ---- state --------------------------------------------------------------------------------
  let config = { read_only: true, as: null, tasks: false, root: "" };
  const slots = new Map(); // name -> { row, tr, cells }
  const agents = new Map(); // name -> row
  const topics = new Map(); // topic -> row
  let board = { available: false, queues: [], leases: [], reservations: [] };
  let crews = []; // every crew's supervisors, one per host (lib/crew/status.ts)
  let paused = false;
  const pending = []; // timeline entries that came in while paused
  let openSlot = null; // the name shown in the detail view
  let openRun = null; // its run's started_at

  // ---- slots --------------------------------------------------------------------------------
  // Every slot is kept in `slots`; only the SHOWN most recently changed ones (that match the
  // filter) have a table row, so a store with 10,000 slots costs the page SHOWN rows of layout.
  const SHOWN = 300;
  let shown = 0;
  function slotCells(tr) {
    const c = {};
    for (const k of ["name", "state", "task", "age", "size", "preview"]) tr.appendChild((c[k] = el("td", k === "size" ? "num" : k === "name" ? "name" : "")));
    c.stateBadge = c.state.appendChild(el("span", "state"));
    return c;
  }
  function fillSlot(s) {
    const c = s.cells;
    const r = s.row;
    s.tr.dataset.name = r.name;
    s.tr.dataset.state = r.state;
    s.tr.dataset.version = String(r.version);
    s.tr.dataset.chunks = String(r.chunks);
    put(c.name, r.name);
    c.stateBadge.className = "state " + r.state;
    put(c.stateBadge, r.state === "running" && r.chunks ? `running (${r.chunks})` : r.state);
    c.task.replaceChildren(r.task ? agentEl("span", oneLine(r.task, 60)) : "");
    put(c.age, age(r.updated_at));
    put(c.size, r.state === "done" ? size(r.size) : "-");
    const text = r.state === "running" ? lastLine(r.tail) : r.preview;
    c.preview.replaceChildren(text ? agentEl("span", oneLine(text, 120), r.state === "running" ? "stream" : "") : "");
  }
  function matches(r) {
    const f = $("slot-filter").value.trim().toLowerCase();
    return !f || r.name.toLowerCase().includes(f) || r.task.toLowerCase().includes(f);
  }
  function makeRow(s) {
    s.tr = el("tr");
    s.cells = slotCells(s.tr);
    s.tr.addEventListener("click", () => openDetail(s.row.name));
    fillSlot(s);
    shown++;
    return s.tr;
  }
  function dropRow(s) {
    s.tr.remove();
    s.tr = s.cells = null;
    shown--;
  }
  // Rebuilds the table: the SHOWN newest matching slots.
  function renderSlots() {
    for (const s of slots.values()) if (s.tr) dropRow(s);
    const list = [...slots.values()].filter((s) => matches(s.row)).sort((a, b) => b.row.updated_at - a.row.updated_at || byName(a.row.name, b.row.name));
    const frag = document.createDocumentFragment();
    for (const s of list.slice(0, SHOWN)) frag.append(makeRow(s));
    $("slots").replaceChildren(frag);
  }
  // A changed slot goes to the top (it is the newest); the oldest row beyond SHOWN goes.
  function upsertSlot(r) {
    let s = slots.get(r.name);
    if (!s) slots.set(r.name, (s = { row: r, tr: null, cells: null }));
    const moved = s.row.updated_at !== r.updated_at || !s.tr;
    s.row = r;
    if (!matches(r)) {
      if (s.tr) dropRow(s);
      return s;
    }
    if (s.tr) fillSlot(s);
    else makeRow(s);
    const tb = $("slots");
    if (moved && tb.firstChild !== s.tr) tb.prepend(s.tr);
    while (shown > SHOWN) {
      const last = slots.get(tb.lastElementChild.dataset.name);
      if (last && last.tr) dropRow(last);
      else tb.lastElementChild.remove();
    }
    return s;
  }
  function removeSlot(name) {
    const s = slots.get(name);
    if (!s) return;
    if (s.tr) dropRow(s);
    slots.delete(name);
  }
  function slotsChanged() {
    $("slots-empty").hidden = slots.size > 0;
    let running = 0;
    for (const s of slots.values()) if (s.row.state === "running") running++;
    const more = slots.size > shown && shown === SHOWN ? ` · newest ${SHOWN} shown, filter to find the rest` : "";
    put($("slots-count"), slots.size ? `${slots.size} · ${running} running${more}` : "");
    summary();
  }

  // ---- detail view ---------------------------------------------------------------------------
  function pretty(text) {
    const t = text.trim();
    if (t.length < 2 || !"[{".includes(t[0])) return text;
    try {
      return JSON.stringify(JSON.parse(t), null, 2);
    } catch {
      return text;
    }
  }
  // The conversation a message of `agent`'s inbox is in: its inbox's messages and those it sent.
  // The search box: rows best first, each snippet's marked words («…») as <mark> elements built
  // from text, never markup.
  async function runSearch(query) {
    const list = $("search-results");
    if (!query.trim()) {
      list.replaceChildren();
      return put($("search-note"), "");
    }
    const res = await fetch(q("/api/search", { q: query }));
    const d = await res.json().catch(() => ({ error: res.statusText }));
    list.replaceChildren();
    if (!res.ok) return put($("search-note"), d.error || "the search failed");
    put($("search-note"), `${d.rows.length ? d.rows.length : "nothing"} found${d.as ? ` (mail as ${d.as})` : " in topics, slots and tasks (start a2a ui --as NAME to search mail too)"}`);
    for (const r of d.rows) {
      const li = el("li");
      li.dataset.kind = r.kind;
      li.dataset.id = r.id;
      li.append(el("span", "sub-line", `${r.kind} ${r.id}${r.author ? " by " + r.author : ""} · ${age(r.time)} ago: `));
      const text = agentEl("span", "", "snippet");
      for (const [i, part] of String(r.snippet).split(/[«»]/).entries()) text.append(i % 2 ? el("mark", "", part) : document.createTextNode(visible(part)));
      li.append(text);
      list.append(li);
    }
  }
  $("search-form").addEventListener("submit", (e) => {
    e.preventDefault();
    runSearch($("search-box").value).catch((err) => toast(String(err), true));
  });

  async function openThread(agent, id) {
    const res = await fetch(q("/api/thread", { agent, id }));
    const d = await res.json().catch(() => ({ error: res.statusText }));
    if (!res.ok) return toast(d.error || "could not read the thread of " + id, true);
    put($("thread-title"), `Thread ${d.thread}`);
    put($("thread-note"), `${d.messages.length} message${d.messages.length === 1 ? "" : "s"} ${agent} can see: its inbox and what it sent, oldest first. Nothing is marked read.`);
    const list = $("thread-list");
    list.replaceChildren();
    for (const m of d.messages) {
      const li = el("li", m.id === id ? "this" : "");
      li.dataset.id = m.id;
      li.dataset.state = m.state;
      if (m.human) li.dataset.human = "true";
      const head = `${fromShown(m)} (${m.user}) to ${m.to} · ${m.state} · ${clock(m.sent_at)} (${age(m.sent_at)} ago)` + (m.reply_to ? ` · in reply to ${m.reply_to}` : "");
      li.append(el("div", "sub-line", head), agentEl("pre", visible(m.body) + (m.truncated ? "\n(cut here: a2a thread " + m.id + " --as " + agent + " shows it whole)" : ""), "full"), attachmentsEl(m.attachments));
      list.append(li);
    }
    if (!$("thread").open) $("thread").showModal();
  }
  $("thread-close").addEventListener("click", () => $("thread").close());

  async function openDetail(name) {
    const res = await fetch(q("/api/slot", { name }));
    const d = await res.json().catch(() => ({ error: res.statusText }));
    if (!res.ok) return toast(d.error || "could not read " + name, true);
    const r = d.record;
    openSlot = r.name;
    openRun = r.started_at;
    put($("detail-name"), r.name);
    $("detail-state").className = "state " + r.state;
    put($("detail-state"), r.state);
    const meta = $("detail-meta");
    meta.replaceChildren();
    const add = (k, v, fromAgent = false) => {
      meta.append(el("dt", "", k));
      const dd = el("dd");
      dd.append(fromAgent ? agentEl("span", visible(v)) : String(v));
      meta.append(dd);
    };
    add("task", r.task || "-", !!r.task);
    add("version", r.version);
    add("started", `${clock(r.started_at)} (${age(r.started_at)} ago)`);
    if (r.published_at) add("published", `${clock(r.published_at)} (${age(r.published_at)} ago)`);
    add("writer", `${r.host} pid ${r.pid}`);
    if (r.state === "done") add("size", `${size(r.size)} (${r.size} bytes)`);
    const result = $("detail-result");
    $("detail-result-h").hidden = result.hidden = r.state !== "done";
    put(result, r.state === "done" ? visible(pretty(r.result ?? "")) : "");
    put($("detail-stream"), (d.skipped ? `(${d.skipped} earlier chunks not shown)\n` : "") + visible(d.chunks.join("")) + (d.chunk_error ? "\n" + d.chunk_error : ""));
    $("detail-stream").dataset.chunks = String(d.skipped + d.chunks.length);
    $("detail-stream-h").hidden = $("detail-stream").hidden = r.chunks === 0 && r.state === "done";
    $("detail-clear").disabled = config.read_only;
    if (!$("detail").open) $("detail").showModal();
  }
  function onChunk(c) {
    if (c.name !== openSlot || c.started_at !== openRun || !$("detail").open) return;
    const pre = $("detail-stream");
    // The detail's own read may already hold this chunk (it raced the event): show each once.
    if (c.n <= Number(pre.dataset.chunks || 0)) return;
    pre.append(document.createTextNode(visible(c.text)));
    pre.dataset.chunks = String(c.n);
    pre.scrollTop = pre.scrollHeight;
  }
  $("detail-close").addEventListener("click", () => {
    $("detail").close();
  });
  $("detail").addEventListener("close", () => (openSlot = null));
  $("detail-clear").addEventListener("click", async () => {
    const name = openSlot;
    const ok = await confirmAction(`Clear slot ${name}?`, "Its record and streamed chunks are removed; anyone waiting on it keeps waiting for the next publish.", `a2a clear ${name}`);
    if (!ok) return;
    try {
      const r = await post("/api/clear", { name });
      toast(r.cleared ? `cleared ${name}` : `${name} was already gone`);
      $("detail").close();
    } catch (e) {
      toast(e.message, true);
    }
  });

  // ---- actions -------------------------------------------------------------------------------
  async function post(path, body) {
    const res = await fetch(path, { method: "POST", headers: { "Content-Type": "application/json", "X-A2A-Token": TOKEN }, body: JSON.stringify(body) });
    const j = await res.json().catch(() => ({ error: res.status + " " + res.statusText }));
    if (!res.ok) throw new Error(j.error || "failed");
    return j;
  }
  function confirmAction(title, text, cmd) {
    const d = $("confirm");
    put($("confirm-title"), title);
    put($("confirm-text"), text);
    put($("confirm-cmd"), cmd);
    d.showModal();
    return new Promise((resolve) => {
      const done = (v) => {
        $("confirm-yes").onclick = $("confirm-no").onclick = d.onclose = null;
        if (d.open) d.close();
        resolve(v);
      };
      $("confirm-yes").onclick = () => done(true);
      $("confirm-no").onclick = () => done(false);
      d.onclose = () => done(false);
    });
  }
  const shq = (s) => (/^[A-Za-z0-9._\/-]+$/.test(s) ? s : "'" + s.replace(/'/g, "'\\''") + "'");
  function compose(to = "") {
    if (config.read_only) return toast("read-only dashboard: sending is off", true);
    if (!config.as) return toast("sending needs a name: restart with a2a ui --as NAME", true);
    put($("send-as"), `Sent as ${config.as}. The recipient sees it as mail from ${config.as}.`);
    $("send-to").value = to;
    $("send-dialog").showModal();
    (to ? $("send-body") : $("send-to")).focus();
  }
  $("compose").addEventListener("click", () => compose());
  $("send-cancel").addEventListener("click", () => $("send-dialog").close());
  $("send-go").addEventListener("click", async () => {
    const to = $("send-to").value.trim();
    const body = $("send-body").value;
    if (!to || !body) return toast("a recipient and a message, please", true);
    const preview = body.length > 40 ? body.slice(0, 39) + "…" : body;
    if (!(await confirmAction(`Send to ${to}?`, `${body.length} characters as ${config.as}.`, `a2a send ${shq(to)} ${shq(preview)} --as ${config.as}`))) return;
    try {
      const r = await post("/api/send", { to, body });
      toast(`sent ${r.id} to ${r.to}`);
      $("send-body").value = "";
      $("send-dialog").close();
    } catch (e) {
      toast(e.message, true);
    }
  });

  // The box to write to a session as the person at this page (lib/mail/human.ts): no --as, no
  // confirmation (the words are typed here, to one session the row names); refused read-only.
  let writeTo = "";
  function write(to) {
    if (config.read_only) return toast("read-only dashboard: writing is off", true);
    writeTo = to;
    put($("write-title"), `Write to ${to}`);
    put($("write-note"), `As you, the person at this dashboard: ${to} gets it marked as your own words (a2a inbox shows @human), it wakes the session like any mail, and its policy cannot hold it back. Only to a session of yours.`);
    $("write-dialog").showModal();
    $("write-body").focus();
  }
  const writeButton = (name) => {
    const b = el("button", "small write-open", "Write…");
    b.title = "write to " + name + " as yourself";
    b.disabled = config.read_only;
    b.addEventListener("click", () => write(name));
    return b;
  };
  $("write-cancel").addEventListener("click", () => $("write-dialog").close());
  $("write-go").addEventListener("click", async () => {
    const body = $("write-body").value;
    if (!body) return toast("type a message, please", true);
    try {
      const r = await post("/api/write", { to: writeTo, body });
      toast(`written to ${r.to} (${r.id})`);
      $("write-body").value = "";
      $("write-dialog").close();
    } catch (e) {
      toast(e.message, true);
    }
  });
  const fromShown = (m) => (m.human ? `${m.from} (you, at the dashboard)` : m.from);

  // ---- agents --------------------------------------------------------------------------------
  // The sessions waiting on their user (a permission prompt, a question), longest first: what the
  // person at this page should look at before anything else. Their words are the agent's: inert.
  function renderNeeds(rows) {
    const needs = rows.filter((a) => a.state === "needs-you").sort((a, b) => (a.state_since ?? 0) - (b.state_since ?? 0));
    const ul = $("needs-list");
    ul.replaceChildren();
    for (const a of needs) {
      const li = el("li");
      li.dataset.agent = a.name;
      li.append(el("b", "name", a.name), el("span", "sub-line", ` ${a.host} · ${a.cwd} · for ${age(a.state_since)}: `));
      if (a.state_on) li.append(agentEl("span", oneLine(a.state_on, 160)));
      li.append(" ", writeButton(a.name));
      ul.append(li);
    }
    $("needs-you").hidden = needs.length === 0;
    put($("needs-count"), needs.length ? String(needs.length) : "");
  }

  function renderAgents() {
    const tb = $("agents");
    tb.replaceChildren();
    const names = $("agent-names");
    names.replaceChildren();
    const rows = [...agents.values()].sort((a, b) => Number(b.live) - Number(a.live) || byName(a.name, b.name));
    for (const a of rows) {
      const tr = el("tr");
      tr.dataset.agent = a.name;
      tr.dataset.unread = String(a.unread);
      tr.dataset.held = String(a.held);
      const name = el("td", "name");
      const dot = el("span", "live-dot" + (a.live ? " on" : ""));
      dot.title = a.live ? "live: an a2a mcp session holds this name" : "not running: its inbox keeps mail";
      name.append(dot, a.name);
      if (a.live) name.append(el("div", "sub-line", `${a.host} · ${a.cwd}`));
      tr.dataset.state = a.state;
      const st = el("td", "state " + a.state, a.live ? `${a.state} ${age(a.state_since)}` : "-");
      if (a.state_on) st.append(el("div", "sub-line"), agentEl("span", oneLine(a.state_on, 60)));
      tr.append(name, st, el("td", "num", a.live ? age(a.last_seen) : "-"), el("td", "num" + (a.unread ? " hot" : ""), a.unread), el("td", "num" + (a.held ? " held" : ""), a.held));
      const sum = el("td");
      if (a.summary) sum.append(agentEl("span", oneLine(a.summary, 60)));
      const act = el("td");
      const b = el("button", "small", "Send…");
      b.disabled = config.read_only || !config.as;
      b.addEventListener("click", () => compose(a.name));
      act.append(b, " ", writeButton(a.name));
      tr.append(sum, act);
      tb.append(tr);
      if (a.waiting.length) {
        const w = el("tr", "waiting");
        const td = el("td");
        td.colSpan = 7;
        const ul = el("ul", "msgs");
        for (const m of a.waiting) {
          const li = el("li");
          li.dataset.id = m.id;
          if (m.human) li.dataset.human = "true";
          li.append(el("span", "sub-line", `${m.state} from ${fromShown(m)} (${m.user}) ${age(m.sent_at)} ago: `), agentEl("span", oneLine(m.body, 140)), attachmentsEl(m.attachments));
          // Held mail is never shown in a thread (its sender is refused): no button for it.
          if (m.state !== "held") {
            const t = el("button", "small thread-open", "Thread");
            t.title = "the whole conversation this message is in, as " + a.name + " sees it (nothing is marked read)";
            t.addEventListener("click", () => openThread(a.name, m.id));
            li.append(" ", t);
          }
          ul.append(li);
        }
        td.append(ul);
        w.append(td);
        tb.append(w);
      }
      const o = el("option");
      o.value = a.name;
      names.append(o);
    }
    $("agents-empty").hidden = agents.size > 0;
    renderNeeds(rows);
    const live = rows.filter((a) => a.live).length;
    put($("agents-count"), agents.size ? `${live} live · ${agents.size} with inboxes or presence` : "");
    summary();
  }

  // ---- topics --------------------------------------------------------------------------------
  function renderTopics() {
    const box = $("topics");
    box.replaceChildren();
    const rows = [...topics.values()].sort((a, b) => (b.recent.at(-1)?.sent_at ?? 0) - (a.recent.at(-1)?.sent_at ?? 0));
    for (const t of rows) {
      const div = el("div", "topic");
      div.dataset.topic = t.topic;
      div.append(el("h3", "", `${t.topic}  ·  ${t.last_id} message${t.last_id === 1 ? "" : "s"}`));
      for (const m of [...t.recent].reverse().slice(0, 8)) {
        const row = el("div", "msg");
        row.append(el("span", "mono", m.from || "anonymous"), el("span", "sub-line", age(m.sent_at)), agentEl("span", visible(m.body)));
        row.addEventListener("click", () => row.classList.toggle("open"));
        div.append(row);
      }
      box.append(div);
    }
    $("topics-empty").hidden = topics.size > 0;
    put($("topics-count"), topics.size ? String(topics.size) : "");
    summary();
  }

  // ---- timeline ------------------------------------------------------------------------------
  const TIMELINE_MAX = 300;
  function addTimeline(e) {
    if (paused) {
      pending.push(e);
      put($("pause"), `Resume (${pending.length} new)`);
      return;
    }
    const li = el("li");
    li.dataset.kind = e.kind;
    li.append(el("span", "t", clock(e.at)), el("span", "kind " + e.kind, e.kind), el("span", "mono", e.subject));
    li.append(e.detail ? (e.from_agent ? agentEl("span", oneLine(e.detail, 200)) : el("span", "sub-line", oneLine(e.detail, 200))) : el("span"));
    const ol = $("timeline");
    ol.prepend(li);
    while (ol.childElementCount > TIMELINE_MAX) ol.lastElementChild.remove();
    $("timeline-empty").hidden = true;
  }
  $("pause").addEventListener("click", () => {
    paused = !paused;
    $("pause").setAttribute("aria-pressed", String(paused));
    put($("pause"), paused ? "Resume" : "Pause");
    if (!paused) for (const e of pending.splice(0)) addTimeline(e);
  });

  // ---- tasks and leases ----------------------------------------------------------------------
  const STATES = ["ready", "claimed", "blocked", "done", "dead"];
  function renderBoard() {
    const box = $("board");
    box.replaceChildren();
    let total = 0;
    const by = {};
    for (const qu of board.queues) {
      const sec = el("div", "board-queue");
      sec.dataset.queue = qu.name;
      sec.append(el("h3", "", `queue ${qu.name} · ${qu.tasks.length} task${qu.tasks.length === 1 ? "" : "s"}`));
      const cols = el("div", "columns");
      for (const st of STATES) {
        const col = el("div", "column");
        col.dataset.state = st;
        const tasks = qu.tasks.filter((t) => t.state === st);
        by[st] = (by[st] ?? 0) + tasks.length;
        col.append(el("h4", "", `${st} (${tasks.length})`));
        for (const t of tasks) col.append(taskCard(t));
        cols.append(col);
      }
      total += qu.tasks.length;
      sec.append(cols, graph(qu));
      box.append(sec);
    }
    if (!board.queues.length) {
      box.append(el("p", "empty", board.available ? "No tasks in any queue." : "No task queues in this store yet. When agents use task queues, each appears here as a board: ready, claimed (holder, lease left), blocked, done, dead (with reasons), and its dependency graph."));
    }
    put($("tasks-count"), total ? STATES.map((s) => `${by[s] ?? 0} ${s}`).join(" · ") : "");
    const lt = $("leases");
    lt.replaceChildren();
    for (const l of board.leases) {
      const tr = el("tr");
      tr.dataset.lease = l.name;
      const act = el("td");
      const b = el("button", "small danger", "Release…");
      b.disabled = config.read_only || !config.as;
      b.addEventListener("click", () => act2(`Release lease ${l.name}?`, `${l.holder} holds it; releasing lets someone else take it.`, `a2a lease release ${l.name} --as ${l.holder}`, "/api/lease/release", { name: l.name }));
      act.append(b);
      tr.append(el("td", "name", l.name), el("td", "mono", l.holder), el("td", "num", age(l.acquired_at)), el("td", "num", left(l.expires_at)), act);
      lt.append(tr);
    }
    $("leases-empty").hidden = board.leases.length > 0;
    const rt = $("reservations");
    rt.replaceChildren();
    for (const r of board.reservations) {
      const tr = el("tr");
      tr.dataset.pattern = r.pattern;
      tr.dataset.holder = r.holder;
      const act = el("td");
      const b = el("button", "small danger", "Release…");
      b.disabled = config.read_only || !config.as;
      b.addEventListener("click", () => act2(`Release ${r.pattern}?`, `${r.holder} reserved it${r.reason ? ` (${r.reason})` : ""}; releasing lets other agents edit and commit it.`, `a2a release ${shq(r.pattern)} --as ${r.holder}`, "/api/reservation/release", { repo: r.repo, holder: r.holder, pattern: r.pattern }));
      act.append(b);
      tr.append(el("td", "name", r.pattern), el("td", "mono", r.holder), el("td", "", r.exclusive ? "exclusive" : "shared"), el("td", "num", left(r.expires_at)), el("td", "", r.reason ?? ""), el("td", "mono", r.repo), act);
      rt.append(tr);
    }
    $("reservations-empty").hidden = board.reservations.length > 0;
    summary(by);
  }
  // ---- the crew: every host's workers, each with its session's state, task and output ----------
  // State: the worker's session state (working, idle, waiting, needs-you, gone), its supervisor's
  // word (backoff, gave-up, stopped) beside it; the output: its log slot's last lines.
  const ENDED = ["stopped", "gave-up", "gone"];
  function renderCrew() {
    const tb = $("crew");
    tb.replaceChildren();
    let n = 0;
    for (const c of crews) {
      for (const w of c.workers) {
        n++;
        const tr = el("tr");
        tr.dataset.worker = w.name;
        const s = agents.get(w.name);
        const ended = c.state !== "up" || ENDED.includes(w.state);
        const state = ended ? "gone" : s && s.live ? s.state : w.state === "working" ? "working" : "waiting";
        tr.dataset.state = state;
        tr.dataset.crewState = w.state;
        const st = el("td", "state " + state, `${state} ${age(ended ? w.since : (s?.state_since ?? w.since))}`);
        if (w.state !== state) st.append(el("div", "sub-line", w.state + (w.reason ? ": " : "")), ...(w.reason ? [agentEl("span", oneLine(w.reason, 80))] : []));
        const task = el("td", "mono", w.task ? `${w.task.queue} ${w.task.id} #${w.task.attempt}` : "-");
        task.append(el("div", "sub-line", `${w.done} done · ${w.failed} failed${w.restarts ? ` · ${w.restarts} restarted` : ""}`));
        const log = slots.get(`crew.${c.crew}.${w.name}`)?.row;
        const out = el("td");
        const text = (log?.tail || w.last || "").trimEnd().split("\n").slice(-5).join("\n");
        if (text) out.append(agentEl("pre", visible(text)));
        const act = el("td");
        for (const [label, verb] of [["Stop…", "stop"], ["Restart…", "restart"]]) {
          const b = el("button", "small" + (verb === "stop" ? " danger" : ""), label);
          b.dataset.act = verb;
          b.disabled = config.read_only || ended;
          const what = verb === "stop" ? "its run ends, its task goes back to the queue, and it takes no more tasks" : "its run ends, its task goes back to the queue (not counted as an attempt), and it starts again";
          b.addEventListener("click", () => act2(`${label.slice(0, -1)} ${w.name}?`, `Crew ${c.crew} on ${c.host}: ${what}.`, `a2a crew ${verb} ${w.name}`, `/api/crew/${verb}`, { worker: w.name }));
          act.append(b, " ");
        }
        tr.append(el("td", "name", w.name), el("td", "", `${c.crew} · ${c.host}`), el("td", "", w.agent), st, task, out, act);
        tb.append(tr);
      }
    }
    $("crew-empty").hidden = n > 0;
    put($("crew-count"), n ? `${n} worker${n === 1 ? "" : "s"} · ${new Set(crews.map((c) => c.host)).size} host(s)` : "");
  }
  async function act2(title, text, cmd, path, body) {
    if (!(await confirmAction(title, text, cmd))) return;
    try {
      await post(path, body);
      toast("done: " + cmd);
    } catch (e) {
      toast(e.message, true);
    }
  }
  function taskCard(t) {
    const c = el("div", "card");
    c.dataset.task = t.id;
    c.append(el("div", "id", t.id + (t.attempts > 1 ? ` · attempt ${t.attempts}` : "")), agentEl("div", oneLine(t.title, 90)));
    if (t.state === "claimed") c.append(el("div", "sub-line", `${t.holder ?? "?"} · lease ${left(t.lease_expires_at)} left`));
    if (t.deps.length) c.append(el("div", "sub-line", "after " + t.deps.join(", ")));
    if (t.state === "dead" && t.reason) c.append(agentEl("div", oneLine(t.reason, 120), "why"));
    const btns = el("div", "buttons");
    const mk = (label, path, verb) => {
      const b = el("button", "small", label);
      b.disabled = config.read_only || !config.as;
      b.addEventListener("click", () => act2(`${verb} task ${t.id}?`, `Queue ${t.queue}.`, `a2a task ${verb.toLowerCase()} ${t.id}`, path, { queue: t.queue, id: t.id }));
      btns.append(b);
    };
    if (t.state === "dead") mk("Retry…", "/api/task/retry", "Retry");
    if (t.state === "ready" || t.state === "claimed" || t.state === "blocked") mk("Cancel…", "/api/task/cancel", "Cancel");
    c.append(btns);
    return c;
  }
  // The queue's dependency graph: tasks in columns by depth (longest chain of dependencies
  // before them), an edge from each dependency to its dependent.
  function graph(qu) {
    const NS = "http://www.w3.org/2000/svg";
    const ids = new Map(qu.tasks.map((t) => [t.id, t]));
    const depth = new Map();
    const depthOf = (id, seen = new Set()) => {
      if (depth.has(id)) return depth.get(id);
      if (seen.has(id)) return 0; // a cycle: drawn flat rather than looping
      seen.add(id);
      const t = ids.get(id);
      const d = t ? Math.max(0, ...t.deps.filter((x) => ids.has(x)).map((x) => depthOf(x, seen) + 1)) : 0;
      depth.set(id, d);
      return d;
    };
    qu.tasks.forEach((t) => depthOf(t.id));
    const cols = [];
    for (const t of qu.tasks) (cols[depth.get(t.id)] ??= []).push(t);
    const W = 150, H = 34, GX = 50, GY = 12;
    const pos = new Map();
    cols.forEach((col, i) => col.forEach((t, j) => pos.set(t.id, { x: 10 + i * (W + GX), y: 10 + j * (H + GY) })));
    const svg = document.createElementNS(NS, "svg");
    const width = 20 + cols.length * (W + GX) - GX;
    const height = 20 + Math.max(1, ...cols.map((c) => c.length)) * (H + GY) - GY;
    svg.setAttribute("width", String(width));
    svg.setAttribute("height", String(height));
    svg.setAttribute("role", "img");
    svg.setAttribute("aria-label", `dependency graph of queue ${qu.name}`);
    const COLOR = { ready: "#5fb3f9", claimed: "#e3b341", blocked: "#8892a0", done: "#3fb950", dead: "#f85149" };
    for (const t of qu.tasks) {
      for (const d of t.deps) {
        const a = pos.get(d), b = pos.get(t.id);
        if (!a || !b) continue;
        const line = document.createElementNS(NS, "line");
        line.setAttribute("x1", String(a.x + W));
        line.setAttribute("y1", String(a.y + H / 2));
        line.setAttribute("x2", String(b.x));
        line.setAttribute("y2", String(b.y + H / 2));
        svg.append(line);
      }
    }
    for (const t of qu.tasks) {
      const p = pos.get(t.id);
      const g = document.createElementNS(NS, "g");
      const r = document.createElementNS(NS, "rect");
      for (const [k, v] of [["x", p.x], ["y", p.y], ["width", W], ["height", H], ["rx", 6]]) r.setAttribute(k, String(v));
      r.setAttribute("stroke", COLOR[t.state] ?? "#888");
      const tx = document.createElementNS(NS, "text");
      tx.setAttribute("x", String(p.x + 8));
      tx.setAttribute("y", String(p.y + 21));
      tx.textContent = oneLine(`${t.id} · ${t.state}`, 22);
      const title = document.createElementNS(NS, "title");
      title.textContent = visible(t.title);
      g.append(r, tx, title);
      svg.append(g);
    }
    const box = el("div", "graph");
    box.append(svg);
    return box;
  }

  // ---- summary -------------------------------------------------------------------------------
  let taskCounts = {};
  function summary(by) {
    if (by) taskCounts = by;
    let running = 0, done = 0, unread = 0, held = 0, live = 0;
    for (const s of slots.values()) s.row.state === "running" ? running++ : done++;
    for (const a of agents.values()) {
      unread += a.unread;
      held += a.held;
      if (a.live) live++;
    }
    const stats = [
      ["running", running, running ? "warn" : ""],
      ["done", done, ""],
      ["agents live", live, ""],
      ["unread", unread, unread ? "warn" : ""],
      ["held", held, ""],
      ["topics", topics.size, ""],
      ["tasks ready", taskCounts.ready ?? 0, ""],
      ["tasks dead", taskCounts.dead ?? 0, taskCounts.dead ? "bad" : ""],
      ["leases", board.leases.length, ""],
      ["reserved", board.reservations.length, ""],
    ];
    const box = $("summary");
    if (box.childElementCount !== stats.length) {
      box.replaceChildren(...stats.map(() => {
        const d = el("div", "stat");
        d.append(el("b"), el("span"));
        return d;
      }));
    }
    stats.forEach(([label, n, cls], i) => {
      const d = box.children[i];
      d.className = "stat " + cls;
      d.dataset.stat = label;
      put(d.firstChild, n);
      put(d.lastChild, label);
    });
  }

  // ---- the live feed -------------------------------------------------------------------------
  function setConn(on) {
    const c = $("conn");
    c.className = "conn " + (on ? "on" : "off");
    put(c, on ? "live" : "reconnecting…");
  }
  function onSnapshot(s) {
    for (const x of slots.values()) if (x.tr) dropRow(x);
    slots.clear();
    for (const r of s.slots) slots.set(r.name, { row: r, tr: null, cells: null });
    renderSlots();
    slotsChanged();
    agents.clear();
    for (const a of s.agents) agents.set(a.name, a);
    renderAgents();
    topics.clear();
    for (const t of s.topics) topics.set(t.topic, t);
    renderTopics();
    board = s.board;
    renderBoard();
    crews = s.crews ?? [];
    renderCrew();
    $("timeline").replaceChildren();
    pending.length = 0;
    for (const e of s.timeline) addTimeline(e);
    $("timeline-empty").hidden = s.timeline.length > 0;
    document.body.dataset.ready = "1";
  }
  function connect() {
    const es = new EventSource(q("/events"));
    const on = (type, fn) => es.addEventListener(type, (ev) => fn(JSON.parse(ev.data)));
    es.onopen = () => setConn(true);
    es.onerror = () => setConn(false);
    on("snapshot", onSnapshot);
    on("slot", (r) => {
      upsertSlot(r);
      slotsChanged();
      if (r.name.startsWith("crew.")) renderCrew(); // a worker's log: its last lines
      // The open detail follows a publish or a new run of its slot.
      if (r.name === openSlot && $("detail").open && (r.state !== $("detail-state").textContent || r.started_at !== openRun)) openDetail(r.name);
    });
    on("slot-gone", ({ name }) => {
      removeSlot(name);
      slotsChanged();
      if (openSlot === name && $("detail").open) toast(`${name} was cleared`);
    });
    on("chunk", onChunk);
    on("agent", (a) => {
      agents.set(a.name, a);
      renderAgents();
      if (crews.length) renderCrew();
    });
    on("agents", (rows) => {
      agents.clear();
      for (const a of rows) agents.set(a.name, a);
      renderAgents();
      if (crews.length) renderCrew();
    });
    on("topic", ({ topic, message }) => {
      const t = topics.get(topic) ?? { topic, last_id: 0, recent: [] };
      if (!t.recent.some((m) => m.id === message.id)) t.recent.push(message);
      if (t.recent.length > 20) t.recent.shift();
      t.last_id = Math.max(t.last_id, message.id);
      topics.set(topic, t);
      renderTopics();
    });
    on("crews", (c) => {
      crews = c;
      renderCrew();
    });
    on("board", (b) => {
      board = b;
      renderBoard();
    });
    on("timeline", addTimeline);
  }
  $("slot-filter").addEventListener("input", () => {
    renderSlots();
    slotsChanged();
  });
  // Ages move on without events: refresh the text every few seconds.
  setInterval(() => {
    for (const s of slots.values()) if (s.tr) put(s.cells.age, age(s.row.updated_at));
  }, 5000);

  fetch(q("/api/config"))
    .then((r) => r.json())
    .then((c) => {
      config = c;
      put($("root"), c.root);
      put($("as"), c.as ? "as " + c.as : "");
      const m = $("mode");
      put(m, c.read_only ? "read-only" : "");
      m.className = "pill" + (c.read_only ? " ro" : "");
      $("compose").disabled = c.read_only || !c.as;
      connect();
    })
    .catch(() => setConn(false));
})();
