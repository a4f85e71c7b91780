/** The part of d3-dsv (no published types in this install) that the task-file reader uses. */
declare module 'd3-dsv' {
  /** Parses CSV text into rows of cells (RFC 4180 quoting); the first row is the header. */
  export function csvParseRows(text: string): string[][];
  /** Parses CSV text, handing each row to `row` (with its index) as it is read; rows it maps to null are not kept. */
  export function csvParseRows<T>(text: string, row: (cells: string[], index: number) => T | null | undefined): T[];
  /** Formats objects as CSV text with a header row of their keys. */
  export function csvFormat(rows: object[]): string;
  /** Formats rows of cells as CSV text (quoting cells that need it). */
  export function csvFormatRows(rows: readonly (readonly (string | number)[])[]): string;
}
