// The console's session page: page.js renders the conversation from the
// relayed stream and dispatches each event it applies as "session-event";
// this script keeps the rest of the page in step with them: the Stop
// form, the token totals, and the tool calls that wait for an answer
// (built as the server builds them, posting the same console forms).
(function () {
  'use strict';

  const root = document.getElementById('session');
  if (!root) return;
  // The server rendered the page at this seq; the stream replays the
  // history before it, which the page shows already.
  const renderedSeq = Number(root.dataset.lastSeq || '0');
  const conn = document.getElementById('conn');
  const stop = document.getElementById('stop');
  const pending = document.getElementById('pending');
  const list = document.getElementById('pending-calls');
  const none = document.getElementById('no-pending');
  const usageIn = document.getElementById('usage-in');
  const usageOut = document.getElementById('usage-out');
  const csrfField = document.querySelector('input[name="csrf"]');

  // The controls are a column beside the conversation on a wide screen,
  // open; on a narrow one they fold under their summary (the server opens
  // them when the budget paused the turn).
  const controls = document.getElementById('controls');
  if (controls) {
    const wide = window.matchMedia('(min-width: 60rem)');
    const keepOpen = controls.open;
    const fit = function () { controls.open = wide.matches || keepOpen; };
    fit();
    wide.addEventListener('change', fit);
  }

  // Tool calls seen on the stream, by tool_use_id.
  const calls = new Map();

  if (conn) {
    conn.dataset.state = 'connecting';
    conn.textContent = 'connecting…';
  }

  function el(tag, attrs, text) {
    const e = document.createElement(tag);
    for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }

  function pretty(v) {
    try { return JSON.stringify(v, null, 2); } catch (e) { return String(v); }
  }

  function hidden(node) {
    return el('input', { type: 'hidden', name: node.name, value: node.value });
  }

  function csrf() {
    return hidden({ name: 'csrf', value: csrfField ? csrfField.value : '' });
  }

  function find(id) {
    for (const li of list.querySelectorAll('li.call')) {
      if (li.dataset.toolUseId === id) return li;
    }
    return null;
  }

  // The section shows only while a call waits.
  function syncEmpty() {
    const waiting = list.querySelector('li.call') !== null;
    if (none) none.hidden = waiting;
    if (pending) pending.hidden = !waiting;
  }

  // callItem is the markup of templates/session.html's "pendingCall".
  function callItem(id) {
    const c = calls.get(id) || { name: '?', input: undefined, custom: false };
    const li = el('li', { class: 'call', 'data-tool-use-id': id });
    const p = el('p');
    p.append(el('strong', null, (c.custom ? 'Custom tool ' : 'Tool ') + (c.name || '?')), ' ', el('code', null, id));
    li.append(p);
    if (c.input !== undefined) {
      const d = el('details');
      d.append(el('summary', null, 'Input'), el('pre', null, pretty(c.input)));
      li.append(d);
    }
    const f = el('form', { method: 'post' });
    f.append(csrf(), hidden({ name: 'tool_use_id', value: id }));
    if (c.custom) {
      f.className = 'tool-result';
      f.action = pending.dataset.result;
      const box = el('textarea', { id: 'output-' + id, name: 'output', rows: '3' });
      const check = el('label', { class: 'check' });
      check.append(el('input', { type: 'checkbox', name: 'is_error', value: 'true' }), ' The tool failed');
      f.append(el('label', { for: box.id }, 'Result'), box, check, el('button', { type: 'submit' }, 'Send result'));
    } else {
      f.className = 'confirm';
      f.action = pending.dataset.confirm;
      const note = el('input', { id: 'message-' + id, name: 'message' });
      f.append(el('label', { for: note.id }, 'Note for the agent (optional)'), note,
        el('button', { type: 'submit', name: 'result', value: 'allow' }, 'Allow'),
        el('button', { type: 'submit', name: 'result', value: 'deny', class: 'secondary' }, 'Deny'));
    }
    li.append(f);
    return li;
  }

  function answered(id) {
    const li = find(id);
    if (li) li.remove();
    syncEmpty();
  }

  root.addEventListener('session-event', function (e) {
    const ev = e.detail;
    const b = ev.body || {};
    switch (ev.type) {
      case 'agent.tool_use':
      case 'agent.custom_tool_use':
        calls.set(b.tool_use_id, { name: b.name, input: b.input, custom: ev.type === 'agent.custom_tool_use' });
        return;
      case 'session.status_changed':
        if (stop) stop.hidden = !(b.status === 'running' || b.status === 'queued');
        return;
    }
    if (ev.seq <= renderedSeq) return; // the server's rendering has it
    switch (ev.type) {
      case 'turn.completed': {
        const u = b.usage || {};
        if (usageIn) usageIn.textContent = String(Number(usageIn.textContent) + (u.input_tokens || 0));
        if (usageOut) usageOut.textContent = String(Number(usageOut.textContent) + (u.output_tokens || 0));
        if (!pending || !list) return;
        for (const id of b.pending_tool_use_ids || []) {
          if (!find(id)) list.append(callItem(id));
        }
        syncEmpty();
        return;
      }
      case 'agent.tool_result':
      case 'user.tool_confirmation':
      case 'user.custom_tool_result':
        // A confirmation's call stays open until its result; either way
        // the person has answered.
        if (list) answered(b.tool_use_id);
        return;
    }
  });
})();
