// The rrl dashboard page: plain JavaScript, no build step. Routes by the path
// (/, /runs/KEY, /runs/KEY/jobs, /runs/KEY/jobs/ID), reads /api, draws with uPlot, and
// re-reads whatever the server says changed (server-sent events on /api/events).
// @ts-check (src/dashboard/static/tsconfig.json: `npm run typecheck` checks this page)

const main = document.getElementById('main');
const crumbs = document.getElementById('crumbs');
const liveEl = document.getElementById('live');
const COLORS = ['#2563eb', '#dc2626', '#16a34a', '#9333ea', '#ea580c', '#0891b2', '#ca8a04', '#db2777', '#4b5563', '#65a30d'];
let renders = 0;

/** Escapes text for HTML: every value from the store goes through here. */
function esc(v) {
  return String(v ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);
}
/** A number for a table: fixed digits, or a dash. */
function num(v, digits = 3) {
  if (v === null || v === undefined || Number.isNaN(v)) return '–';
  if (Math.abs(v) >= 1e5) return Math.round(v).toLocaleString('en');
  return Number(v).toFixed(digits);
}
function int(v) {
  return v === null || v === undefined ? '–' : Math.round(v).toLocaleString('en');
}
function when(iso) {
  return iso ? esc(iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z')) : '–';
}
async function getJson(url) {
  const r = await fetch(url, { headers: { accept: 'application/json' } });
  const body = await r.json().catch(() => ({ error: `${r.status} ${r.statusText}` }));
  if (!r.ok) throw new Error(body.error || `${r.status}`);
  return body;
}
function setCrumbs(parts) {
  crumbs.innerHTML = parts
    .map(([label, href]) => (href ? `<a href="${esc(href)}">${esc(label)}</a>` : `<span>${esc(label)}</span>`))
    .join('<span class="sep">›</span>');
}
function done() {
  renders += 1;
  // The first render's time since navigation started (what the page-load measurement reads).
  if (renders === 1) document.body.dataset.readyMs = String(Math.round(performance.now()));
  document.body.dataset.ready = String(renders);
}
function fail(err) {
  main.innerHTML = `<p class="error">${esc(err.message || err)}</p>`;
  done();
}

// ---- live updates --------------------------------------------------------------------------
/** Calls `refresh` whenever the server reports a change (one refresh at a time, the last one wins). */
function live(run, refresh) {
  let busy = false;
  let again = false;
  const go = async () => {
    if (busy) return void (again = true);
    busy = true;
    try {
      await refresh();
    } catch (err) {
      console.error(err);
    } finally {
      busy = false;
      if (again) {
        again = false;
        go();
      }
    }
  };
  const es = new EventSource(`/api/events${run ? `?run=${encodeURIComponent(run)}` : ''}`);
  es.onopen = () => {
    liveEl.textContent = '● live';
    liveEl.className = 'on';
  };
  es.onerror = () => {
    liveEl.textContent = '○ reconnecting';
    liveEl.className = '';
  };
  es.addEventListener('change', go);
  es.addEventListener('runs', go);
}

// ---- charts --------------------------------------------------------------------------------
const charts = new Map();
/**
 * Draws (or updates) a line chart in the element with id `id`: x values and series
 * [{ label, values, color?, scale?, dash? }]; axes: left for scale "y", right for scale "y2".
 */
function chart(id, x, series, o = {}) {
  const el = document.getElementById(id);
  if (!el) return;
  const data = [x, ...series.map((s) => s.values)];
  const sig = JSON.stringify(series.map((s) => s.label));
  const old = charts.get(id);
  if (old && old.sig === sig && old.el === el) {
    old.u.setData(data);
    return;
  }
  if (old) old.u.destroy();
  const width = Math.max(300, el.clientWidth || 600);
  const hasY2 = series.some((s) => s.scale === 'y2');
  const u = new uPlot(
    {
      width,
      height: o.height || 240,
      scales: { x: { time: false }, y: o.yRange ? { range: o.yRange } : { auto: true }, ...(hasY2 ? { y2: { auto: true } } : {}) },
      axes: [
        // Iterations are whole numbers: ticks on integers only.
        { label: o.xLabel || 'iteration', ...(o.xLabel ? {} : { incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000] }) },
        { label: o.yLabel || '', scale: 'y', size: 60 },
        ...(hasY2 ? [{ label: o.y2Label || '', scale: 'y2', side: 1, grid: { show: false }, size: 60 }] : []),
      ],
      series: [
        { label: o.xLabel || 'iteration' },
        ...series.map((s, i) => ({
          label: s.label,
          stroke: s.color || COLORS[i % COLORS.length],
          width: s.width || 2,
          scale: s.scale || 'y',
          dash: s.dash,
          points: { show: x.length < 60 },
          spanGaps: true,
        })),
      ],
      legend: { live: true },
    },
    data,
    el,
  );
  charts.set(id, { u, sig, el });
}

// ---- runs list -----------------------------------------------------------------------------
async function runsPage() {
  setCrumbs([['runs', null]]);
  const render = async () => {
    const [runs, experiments] = await Promise.all([getJson('/api/runs'), getJson('/api/experiments')]);
    const expHtml = experiments.length
      ? `<h2>Transfer experiments</h2><table id="experiments"><thead><tr><th>experiment</th><th>directory</th></tr></thead><tbody>${experiments
          .map((e) => `<tr><td><a href="/experiments/${esc(e.key)}">${esc(e.key)}</a></td><td class="muted">${esc(e.dir)}</td></tr>`)
          .join('')}</tbody></table>`
      : '';
    if (!runs.length) {
      main.innerHTML =
        '<h1>Runs</h1><p class="muted">No runs here yet. Start one with <code>npx rrl train</code>; it appears here when its store is created.</p>';
      return done();
    }
    const rows = runs
      .map(({ key, dir, summary: s }) => {
        if (!s) return `<tr><td><a href="/runs/${esc(key)}">${esc(key)}</a></td><td colspan="9" class="muted">no run recorded yet (${esc(dir)})</td></tr>`;
        const its = s.iterations === null ? 'serve' : `${s.iterations}`;
        return `<tr data-run="${esc(key)}">
          <td><a href="/runs/${esc(key)}">${esc(key)}</a><div class="muted">${esc(s.id)}</div></td>
          <td>${esc(s.agent)}</td><td>${esc(s.tasks.join(', '))}</td>
          <td class="status-${esc(s.status)}">${esc(s.status)}</td><td class="num">${its}</td>
          <td class="num"><a href="/runs/${esc(key)}/jobs">${int(s.jobs)}</a>${s.pending ? ` <span class="muted">(${int(s.pending)} pending)</span>` : ''}</td>
          <td class="num">${int(s.failed)} / ${int(s.invalid)}</td>
          <td class="num">${num(s.bestNormalized)}</td>
          <td class="num">${[s.envSteps ? `${int(s.envSteps)} steps` : '', s.examples ? `${int(s.examples)} examples` : ''].filter(Boolean).join(', ') || '–'}</td><td class="num">${num(s.cpuSeconds, 1)}</td><td>${when(s.createdAt)}</td></tr>`;
      })
      .join('');
    main.innerHTML = `<h1>Runs</h1><table id="runs"><thead><tr><th>run</th><th>agent</th><th>tasks</th><th>status</th><th class="num">iterations</th>
      <th class="num">proposals</th><th class="num">failed / invalid</th><th class="num">best score</th><th class="num">trained on</th><th class="num">CPU s</th><th>started</th></tr></thead>
      <tbody>${rows}</tbody></table>
      <p class="muted">Scores are normalised on each task's hidden evaluation: 0 = a random policy or trivial predictor, 1 = the reference.</p>${expHtml}`;
    done();
  };
  await render();
  live(null, render);
}

// ---- one run -------------------------------------------------------------------------------
async function runPage(key) {
  setCrumbs([
    ['runs', '/'],
    [key, null],
  ]);
  let shell = false;
  const render = async () => {
    const d = await getJson(`/api/runs/${encodeURIComponent(key)}`);
    const s = d.summary;
    if (!shell) {
      main.innerHTML = `<h1 id="run-title"></h1><div class="cards" id="cards"></div>
        <p><a href="/runs/${esc(key)}/jobs">all jobs</a> · <a href="/runs/${esc(key)}/jobs?status=failed">failed</a> · <a href="/runs/${esc(key)}/jobs?status=invalid">invalid</a></p>
        <div class="grid">
          <div class="panel"><h3>Outer reward per iteration</h3><div id="c-reward"></div><p class="note">Mean reward the agent was paid, over all tasks (thick) and per task.</p></div>
          <div class="panel"><h3>Normalised hidden score</h3><div id="c-score"></div><p class="note">Mean and best over the iteration's proposals; dashed: each task's baseline job.</p></div>
          <div class="panel"><h3>Compute per iteration</h3><div id="c-compute"></div><p class="note">Env steps or training examples (left) and CPU seconds (right) of the iteration's proposals.</p></div>
          <div class="panel"><h3>Invalid and failed proposals</h3><div id="c-share"></div><p class="note">Share of the iteration's proposals.</p></div>
          <div class="panel" id="p-entropy" hidden><h3>Agent entropy</h3><div id="c-entropy"></div><p class="note" id="entropy-note"></p></div>
        </div>
        <h2>Iterations</h2><div id="iterations"></div>
        <h2>Best job per task</h2><div id="best"></div>
        <div id="promotions"></div>
        <h2>Configuration</h2><pre class="spec" id="config"></pre>`;
      shell = true;
    }
    document.getElementById('run-title').textContent = `${s.id} · ${s.agent} on ${s.tasks.join(', ')}`;
    const doneIts = d.iterations.filter((i) => i.status === 'done').length;
    document.getElementById('cards').innerHTML = [
      ['status', esc(s.status)],
      ['iterations', s.iterations === null ? `${d.iterations.length} requests` : `${doneIts} / ${s.iterations}`],
      ['proposals', int(s.jobs)],
      ['best score', num(s.bestNormalized)],
      ['failed / invalid', `${int(s.failed)} / ${int(s.invalid)}`],
      [s.examples && !s.envSteps ? 'examples' : 'env steps', int(s.examples && !s.envSteps ? s.examples : s.envSteps)],
      ['CPU seconds', num(s.cpuSeconds, 1)],
    ]
      .map(([k, v]) => `<div class="card"><small>${k}</small><b>${v}</b></div>`)
      .join('');
    const its = d.iterations;
    const x = its.map((i) => i.iteration + 1);
    const tasks = [...new Set(d.perTask.map((r) => r.task))];
    const perTask = (task, field) => its.map((i) => d.perTask.find((r) => r.task === task && r.iteration === i.iteration)?.[field] ?? null);
    chart(
      'c-reward',
      x,
      [
        { label: 'mean (all tasks)', values: its.map((i) => i.meanReward), color: '#111827', width: 3 },
        ...tasks.map((t, k) => ({ label: t, values: perTask(t, 'meanReward'), color: COLORS[k % COLORS.length], width: 1.5 })),
      ],
      { yLabel: 'outer reward' },
    );
    chart(
      'c-score',
      x,
      [
        { label: 'mean', values: its.map((i) => i.meanNormalized), color: '#2563eb' },
        { label: 'best', values: its.map((i) => i.bestNormalized), color: '#16a34a' },
        ...d.baselines.map((b, k) => ({
          label: `baseline ${b.task}`,
          values: its.map(() => b.normalized),
          color: COLORS[(k + 3) % COLORS.length],
          dash: [6, 4],
          width: 1.5,
        })),
      ],
      { yLabel: 'normalised score' },
    );
    const steps = its.some((i) => i.envSteps > 0);
    const examples = its.some((i) => i.examples > 0);
    chart(
      'c-compute',
      x,
      [
        ...(steps || !examples ? [{ label: 'env steps', values: its.map((i) => i.envSteps) }] : []),
        ...(examples ? [{ label: 'examples', values: its.map((i) => i.examples), color: '#0891b2' }] : []),
        { label: 'CPU seconds', values: its.map((i) => i.cpuSeconds), scale: 'y2', color: '#ea580c' },
      ],
      { yLabel: steps && examples ? 'env steps, examples' : examples ? 'examples' : 'env steps', y2Label: 'CPU s' },
    );
    chart(
      'c-share',
      x,
      [
        { label: 'invalid', values: its.map((i) => (i.jobs ? i.invalid / i.jobs : null)), color: '#b45309' },
        { label: 'failed', values: its.map((i) => (i.jobs ? i.failed / i.jobs : null)), color: '#b91c1c' },
      ],
      { yLabel: 'share', yRange: [0, 1] },
    );
    const hasEntropy = its.some((i) => i.entropy !== null);
    document.getElementById('p-entropy').hidden = !hasEntropy;
    if (hasEntropy) {
      const perDecision = its.some((i) => i.entropy !== null && i.decisions);
      // Per choice where the traces count the choices (the controller), else the sum the agent reported.
      chart(
        'c-entropy',
        x,
        perDecision
          ? [{ label: 'entropy per choice', values: its.map((i) => (i.entropy !== null && i.decisions ? i.entropy / i.decisions : null)), color: '#9333ea' }]
          : [{ label: 'entropy', values: its.map((i) => i.entropy), color: '#9333ea' }],
        { yLabel: perDecision ? 'nats per choice' : 'nats' },
      );
      const n = its.find((i) => i.decisions)?.decisions;
      document.getElementById('entropy-note').textContent = perDecision
        ? `Entropy of the agent's policy from each update, per choice: its sum over the spec's ${Math.round(n)} choices (the iterations table) divided by their number.`
        : "Entropy of the agent's policy from each update.";
    }
    document.getElementById('iterations').innerHTML =
      `<table id="iteration-table"><thead><tr><th class="num">iteration</th><th>status</th><th class="num">proposals</th><th class="num">mean reward</th>
      <th class="num">mean score</th><th class="num">best score</th><th class="num">invalid</th><th class="num">failed</th><th class="num">env steps</th><th class="num">CPU s</th><th class="num">entropy</th></tr></thead><tbody>${its
        .map(
          (
            i,
          ) => `<tr data-iteration="${i.iteration}"><td class="num"><a href="/runs/${esc(key)}/jobs?iteration=${i.iteration}">${i.iteration + 1}</a></td><td class="status-${esc(i.status || 'pending')}">${esc(i.status || (s.mode === 'serve' ? 'request' : 'pending'))}</td>
          <td class="num">${i.jobs}${i.pending ? ` <span class="muted">(${i.pending} pending)</span>` : ''}</td><td class="num">${num(i.meanReward)}</td><td class="num">${num(i.meanNormalized)}</td><td class="num">${num(i.bestNormalized)}</td>
          <td class="num">${i.invalid}</td><td class="num">${i.failed}</td><td class="num">${int(i.envSteps)}</td><td class="num">${num(i.cpuSeconds, 1)}</td><td class="num">${num(i.entropy, 2)}</td></tr>`,
        )
        .join('')}</tbody></table>`;
    const bl = new Map(d.baselines.map((b) => [b.task, b]));
    document.getElementById('best').innerHTML =
      `<table><thead><tr><th>task</th><th class="num">best score</th><th>job</th><th class="num">baseline score</th><th>baseline job</th></tr></thead><tbody>${tasks
        .map((t) => {
          const b = d.best.find((r) => r.task === t);
          const base = bl.get(t);
          return `<tr><td>${esc(t)}</td><td class="num">${b ? `${num(b.normalized)}${b.stderr !== null ? ` ± ${num(b.stderr)}` : ''}` : '–'}</td>
          <td>${b ? `<a href="/runs/${esc(key)}/jobs/${b.jobId}">job ${b.jobId}</a> (iteration ${b.iteration + 1})` : '–'}</td>
          <td class="num">${base ? num(base.normalized) : '–'}</td><td>${base ? `<a href="/runs/${esc(key)}/jobs/${base.jobId}">job ${base.jobId}</a>` : '–'}</td></tr>`;
        })
        .join('')}</tbody></table>`;
    document.getElementById('promotions').innerHTML = d.promotions.length
      ? `<h2>Successive halving: what was promoted</h2><table id="promotion-table"><thead><tr><th class="num">iteration</th><th>task</th><th class="num">rung</th><th class="num">share of budget</th>
        <th class="num">trained</th><th class="num">promoted</th><th class="num">best score</th></tr></thead><tbody>${d.promotions
          .map(
            (
              p,
            ) => `<tr><td class="num"><a href="/runs/${esc(key)}/jobs?iteration=${p.iteration}&kind=rung">${p.iteration + 1}</a></td><td>${esc(p.task)}</td><td class="num">${p.rung}</td>
            <td class="num">${num(p.share, 3)}</td><td class="num">${p.trained}</td><td class="num">${p.promoted}</td><td class="num">${num(p.best)}</td></tr>`,
          )
          .join('')}</tbody></table>`
      : '';
    document.getElementById('config').textContent = JSON.stringify(d.config, null, 2);
    done();
  };
  await render();
  live(key, render);
}

// ---- jobs table ----------------------------------------------------------------------------
async function jobsPage(key) {
  setCrumbs([
    ['runs', '/'],
    [key, `/runs/${key}`],
    ['jobs', null],
  ]);
  const params = new URLSearchParams(location.search);
  const render = async () => {
    const q = new URLSearchParams();
    for (const k of ['task', 'status', 'iteration', 'kind']) if (params.get(k)) q.set(k, params.get(k));
    const d = await getJson(`/api/runs/${encodeURIComponent(key)}/jobs?${q}`);
    const select = (name, values, label = (v) => v) =>
      `<label>${name} <select data-filter="${name}"><option value="">all</option>${values
        .map((v) => `<option value="${esc(v)}"${String(params.get(name) ?? '') === String(v) ? ' selected' : ''}>${esc(label(v))}</option>`)
        .join('')}</select></label>`;
    const rows = d.rows
      .map((j) => {
        const why =
          j.failureKind || j.error
            ? `${j.failureKind ? `<b>${esc(j.failureKind)}</b>: ` : ''}${esc(j.error ?? '')}`
            : j.cacheHit
              ? `<span class="muted">reused from ${esc(j.cacheHit)}</span>`
              : '';
        return `<tr><td class="num"><a href="/runs/${esc(key)}/jobs/${j.id}">${j.id}</a></td><td class="num">${j.kind === 'baseline' ? 'base' : j.iteration + 1}</td><td>${esc(j.task)}</td><td class="num">${j.slot}</td>
          <td class="status-${esc(j.status)}">${esc(j.status)}</td><td class="num">${num(j.normalized)}${j.stderr !== null ? `<span class="muted"> ± ${num(j.stderr)}</span>` : ''}</td>
          <td class="num">${num(j.reward)}</td><td class="num">${int(j.envSteps || j.examples)}</td><td class="num">${num(j.cpuSeconds, 1)}</td><td class="num">${num(j.wallSeconds, 1)}</td><td class="why">${why}</td></tr>`;
      })
      .join('');
    main.innerHTML = `<h1>Jobs of ${esc(key)}</h1>
      <div class="filters">${select('task', d.options.tasks)}${select('status', d.options.statuses)}${select('iteration', d.options.iterations, (v) => v + 1)}${select('kind', ['proposal', 'baseline', 'rung'])}
        <span class="muted" id="count">${d.rows.length}${d.truncated ? '+ (first rows only: filter to see the rest)' : ''} job(s)</span></div>
      <table id="jobs"><thead><tr><th class="num">job</th><th class="num">iteration</th><th>task</th><th class="num">slot</th><th>status</th><th class="num">score</th><th class="num">reward</th>
      <th class="num">steps / examples</th><th class="num">CPU s</th><th class="num">wall s</th><th>failure reason</th></tr></thead><tbody>${rows}</tbody></table>`;
    for (const sel of /** @type {NodeListOf<HTMLSelectElement>} */ (main.querySelectorAll('select[data-filter]'))) {
      sel.addEventListener('change', () => {
        if (sel.value) params.set(sel.dataset.filter, sel.value);
        else params.delete(sel.dataset.filter);
        history.replaceState(null, '', `${location.pathname}${params.toString() ? `?${params}` : ''}`);
        render().catch(fail);
      });
    }
    done();
  };
  await render();
  live(key, render);
}

// ---- one job -------------------------------------------------------------------------------
/** The spec as JSON lines, each tagged with its path, highlighted where it differs. */
function specHtml(spec, diffBase, diffBest) {
  const base = new Set(diffBase);
  const best = new Set(diffBest);
  const lines = [];
  const seen = new Set();
  const line = (depth, text, path) => {
    seen.add(path);
    const cls = `l${base.has(path) ? ' d-base' : ''}${best.has(path) ? ' d-best' : ''}`;
    lines.push(`<span class="${cls}" data-path="${esc(path)}">${'  '.repeat(depth)}${esc(text)}</span>`);
  };
  const walk = (v, depth, path, prefix, last) => {
    const comma = last ? '' : ',';
    const isObj = v && typeof v === 'object' && !Array.isArray(v);
    const flatArray = Array.isArray(v) && v.every((e) => e === null || typeof e !== 'object');
    if (isObj && Object.keys(v).length) {
      line(depth, `${prefix}{`, `${path}{`);
      const keys = Object.keys(v);
      keys.forEach((k, i) => walk(v[k], depth + 1, path ? `${path}.${k}` : k, `${JSON.stringify(k)}: `, i === keys.length - 1));
      line(depth, `}${comma}`, `${path}}`);
    } else if (Array.isArray(v) && !flatArray) {
      line(depth, `${prefix}[`, `${path}[`);
      v.forEach((e, i) => walk(e, depth + 1, `${path}[${i}]`, '', i === v.length - 1));
      line(depth, `]${comma}`, `${path}]`);
    } else line(depth, `${prefix}${JSON.stringify(v)}${comma}`, path);
  };
  walk(spec, 0, '', '', true);
  const absent = [...new Set([...diffBase, ...diffBest])].filter((p) => !seen.has(p));
  return { html: lines.join(''), absent };
}
/** The value at a path like `algorithm.hidden[1]`. */
function at(obj, path) {
  let v = obj;
  for (const part of path.match(/[^.[\]]+/g) || []) v = v == null ? undefined : v[part];
  return v;
}

async function jobPage(key, id) {
  setCrumbs([
    ['runs', '/'],
    [key, `/runs/${key}`],
    ['jobs', `/runs/${key}/jobs`],
    [`job ${id}`, null],
  ]);
  let curveName = null;
  let last = '';
  const render = async () => {
    const text = JSON.stringify(await getJson(`/api/runs/${encodeURIComponent(key)}/jobs/${id}`));
    if (text === last) return; // the run changed, this job did not: keep the page (and its scroll) as it is
    last = text;
    const d = JSON.parse(text);
    const j = d.job;
    const names = Object.keys(d.curves);
    // The curve that says most about learning: the return, else an accuracy or a loss, else the first.
    const pick = ['charts/episodic_return', ...names.filter((n) => /accuracy/.test(n)), ...names.filter((n) => /loss/.test(n))].find((n) => names.includes(n));
    if (!curveName || !names.includes(curveName)) curveName = pick || names[0] || null;
    const spec = specHtml(d.spec, d.diff.baseline, d.diff.best);
    const diffRows = (paths, other) =>
      paths.length
        ? `<table><thead><tr><th>field</th><th>this job</th><th>there</th></tr></thead><tbody>${paths.map((p) => `<tr><td><code>${esc(p)}</code></td><td><code>${esc(JSON.stringify(at(d.spec, p)))}</code></td><td><code>${esc(JSON.stringify(at(other, p)))}</code></td></tr>`).join('')}</tbody></table>`
        : '<p class="muted">identical</p>';
    main.innerHTML = `<h1>Job ${j.id} · ${esc(j.task)} · ${j.kind === 'baseline' ? 'baseline' : `iteration ${j.iteration + 1}, slot ${j.slot}`}</h1>
      <div class="cards">
        <div class="card"><small>status</small><b class="status-${esc(j.status)}">${esc(j.status)}</b></div>
        <div class="card"><small>normalised score</small><b id="score">${num(j.normalized)}${j.stderr !== null ? ` ± ${num(j.stderr)}` : ''}</b></div>
        <div class="card"><small>raw score</small><b>${num(j.raw)}</b></div>
        <div class="card"><small>outer reward</small><b>${num(j.reward)}</b>${j.advantage !== null ? `<small>advantage ${num(j.advantage)}</small>` : ''}</div>
        <div class="card"><small>${j.examples ? 'examples' : 'env steps'}</small><b>${int(j.examples || j.envSteps)}</b></div>
        <div class="card"><small>CPU / wall seconds</small><b>${num(j.cpuSeconds, 1)} / ${num(j.wallSeconds, 1)}</b></div>
      </div>
      ${j.error || j.failureKind ? `<p class="error"><b>${esc(j.failureKind || 'error')}</b>: ${esc(j.error)}</p>` : ''}
      ${j.cacheHit ? `<p class="muted">Result reused from an identical earlier job: ${esc(j.cacheHit)}</p>` : ''}
      <p class="muted">agent ${esc(j.agent)} · finished ${when(j.finishedAt)} · artifact ${esc(j.artifactDir || '–')}</p>
      <div class="two">
        <div><h2>Spec</h2>
          <p class="muted"><span class="legend-box" style="background:#fef3c7"></span>differs from the baseline spec${d.baseline ? ` (<a href="/runs/${esc(key)}/jobs/${d.baseline.id}">job ${d.baseline.id}</a>)` : ' (none in this run)'}
          &nbsp; <span class="legend-box" style="box-shadow: inset 3px 0 0 #7c3aed"></span>differs from the best job before it${d.bestBefore ? ` (<a href="/runs/${esc(key)}/jobs/${d.bestBefore.id}">job ${d.bestBefore.id}</a>, ${num(d.bestBefore.normalized)})` : ' (none yet)'}</p>
          <pre class="spec" id="spec">${spec.html}</pre>
          ${spec.absent.length ? `<p class="muted">Fields the others have and this spec lacks: ${spec.absent.map((p) => `<code>${esc(p)}</code>`).join(', ')}</p>` : ''}
          ${d.patch ? `<h2>Written as a patch</h2><p class="muted">The answer was a JSON merge patch over the task's baseline spec; the spec above is the patch applied.</p><pre class="spec" id="patch">${esc(JSON.stringify(d.patch, null, 2))}</pre>` : ''}
        </div>
        <div><h2>Training curve</h2>
          ${names.length ? `<select id="curve">${names.map((n) => `<option${n === curveName ? ' selected' : ''}>${esc(n)}</option>`).join('')}</select><div class="panel"><div id="c-curve"></div></div>` : '<p class="muted">No curve recorded.</p>'}
          ${d.baseline ? `<h2>Against the baseline spec</h2>${diffRows(d.diff.baseline, d.baseline.spec)}` : ''}
          ${d.bestBefore ? `<h2>Against the best job before it</h2>${diffRows(d.diff.best, d.bestBefore.spec)}` : ''}
          ${d.rewardDetail ? `<h2>Reward</h2><pre class="spec">${esc(JSON.stringify(d.rewardDetail, null, 2))}</pre>` : ''}
        </div>
      </div>
      ${
        d.llm
          ? `<h2>LLM messages${d.llm.model ? ` (${esc(d.llm.model)})` : ''}</h2>${d.llm.messages.map((m) => `<div class="msg"><div class="role">${esc(m.role)}</div><pre>${esc(m.content)}</pre></div>`).join('')}
        <div class="msg"><div class="role">reply</div><pre>${esc(d.llm.completion ?? '(no reply)')}</pre></div>`
          : ''
      }`;
    charts.delete('c-curve');
    const drawCurve = () => {
      const c = d.curves[curveName];
      if (c) chart('c-curve', c.step, [{ label: curveName, values: c.value }], { xLabel: 'step', yLabel: curveName });
    };
    drawCurve();
    const sel = /** @type {HTMLSelectElement | null} */ (document.getElementById('curve'));
    if (sel)
      sel.addEventListener('change', () => {
        curveName = sel.value;
        charts.delete('c-curve');
        document.getElementById('c-curve').innerHTML = '';
        drawCurve();
      });
    done();
  };
  await render();
  live(key, render);
}

// ---- a transfer experiment -----------------------------------------------------------------
/** The report's markdown as HTML: headings, tables, paragraphs, **bold** and `code` (everything escaped first). */
function markdown(md) {
  const inline = (t) =>
    esc(t)
      .replace(/\*\*([^*]+)\*\*/g, '<b>$1</b>')
      .replace(/`([^`]+)`/g, '<code>$1</code>');
  const out = [];
  const lines = md.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const h = /^(#{1,4})\s+(.*)$/.exec(line);
    if (h) out.push(`<h${h[1].length + 1}>${inline(h[2])}</h${h[1].length + 1}>`);
    else if (line.startsWith('|')) {
      const rows = [];
      while (i < lines.length && lines[i].startsWith('|')) rows.push(lines[i++]);
      i -= 1;
      const cells = (r) =>
        r
          .replace(/^\|/, '')
          .replace(/\|\s*$/, '')
          .split('|')
          .map((c) => c.trim());
      const body = rows.slice(2).map(
        (r) =>
          `<tr>${cells(r)
            .map((c, k) => `<td${k ? ' class="num"' : ''}>${inline(c)}</td>`)
            .join('')}</tr>`,
      );
      out.push(
        `<table><thead><tr>${cells(rows[0])
          .map((c, k) => `<th${k ? ' class="num"' : ''}>${inline(c)}</th>`)
          .join('')}</tr></thead><tbody>${body.join('')}</tbody></table>`,
      );
    } else if (line.trim()) out.push(`<p>${inline(line)}</p>`);
  }
  return out.join('\n');
}

async function experimentPage(key) {
  setCrumbs([
    ['runs', '/'],
    [`experiment ${key}`, null],
  ]);
  liveEl.textContent = 'files, not live';
  const d = await getJson(`/api/experiments/${encodeURIComponent(key)}`);
  const plots = d.plots
    .map(
      (p) =>
        `<div class="panel"><img alt="${esc(p)}" src="/api/experiments/${encodeURIComponent(key)}/plots/${encodeURIComponent(p)}" style="max-width:100%"></div>`,
    )
    .join('');
  main.innerHTML = `<div id="report">${d.markdown ? markdown(d.markdown) : '<p class="muted">The report is not written yet (the experiment is still running).</p>'}</div>
    ${plots ? `<h2>Plots</h2><div class="grid">${plots}</div>` : ''}<p class="muted">${esc(d.dir)}</p>`;
  done();
}

// ---- router --------------------------------------------------------------------------------
(function route() {
  const p = location.pathname.replace(/\/+$/, '') || '/';
  let m;
  if (p === '/') return runsPage().catch(fail);
  if ((m = /^\/runs\/([^/]+)$/.exec(p))) return runPage(decodeURIComponent(m[1])).catch(fail);
  if ((m = /^\/runs\/([^/]+)\/jobs$/.exec(p))) return jobsPage(decodeURIComponent(m[1])).catch(fail);
  if ((m = /^\/runs\/([^/]+)\/jobs\/(\d+)$/.exec(p))) return jobPage(decodeURIComponent(m[1]), Number(m[2])).catch(fail);
  if ((m = /^\/experiments\/([^/]+)$/.exec(p))) return experimentPage(decodeURIComponent(m[1])).catch(fail);
  fail(new Error(`no page ${p}`));
})();
