/**
 * The inputs an exported model takes for rows coded as the engine reads them (`Dataset.columns`:
 * numbers, level indices, NaN where empty): what the equality checks feed the graph beside the
 * engine's own `ModelRunner` on the same rows.
 */
import type { ModelFile } from '../model.js';
import type { InputValues } from './session.js';

/** One input per column for coded rows: doubles for numeric columns, level texts ("" where empty or unknown) for categorical ones. */
export function inputsFromCoded(file: ModelFile, x: readonly (readonly (number | null)[])[]): Record<string, InputValues> {
  const names = file.columns ? file.columns.names : file.features;
  const out: Record<string, InputValues> = {};
  names.forEach((name, j) => {
    const coding = file.columns?.codings[j] ?? { kind: 'numeric' as const };
    if (coding.kind === 'numeric') {
      out[name] = { type: 'double', values: Float64Array.from(x, (row) => (typeof row[j] === 'number' ? (row[j] as number) : NaN)) };
    } else {
      const text = (code: number | null): string =>
        typeof code === 'number' && Number.isInteger(code) && code >= 0 && code < coding.levels.length ? coding.levels[code] : '';
      out[name] = { type: 'string', values: x.map((row) => text(row[j])) };
    }
  });
  return out;
}
