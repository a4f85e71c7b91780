/**
 * Checking and compiling a mathjs parse tree: every node is checked against the whitelist
 * (`operations.ts`) and compiled once into nested closures over an array of variable values;
 * a rejected node throws an `ExpressionError` that points at it in the source.
 */
import { ExpressionError, lex, locate } from './expression-error.js';
import {
  ALLOWED_FUNCTIONS,
  BINARY,
  CHAIN_CLASS,
  CONSTANTS,
  type Code,
  EMPTY,
  EXPRESSION_LIMITS,
  FUNCTION_SPECS,
  OPERATOR_HINTS,
  binaryCode,
  fnOf,
  powCode,
} from './operations.js';

/** The fields of mathjs nodes that the checker reads; everything is verified before use. */
export interface RawNode {
  readonly type: string;
  readonly name?: string;
  readonly value?: unknown;
  readonly op?: string;
  readonly fn?: unknown;
  readonly args?: readonly RawNode[];
  readonly content?: RawNode;
  readonly condition?: RawNode;
  readonly trueExpr?: RawNode;
  readonly falseExpr?: RawNode;
  readonly params?: readonly RawNode[];
  readonly conditionals?: readonly string[];
  readonly blocks?: readonly { node: RawNode }[];
  toString(): string;
}

/** Checks and compiles one expression's tree; `used` collects the indices of the variables it reads. */
export class Compiler {
  readonly used = new Set<number>();

  /** A compiler for `source` over `variables` (`index`: name → position); `label` names the expression in messages. */
  constructor(
    private readonly source: string,
    private readonly variables: readonly string[],
    private readonly index: ReadonlyMap<string, number>,
    private readonly label: string,
  ) {}

  /** Throws an ExpressionError at `node` (or at `token`, a piece of it, when given). */
  reject(node: RawNode | null, reason: string, token?: string): never {
    let text = token ?? (node === null ? '' : safeToString(node));
    const found = locate(this.source, text);
    let position: number | undefined;
    if (found !== null) {
      text = found.text;
      position = found.start;
    }
    throw new ExpressionError(this.source, text, reason, position, this.label);
  }

  /**
   * Compiles `node`; a part without variables is folded to its value here, and a fold that
   * gives Infinity or NaN (`1/0`, `log(0)`, `(1e6^8)^8`) is refused now rather than at run time.
   */
  compile(node: RawNode, depth: number): Code {
    const code = this.compileNode(node, depth);
    if (code.kind === 'const' && !Number.isFinite(code.value)) {
      this.reject(node, `this constant part evaluates to ${code.value}; every constant must be a finite number`);
    }
    return code;
  }

  private compileNode(node: RawNode, depth: number): Code {
    if (depth > EXPRESSION_LIMITS.maxDepth) {
      this.reject(node, `expression is nested too deeply (more than ${EXPRESSION_LIMITS.maxDepth} levels)`);
    }
    switch (node.type) {
      case 'ConstantNode':
        return this.constant(node);
      case 'SymbolNode':
        return this.symbol(node);
      case 'ParenthesisNode':
        return this.compile(node.content as RawNode, depth + 1);
      case 'OperatorNode':
        return this.operator(node, depth);
      case 'RelationalNode':
        return this.relational(node, depth);
      case 'ConditionalNode': {
        const c = this.compile(node.condition as RawNode, depth + 1);
        const a = this.compile(node.trueExpr as RawNode, depth + 1);
        const b = this.compile(node.falseExpr as RawNode, depth + 1);
        if (c.kind === 'const') return c.value ? a : b;
        const cf = c.fn;
        const af = fnOf(a);
        const bf = fnOf(b);
        return { kind: 'fn', fn: (v) => (cf(v) ? af(v) : bf(v)) };
      }
      case 'FunctionNode':
        return this.call(node, depth);
      case 'AssignmentNode':
        return this.reject(node, 'assignment is not allowed', '=');
      case 'FunctionAssignmentNode':
        return this.reject(node, 'function definition is not allowed', '=');
      case 'AccessorNode':
      case 'IndexNode':
        return this.reject(node, 'property access is not allowed');
      case 'ObjectNode':
        return this.reject(node, 'objects are not allowed');
      case 'ArrayNode':
        return this.reject(node, 'matrices are not allowed');
      case 'RangeNode':
        return this.reject(node, 'ranges are not allowed');
      case 'BlockNode': {
        const blocks = node.blocks ?? [];
        if (blocks.length === 1) return this.compile(blocks[0].node, depth); // a trailing ";" or newline
        const at = this.source.search(/[;\n]/);
        return this.reject(null, 'multiple statements are not allowed', at >= 0 ? this.source[at] : ';');
      }
      default:
        return this.reject(node, `${node.type} is not allowed`);
    }
  }

  private constant(node: RawNode): Code {
    const value = node.value;
    if (typeof value === 'number') {
      if (Number.isNaN(value)) return this.reject(node, 'NaN is not allowed');
      if (!(Math.abs(value) <= EXPRESSION_LIMITS.maxLiteral)) {
        return this.reject(node, `number is too large; literals must be at most ${EXPRESSION_LIMITS.maxLiteral} in size`);
      }
      return { kind: 'const', value };
    }
    if (typeof value === 'string') return this.reject(node, 'strings are not allowed');
    if (typeof value === 'boolean') return this.reject(node, 'true/false are not allowed; use 1 or 0');
    if (value === undefined) return this.reject(null, 'expression is empty', '');
    return this.reject(node, `constant ${safeToString(node)} is not allowed`);
  }

  private symbol(node: RawNode): Code {
    const name = String(node.name);
    const i = this.index.get(name);
    if (i !== undefined) {
      this.used.add(i);
      return { kind: 'fn', fn: (v) => v[i] };
    }
    const c = CONSTANTS.get(name);
    if (c !== undefined) return { kind: 'const', value: c };
    if (FUNCTION_SPECS.has(name)) return this.reject(node, `"${name}" is a function; call it as ${FUNCTION_SPECS.get(name)?.usage}`, name);
    return this.reject(node, `unknown name ${JSON.stringify(name)}; ${this.allowedNames()}`, name);
  }

  private allowedNames(): string {
    const vars = this.variables.length === 0 ? 'no variables are allowed' : `allowed variables: ${this.variables.join(', ')}`;
    return `${vars} (constants: ${[...CONSTANTS.keys()].join(', ')})`;
  }

  private operator(node: RawNode, depth: number): Code {
    const fnName = typeof node.fn === 'string' ? node.fn : '';
    const op = String(node.op);
    const args = node.args ?? [];
    if (args.length === 1) {
      if (fnName === 'unaryMinus' || fnName === 'unaryPlus' || fnName === 'not') {
        const a = this.compile(args[0], depth + 1);
        if (fnName === 'unaryPlus') return a;
        if (a.kind === 'const') return { kind: 'const', value: fnName === 'not' ? (a.value ? 0 : 1) : -a.value };
        const f = a.fn;
        return { kind: 'fn', fn: fnName === 'not' ? (v) => (f(v) ? 0 : 1) : (v) => -f(v) };
      }
    } else if (args.length === 2) {
      if (fnName === 'pow') return this.power(node, args[0], args[1], depth);
      if (BINARY.has(fnName)) {
        const cls = CHAIN_CLASS.get(fnName);
        const left = args[0];
        const leftFn = left.type === 'OperatorNode' && typeof left.fn === 'string' && left.args?.length === 2 ? left.fn : '';
        const leftDepth = cls !== undefined && CHAIN_CLASS.get(leftFn) === cls ? depth : depth + 1;
        const a = this.compile(left, leftDepth);
        const b = this.compile(args[1], depth + 1);
        return binaryCode(fnName, a, b);
      }
    }
    return this.reject(node, OPERATOR_HINTS.get(fnName) ?? `operator ${JSON.stringify(op)} is not allowed`, op);
  }

  private power(node: RawNode, baseNode: RawNode, expNode: RawNode, depth: number): Code {
    const tooLarge = `exponent is too large; |exponent| must be at most ${EXPRESSION_LIMITS.maxExponent}`;
    // A literal exponent (under parentheses and signs) is checked before the literal limit applies.
    let e = expNode;
    while (e.type === 'ParenthesisNode' || (e.type === 'OperatorNode' && e.args?.length === 1 && (e.fn === 'unaryMinus' || e.fn === 'unaryPlus'))) {
      e = (e.type === 'ParenthesisNode' ? e.content : e.args?.[0]) as RawNode;
    }
    if (e.type === 'ConstantNode' && typeof e.value === 'number' && !(Math.abs(e.value) <= EXPRESSION_LIMITS.maxExponent)) {
      return this.reject(node, tooLarge);
    }
    const base = this.compile(baseNode, depth + 1);
    const exponent = this.compile(expNode, depth + 1);
    if (exponent.kind !== 'const') {
      return this.reject(node, 'the exponent must be a constant number (use exp(...) for a variable power)');
    }
    if (!(Math.abs(exponent.value) <= EXPRESSION_LIMITS.maxExponent)) return this.reject(node, tooLarge);
    return powCode(base, exponent.value);
  }

  private relational(node: RawNode, depth: number): Code {
    const params = node.params ?? [];
    const conds = node.conditionals ?? [];
    for (const c of conds) {
      if (!BINARY.has(c) || CHAIN_CLASS.has(c)) return this.reject(node, `comparison ${JSON.stringify(c)} is not allowed`);
    }
    const codes = params.map((p) => this.compile(p, depth + 1));
    let result: Code | null = null;
    for (let i = 0; i < conds.length; i++) {
      const cmp = binaryCode(conds[i], codes[i], codes[i + 1]);
      result = result === null ? cmp : binaryCode('and', result, cmp);
    }
    return result ?? this.reject(node, 'empty comparison');
  }

  private call(node: RawNode, depth: number): Code {
    const callee = node.fn as RawNode;
    if (callee.type !== 'SymbolNode') {
      if (callee.type === 'AccessorNode') return this.reject(callee, 'property access is not allowed');
      return this.reject(node, 'only the allowed functions can be called');
    }
    const name = String(callee.name);
    const spec = FUNCTION_SPECS.get(name);
    if (spec === undefined) {
      const what = this.index.has(name) ? `"${name}" is a variable, not a function` : `unknown function ${JSON.stringify(name)}`;
      return this.reject(node, `${what}; allowed functions: ${ALLOWED_FUNCTIONS.join(', ')}`, name);
    }
    const args = node.args ?? [];
    if (args.length < spec.minArgs || args.length > spec.maxArgs) {
      const wanted =
        spec.minArgs === spec.maxArgs ? `${spec.minArgs}` : spec.maxArgs === Infinity ? `at least ${spec.minArgs}` : `${spec.minArgs} or ${spec.maxArgs}`;
      return this.reject(node, `${name} takes ${wanted} argument${wanted === '1' ? '' : 's'} (${spec.usage}), got ${args.length}`);
    }
    const codes = args.map((a) => this.compile(a, depth + 1));
    const fn = spec.build(codes);
    return codes.every((c) => c.kind === 'const') ? { kind: 'const', value: fn(EMPTY) } : { kind: 'fn', fn };
  }
}

/** A node's printed form, or its type when printing fails. */
function safeToString(node: RawNode): string {
  try {
    return node.toString();
  } catch {
    return node.type;
  }
}

/** Reads mathjs's syntax error: "Value expected (char 4)" with `char` the 1-based column. */
export function syntaxError(source: string, err: unknown, label: string): ExpressionError {
  const message = err instanceof Error ? err.message : String(err);
  const char = (err as { char?: unknown } | null)?.char;
  const reason = `syntax error: ${message.replace(/\s*\(char \d+\)\s*$/, '')}`;
  if (typeof char !== 'number' || !Number.isInteger(char)) return new ExpressionError(source, '', reason, undefined, label);
  const position = Math.min(Math.max(char - 1, 0), source.length);
  const token = position < source.length ? (lex(source.slice(position))[0]?.text ?? '') : '';
  return new ExpressionError(source, token, reason, position, label);
}
