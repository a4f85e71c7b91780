/**
 * The inputs an exported model takes for rows coded as the engine reads them (`Dataset.columns`:
 * numbers, level indices, NaN where empty): what the equality checks feed the graph beside the
 * engine's own `ModelRunner` on the same rows.
 */
import { rawColumns } from '../data/columns.js';
import type { ModelFile } from '../model.js';
import type { InputValues } from './session.js';

/** One input per column for coded rows: doubles for numeric columns, level texts ("" where empty or unknown) for categorical ones. */
export function inputsFromCoded(file: ModelFile, x: readonly (readonly (number | null)[])[]): Record<string, InputValues> {
  const names = file.columns ? file.columns.names : file.features;
  const codings = file.columns?.codings ?? names.map(() => ({ kind: 'numeric' as const }));
  const out: Record<string, InputValues> = {};
  // The engine's own reading of coded rows: a code that names no level is a missing cell.
  for (const c of rawColumns(x, names, codings)) {
    out[c.name] = c.kind === 'numeric' ? { type: 'double', values: Float64Array.from(c.values) } : { type: 'string', values: c.values.map((v) => v ?? '') };
  }
  return out;
}
