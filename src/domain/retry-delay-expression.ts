/** Upper bound (one day) for any evaluated retry delay, in milliseconds. */
export const RETRY_DELAY_MAX_MS = 86_400_000;
/** Longest accepted `Retry-Delay` expression, in characters. */
export const RETRY_DELAY_EXPRESSION_MAX_LENGTH = 512;
/** Deepest accepted nesting of parentheses, calls, unary minus and powers. */
export const RETRY_DELAY_EXPRESSION_MAX_DEPTH = 32;

/** A compiled `Retry-Delay` expression. */
export interface RetryDelayExpression {
  /** The expression text as given. */
  readonly source: string;
  /**
   * Delay in milliseconds for the given retry (0 on the first retry),
   * clamped to [0, RETRY_DELAY_MAX_MS]; non-finite results yield the cap.
   */
  evaluate(retried: number): number;
}

type Node = (retried: number) => number;
type Token =
  | { kind: "number"; value: number; pos: number; text: string }
  | { kind: "ident"; name: string; pos: number; text: string }
  | { kind: "punct"; pos: number; text: string }
  | { kind: "end"; pos: number; text: string };

interface FunctionSpec {
  arity: number | "variadic";
  fn: (...args: number[]) => number;
}

const FUNCTIONS = new Map<string, FunctionSpec>([
  ["pow", { arity: 2, fn: (a, b) => Math.pow(a!, b!) }],
  ["sqrt", { arity: 1, fn: Math.sqrt }],
  ["abs", { arity: 1, fn: Math.abs }],
  ["exp", { arity: 1, fn: Math.exp }],
  ["floor", { arity: 1, fn: Math.floor }],
  ["ceil", { arity: 1, fn: Math.ceil }],
  ["round", { arity: 1, fn: Math.round }],
  ["min", { arity: "variadic", fn: Math.min }],
  ["max", { arity: "variadic", fn: Math.max }],
]);

const BINARY = new Map<string, (a: number, b: number) => number>([
  ["+", (a, b) => a + b],
  ["-", (a, b) => a - b],
  ["*", (a, b) => a * b],
  ["/", (a, b) => a / b],
  ["%", (a, b) => a % b],
]);

const TOKEN = /\s*(?:(\d+(?:\.\d*)?|\.\d+)|([A-Za-z_][A-Za-z0-9_]*)|([-+*/%^(),]))/y;

/**
 * Compiles a `Retry-Delay` header value: an arithmetic expression in
 * milliseconds over the variable `retried`, with `+ - * / % ^`, unary minus,
 * parentheses and the functions pow, sqrt, abs, exp, floor, ceil, round, min
 * and max. Throws an Error describing the problem on invalid input.
 */
export function compileRetryDelay(expression: string): RetryDelayExpression {
  if (expression.length > RETRY_DELAY_EXPRESSION_MAX_LENGTH) {
    throw invalid(expression, `longer than ${RETRY_DELAY_EXPRESSION_MAX_LENGTH} characters`);
  }
  if (expression.trim() === "") throw invalid(expression, "empty expression");
  const node = new Parser(expression).parse();
  return { source: expression, evaluate: (retried) => clamp(node(retried)) };
}

function clamp(value: number): number {
  if (!Number.isFinite(value)) return RETRY_DELAY_MAX_MS;
  return Math.min(Math.max(value, 0), RETRY_DELAY_MAX_MS);
}

function invalid(source: string, detail: string): Error {
  const shown = source.length > 64 ? `${source.slice(0, 64)}…` : source;
  return new Error(`invalid retry delay expression ${JSON.stringify(shown)}: ${detail}`);
}

function arityProblem({ arity }: FunctionSpec, count: number): string | null {
  if (arity === "variadic") return count >= 1 ? null : `at least 1 argument, got ${count}`;
  return count === arity ? null : `${arity} argument${arity === 1 ? "" : "s"}, got ${count}`;
}

function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  TOKEN.lastIndex = 0;
  for (;;) {
    const start = TOKEN.lastIndex;
    const match = TOKEN.exec(source);
    if (!match) {
      const pos = start + source.slice(start).search(/\S|$/);
      if (pos >= source.length) break;
      throw invalid(source, `unexpected character ${JSON.stringify(source[pos])} at ${pos}`);
    }
    const text = match[1] ?? match[2] ?? match[3]!;
    const pos = TOKEN.lastIndex - text.length;
    if (match[1] !== undefined) tokens.push({ kind: "number", value: Number(text), pos, text });
    else if (match[2] !== undefined) tokens.push({ kind: "ident", name: text.toLowerCase(), pos, text });
    else tokens.push({ kind: "punct", pos, text });
  }
  tokens.push({ kind: "end", pos: source.length, text: "" });
  return tokens;
}

class Parser {
  private readonly tokens: Token[];
  private index = 0;
  private depth = 0;

  constructor(private readonly source: string) {
    this.tokens = tokenize(source);
  }

  parse(): Node {
    const node = this.expression();
    const next = this.peek();
    if (next.kind !== "end") throw this.unexpected(next);
    return node;
  }

  private expression(): Node {
    return this.nested(() => {
      let left = this.term();
      while (this.isPunct("+") || this.isPunct("-")) left = this.binary(left, () => this.term());
      return left;
    });
  }

  private term(): Node {
    let left = this.unary();
    while (this.isPunct("*") || this.isPunct("/") || this.isPunct("%")) {
      left = this.binary(left, () => this.unary());
    }
    return left;
  }

  private unary(): Node {
    if (!this.isPunct("-")) return this.power();
    this.index++;
    const operand = this.nested(() => this.unary());
    return (r) => -operand(r);
  }

  private power(): Node {
    const base = this.primary();
    if (!this.isPunct("^")) return base;
    this.index++;
    const exponent = this.nested(() => this.unary());
    return (r) => Math.pow(base(r), exponent(r));
  }

  private primary(): Node {
    const token = this.next();
    if (token.kind === "number") return () => token.value;
    if (token.kind === "ident") return this.identifier(token);
    if (token.kind === "punct" && token.text === "(") {
      const inner = this.expression();
      this.expect(")");
      return inner;
    }
    throw this.unexpected(token);
  }

  private identifier(token: Token & { kind: "ident" }): Node {
    if (token.name === "retried") return (r) => r;
    const spec = FUNCTIONS.get(token.name);
    if (!spec) throw invalid(this.source, `unknown identifier ${JSON.stringify(token.text)} at ${token.pos}`);
    this.expect("(");
    const args = this.arguments();
    const problem = arityProblem(spec, args.length);
    if (problem) throw invalid(this.source, `${token.name}() expects ${problem} at ${token.pos}`);
    return (r) => spec.fn(...args.map((arg) => arg(r)));
  }

  private arguments(): Node[] {
    const args: Node[] = [];
    if (this.isPunct(")")) {
      this.index++;
      return args;
    }
    for (;;) {
      args.push(this.expression());
      if (this.isPunct(")")) break;
      this.expect(",");
    }
    this.index++;
    return args;
  }

  private binary(left: Node, right: () => Node): Node {
    const op = BINARY.get(this.next().text)!;
    const rhs = right();
    return (r) => op(left(r), rhs(r));
  }

  private nested(parse: () => Node): Node {
    if (++this.depth > RETRY_DELAY_EXPRESSION_MAX_DEPTH) {
      throw invalid(this.source, `nested deeper than ${RETRY_DELAY_EXPRESSION_MAX_DEPTH} levels at ${this.peek().pos}`);
    }
    const node = parse();
    this.depth--;
    return node;
  }

  private expect(text: string): void {
    const token = this.next();
    if (token.kind !== "punct" || token.text !== text) throw this.unexpected(token);
  }

  private isPunct(text: string): boolean {
    const token = this.peek();
    return token.kind === "punct" && token.text === text;
  }

  private peek(): Token {
    return this.tokens[this.index]!;
  }

  private next(): Token {
    const token = this.peek();
    if (token.kind !== "end") this.index++;
    return token;
  }

  private unexpected(token: Token): Error {
    if (token.kind === "end") return invalid(this.source, "unexpected end of expression");
    return invalid(this.source, `unexpected token ${JSON.stringify(token.text)} at ${token.pos}`);
  }
}
