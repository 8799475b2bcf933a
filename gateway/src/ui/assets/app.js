// Pointwork's live view: the core of the page (sign-in, the poll, tabs, the confirm dialog,
// helpers) and the Deployments view. views.js adds Decisions, Cluster and Keys; charts.js the
// Routers view and the charts. Every value from the gateway reaches the page as text
// (textContent, never innerHTML); the key lives in this tab's sessionStorage only.
'use strict';

/** The page's shared state and the views' renderers (views.js and charts.js add theirs). */
const PW = (window.PW = {
  key: 'pointwork-key',
  signedIn: false,
  live: null,
  decisions: [],
  lastSeq: 0,
  view: 'deployments',
  views: {},
});
window.__loads = (window.__loads || 0) + 1;

const POLL_MS = 1000;
const KEEP_DECISIONS = 200;
const $ = (id) => document.getElementById(id);

// --- helpers ---------------------------------------------------------------------------------

/** An element: `el('td', {class: 'num', text: '3'}, child…)`; strings become text nodes. */
function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value == null || value === false) continue;
    if (name === 'class') node.className = value;
    else if (name === 'text') node.textContent = value;
    else if (name.startsWith('on')) node.addEventListener(name.slice(2), value);
    else node.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child != null) node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

/** Numbers as the page shows them: "—" for null. */
const fmt = {
  num(v, digits = 0) {
    return v == null || Number.isNaN(v) ? '—' : Number(v).toLocaleString(undefined, {
      minimumFractionDigits: digits, maximumFractionDigits: digits,
    });
  },
  ms(v) { return v == null ? '—' : `${fmt.num(v, v < 10 ? 1 : 0)} ms`; },
  usd(v) {
    if (v == null) return '—';
    const small = v !== 0 && Math.abs(v) < 0.01; // two significant digits: $0.000030
    return `$${Number(v).toFixed(small ? Math.min(8, Math.ceil(-Math.log10(Math.abs(v))) + 1) : 2)}`;
  },
  time(unixMs) { return unixMs == null ? '—' : new Date(unixMs).toLocaleTimeString(); },
  text(v) { return v == null || v === '' ? '—' : String(v); },
  bool(v) { return v == null ? '—' : v ? 'yes' : 'no'; },
};

/** A table whose cells carry their column's name (`data-label`), so it reads as cards on a phone. */
function table(columns, rows, attrs) {
  const head = el('tr', null, columns.map((c) => el('th', { scope: 'col', text: c })));
  const body = el('tbody', null, rows.map((cells) => {
    const tr = el('tr');
    cells.forEach((cell, i) => {
      const td = cell instanceof Node && cell.tagName === 'TD' ? cell : el('td', null, cell == null ? '—' : cell);
      td.dataset.label = columns[i];
      tr.append(td);
    });
    return tr;
  }));
  return el('table', attrs || { class: 'grid' }, el('thead', null, head), body);
}

/** A definition list of [label, value] pairs. */
function facts(pairs) {
  return el('dl', { class: 'facts' }, pairs.flatMap(([k, v]) => [el('dt', { text: k }), el('dd', null, v)]));
}

function badge(text, kind) {
  return el('span', { class: `badge ${kind || ''}`, text });
}

/** An API error: the HTTP status and the gateway's message. */
class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

function errorMessage(data, status) {
  if (data && typeof data === 'object') {
    if (data.error && typeof data.error === 'object' && data.error.message) return data.error.message;
    if (typeof data.error === 'string') return data.error;
    if (data.detail != null) return typeof data.detail === 'string' ? data.detail : JSON.stringify(data.detail);
    if (data.message) return String(data.message);
  }
  if (typeof data === 'string' && data) return data.slice(0, 300);
  return `HTTP ${status}`;
}

/** Calls this gateway with the signed-in key; JSON in and out; throws ApiError. */
async function api(path, options = {}) {
  const headers = { accept: 'application/json' };
  const key = sessionStorage.getItem(PW.key);
  if (key) headers.authorization = `Bearer ${key}`;
  let body;
  if (options.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(options.body);
  }
  const response = await fetch(path, {
    method: options.method || 'GET', headers, body, cache: 'no-store', credentials: 'omit',
  });
  const text = await response.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch { data = text; }
  if (!response.ok) throw new ApiError(response.status, errorMessage(data, response.status));
  return data;
}

/** Asks before an action with the in-page dialog; resolves true on Confirm. */
function confirmAction(text, okLabel = 'Confirm') {
  const dialog = $('confirm');
  $('confirm-text').textContent = text;
  $('confirm-ok').textContent = okLabel;
  return new Promise((resolve) => {
    const finish = (answer) => {
      $('confirm-ok').removeEventListener('click', ok);
      $('confirm-cancel').removeEventListener('click', cancel);
      dialog.removeEventListener('close', cancel);
      if (dialog.open) dialog.close();
      resolve(answer);
    };
    const ok = () => finish(true);
    const cancel = () => finish(false);
    $('confirm-ok').addEventListener('click', ok);
    $('confirm-cancel').addEventListener('click', cancel);
    dialog.addEventListener('close', cancel);
    dialog.showModal();
  });
}

/** Shows the outcome of an action until the next one. */
function notice(text, kind = 'ok') {
  if (text && !PW.signedIn) return; // an answer that came back after sign-out
  const node = $('notice');
  node.textContent = text;
  node.className = `notice ${kind}`;
  node.hidden = !text;
}

/** Opens the detail dialog with `title` and the given nodes. */
function showDetail(title, ...nodes) {
  if (!PW.signedIn) return;
  $('detail-body').replaceChildren(el('h2', { text: title }), ...nodes.flat(Infinity));
  if (!$('detail').open) $('detail').showModal();
}

function rawJson(value, open = false) {
  return el('details', { class: 'raw', open }, el('summary', { text: 'Raw JSON' }),
    el('pre', { text: JSON.stringify(value, null, 2) }));
}

Object.assign(PW, { el, fmt, table, facts, badge, api, ApiError, confirmAction, notice, showDetail, rawJson });

// --- sign-in and the poll --------------------------------------------------------------------

let timer = null;
let polling = false;
let lastPollAt = 0;

/** Polls again after `wait` ms, never sooner than a second after the last poll began. */
function schedule(wait = POLL_MS) {
  clearTimeout(timer);
  const due = Math.max(wait, lastPollAt + POLL_MS - Date.now(), 0);
  timer = setTimeout(poll, due);
}
PW.refreshSoon = () => schedule(0);

async function poll() {
  if (!PW.signedIn || document.hidden || polling) return;
  polling = true;
  lastPollAt = Date.now();
  try {
    const live = await api(`/ui/api/live?since=${PW.lastSeq}`);
    if (!PW.signedIn) return; // signed out while it was on its way
    accept(live);
    render();
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) {
      signOut(`The gateway refused the key: ${e.message}`);
      return;
    }
    $('status').textContent = `Could not read the gateway (${e.message}); trying again.`;
    $('status').className = 'status error';
  } finally {
    polling = false;
  }
  if (PW.signedIn) schedule();
}

/** Takes one answer of /ui/api/live: the decisions are merged, newest first. */
function accept(live) {
  const fresh = live.decisions || [];
  if ((live.last_seq ?? 0) < PW.lastSeq) PW.decisions = []; // the gateway restarted
  const known = new Set(PW.decisions.map((d) => d.seq));
  PW.decisions = fresh.filter((d) => !known.has(d.seq)).concat(PW.decisions)
    .sort((a, b) => b.seq - a.seq).slice(0, KEEP_DECISIONS);
  PW.lastSeq = live.last_seq ?? PW.lastSeq;
  PW.live = live;
}

function render() {
  const live = PW.live;
  if (!live) return;
  $('identity').textContent = `${live.caller === 'anyone' ? 'open gateway' : `signed in as ${live.caller}`}`
    + `${live.instance ? ` · ${live.instance}` : ''} · v${live.version}`;
  $('open-warning').hidden = live.caller !== 'anyone';
  const status = $('status');
  status.className = 'status';
  const shards = live.shards != null ? ` · ${live.shards} shard${live.shards === 1 ? '' : 's'}` : '';
  status.textContent = `Updated ${fmt.time(live.now_ms)}${shards}`
    + (live.watching ? '' : ' · the gateway starts noting requests now that this page watches');
  document.querySelector('[data-view="keys"][role="tab"]').hidden = !live.database;
  PW.views[PW.view]?.render(live);
}

/** Shows the app with a first answer, or the login form with `error`. */
async function enter() {
  try {
    accept(await api('/ui/api/live?since=0'));
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) {
      signOut(sessionStorage.getItem(PW.key) ? `The gateway refused the key: ${e.message}`
        : 'This gateway needs a key: its master key or an admin key.');
    } else {
      signOut(`Could not reach the gateway: ${e.message}`);
    }
    return;
  }
  PW.signedIn = true;
  $('login').hidden = true;
  $('app').hidden = false;
  $('who').hidden = false;
  show(PW.view);
  schedule();
}

/** Forgets the key and everything shown; the login form again, with `error` when there is one. */
function signOut(error = '') {
  clearTimeout(timer);
  sessionStorage.removeItem(PW.key);
  PW.signedIn = false;
  PW.live = null;
  PW.decisions = [];
  PW.lastSeq = 0;
  for (const view of Object.values(PW.views)) view.reset?.();
  document.querySelectorAll('.view').forEach((v) => v.replaceChildren());
  $('identity').textContent = '';
  notice('');
  for (const d of [$('detail'), $('confirm')]) if (d.open) d.close();
  $('detail-body').replaceChildren();
  $('app').hidden = true;
  $('who').hidden = true;
  $('login').hidden = false;
  $('login-error').textContent = error;
  $('login-error').hidden = !error;
  $('key').value = '';
  $('key').focus();
}

function show(view) {
  if (!PW.views[view]) view = 'deployments';
  PW.view = view;
  for (const tab of document.querySelectorAll('[role="tab"]')) {
    tab.setAttribute('aria-selected', String(tab.dataset.view === view));
  }
  for (const panel of document.querySelectorAll('.view')) panel.hidden = panel.dataset.view !== view;
  if (location.hash !== `#${view}`) history.replaceState(null, '', `#${view}`);
  PW.views[view].opened?.();
  render();
}

async function reload() {
  if (!await confirmAction('Reload the config file now? Deployments, routers and keys are read again; '
    + 'a config with errors is refused and the running one kept.', 'Reload')) return;
  try {
    const answer = await api('/admin/reload', { method: 'POST' });
    notice(`Config reloaded (${answer.status || 'ok'}).`);
    showDetail('Reload report', rawJson(answer.report ?? answer, true));
  } catch (e) {
    notice(`Reload refused: ${e.message}`, 'error');
    showDetail('Reload refused', el('p', { class: 'error', text: e.message }));
  }
  PW.refreshSoon();
}

// --- the Deployments view --------------------------------------------------------------------

const COLUMNS = ['Deployment', 'Provider', 'State', 'In flight', 'Req/min', 'Err/min', 'Latency (EWMA)',
  'TTFT', 'Tokens/min', '$/min', 'Actions'];

/** The groups' tables, kept between polls so rows (and their buttons) stay put. */
const groups = new Map();

function stateBadge(d) {
  switch (d.state) {
    case 'healthy': return [badge('healthy', 'ok')];
    case 'cooling_down': {
      const c = d.cooldown || {};
      return [badge('cooling down', 'warn'), el('span', { class: 'cause', text: fmt.text(c.cause) }),
        el('span', { class: 'left', text: c.seconds_left == null ? '' : `${Math.ceil(c.seconds_left)} s left` })];
    }
    case 'blocked': return [badge(`blocked (by ${d.blocked_by || 'config'})`, 'muted')];
    case 'unhealthy': return [badge('unhealthy', 'bad'),
      el('span', { class: 'cause', text: d.health ? `checked ${fmt.num(d.health.age_s)} s ago` : 'health check' })];
    default: return [badge(fmt.text(d.state), 'muted')];
  }
}

async function deploymentAction(d, action) {
  const what = {
    block: [`Block ${d.id}? New requests avoid it until it is unblocked (a reload keeps this).`, 'Block'],
    unblock: [`Unblock ${d.id}? New requests may use it again.`, 'Unblock'],
    'cooldown/end': [`End the cooldown of ${d.id} now? New requests may use it at once.`, 'End cooldown'],
  }[action];
  if (!await confirmAction(...what)) return;
  try {
    await api(`/admin/deployments/${encodeURIComponent(d.id)}/${action}`, { method: 'POST' });
    notice(`${what[1]}: ${d.id} — done.`);
  } catch (e) {
    notice(`${what[1]} ${d.id} failed: ${e.message}`, 'error');
  }
  PW.refreshSoon();
}

function deploymentRow(d) {
  const tr = el('tr', { 'data-deployment': d.id });
  const cells = COLUMNS.map((c) => el('td', { 'data-label': c }));
  cells[0].append(el('span', { class: 'id' }), el('span', { class: 'model muted' }));
  for (const i of [3, 4, 5, 6, 7, 8, 9]) cells[i].classList.add('num');
  const block = el('button', { type: 'button', class: 'small act-block' });
  const end = el('button', { type: 'button', class: 'small act-end', text: 'End cooldown' });
  const row = { tr, cells, block, end, d };
  block.addEventListener('click', () => deploymentAction(row.d, row.d.blocked ? 'unblock' : 'block'));
  end.addEventListener('click', () => deploymentAction(row.d, 'cooldown/end'));
  cells[10].append(block, end);
  tr.append(...cells);
  return row;
}

function updateRow(row, d) {
  row.d = d;
  const [id, provider, state, inFlight, req, err, latency, ttft, tokens, spend] = row.cells;
  id.firstChild.textContent = d.id;
  id.lastChild.textContent = d.upstream_model ? ` ${d.upstream_model}` : '';
  provider.textContent = fmt.text(d.provider);
  state.replaceChildren(...stateBadge(d));
  row.tr.dataset.state = d.state;
  const m = d.per_minute || {};
  inFlight.textContent = fmt.num(d.in_flight);
  req.textContent = fmt.num(m.requests);
  err.textContent = fmt.num(m.errors);
  err.classList.toggle('bad-text', (m.errors || 0) > 0);
  latency.textContent = fmt.ms(d.latency_ms);
  ttft.textContent = fmt.ms(d.ttft_ms);
  tokens.textContent = fmt.num(m.tokens);
  spend.textContent = fmt.usd(m.spend_usd);
  row.block.textContent = d.blocked ? 'Unblock' : 'Block';
  row.end.hidden = d.state !== 'cooling_down';
}

function groupSection(name) {
  const tbody = el('tbody');
  const head = el('tr', null, COLUMNS.map((c) => el('th', { scope: 'col', text: c })));
  const count = el('span', { class: 'muted' });
  const section = el('section', { class: 'group card', 'data-group': name },
    el('h3', null, el('span', { class: 'name', text: name }), ' ', count),
    el('div', { class: 'scroll' }, el('table', { class: 'grid deployments' }, el('thead', null, head), tbody)));
  return { section, tbody, count, rows: new Map() };
}

PW.views.deployments = {
  reset() { groups.clear(); PW.charts?.resetSession(); },
  render(live) {
    const root = $('view-deployments');
    if (!root.querySelector('.groups')) {
      root.replaceChildren(PW.charts?.sessionPanel() || '', el('div', { class: 'groups' }));
    }
    PW.charts?.updateSession(live);
    const list = live.groups || [];
    const seen = new Set();
    const sections = [];
    for (const g of list) {
      seen.add(g.name);
      let group = groups.get(g.name);
      if (!group) groups.set(g.name, (group = groupSection(g.name)));
      const n = g.deployments.length;
      group.count.textContent = `${n} deployment${n === 1 ? '' : 's'}`;
      const ids = new Set();
      const rows = g.deployments.map((d) => {
        ids.add(d.id);
        let row = group.rows.get(d.id);
        if (!row) group.rows.set(d.id, (row = deploymentRow(d)));
        updateRow(row, d);
        return row.tr;
      });
      for (const id of [...group.rows.keys()]) if (!ids.has(id)) group.rows.delete(id);
      group.tbody.replaceChildren(...rows);
      sections.push(group.section);
    }
    for (const name of [...groups.keys()]) if (!seen.has(name)) groups.delete(name);
    const holder = root.querySelector('.groups');
    if (sections.length) holder.replaceChildren(...sections);
    else holder.replaceChildren(el('p', { class: 'empty', text: 'No model groups in the running config.' }));
  },
};

// --- start -----------------------------------------------------------------------------------

document.addEventListener('DOMContentLoaded', () => {
  $('login-form').addEventListener('submit', (event) => {
    event.preventDefault();
    // An empty key is for a gateway without one (it answers anyone).
    sessionStorage.setItem(PW.key, $('key').value.trim());
    $('key').value = '';
    enter();
  });
  $('signout').addEventListener('click', () => signOut());
  $('reload').addEventListener('click', reload);
  $('detail-close').addEventListener('click', () => $('detail').close());
  for (const tab of document.querySelectorAll('[role="tab"]')) {
    tab.addEventListener('click', () => show(tab.dataset.view));
  }
  document.addEventListener('visibilitychange', () => { if (!document.hidden && PW.signedIn) schedule(0); });
  PW.view = location.hash.slice(1) || 'deployments';
  // Signed in already in this tab: straight in. Else the form (no call without a key).
  if (sessionStorage.getItem(PW.key) != null) enter();
  else signOut();
});
