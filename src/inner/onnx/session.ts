/**
 * An exported model run through ONNX Runtime (`onnxruntime-node`, its CPU build): columns of cells
 * in, the graph's outputs as plain arrays out. `rrl predict` and the equality checks both run
 * models through this one place.
 */
import ort from 'onnxruntime-node';

/**
 * Basic graph optimisations only: the extended ones fuse a scalar Mul or Div into a MatMul's
 * float32 `alpha`, which moves a double model's outputs by ~1e-8 relative.
 */
const OPTIONS: ort.InferenceSession.SessionOptions = { graphOptimizationLevel: 'basic' };

/** One input's values: numbers (NaN where empty) for a double input, texts ("" where empty) for a string one. */
export type InputValues = { type: 'double'; values: Float64Array; width?: number } | { type: 'string'; values: string[] };

/** An output as plain values: numbers, or texts for a string output, with its shape. */
export interface OutputValues {
  dims: number[];
  values: number[] | string[];
}

/** A loaded model. */
export class OnnxSession {
  private constructor(private readonly session: ort.InferenceSession) {}

  /** Loads a model from bytes or a file; a file that is not an ONNX model this runtime can run is an error in one line. */
  static async load(model: Uint8Array | string): Promise<OnnxSession> {
    try {
      const s = typeof model === 'string' ? await ort.InferenceSession.create(model, OPTIONS) : await ort.InferenceSession.create(model, OPTIONS);
      return new OnnxSession(s);
    } catch (err) {
      const first = String((err as Error).message ?? err).split('\n')[0];
      throw new Error(`not an ONNX model ONNX Runtime can load (${first.slice(0, 200)})`);
    }
  }

  /** The graph's input names, in order. */
  get inputNames(): readonly string[] {
    return this.session.inputNames;
  }

  /** The graph's output names, in order. */
  get outputNames(): readonly string[] {
    return this.session.outputNames;
  }

  /** Runs the graph on `rows` rows of inputs; every input of the graph must be given. */
  async run(inputs: Record<string, InputValues>, rows: number): Promise<Record<string, OutputValues>> {
    const feeds: Record<string, ort.Tensor> = {};
    for (const [name, v] of Object.entries(inputs)) {
      feeds[name] =
        v.type === 'double'
          ? new ort.Tensor('float64', v.values, v.width === undefined ? [rows] : [rows, v.width])
          : new ort.Tensor('string', v.values, [rows]);
    }
    const out = await this.session.run(feeds);
    const result: Record<string, OutputValues> = {};
    for (const [name, t] of Object.entries(out)) {
      const data = t.data as ArrayLike<number | bigint | string>;
      const values = t.type === 'string' ? Array.from(data as string[]) : Array.from(data as ArrayLike<number | bigint>, (x) => Number(x));
      result[name] = { dims: t.dims.map(Number), values };
    }
    return result;
  }

  /** Frees the runtime's memory for this model. */
  async close(): Promise<void> {
    await this.session.release();
  }
}
