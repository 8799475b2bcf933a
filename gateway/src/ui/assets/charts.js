// Pointwork's live view: the charts (uPlot, vendored) and the Routers view — the pareto frontier
// per rule as price against throughput, the complexity router's tiers, the policy router's outcomes.
'use strict';

(() => {
  const { el, fmt, table, badge } = PW;
  const $ = (id) => document.getElementById(id);
  const HEIGHT = 260;

  /** The page's colours, read from its CSS variables (light or dark). */
  function colours() {
    const css = getComputedStyle(document.documentElement);
    const v = (name) => css.getPropertyValue(name).trim();
    return { fg: v('--fg'), muted: v('--muted'), grid: v('--border'), accent: v('--accent'), win: v('--ok'), warn: v('--warn') };
  }

  function axis(label, c) {
    const a = { stroke: c.muted, grid: { stroke: c.grid, width: 1 }, ticks: { stroke: c.grid, width: 1 } };
    return label ? { ...a, label } : a;
  }

  /** Keeps a chart as wide as its box. */
  function fit(chart, box) {
    const observer = new ResizeObserver(() => {
      if (box.clientWidth > 0) chart.setSize({ width: box.clientWidth, height: chart.height });
    });
    observer.observe(box);
    return observer;
  }

  // --- requests per minute over this page's session (Deployments view) ------------------------

  const session = { box: null, chart: null, xs: [], ys: [] };

  function sessionPanel() {
    session.box = el('div', { class: 'chart session-chart' });
    session.chart = null;
    return el('section', { class: 'card' },
      el('h3', null, 'Requests per minute ', el('span', { class: 'muted', text: 'all deployments, since this page opened' })),
      session.box);
  }

  function updateSession(live) {
    if (!session.box || typeof uPlot === 'undefined') return;
    let total = 0;
    for (const g of live.groups || []) for (const d of g.deployments) total += d.per_minute?.requests || 0;
    session.xs.push(live.now_ms / 1000);
    session.ys.push(total);
    if (session.xs.length > 3600) { session.xs.shift(); session.ys.shift(); }
    if (!session.chart && session.box.clientWidth > 0) {
      const c = colours();
      session.chart = new uPlot({
        width: session.box.clientWidth, height: 150, legend: { show: false }, cursor: { y: false },
        axes: [{ ...axis('', c), space: 70, incrs: [1, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600],
          values: (u, splits) => splits.map((v) => new Date(v * 1000).toLocaleTimeString()) },
        { ...axis('', c), space: 24 }],
        scales: {
          x: { time: false, range: (u, min, max) => (max - min < 60 ? [max - 60, max] : [min, max]) },
          y: { range: (u, min, max) => [0, Math.max(4, max * 1.2)] },
        },
        series: [{}, { label: 'requests/min', stroke: c.accent, width: 2, fill: `${c.accent}22` }],
      }, [session.xs, session.ys], session.box);
      fit(session.chart, session.box);
    } else if (session.chart) {
      session.chart.setData([session.xs, session.ys]);
    }
  }

  function resetSession() { session.xs = []; session.ys = []; session.chart = null; session.box = null; }

  PW.charts = { sessionPanel, updateSession, resetSession };

  // --- the pareto scatter ----------------------------------------------------------------------

  /** x (input $/M), ascending (equal prices nudged apart), and the y series: every candidate,
   * the frontier, the winner. */
  function scatterData(t, winner) {
    const points = (t.candidates || []).filter((c) => c.input_price_per_m != null && c.p50_throughput != null)
      .sort((a, b) => a.input_price_per_m - b.input_price_per_m);
    const frontier = new Set(t.frontier || []);
    const xs = [];
    for (const c of points) {
      const last = xs[xs.length - 1];
      xs.push(last != null && c.input_price_per_m <= last ? last + 1e-9 : c.input_price_per_m);
    }
    const at = new Map(points.map((c, i) => [c.slug, [xs[i], c.p50_throughput]]));
    return {
      at,
      data: [xs, points.map((c) => c.p50_throughput),
        points.map((c) => (frontier.has(c.slug) ? c.p50_throughput : null)),
        points.map((c) => (c.slug === winner ? c.p50_throughput : null))],
    };
  }

  /** Numbers the walk's order next to its points (1 = first tried). */
  function walkLabels(u, walk, at, colour) {
    const ratio = uPlot.pxRatio || 1;
    const ctx = u.ctx;
    ctx.save();
    ctx.fillStyle = colour;
    ctx.font = `${Math.round(12 * ratio)}px system-ui, sans-serif`;
    walk.forEach((slug, i) => {
      const p = at.get(slug);
      if (!p) return;
      ctx.fillText(String(i + 1), u.valToPos(p[0], 'x', true) + 7 * ratio, u.valToPos(p[1], 'y', true) - 7 * ratio);
    });
    ctx.restore();
  }

  /** One chart per pareto rule, kept between polls and fed new data. */
  const scatters = new Map();

  function scatter(rule, box, t, winner) {
    const { at, data } = scatterData(t, winner);
    const walk = t.walk || [];
    const signature = JSON.stringify([data, walk]);
    let s = scatters.get(rule);
    if (s && s.box === box) {
      s.at = at;
      s.walk = walk;
      if (s.signature !== signature) { s.signature = signature; s.chart.setData(data); }
      return;
    }
    if (box.clientWidth === 0) return;
    const c = colours();
    s = { box, at, walk, signature };
    const none = () => null;
    s.chart = new uPlot({
      width: box.clientWidth, height: HEIGHT,
      legend: { live: false },
      scales: { x: { time: false } },
      axes: [axis('input $ per million tokens', c), axis('p50 tokens per second', c)],
      series: [
        { label: '$/M', value: (u, v) => (v == null ? '—' : `$${v.toFixed(3)}`) },
        { label: 'candidates', stroke: c.muted, paths: none, points: { show: true, size: 8, fill: c.muted, stroke: c.muted } },
        { label: 'frontier', stroke: c.accent, width: 2, spanGaps: true, points: { show: true, size: 9, fill: c.accent } },
        { label: 'winner', stroke: c.win, paths: none, points: { show: true, size: 16, width: 3, fill: c.win, stroke: c.fg } },
      ],
      hooks: { draw: [(u) => walkLabels(u, s.walk, s.at, c.fg)] },
    }, data, box);
    fit(s.chart, box);
    scatters.set(rule, s);
  }

  const ruleCards = new Map();

  function paretoCard(p) {
    let r = ruleCards.get(p.rule);
    if (!r) {
      r = { chart: el('div', { class: 'chart scatter' }), info: el('div'), tables: el('div') };
      r.section = el('section', { class: 'card rule', 'data-rule': p.rule },
        el('h3', null, 'Pareto rule ', el('code', { text: p.rule })), r.info, r.chart, r.tables);
      ruleCards.set(p.rule, r);
    }
    const x = p.explain || {};
    const d = x.decision || {};
    const t = x.telemetry;
    const winner = t?.winner ?? d.slug ?? null;
    r.info.replaceChildren(el('p', null,
      'Now: ', el('strong', { class: 'winner', text: fmt.text(d.slug) }), ` (${fmt.text(d.reason)})`,
      d.refused ? el('span', { class: 'error', text: ` refused ${d.refused.status}: ${d.refused.message}` }) : '',
      t ? ` · verdict ${fmt.text(t.winner)}, challenger ${fmt.text(t.challenger)}, telemetry ${fmt.num(t.age_s)} s old` : '',
      t?.stale ? badge('stale', 'warn') : ''));
    r.chart.hidden = !t;
    if (!t) {
      r.tables.replaceChildren(el('p', { class: 'muted', text: 'No telemetry yet for this rule.' }));
      return r;
    }
    const walk = t.walk || [];
    const frontier = new Set(t.frontier || []);
    const rows = (t.candidates || []).map((c) => [
      el('span', { class: 'id', text: c.slug }), fmt.usd(c.input_price_per_m), fmt.usd(c.output_price_per_m),
      fmt.num(c.p50_throughput, 1), fmt.num(c.requests),
      walk.includes(c.slug) ? String(walk.indexOf(c.slug) + 1) : '—',
      [c.slug === winner ? badge('winner', 'ok') : '', frontier.has(c.slug) ? badge('frontier', 'info') : '',
        c.hot ? badge('hot', 'warn') : '', c.disallowed ? badge('not allowed', 'bad') : ''],
    ]);
    const droppedRows = (t.dropped || []).map((dr) => [el('span', { class: 'id', text: dr.slug }), fmt.text(dr.reason)]);
    r.tables.replaceChildren(
      el('p', { class: 'walk' }, 'Walk: ', walk.length ? walk.map((s, i) => `${i + 1}. ${s}`).join('  ') : '—'),
      el('div', { class: 'scroll' }, table(['Provider', 'Input $/M', 'Output $/M', 'p50 tok/s', 'Requests', 'Walk #', ''],
        rows, { class: 'grid pareto' })),
      ...(droppedRows.length ? [el('h4', { text: 'Dropped' }), table(['Provider', 'Reason'], droppedRows)] : []));
    return r;
  }

  function countsTable(rows, columns, pick, flag) {
    return table(columns, rows.map((row) => {
      const cells = pick(row);
      if (flag(row)) cells[cells.length - 2] = badge(String(cells[cells.length - 2]), 'warn');
      return cells;
    }));
  }

  PW.views.routers = {
    reset() { scatters.clear(); ruleCards.clear(); },
    render(live) {
      const root = $('view-routers');
      const routers = live.routers || {};
      const pareto = routers.pareto || [];
      const complexity = routers.complexity || [];
      const policy = routers.policy || [];
      if (!root.querySelector('.rules')) {
        root.replaceChildren(el('div', { class: 'rules' }), el('div', { class: 'cards counts' }));
      }
      const cards = pareto.map(paretoCard);
      const rules = root.querySelector('.rules');
      rules.replaceChildren(...(cards.length ? cards.map((c) => c.section)
        : [el('section', { class: 'card' }, el('h3', { text: 'Pareto rules' }),
          el('p', { class: 'muted', text: 'No OpenRouter pareto rules in this config.' }))]));
      for (const p of pareto) {
        const t = p.explain?.telemetry;
        const card = ruleCards.get(p.rule);
        if (t && typeof uPlot !== 'undefined') scatter(p.rule, card.chart, t, t.winner ?? p.explain.decision?.slug);
      }
      root.querySelector('.counts').replaceChildren(
        el('section', { class: 'card', 'data-card': 'complexity' }, el('h3', { text: 'Complexity router' }),
          complexity.length ? countsTable(complexity, ['Router', 'Tier', 'Cause', 'Count'],
            (c) => [c.router, c.tier, c.cause, fmt.num(c.count)], (c) => c.cause === 'health_failover')
            : el('p', { class: 'muted', text: 'No complexity-routed requests yet.' })),
        el('section', { class: 'card', 'data-card': 'policy' }, el('h3', { text: 'Policy router' }),
          policy.length ? countsTable(policy, ['Policy', 'Outcome', 'Count'],
            (p) => [p.policy, p.outcome, fmt.num(p.count)], (p) => p.outcome !== 'routed')
            : el('p', { class: 'muted', text: 'No policy-routed requests yet.' })));
    },
  };
})();
