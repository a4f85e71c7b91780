/** SVG plots of experiments, rendered with Vega-Lite (no browser, no canvas). */
import type { TopLevelSpec } from 'vega-lite';

/** Renders a Vega-Lite spec to an SVG string. */
export async function renderSvg(spec: TopLevelSpec): Promise<string> {
  // Loaded here, not at the top: every `rrl` command imports this module, few of them plot.
  const [vega, { compile }] = await Promise.all([import('vega'), import('vega-lite')]);
  const view = new vega.View(vega.parse(compile(spec).spec), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

/** The outer learning curve: mean reward and mean normalised hidden score per iteration, under `title`. */
export function learningCurveSpec(
  points: { iteration: number; meanReward: number; meanNormalized: number | null }[],
  title = 'Meta-training on the train tasks',
): TopLevelSpec {
  const values = points.flatMap((p) => [
    { iteration: p.iteration + 1, series: 'mean outer reward', value: p.meanReward },
    ...(p.meanNormalized === null ? [] : [{ iteration: p.iteration + 1, series: 'mean normalised hidden score', value: p.meanNormalized }]),
  ]);
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title,
    width: 480,
    height: 260,
    data: { values },
    mark: { type: 'line', point: true },
    encoding: {
      x: { field: 'iteration', type: 'quantitative', title: 'outer iteration', axis: { tickMinStep: 1 } },
      y: { field: 'value', type: 'quantitative', title: null },
      color: { field: 'series', type: 'nominal', title: null },
    },
  };
}

/** Held-out comparison: mean normalised hidden score per method. */
export function comparisonSpec(rows: { method: string; score: number }[]): TopLevelSpec {
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: 'Held-out tasks: mean normalised hidden score',
    width: Math.max(480, 32 * rows.length),
    height: 260,
    data: { values: rows },
    mark: 'bar',
    encoding: {
      x: { field: 'method', type: 'nominal', sort: null, title: null, axis: { labelAngle: -30, labelLimit: 260 } },
      y: { field: 'score', type: 'quantitative', title: 'mean normalised score' },
    },
  };
}
