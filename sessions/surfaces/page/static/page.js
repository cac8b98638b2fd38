// The session page's script: follows the session's log over EventSource
// and steers the session with fetch.
//
// Everything the log says goes into the page as text (textContent), never
// as HTML, so an agent's output cannot script the page. Messages are
// Markdown, rendered by building elements (md): bold, italics, code,
// lists, quotes, headings, and links whose address is http, https or
// mailto; anything else stays text.
//
// Resuming: every logged event has a gap-free seq. The page keeps the
// highest seq it has applied and ignores anything at or below it, so the
// history a reconnect resends is never shown twice. The browser's own
// reconnect sends Last-Event-ID; when the browser gives up (a non-200
// answer, such as a proxy's 502 while the gateway restarts) the page opens
// a new stream with ?after=<last seq>. The stream is read at every level:
// status changes are internal events, and a complete seq sequence lets the
// page notice a hole instead of showing past it.
//
// Hosting: the element with data-session (the body of /sessions/{id}) names
// the session. A page that relays the stream itself (the console, signed in
// by a cookie) sets data-stream to its address, relative to the page; the
// script then needs no token and leaves steering to the page's own forms
// (the #send form is not needed). data-detail="full" also shows each tool call's output folded into
// the call, the person's answers to confirmations and custom tools, and
// each turn's token usage. Every applied event is dispatched on that
// element as a "session-event" CustomEvent, for a page's own script.
(function () {
  'use strict';

  // The event types of docs/api.md#events. EventSource dispatches each SSE
  // "event:" name separately and has no catch-all, so every type is
  // listened for by name.
  const TYPES = [
    'user.message', 'user.interrupt', 'user.tool_confirmation', 'user.custom_tool_result',
    'session.status_changed', 'turn.started', 'turn.completed', 'agent.message',
    'agent.tool_use', 'agent.tool_result', 'agent.custom_tool_use', 'session.compacted',
    'session.error',
  ];
  const MIN_DELAY = 500;
  const MAX_DELAY = 8000;

  const root = document.querySelector('[data-session]');
  const sessionID = root.dataset.session;
  const relay = root.dataset.stream ? new URL(root.dataset.stream, location.href).href : '';
  const full = root.dataset.detail === 'full';
  const token = relay ? '' : new URLSearchParams(location.search).get('token') || '';
  // Relative to the page (…/sessions/{id}), so a deployment under a path
  // prefix works too.
  const base = new URL('../v1/sessions/' + encodeURIComponent(sessionID), location.href).href;

  const logEl = document.getElementById('log');
  const statusEl = document.getElementById('status');
  const reasonEl = document.getElementById('stop-reason');
  const connEl = document.getElementById('conn');
  const form = document.getElementById('send');
  const box = document.getElementById('message');
  const sendButton = document.getElementById('send-button');
  const stopButton = document.getElementById('stop-button');
  const errorEl = document.getElementById('error');

  let lastSeq = 0; // every seq up to this one has been applied
  const logged = new Set(); // ids of applied events, to retire pending bubbles
  let source = null;
  let retryTimer = null;
  let delay = MIN_DELAY;
  let opens = 0;
  let gapAt = -1; // the lastSeq a hole was last seen at, so one is retried once

  function setConn(state, label) {
    connEl.dataset.state = state;
    connEl.textContent = label;
  }

  function setStatus(status, reason) {
    if (!status) return;
    statusEl.dataset.status = status;
    statusEl.textContent = status;
    reasonEl.textContent = reason || '';
    const archived = status === 'archived';
    for (const c of [box, sendButton, stopButton]) if (c) c.disabled = archived;
  }

  function showError(msg) {
    errorEl.textContent = msg;
    errorEl.hidden = !msg;
  }

  function authHeaders(extra) {
    // fetch can send the header, which keeps the token out of access logs.
    return Object.assign({ Authorization: 'Bearer ' + token }, extra || {});
  }

  async function api(method, path, body) {
    const init = { method: method, headers: authHeaders(body ? { 'Content-Type': 'application/json' } : null), cache: 'no-store' };
    if (body) init.body = JSON.stringify(body);
    const resp = await fetch(base + path, init);
    let data = null;
    try { data = await resp.json(); } catch (e) { /* not JSON: a proxy's error page */ }
    if (!resp.ok) {
      const msg = data && data.error && data.error.message ? data.error.message : resp.status + ' ' + resp.statusText;
      const err = new Error(msg);
      err.status = resp.status;
      throw err;
    }
    return data;
  }

  // --- the stream -------------------------------------------------------

  function connect() {
    clearTimeout(retryTimer);
    retryTimer = null;
    if (source) source.close();
    const url = new URL(relay || base + '/events');
    if (!relay) url.searchParams.set('token', token);
    url.searchParams.set('after', String(lastSeq));
    const es = new EventSource(url.href);
    source = es;
    es.onopen = function () {
      if (source !== es) return;
      opens++;
      connEl.dataset.opens = String(opens);
      delay = MIN_DELAY;
      setConn('live', 'live');
    };
    es.onerror = function () {
      if (source !== es) return;
      if (es.readyState === EventSource.CLOSED) {
        // The browser gave up on this stream; take over.
        setConn('reconnecting', 'reconnecting…');
        scheduleRecover();
      } else {
        // The browser reconnects by itself, with Last-Event-ID.
        setConn('reconnecting', 'reconnecting…');
      }
    };
    for (const t of TYPES) es.addEventListener(t, onMessage);
    // A relay ends the stream when its sign-in ends; retrying cannot help.
    es.addEventListener('signed-out', function () {
      if (source !== es) return;
      es.close();
      source = null;
      setConn('closed', 'signed out: reload the page to sign in again');
    });
    es.addEventListener('message', onMessage);
  }

  function scheduleRecover() {
    clearTimeout(retryTimer);
    retryTimer = setTimeout(recover, delay);
    delay = Math.min(delay * 2, MAX_DELAY);
  }

  // recover checks the session before reopening the stream: a 401 or 404
  // will not heal by retrying, and the status may have moved meanwhile.
  async function recover() {
    if (relay) {
      // No token to ask the API with: the relay answers for itself.
      connect();
      return;
    }
    try {
      const s = await api('GET', '');
      setStatus(s.status, s.stop_reason);
    } catch (err) {
      if (err.status === 401 || err.status === 403 || err.status === 404) {
        if (source) source.close();
        source = null;
        setConn('closed', 'disconnected: ' + err.message);
        return;
      }
      scheduleRecover();
      return;
    }
    connect();
  }

  function onMessage(msg) {
    if (msg.target !== source) return;
    let ev;
    try { ev = JSON.parse(msg.data); } catch (e) { return; }
    if (!ev || typeof ev.seq !== 'number') return;
    if (ev.seq <= lastSeq) return; // resent after a reconnect: already shown
    if (ev.seq !== lastSeq + 1) {
      // A hole: never show past it. Reopen from what we have, once per
      // hole; an event type this script does not know would otherwise
      // loop, so a second sighting is accepted.
      if (gapAt !== lastSeq) {
        gapAt = lastSeq;
        connect();
        return;
      }
    }
    lastSeq = ev.seq;
    apply(ev);
  }

  function apply(ev) {
    logged.add(ev.id);
    const pending = logEl.querySelector('[data-pending-id="' + CSS.escape(ev.id) + '"]');
    if (pending) pending.remove();
    const b = ev.body || {};
    if (ev.type === 'session.status_changed') setStatus(b.status, b.stop_reason);
    root.dispatchEvent(new CustomEvent('session-event', { detail: ev }));
    // Internal events (turn boundaries, status changes, interrupts) shape
    // the header, not the conversation; the full view shows a few.
    if (ev.type === 'turn.completed' && b.yield_reason === 'canceled') append(stopped(ev));
    if (ev.level === 'internal' && !(full && FULL_INTERNAL.has(ev.type))) return;
    const node = full ? renderFull(ev) : render(ev);
    if (node) append(node);
  }

  // stopped marks where a turn was interrupted: what follows is a new
  // turn, not the end of that one.
  function stopped(ev) {
    const item = el('article', 'interrupted');
    item.dataset.stoppedAt = String(ev.seq); // not data-seq: it is no event shown
    item.append(el('div', 'text', '⏹ This turn was stopped before it finished (' + utc(ev.created_at) + ').'));
    return item;
  }

  // The internal events the full view shows in the conversation.
  const FULL_INTERNAL = new Set(['turn.completed', 'user.tool_confirmation', 'user.custom_tool_result']);

  // --- rendering --------------------------------------------------------

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }

  function pretty(v) {
    if (typeof v === 'string') return v;
    try { return JSON.stringify(v, null, 2); } catch (e) { return String(v); }
  }

  function folded(summary, content, open) {
    const d = el('details');
    if (open) d.open = true;
    d.append(el('summary', null, summary), el('pre', 'text', content));
    return d;
  }

  const WHO = { human: 'user', agent: 'agent', system: 'system' };

  // utc writes a time as the whole page does: 2026-11-28 07:48 UTC.
  function utc(iso) {
    const d = new Date(iso);
    if (isNaN(d)) return String(iso);
    const s = d.toISOString();
    return s.slice(0, 10) + ' ' + s.slice(11, 16) + ' UTC';
  }

  // --- Markdown ---------------------------------------------------------

  const SAFE_LINK = /^(https?:|mailto:)/i;
  const BLOCK_START = /^\s*(```|~~~|#{1,6}\s|>|[-*+]\s|\d+[.)]\s)/;
  const LIST_ITEM = /^\s*([-*+]|\d+[.)])\s+(.*)$/;

  // md renders Markdown as elements, never as HTML.
  function md(text) {
    const out = el('div', 'text md');
    const lines = String(text == null ? '' : text).replace(/\r\n?/g, '\n').split('\n');
    let i = 0;
    while (i < lines.length) {
      const line = lines[i];
      let m;
      if ((m = /^\s*(```|~~~)/.exec(line))) {
        const fence = m[1];
        const body = [];
        for (i++; i < lines.length && !lines[i].trim().startsWith(fence); i++) body.push(lines[i]);
        i++; // the closing fence
        const pre = el('pre');
        pre.append(el('code', null, body.join('\n')));
        out.append(pre);
      } else if (/^\s*$/.test(line)) {
        i++;
      } else if ((m = /^(#{1,6})\s+(.*)$/.exec(line))) {
        const h = el('h' + Math.min(6, m[1].length + 2));
        inline(h, m[2]);
        out.append(h);
        i++;
      } else if (/^\s*>/.test(line)) {
        const body = [];
        for (; i < lines.length && /^\s*>/.test(lines[i]); i++) body.push(lines[i].replace(/^\s*> ?/, ''));
        const q = el('blockquote');
        q.append(md(body.join('\n')));
        out.append(q);
      } else if ((m = LIST_ITEM.exec(line))) {
        const ordered = /\d/.test(m[1]);
        const list = el(ordered ? 'ol' : 'ul');
        for (; i < lines.length && (m = LIST_ITEM.exec(lines[i])) && /\d/.test(m[1]) === ordered; i++) {
          const li = el('li');
          inline(li, m[2]);
          list.append(li);
        }
        out.append(list);
      } else {
        const p = el('p');
        for (let first = true; i < lines.length && !/^\s*$/.test(lines[i]) && (first || !BLOCK_START.test(lines[i])); i++, first = false) {
          if (!first) p.append(el('br'));
          inline(p, lines[i]);
        }
        out.append(p);
      }
    }
    return out;
  }

  // INLINE finds, in order: a code span, a link, bold, italics (an
  // underscore only outside words, so snake_case stays as it is).
  const INLINE = /(`+)([\s\S]+?)\1|\[([^\]]+)\]\(([^)\s]+)\)|\*\*([^*]+)\*\*|(?<![\w])__([^_]+)__(?![\w])|\*([^*\s][^*]*)\*|(?<![\w])_([^_\s][^_]*)_(?![\w])/g;

  function inline(parent, text) {
    const re = new RegExp(INLINE.source, 'g');
    let last = 0;
    let m;
    while ((m = re.exec(text))) {
      if (m.index > last) parent.append(document.createTextNode(text.slice(last, m.index)));
      if (m[1]) {
        parent.append(el('code', null, m[2]));
      } else if (m[3] !== undefined) {
        if (SAFE_LINK.test(m[4])) {
          const a = el('a');
          a.href = m[4];
          a.rel = 'noopener noreferrer nofollow';
          a.target = '_blank';
          inline(a, m[3]);
          parent.append(a);
        } else {
          parent.append(document.createTextNode(m[0])); // not a link we follow
        }
      } else if (m[5] !== undefined || m[6] !== undefined) {
        const s = el('strong');
        inline(s, m[5] !== undefined ? m[5] : m[6]);
        parent.append(s);
      } else {
        const e = el('em');
        inline(e, m[7] !== undefined ? m[7] : m[8]);
        parent.append(e);
      }
      last = re.lastIndex;
    }
    if (last < text.length) parent.append(document.createTextNode(text.slice(last)));
  }

  function render(ev) {
    const b = ev.body || {};
    const item = el('article', 'event');
    item.dataset.seq = String(ev.seq);
    item.dataset.type = ev.type;
    item.dataset.id = ev.id;
    item.classList.add('level-' + ev.level, 'actor-' + ev.actor);
    const head = el('div', 'head');
    head.append(el('span', 'who', WHO[ev.actor] || ev.actor || ''));
    const when = el('time', 'when');
    if (ev.created_at) {
      when.dateTime = ev.created_at;
      when.textContent = utc(ev.created_at);
      when.title = ev.created_at;
    }
    head.append(when);
    item.append(head);
    switch (ev.type) {
      case 'user.message':
      case 'agent.message':
        item.append(md(b.text));
        for (const a of b.attachments || []) {
          // The files that came with the message: the model got those
          // kept; the others say why not.
          item.append(el('div', 'attachment' + (a.skipped ? ' skipped' : ''),
            '📎 ' + a.name + (a.skipped ? ' — not read: ' + a.skipped : '')));
        }
        break;
      case 'user.interrupt':
        item.append(el('div', 'text', 'asked the agent to stop'));
        break;
      case 'agent.tool_use':
      case 'agent.custom_tool_use':
        item.append(folded('tool ' + (b.name || '?'), pretty(b.input)));
        break;
      case 'agent.tool_result':
        if (b.is_error) item.classList.add('failed');
        item.append(folded(b.is_error ? 'tool error' : 'tool result', b.output));
        break;
      case 'session.error':
        item.classList.add('failed');
        item.append(el('div', 'text', b.message));
        break;
      default:
        item.append(folded(ev.type, pretty(b)));
    }
    return item;
  }

  // renderFull is the full view: a tool call and its output are one
  // folded item, the person's answers and each turn's usage are shown. It
  // returns null when the event joined an item already shown.
  function renderFull(ev) {
    const b = ev.body || {};
    switch (ev.type) {
      case 'agent.tool_use':
      case 'agent.custom_tool_use': {
        const item = render(ev);
        item.dataset.toolUseId = b.tool_use_id || '';
        const d = el('details', 'call');
        d.append(el('summary', null, (ev.type === 'agent.custom_tool_use' ? 'custom tool ' : 'tool ') + (b.name || '?')),
          el('div', 'label', 'input'), el('pre', 'text', pretty(b.input)));
        item.replaceChild(d, item.lastChild);
        return item;
      }
      case 'agent.tool_result': {
        const call = logEl.querySelector('article[data-tool-use-id="' + CSS.escape(b.tool_use_id || '') + '"] details.call');
        if (!call) return render(ev);
        const output = el('pre', 'text output', b.output);
        output.dataset.seq = String(ev.seq);
        call.append(el('div', 'label', b.is_error ? 'error' : 'output'), output);
        if (b.is_error) call.closest('article').classList.add('failed');
        return null;
      }
      case 'user.tool_confirmation': {
        const item = render(ev);
        const what = (b.result === 'allow' ? 'allowed ' : 'denied ') + (b.tool_use_id || '');
        item.replaceChild(el('div', 'text', b.message ? what + ': ' + b.message : what), item.lastChild);
        return item;
      }
      case 'user.custom_tool_result': {
        const item = render(ev);
        if (b.is_error) item.classList.add('failed');
        item.replaceChild(folded('custom tool ' + (b.is_error ? 'error' : 'result') + ' for ' + (b.tool_use_id || ''), b.output, true), item.lastChild);
        return item;
      }
      case 'turn.completed': {
        const item = render(ev);
        const u = b.usage || {};
        item.classList.add('usage');
        item.replaceChild(el('div', 'text', 'turn ended (' + (b.yield_reason || '?') + ') · ' +
          (u.input_tokens || 0) + ' tokens in, ' + (u.output_tokens || 0) + ' out'), item.lastChild);
        return item;
      }
    }
    return render(ev);
  }

  function append(node) {
    // Follow the conversation only if the reader is at its end.
    const atEnd = window.innerHeight + window.scrollY >= document.documentElement.scrollHeight - 40;
    logEl.append(node);
    if (atEnd) node.scrollIntoView({ block: 'end' });
  }

  // A sent input is queued until the harness takes it; show it dimmed
  // until its logged event arrives (same id).
  function addPending(id, text) {
    if (logged.has(id) || logEl.querySelector('[data-pending-id="' + CSS.escape(id) + '"]')) return;
    const item = el('article', 'pending');
    item.dataset.pendingId = id;
    const head = el('div', 'head');
    head.append(el('span', 'who', 'user'), el('span', 'when', 'queued'));
    item.append(head, el('div', 'text', text));
    append(item);
  }

  // --- steering ---------------------------------------------------------

  async function send(events) {
    showError('');
    const out = await api('POST', '/events', { events: events });
    return (out && out.data) || [];
  }

  setStatus(statusEl.dataset.status, reasonEl.textContent);
  if (relay) {
    connect();
    return;
  }

  form.addEventListener('submit', async function (e) {
    e.preventDefault();
    const text = box.value;
    if (!text.trim()) return;
    sendButton.disabled = true;
    try {
      const queued = await send([{ type: 'user.message', text: text }]);
      box.value = '';
      for (const q of queued) addPending(q.id, text);
    } catch (err) {
      showError('not sent: ' + err.message);
    } finally {
      sendButton.disabled = statusEl.dataset.status === 'archived';
      box.focus();
    }
  });

  box.addEventListener('keydown', function (e) {
    if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
      e.preventDefault();
      form.requestSubmit();
    }
  });

  stopButton.addEventListener('click', async function () {
    stopButton.disabled = true;
    try {
      await send([{ type: 'user.interrupt' }]);
    } catch (err) {
      showError('not stopped: ' + err.message);
    } finally {
      stopButton.disabled = statusEl.dataset.status === 'archived';
    }
  });

  async function loadPending() {
    try {
      const out = await api('GET', '/pending');
      for (const q of (out && out.data) || []) {
        if (q.type === 'user.message') addPending(q.id, (q.body && q.body.text) || '');
      }
    } catch (e) { /* best effort: the log shows them once taken */ }
  }

  if (!token) {
    setConn('closed', 'not live: no ?token= in the address');
    box.disabled = sendButton.disabled = stopButton.disabled = true;
    return;
  }
  connect();
  loadPending();
})();
