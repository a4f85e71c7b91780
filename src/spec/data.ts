/**
 * The data that passes between steps: the data layer's one value: a table of numeric features and a target.
 * Plain JSON-serialisable arrays, so a dataset can cross a worker or process boundary as is.
 */

/**
 * How a feature column's cells are coded in `x`: a number, or the index of its level in `levels`;
 * either is NaN where the cell is missing (null once written as JSON).
 */
export type ColumnInfo = { kind: 'numeric' } | { kind: 'categorical'; levels: string[] };

/** A supervised dataset: numeric features `x` (row-major) and one target per row `y`. */
export interface Dataset {
  /** Short identifier of the source, e.g. `penguins`; transformations keep it and log themselves in `history`. */
  name: string;
  /** Feature names, valid identifiers (they appear in weight expressions), one per column of `x`. */
  features: string[];
  /** Name of the target variable (e.g. `species`, `mpg`). */
  target: string;
  /** `classification`: `y` holds class indices into `classes`; `regression`: `y` holds values. */
  kind: 'classification' | 'regression';
  /** Class names (classification only); `y[i]` indexes this list. */
  classes?: string[];
  /**
   * Each feature's coding, one per feature; absent when every feature is numeric and no cell is
   * missing (then `x` is what the network reads, standardised). Present, the job's dataset
   * decisions turn `x` into the network's inputs (`inner/data/columns.ts`).
   */
  columns?: ColumnInfo[];
  /** Feature rows; `x[i].length === features.length`. */
  x: number[][];
  /** Targets, one per row. */
  y: number[];
  /** One sentence per feature (and the target) with its meaning and unit, for task briefs. */
  descriptions: Record<string, string>;
  /** One line on where the data comes from and how it was cleaned. */
  summary?: string;
  /** The transformations applied since loading, oldest first, e.g. `labelNoise(rate=0.2, seed=1)`. */
  history?: string[];
}

/** Summary of one feature column, for describing variables in a brief. */
export interface FeatureInfo {
  name: string;
  description: string;
  min: number;
  max: number;
  mean: number;
  std: number;
}

/** Rows of one source: raw features and labels (class index or value). */
export interface SourceData {
  x: number[][];
  y: number[];
}

/**
 * The data a job receives from the harness: for supervised jobs only the sources its spec
 * names; for control jobs the demonstration set it names, if any.
 */
export interface SupervisedData {
  sources: Record<string, SourceData>;
  /** The features' coding in every source (`Dataset.columns`); absent: numeric and complete. */
  columns?: ColumnInfo[];
  demonstrations?: { obs: number[][]; actions: number[] };
}
