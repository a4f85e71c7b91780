/**
 * A small builder of ONNX graphs over the ONNX project's own protobuf definition (`onnx-proto`):
 * named double, int64 and string constants, nodes of the standard domain and of `ai.onnx.ml`, typed
 * inputs and outputs, and the encoded `ModelProto`. Only what the exported models use.
 */
import onnxProto from 'onnx-proto';

const { onnx } = onnxProto;

/** The standard opset the exported graphs use (Gather, Unsqueeze with axes as input, Clip with bounds as inputs). */
export const ONNX_OPSET = 17;
/** The `ai.onnx.ml` opset (LabelEncoder from strings to int64). */
export const ONNX_ML_OPSET = 3;
/** The IR version that goes with opset 17. */
const IR_VERSION = 8;

/** Element types the exported graphs use. */
export type ElemType = 'double' | 'int64' | 'string';

const DATA_TYPE: Record<ElemType, number> = {
  double: onnx.TensorProto.DataType.DOUBLE,
  int64: onnx.TensorProto.DataType.INT64,
  string: onnx.TensorProto.DataType.STRING,
};

/** An attribute value: an integer, integers, strings or one string. */
export type AttrValue = { int: number } | { ints: number[] } | { strings: string[] } | { string: string };

/** A dimension: a fixed size or a named, free one (the batch). */
export type Dim = number | string;

const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);

function attribute(name: string, v: AttrValue): onnxProto.onnx.IAttributeProto {
  const T = onnx.AttributeProto.AttributeType;
  if ('int' in v) return { name, type: T.INT, i: v.int };
  if ('ints' in v) return { name, type: T.INTS, ints: v.ints };
  if ('strings' in v) return { name, type: T.STRINGS, strings: v.strings.map(utf8) };
  return { name, type: T.STRING, s: utf8(v.string) };
}

function valueInfo(name: string, elem: ElemType, dims: Dim[], doc: string): onnxProto.onnx.IValueInfoProto {
  return {
    name,
    docString: doc,
    type: {
      tensorType: {
        elemType: DATA_TYPE[elem],
        shape: { dim: dims.map((d) => (typeof d === 'number' ? { dimValue: d } : { dimParam: d })) },
      },
    },
  };
}

/** Collects a graph's nodes, constants, inputs and outputs; names of intermediate values are made unique. */
export class GraphBuilder {
  private readonly nodes: onnxProto.onnx.INodeProto[] = [];
  private readonly initializers: onnxProto.onnx.ITensorProto[] = [];
  private readonly inputs: onnxProto.onnx.IValueInfoProto[] = [];
  private readonly outputs: onnxProto.onnx.IValueInfoProto[] = [];
  private counter = 0;

  /** A fresh value name starting with `hint`. */
  fresh(hint: string): string {
    this.counter++;
    return `${hint}_${this.counter}`;
  }

  /** Declares a graph input. */
  input(name: string, elem: ElemType, dims: Dim[], doc = ''): string {
    this.inputs.push(valueInfo(name, elem, dims, doc));
    return name;
  }

  /** Declares the value `name` a graph output. */
  output(name: string, elem: ElemType, dims: Dim[], doc = ''): void {
    this.outputs.push(valueInfo(name, elem, dims, doc));
  }

  /** A double constant of shape `dims` (row-major values); returns its name. */
  doubles(hint: string, values: ArrayLike<number>, dims: number[]): string {
    const name = this.fresh(hint);
    this.initializers.push({ name, dataType: DATA_TYPE.double, dims, doubleData: Array.from(values) });
    return name;
  }

  /** An int64 constant of shape `dims`. */
  int64s(hint: string, values: number[], dims: number[]): string {
    const name = this.fresh(hint);
    this.initializers.push({ name, dataType: DATA_TYPE.int64, dims, int64Data: values });
    return name;
  }

  /** A string constant of shape `dims`. */
  strings(hint: string, values: string[], dims: number[]): string {
    const name = this.fresh(hint);
    this.initializers.push({ name, dataType: DATA_TYPE.string, dims, stringData: values.map(utf8) });
    return name;
  }

  /**
   * Adds a node of `op` (standard domain, or `ai.onnx.ml` when `ml`) and returns its output's
   * name: `out` when given (a graph output), else a fresh one.
   */
  node(op: string, inputs: string[], attrs: Record<string, AttrValue> = {}, o: { out?: string; ml?: boolean } = {}): string {
    const out = o.out ?? this.fresh(op.toLowerCase());
    this.nodes.push({
      opType: op,
      domain: o.ml ? 'ai.onnx.ml' : '',
      name: this.fresh(`n_${op}`),
      input: inputs,
      output: [out],
      attribute: Object.entries(attrs).map(([k, v]) => attribute(k, v)),
    });
    return out;
  }

  /** Renames the value `from` to the graph output `to` (an Identity node). */
  alias(from: string, to: string): void {
    this.node('Identity', [from], {}, { out: to });
  }

  /** The encoded model: this graph under `name`, with `meta` as the model's metadata properties. */
  encode(name: string, doc: string, meta: Record<string, string>, producerVersion: string): Uint8Array {
    const model: onnxProto.onnx.IModelProto = {
      irVersion: IR_VERSION,
      producerName: 'recursive-rl',
      producerVersion,
      docString: doc,
      opsetImport: [
        { domain: '', version: ONNX_OPSET },
        { domain: 'ai.onnx.ml', version: ONNX_ML_OPSET },
      ],
      metadataProps: Object.entries(meta).map(([key, value]) => ({ key, value })),
      graph: { name, node: this.nodes, initializer: this.initializers, input: this.inputs, output: this.outputs },
    };
    return onnx.ModelProto.encode(onnx.ModelProto.create(model)).finish();
  }
}
