/** JSON Lines, the form of every training-data file the harness writes (GRPO, SFT and policy-update batches). */
import { writeFileSync } from 'node:fs';

/** Writes `rows` to `path` as JSON Lines: one JSON value a line, each line ended (an empty file for none). */
export function writeJsonLines(path: string, rows: unknown[]): void {
  writeFileSync(path, rows.map((r) => JSON.stringify(r)).join('\n') + (rows.length ? '\n' : ''));
}
