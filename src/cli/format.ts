import Table from 'cli-table3';
import cliProgress from 'cli-progress';

/** Formats a number for a table cell (— for null). */
export function num(v: number | null | undefined, digits = 3): string {
  if (v === null || v === undefined || Number.isNaN(v)) return '—';
  return Math.abs(v) >= 1000 ? Math.round(v).toLocaleString('en-US') : v.toFixed(digits);
}

/** Renders rows as a bordered text table. */
export function table(head: string[], rows: (string | number)[][]): string {
  const t = new Table({ head, style: { head: [], border: [] } });
  for (const r of rows) t.push(r.map(String));
  return t.toString();
}

/** A progress bar on stderr when it is a terminal, else plain log lines every `every` units. */
export function progressBar(label: string, total: number): { update(v: number, info?: string): void; stop(): void } {
  if (process.stderr.isTTY) {
    const bar = new cliProgress.SingleBar(
      { format: `${label} [{bar}] {value}/{total} {info}`, stream: process.stderr, hideCursor: true, clearOnComplete: false },
      cliProgress.Presets.shades_classic,
    );
    bar.start(total, 0, { info: '' });
    return { update: (v, info = '') => bar.update(v, { info }), stop: () => bar.stop() };
  }
  let lastPct = -1;
  return {
    update(v, info = '') {
      const pct = total > 0 ? Math.floor((100 * v) / total / 25) * 25 : 100;
      if (pct !== lastPct) {
        lastPct = pct;
        process.stderr.write(`${label}: ${v}/${total} ${info}\n`);
      }
    },
    stop() {},
  };
}
