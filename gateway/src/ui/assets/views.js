// Pointwork's live view: the Decisions, Cluster & services and Keys & teams views (app.js holds
// the core they use: PW.el, PW.api, PW.confirmAction…).
'use strict';

(() => {
  const { el, fmt, table, facts, badge, api, confirmAction, notice, showDetail, rawJson } = PW;
  const $ = (id) => document.getElementById(id);

  // --- Decisions -----------------------------------------------------------------------------

  const DECISION_COLUMNS = ['Time', 'Model', 'Winner', 'Status', 'Route reason', 'Dropped'];
  /** One row per decision seq, built once (a decision never changes). */
  const decisionRows = new Map();

  function dropped(d) {
    const out = (d.candidates || []).filter((c) => c.status === 'removed')
      .map((c) => el('span', { class: 'drop' }, el('span', { class: 'id', text: c.id }), ` ${c.removed_by || 'removed'}`));
    for (const id of d.failed_over || []) {
      out.push(el('span', { class: 'drop failover' }, el('span', { class: 'id', text: id }), ' failed over'));
    }
    return out.length ? out : ['—'];
  }

  function statusBadge(status) {
    return badge(String(status), status >= 200 && status < 400 ? 'ok' : status === 429 ? 'warn' : 'bad');
  }

  function decisionRow(d) {
    const open = () => openDecision(d.seq);
    const cells = [
      fmt.time(d.unix_ms),
      el('span', null, el('span', { text: d.model }), d.group && d.group !== d.model
        ? el('span', { class: 'muted', text: ` → ${d.group}` }) : null),
      el('span', { class: 'winner', text: fmt.text(d.winner) }),
      statusBadge(d.status),
      el('span', { class: 'reason', text: fmt.text(d.route_reason ?? d.cause) }),
      el('span', { class: 'drops' }, dropped(d)),
    ];
    const tr = el('tr', { 'data-seq': d.seq, tabindex: 0, class: 'clickable', title: 'Show the whole decision' },
      cells.map((c, i) => el('td', { 'data-label': DECISION_COLUMNS[i] }, c)));
    tr.addEventListener('click', open);
    tr.addEventListener('keydown', (e) => { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); open(); } });
    return tr;
  }

  async function openDecision(seq) {
    let d;
    try {
      d = await api(`/ui/api/decision/${seq}`);
    } catch (e) {
      showDetail(`Decision #${seq}`, el('p', { class: 'error', text: e.status === 404
        ? 'This decision is no longer kept by the gateway (it keeps the last 200).' : e.message }));
      return;
    }
    const w = d.winner_detail || {};
    const candidates = table(['Candidate', 'Provider', 'Upstream model', 'API base', 'Status', 'Removed by'],
      (d.candidates || []).map((c) => [
        el('span', { class: 'id', text: c.id }), fmt.text(c.provider), fmt.text(c.upstream_model),
        fmt.text(c.api_base),
        badge(c.status, c.status === 'winner' ? 'ok' : c.status === 'removed' ? 'muted' : 'info'),
        fmt.text(c.removed_by),
      ]), { class: 'grid candidates' });
    showDetail(`Decision #${d.seq}: ${d.model} → ${d.winner ?? 'no winner'}`,
      facts([
        ['Time', `${fmt.time(d.unix_ms)} (shard ${d.shard})`],
        ['Path', fmt.text(d.path)],
        ['Group', fmt.text(d.group)],
        ['Status', statusBadge(d.status)],
        ['Winner', el('span', { class: 'winner', text: fmt.text(w.id ?? d.winner) })],
        ['Why', fmt.text(w.cause ?? d.cause)],
        ['Route', el('code', { text: fmt.text(w.route ?? d.route_reason) })],
        ['Before the pick', fmt.text(d.before_pick)],
        ['Attempts', fmt.num(d.attempts)],
        ['Failed over', d.failed_over?.length ? d.failed_over.join(', ') : '—'],
        ['Stream · cache hit', `${fmt.bool(d.stream)} · ${fmt.bool(d.cache_hit)}`],
        ['Upstream · total', `${fmt.ms(d.upstream_ms)} · ${fmt.ms(d.total_ms)}`],
        ['Policy', fmt.text(d.policy)],
        ['Key', fmt.text(d.key)],
      ]),
      el('h3', { text: 'Candidates' }), el('div', { class: 'scroll' }, candidates),
      d.routing_decision ? [el('h3', { text: 'Complexity router' }),
        el('pre', { text: JSON.stringify(d.routing_decision, null, 2) })] : [],
      rawJson(d));
  }

  PW.views.decisions = {
    reset() { decisionRows.clear(); },
    render(live) {
      const root = $('view-decisions');
      if (!root.firstChild) {
        const head = el('tr', null, DECISION_COLUMNS.map((c) => el('th', { scope: 'col', text: c })));
        root.replaceChildren(el('section', { class: 'card' },
          el('h3', null, 'Routing decisions ', el('span', { class: 'muted', text: 'newest first; click one for all of it' })),
          el('p', { class: 'empty' }),
          el('div', { class: 'scroll' }, el('table', { class: 'grid decisions' }, el('thead', null, head), el('tbody')))));
      }
      const keep = new Set();
      const rows = PW.decisions.map((d) => {
        keep.add(d.seq);
        if (!decisionRows.has(d.seq)) decisionRows.set(d.seq, decisionRow(d));
        return decisionRows.get(d.seq);
      });
      for (const seq of [...decisionRows.keys()]) if (!keep.has(seq)) decisionRows.delete(seq);
      root.querySelector('tbody').replaceChildren(...rows);
      const empty = root.querySelector('.empty');
      empty.hidden = rows.length > 0;
      empty.textContent = live.watching ? 'No requests since this page opened.'
        : 'The gateway notes decisions only while a page watches: it starts now.';
    },
  };

  // --- Cluster & services --------------------------------------------------------------------

  const words = (key) => key.replace(/_/g, ' ');

  /** Every field of an object as facts; true/false as badges. */
  function objectFacts(obj) {
    return facts(Object.entries(obj).map(([k, v]) => [words(k),
      typeof v === 'boolean' ? badge(v ? 'yes' : 'no', v ? 'ok' : 'bad')
        : v != null && typeof v === 'object' ? JSON.stringify(v) : typeof v === 'number' ? fmt.num(v, Number.isInteger(v) ? 0 : 2) : fmt.text(v)]));
  }

  /** The instances sharing Redis, and how long ago each last reconciled. */
  function members(list, now) {
    if (!Array.isArray(list) || !list.length) return '';
    return [el('h4', { text: 'Instances' }), table(['Instance', 'Last reconciled'], list.map((m) => [
      el('span', { class: 'id', text: m.instance }),
      m.reconciled_ms == null ? '—' : `${fmt.num(Math.max(0, (now - m.reconciled_ms) / 1000), 1)} s ago`]))];
  }

  function card(title, ...body) {
    return el('section', { class: 'card', 'data-card': title }, el('h3', { text: title }), ...body);
  }

  PW.views.cluster = {
    render(live) {
      const c = live.cluster;
      const exporters = live.exporters || [];
      $('view-cluster').replaceChildren(el('div', { class: 'cards' },
        card('Gateway', facts([
          ['Version', fmt.text(live.version)], ['Instance', fmt.text(live.instance)],
          live.shards != null ? ['Shards', fmt.num(live.shards)] : ['Answered by', `shard ${fmt.text(live.shard)}`], ['Routing strategy', fmt.text(live.routing_strategy)],
          ['Signed in as', fmt.text(live.caller)], ['Clock', fmt.time(live.now_ms)],
        ])),
        card('Redis and instances', c
          ? [el('p', null, c.redis_up === false ? badge('Redis down', 'bad') : badge('Redis up', 'ok')),
            facts([
              ['Server', fmt.text(c.server)], ['This instance', fmt.text(c.instance)],
              ['Instances sharing', fmt.num(c.instances)], ['Events published', fmt.num(c.published)],
              ['Events received', fmt.num(c.received)], ['Events dropped', fmt.num(c.dropped)],
              ['Sync failures', fmt.num(c.sync_failures)],
            ]),
            members(c.members, live.now_ms)]
          : el('p', { class: 'muted', text: 'No Redis configured: this instance routes alone.' })),
        card('Database', live.database
          ? [el('p', null, live.database.connected ? badge('connected', 'ok') : badge('not connected', 'bad')),
            objectFacts(live.database)]
          : el('p', { class: 'muted', text: 'No database configured (general_settings.database_url).' })),
        card('Response cache', live.cache ? objectFacts(live.cache)
          : el('p', { class: 'muted', text: 'No response cache configured.' })),
        card('Exporters', exporters.length
          ? table(['Exporter', 'Exported', 'Dropped', 'Failures', 'Queued'], exporters.map((e) => [
            e.name, fmt.num(e.exported), fmt.num(e.dropped), fmt.num(e.failures), fmt.num(e.queued)]))
          : el('p', { class: 'muted', text: 'No exporters configured.' }))));
    },
  };

  // --- Keys & teams --------------------------------------------------------------------------

  /** The newly created key, shown once: it lives only in this variable until left or dismissed. */
  let shownKey = null;
  let loaded = null;
  let loadError = null;

  async function loadKeys() {
    try {
      const [keys, teams] = await Promise.all([
        api('/key/list?return_full_object=true&size=100'), api('/team/list')]);
      if (!PW.signedIn) return;
      loaded = { keys: keys.keys || [], total: keys.total_count, teams: Array.isArray(teams) ? teams : [] };
      loadError = null;
    } catch (e) {
      loadError = e.message;
    }
    if (PW.view === 'keys' && PW.live) PW.views.keys.render(PW.live, true);
  }

  async function createKey(form) {
    const alias = form.alias.value.trim();
    const budget = form.budget.value.trim();
    const body = {};
    if (alias) body.key_alias = alias;
    if (budget) body.max_budget = Number(budget);
    if (!await confirmAction(`Create a new key${alias ? ` "${alias}"` : ''}`
      + `${budget ? ` with a budget of $${budget}` : ''}? It is shown once.`, 'Create key')) return;
    try {
      const made = await api('/key/generate', { method: 'POST', body });
      if (!PW.signedIn) return;
      shownKey = { key: made.key, alias: made.key_alias };
      form.reset();
      notice(`Key ${made.key_alias || made.key_name || ''} created.`);
    } catch (e) {
      notice(`Creating the key failed: ${e.message}`, 'error');
    }
    loadKeys();
  }

  async function revokeKey(k) {
    const name = k.key_alias || k.key_name || k.token.slice(0, 8);
    if (!await confirmAction(`Revoke the key ${name}? Requests with it are refused from now on.`, 'Revoke')) return;
    try {
      await api('/key/delete', { method: 'POST', body: { keys: [k.token] } });
      notice(`Key ${name} revoked.`);
    } catch (e) {
      notice(`Revoking ${name} failed: ${e.message}`, 'error');
    }
    loadKeys();
  }

  const limit = (v) => (v == null ? '—' : fmt.num(v));
  const list = (v) => (Array.isArray(v) && v.length ? v.join(', ') : 'all');

  function keysSection() {
    if (loadError) return el('p', { class: 'error', text: `Could not list keys: ${loadError}` });
    if (!loaded) return el('p', { class: 'muted', text: 'Loading…' });
    const rows = loaded.keys.map((k) => {
      const revoke = el('button', { type: 'button', class: 'small danger act-revoke', text: 'Revoke' });
      revoke.addEventListener('click', () => revokeKey(k));
      return [el('span', { class: 'alias', text: fmt.text(k.key_alias) }), el('code', { text: fmt.text(k.key_name) }),
        fmt.text(k.team_id), fmt.usd(k.spend), fmt.usd(k.max_budget),
        `${limit(k.rpm_limit)} / ${limit(k.tpm_limit)}`, list(k.models), fmt.text(k.expires),
        k.blocked ? badge('blocked', 'bad') : badge('active', 'ok'), revoke];
    });
    const t = table(['Alias', 'Key', 'Team', 'Spend', 'Budget', 'RPM / TPM', 'Models', 'Expires', 'Status', ''], rows,
      { class: 'grid keys' });
    t.querySelectorAll('tbody tr').forEach((tr, i) => { tr.dataset.token = loaded.keys[i].token; });
    const more = loaded.total > rows.length ? el('p', { class: 'muted', text: `The newest ${rows.length} of ${loaded.total} keys.` }) : '';
    return rows.length ? el('div', { class: 'scroll' }, more, t) : el('p', { class: 'empty', text: 'No keys yet.' });
  }

  function teamsSection() {
    if (!loaded) return '';
    const rows = loaded.teams.map((t) => [fmt.text(t.team_alias), el('code', { text: t.team_id }), fmt.usd(t.spend),
      fmt.usd(t.max_budget), `${limit(t.rpm_limit)} / ${limit(t.tpm_limit)}`, list(t.models),
      fmt.num((t.members_with_roles || []).length), t.blocked ? badge('blocked', 'bad') : badge('active', 'ok')]);
    return rows.length ? el('div', { class: 'scroll' }, table(['Team', 'Id', 'Spend', 'Budget', 'RPM / TPM', 'Models',
      'Members', 'Status'], rows, { class: 'grid teams' })) : el('p', { class: 'empty', text: 'No teams yet.' });
  }

  function createForm() {
    const form = el('form', { class: 'inline', id: 'key-form', autocomplete: 'off' },
      el('label', null, 'Alias ', el('input', { name: 'alias', type: 'text', maxlength: 200 })),
      el('label', null, 'Budget $ ', el('input', { name: 'budget', type: 'number', min: 0, step: 'any' })),
      el('button', { type: 'submit', text: 'Create key' }));
    form.addEventListener('submit', (e) => { e.preventDefault(); createKey(form); });
    return form;
  }

  function newKeyBox() {
    if (!shownKey) return '';
    const dismiss = el('button', { type: 'button', class: 'small quiet', text: 'I have copied it' });
    dismiss.addEventListener('click', () => { shownKey = null; PW.views.keys.render(PW.live, true); });
    return el('div', { class: 'new-key', role: 'status' },
      el('p', null, el('strong', { text: 'New key' }), shownKey.alias ? ` (${shownKey.alias})` : '',
        ': copy it now — it is shown only this once.'),
      el('code', { class: 'secret', text: shownKey.key }), ' ', dismiss);
  }

  PW.views.keys = {
    reset() { shownKey = null; loaded = null; loadError = null; },
    opened() { loadKeys(); },
    render(live, fresh = false) {
      // The keys are not part of the live JSON: only a load (or an action) changes this view.
      const root = $('view-keys');
      if (!fresh && root.firstChild) return;
      if (!live.database) {
        root.replaceChildren(el('p', { class: 'muted', text: 'Keys and teams need a database (general_settings.database_url).' }));
        return;
      }
      const refresh = el('button', { type: 'button', class: 'small quiet', text: 'Refresh' });
      refresh.addEventListener('click', loadKeys);
      root.replaceChildren(
        el('section', { class: 'card' }, el('h3', null, 'Virtual keys ', refresh), newKeyBox(), createForm(), keysSection()),
        el('section', { class: 'card' }, el('h3', { text: 'Teams' }), teamsSection()));
    },
  };
  // Leaving the view forgets the key shown once.
  document.addEventListener('click', (e) => {
    const tab = e.target.closest?.('[role="tab"]');
    if (tab && tab.dataset.view !== 'keys') shownKey = null;
  });
})();
