// The playground page: it polls /api/state and draws each simulated
// platform; the forms post what the person writes. Everything the agent
// wrote is set as text, never as markup.
"use strict";

const EMOJI = { eyes: "👀", white_check_mark: "✅", octagonal_sign: "🛑", x: "❌", hourglass_flowing_sand: "⏳", hourglass: "⌛", warning: "⚠️", "+1": "👍", thumbsup: "👍", rocket: "🚀", tada: "🎉", heart: "❤️", hooray: "🎉", confused: "😕", laugh: "😄" };

let current = null;       // the latest state
let slackThread = "";     // the thread the Slack composer replies in
let gitlabThread = "";    // the discussion the GitLab composer replies in
let linearSession = "";   // the agent session the Linear composer writes to
const drawn = {};         // each section's last drawn JSON

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v;
    else if (k.startsWith("data-")) e.setAttribute(k, v);
    else e[k] = v;
  }
  for (const c of children) if (c !== null && c !== undefined) e.append(c);
  return e;
}

function showError(msg) {
  const box = document.getElementById("error");
  box.textContent = msg || "";
  box.hidden = !msg;
}

async function post(path, body) {
  try {
    const resp = await fetch(path, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
    if (!resp.ok) {
      const j = await resp.json().catch(() => null);
      showError((j && j.error && j.error.message) || resp.status + " " + resp.statusText);
      return false;
    }
    showError("");
    refresh();
    return (await resp.json().catch(() => null)) || {};
  } catch (e) {
    showError("The playground is not answering: is switchboard dev still running? (" + e.message + ")");
    return false;
  }
}

// slackText shows Slack's link syntax <url|label> as "label (url)".
function slackText(s) {
  return s.replace(/<(https?:[^|>]+)\|([^>]+)>/g, "$2 ($1)").replace(/<(https?:[^>]+)>/g, "$1");
}

// rich sets the few inline marks a reply uses (bold, italic, code) as
// elements around text nodes: Slack's *bold*, or Markdown's **bold** and
// *italic*. Underscores stay as they are: tool names hold them.
function rich(text, slack) {
  const out = el("div", { class: "text" });
  const mark = /(`[^`\n]+`)|(\*\*[^*\n]+\*\*)|(\*[^*\s][^*\n]*\*)/g;
  let at = 0;
  for (const m of text.matchAll(mark)) {
    out.append(text.slice(at, m.index));
    const t = m[0];
    if (m[1]) out.append(el("code", {}, t.slice(1, -1)));
    else if (m[2]) out.append(el("strong", {}, t.slice(2, -2)));
    else out.append(el(slack ? "strong" : "em", {}, t.slice(1, -1)));
    at = m.index + t.length;
  }
  out.append(text.slice(at));
  return out;
}

function reactions(list) {
  if (!list || !list.length) return null;
  return el("div", { class: "reactions" }, ...list.map(r => el("span", { class: "reaction", title: ":" + r + ":" }, (EMOJI[r] ? EMOJI[r] + " " : "") + r)));
}

function badge(isBot) {
  if (!isBot) return null;
  if (current && current.model.scripted) return el("span", { class: "badge scripted", title: "the scripted demo model" }, "APP · scripted");
  return el("span", { class: "badge" }, "APP");
}

function slackMessage(m, root) {
  const node = el("div", { class: "msg slack-message" + (m.bot ? " bot" : ""), "data-ts": m.ts },
    el("span", { class: "who" }, m.author), badge(m.bot),
    rich(slackText(m.text), true),
    m.edited ? el("span", { class: "edited" }, "(edited)") : null,
    reactions(m.reactions));
  if (m.buttons && m.buttons.length) {
    node.append(el("div", { class: "buttons" }, ...m.buttons.map(b => {
      const btn = el("button", { type: "button", class: "secondary slack-button", "data-action": b.action_id }, b.text);
      btn.addEventListener("click", () => post("/api/slack/clicks", { ts: m.ts, action_id: b.action_id, value: b.value }));
      return btn;
    })));
  }
  if (root) {
    if (m.replies && m.replies.length) {
      node.append(el("div", { class: "thread" }, ...m.replies.map(r => slackMessage(r, false))));
    }
    if (m.status) {
      // What Slack shows under a thread while the agent works; the
      // :octagonal_sign: reaction on the thread's first message stops it.
      const stop = el("button", { type: "button", class: "secondary stop", title: "React with :octagonal_sign: to the thread's first message" }, "🛑 Stop");
      stop.addEventListener("click", () => post("/api/slack/reactions", { ts: m.ts, name: "octagonal_sign" }));
      node.append(el("p", { class: "status" }, el("span", {}, "switchboard " + m.status), stop));
    }
    const reply = el("button", { type: "button", class: "link reply" }, replyLabel(m.replies ? m.replies.length : 0));
    reply.addEventListener("click", () => setSlackThread(m.ts));
    node.append(reply);
  }
  return node;
}

function replyLabel(n) {
  if (n === 0) return "Reply in thread";
  return n + (n === 1 ? " reply" : " replies") + ": reply in thread";
}

function setSlackThread(ts) {
  slackThread = ts;
  document.getElementById("slack-thread").hidden = !ts;
  document.getElementById("slack-text").focus();
}

function drawSection(name, data, draw) {
  const key = JSON.stringify(data);
  if (drawn[name] === key) return;
  drawn[name] = key;
  draw(data);
}

function fill(id, nodes, emptyText) {
  const box = document.getElementById(id);
  const atEnd = box.scrollTop + box.clientHeight >= box.scrollHeight - 8;
  box.replaceChildren(...(nodes.length ? nodes : [el("p", { class: "empty" }, emptyText)]));
  if (atEnd) box.scrollTop = box.scrollHeight;
}

function drawSlack(s) {
  fill("slack-messages", s.messages.map(m => slackMessage(m, true)), "Nobody has written in #" + s.channel + " yet.");
}

function checkState(c) {
  if (c.status !== "completed") return ["pending", "● " + c.status.replace("_", " ")];
  return [c.conclusion || "neutral", (c.conclusion === "success" ? "✓ " : c.conclusion === "failure" ? "✗ " : "■ ") + (c.conclusion || "completed")];
}

function drawGitHub(g) {
  document.getElementById("github-where").textContent = g.repo + " #" + g.number + " " + g.title;
  document.getElementById("github-text").placeholder = "Comment on the pull request: mention @" + g.app;
  document.getElementById("github-checks").replaceChildren(...g.checks.map(c => {
    const [cls, label] = checkState(c);
    return el("div", { class: "check " + cls }, el("span", { class: "state" }, label), el("span", { class: "name" }, c.name), c.summary ? el("span", { class: "summary" }, c.summary) : null);
  }));
  fill("github-comments", g.comments.map(c => el("div", { class: "msg github-comment" + (c.bot ? " bot" : "") },
    el("span", { class: "who" }, c.author), badge(c.bot), c.review ? el("span", { class: "badge" }, "review") : null,
    rich(c.body, false), c.edited ? el("span", { class: "edited" }, "(edited)") : null, reactions(c.reactions))),
    g.author + " opened this pull request. No comments yet.");
}

// statusState is a commit status as GitLab's pipeline widget shows it.
function statusState(s) {
  const cls = { success: "success", failed: "failure", canceled: "cancelled" }[s.state] || "pending";
  const mark = { success: "✓ ", failed: "✗ ", canceled: "■ " }[s.state] || "● ";
  return [cls, mark + s.state];
}

function setGitLabThread(id) {
  gitlabThread = id;
  document.getElementById("gitlab-thread").hidden = !id;
  document.getElementById("gitlab-text").placeholder = id ? "Reply in the thread" : "Start a thread on the merge request: mention @" + (current ? current.gitlab.app : "sb-agent");
}

function drawGitLab(g) {
  document.getElementById("gitlab-where").textContent = g.project + " !" + g.iid + " " + g.title;
  if (!gitlabThread) setGitLabThread("");
  document.getElementById("gitlab-statuses").replaceChildren(...g.statuses.map(s => {
    const [cls, label] = statusState(s);
    return el("div", { class: "check " + cls }, el("span", { class: "state" }, label), el("span", { class: "name" }, s.name), s.description ? el("span", { class: "summary" }, s.description) : null);
  }));
  fill("gitlab-discussions", g.discussions.map(d => {
    const notes = d.notes.map(n => el("div", { class: "msg gitlab-note" + (n.bot ? " bot" : "") },
      el("span", { class: "who" }, n.author), badge(n.bot), rich(n.body, false), n.edited ? el("span", { class: "edited" }, "(edited)") : null, reactions(n.awards)));
    const reply = el("button", { type: "button", class: "link", "data-discussion": d.id }, "Reply");
    reply.addEventListener("click", () => { setGitLabThread(d.id); document.getElementById("gitlab-text").focus(); });
    return el("div", { class: "discussion", "data-discussion": d.id }, notes[0], notes.length > 1 ? el("div", { class: "thread" }, ...notes.slice(1)) : null, reply);
  }), "carol opened this merge request. No threads yet.");
}

function drawLinear(l) {
  document.getElementById("linear-issues").replaceChildren(...l.issues.map(i => {
    const btn = el("button", { type: "button", class: "delegate", "data-issue": i.id, title: "Delegate " + i.identifier + " to switchboard" }, "Delegate to switchboard");
    btn.addEventListener("click", () => post("/api/linear/delegations", { issue: i.id }));
    return el("li", { "data-identifier": i.identifier }, el("span", { class: "id" }, i.identifier), el("span", { class: "title" }, i.title), i.state ? el("span", { class: "state" }, i.state) : null, btn);
  }));
  if (!linearSession && l.sessions.length) linearSession = l.sessions[0].id;
  fill("linear-sessions", l.sessions.map(s => {
    const node = el("div", { class: "session" + (s.id === linearSession ? " selected" : ""), "data-session": s.id },
      el("h3", {}, s.issue + " · " + s.title),
      ...s.entries.map(e => el("div", { class: "entry " + e.kind }, el("span", { class: "kind" }, e.kind === "prompt" ? "you" : e.kind), rich(e.body, false))));
    node.addEventListener("click", () => { linearSession = s.id; drawn.linear = ""; drawLinearNow(); });
    return node;
  }), "Delegate an issue to see the agent's activity here.");
  const form = document.getElementById("linear-form");
  form.hidden = !linearSession;
  // Before a delegation there is no one to write to: the hint says how to start.
  document.getElementById("linear-hint").hidden = !!linearSession;
  const chosen = l.sessions.find(s => s.id === linearSession);
  document.getElementById("linear-target").textContent = chosen ? chosen.issue + " · " + chosen.title : "";
}

function drawLinearNow() { if (current) drawSection("linear", current.linear, drawLinear); }

function draw(st) {
  current = st;
  const model = document.getElementById("model");
  model.textContent = st.model.scripted ? "model: scripted demo" : "model: " + st.model.name;
  model.classList.toggle("scripted", st.model.scripted);
  document.getElementById("model-note").hidden = !st.model.scripted;
  document.getElementById("console").href = st.console;
  drawSection("slack", st.slack, drawSlack);
  drawSection("github", st.github, drawGitHub);
  drawSection("gitlab", st.gitlab, drawGitLab);
  drawLinearNow();
}

let refreshing = false;
async function refresh() {
  if (refreshing) return;
  refreshing = true;
  try {
    const resp = await fetch("/api/state");
    if (resp.ok) draw(await resp.json());
  } catch (e) {
    showError("The playground is not answering: is switchboard dev still running?");
  } finally {
    refreshing = false;
  }
}

function submitOnEnter(textarea, form) {
  textarea.addEventListener("keydown", e => {
    if (e.key === "Enter" && !e.shiftKey) { e.preventDefault(); form.requestSubmit(); }
  });
}

document.addEventListener("DOMContentLoaded", () => {
  const slackForm = document.getElementById("slack-form"), slackText = document.getElementById("slack-text");
  slackForm.addEventListener("submit", async e => {
    e.preventDefault();
    const sent = await post("/api/slack/messages", { text: slackText.value, thread_ts: slackThread });
    if (!sent) return;
    slackText.value = "";
    // A message the agent does not see says so, rather than no answer.
    const hint = document.getElementById("slack-hint");
    hint.textContent = sent.note || "";
    hint.hidden = !sent.note;
  });
  submitOnEnter(slackText, slackForm);
  document.getElementById("slack-unthread").addEventListener("click", () => setSlackThread(""));

  const ghForm = document.getElementById("github-form"), ghText = document.getElementById("github-text");
  ghForm.addEventListener("submit", async e => {
    e.preventDefault();
    if (await post("/api/github/comments", { body: ghText.value })) ghText.value = "";
  });
  submitOnEnter(ghText, ghForm);

  const glForm = document.getElementById("gitlab-form"), glText = document.getElementById("gitlab-text");
  glForm.addEventListener("submit", async e => {
    e.preventDefault();
    if (await post("/api/gitlab/notes", { body: glText.value, discussion: gitlabThread })) glText.value = "";
  });
  submitOnEnter(glText, glForm);
  document.getElementById("gitlab-unthread").addEventListener("click", () => setGitLabThread(""));

  const lnForm = document.getElementById("linear-form"), lnText = document.getElementById("linear-text");
  lnForm.addEventListener("submit", async e => {
    e.preventDefault();
    if (await post("/api/linear/prompts", { session: linearSession, body: lnText.value })) lnText.value = "";
  });
  submitOnEnter(lnText, lnForm);
  document.getElementById("linear-stop").addEventListener("click", () => post("/api/linear/prompts", { session: linearSession, stop: true }));

  refresh();
  setInterval(refresh, 1000);
});
