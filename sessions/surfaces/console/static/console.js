// The console's script. Every page works without it; it adds three
// things: times shown in the browser's zone, copy buttons, and on the
// sessions page statuses kept live over the console's event stream (SSE,
// GET events).
//
// Whatever the stream says goes into the page as text, never as HTML.
(function () {
  'use strict';

  function localTimes(root) {
    for (const el of root.querySelectorAll('time[datetime]')) {
      const d = new Date(el.getAttribute('datetime'));
      if (isNaN(d)) continue;
      el.title = el.textContent;
      el.textContent = d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
    }
  }

  localTimes(document);

  // Copy buttons: shown only where the clipboard can be written; the
  // text stays selectable either way.
  for (const button of document.querySelectorAll('button[data-copy]')) {
    const source = document.getElementById(button.dataset.copy);
    if (!source || !navigator.clipboard) continue;
    button.hidden = false;
    button.addEventListener('click', async () => {
      try {
        await navigator.clipboard.writeText(source.textContent);
        button.textContent = 'Copied';
      } catch (e) {
        button.textContent = 'Copy failed: select the text';
      }
    });
  }

  const table = document.getElementById('sessions');
  const live = document.getElementById('live');
  if (!table || !live || !window.EventSource) return;

  function setLive(state, label) {
    live.dataset.state = state;
    live.textContent = label;
  }

  function setStatus(id, status) {
    for (const row of table.tBodies[0].rows) {
      if (row.dataset.session !== id) continue;
      const cell = row.querySelector('.status');
      cell.dataset.status = status;
      cell.textContent = status;
      cell.classList.add('changed');
      return;
    }
    // A session this page does not show: a new one may belong on it, so
    // the rows are read again (with the page's filters).
    reloadRows();
  }

  // The table and the empty state are both in the page; one shows.
  function showRows() {
    const has = table.tBodies[0].rows.length > 0;
    const box = document.getElementById('sessions-box');
    const none = document.getElementById('no-rows');
    if (box) box.hidden = !has;
    if (none) none.hidden = has;
  }

  // Reading the page again is how a gap is closed: the stream replays
  // nothing, so after a lag or a reconnect the rows are fetched afresh.
  // Changes arriving during a read are not lost: one more read follows.
  let reloading = false;
  let again = false;
  async function reloadRows() {
    if (reloading) {
      again = true;
      return;
    }
    reloading = true;
    again = false;
    try {
      const res = await fetch(location.href, { credentials: 'same-origin', headers: { Accept: 'text/html' } });
      if (!res.ok || res.redirected) {
        setLive('closed', 'Could not refresh the rows: reload the page.');
        return;
      }
      const doc = new DOMParser().parseFromString(await res.text(), 'text/html');
      const fresh = doc.getElementById('sessions');
      if (fresh) {
        table.tBodies[0].replaceWith(document.adoptNode(fresh.tBodies[0]));
        localTimes(table);
        showRows();
      }
    } catch (e) {
      setLive('closed', 'Could not refresh the rows: reload the page.');
    } finally {
      reloading = false;
    }
    if (again) reloadRows();
  }

  let opened = false;
  const source = new EventSource(new URL('events', location.href));
  source.addEventListener('open', function () {
    if (opened) reloadRows(); // changes made while disconnected were not sent
    opened = true;
    setLive('live', 'Statuses update live.');
  });
  source.addEventListener('status', function (ev) {
    let data;
    try { data = JSON.parse(ev.data); } catch (e) { return; }
    if (typeof data.session === 'string' && typeof data.status === 'string') {
      setStatus(data.session, data.status);
    }
  });
  source.addEventListener('lag', reloadRows);
  source.addEventListener('signed-out', function () {
    source.close();
    setLive('closed', 'Signed out: statuses no longer update.');
  });
  source.addEventListener('error', function () {
    if (source.readyState === EventSource.CLOSED) {
      setLive('closed', 'Live updates stopped: reload the page.');
    } else {
      setLive('connecting', 'Reconnecting…');
    }
  });
})();
