/**
 * A trained supervised model as a plain file (`model.json`): how it reads a table's columns
 * (categorical levels, fill values), the MLP's weights, the input standardisation and, for
 * regression, the target scaling. The hidden evaluation reads
 * this file with `ModelRunner`, so scoring does not depend on how the job trained.
 */
import { type ColumnEncoding, encodeRows, encodingProblem } from './data/columns.js';
import { type DenseLayer, argmax, mlpForward } from './policy.js';

/** The format tag of `model.json`. */
export const MODEL_FORMAT = 'rrl-mlp-model/1';

/** The artifact's `model.json`. */
export interface ModelFile {
  format: typeof MODEL_FORMAT;
  /** The network's inputs, by name. */
  features: string[];
  /** Present when the table has categorical columns or missing cells: rows are read as coded cells and encoded by it. */
  columns?: ColumnEncoding;
  kind: 'classification' | 'regression';
  classes?: string[];
  activation: 'tanh' | 'relu';
  layers: DenseLayer[];
  inputNorm: { mean: number[]; std: number[] } | null;
  targetNorm: { mean: number; std: number } | null;
}

/** Runs a saved model on raw feature rows. */
export class ModelRunner {
  /** Checks the file's shape and wraps it. */
  constructor(readonly file: ModelFile) {
    if (file.format !== MODEL_FORMAT) throw new Error(`unsupported model format "${String(file.format)}"`);
    if (file.columns !== undefined) {
      const problem = encodingProblem(file.columns, (file.columns as Partial<ColumnEncoding> | null)?.names?.length ?? 0);
      if (problem) throw new Error(`model file: ${problem}`);
      if (file.columns.fitted.features.length !== file.features.length)
        throw new Error(`model file: its columns give ${file.columns.fitted.features.length} inputs, the network reads ${file.features.length}`);
    }
    let width = file.features.length;
    for (const [i, l] of file.layers.entries()) {
      if (l.in !== width || l.weights.length !== l.in * l.out || l.bias.length !== l.out) throw new Error(`model layer ${i} has inconsistent shape`);
      width = l.out;
    }
    const outputs = file.kind === 'classification' ? (file.classes?.length ?? 0) : 1;
    if (width !== outputs) throw new Error(`model outputs ${width} values, expected ${outputs}`);
  }

  /** Raw network outputs for rows of raw features (coded cells when the model reads columns). */
  private forward(rows: number[][]): Float64Array {
    const x = this.file.columns ? encodeRows(this.file.columns, rows) : rows;
    const d = this.file.features.length;
    const flat = new Float64Array(x.length * d);
    const n = this.file.inputNorm;
    x.forEach((row, r) => {
      if (row.length !== d) throw new RangeError(`row ${r} has ${row.length} features, the model takes ${d}`);
      for (let i = 0; i < d; i++) flat[r * d + i] = n ? (row[i] - n.mean[i]) / n.std[i] : row[i];
    });
    return mlpForward(this.file.layers, this.file.activation, flat, x.length);
  }

  /** How many cells a row has: the table's columns when the model reads columns, else its inputs. */
  get rowWidth(): number {
    return this.file.columns ? this.file.columns.names.length : this.file.features.length;
  }

  /** Predictions: class indices for classification, values for regression. */
  predict(x: number[][]): number[] {
    const out = this.forward(x);
    if (this.file.kind === 'classification') {
      const k = this.file.classes!.length;
      return x.map((_, r) => argmax(out, r * k, k));
    }
    const t = this.file.targetNorm;
    return x.map((_, r) => (t ? out[r] * t.std + t.mean : out[r]));
  }

  /** Class probabilities (softmax of the outputs), one row per example; classification only. */
  predictProba(x: number[][]): number[][] {
    if (this.file.kind !== 'classification') throw new Error('class probabilities need a classification model');
    const out = this.forward(x);
    const k = this.file.classes!.length;
    return x.map((_, r) => {
      let max = -Infinity;
      for (let c = 0; c < k; c++) max = Math.max(max, out[r * k + c]);
      const e = Array.from({ length: k }, (_, c) => Math.exp(out[r * k + c] - max));
      const sum = e.reduce((a, b) => a + b, 0);
      return e.map((v) => v / sum);
    });
  }
}
