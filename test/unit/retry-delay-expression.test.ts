import { describe, expect, it } from "vitest";
import {
  RETRY_DELAY_EXPRESSION_MAX_DEPTH,
  RETRY_DELAY_EXPRESSION_MAX_LENGTH,
  RETRY_DELAY_MAX_MS,
  compileRetryDelay,
} from "../../src/domain/retry-delay-expression";

const evaluate = (expression: string, retried = 0) => compileRetryDelay(expression).evaluate(retried);

describe("compileRetryDelay", () => {
  it("doubles with pow(2, retried)", () => {
    const delay = compileRetryDelay("1000 * pow(2, retried)");
    expect([0, 1, 2, 3].map((n) => delay.evaluate(n))).toEqual([1000, 2000, 4000, 8000]);
  });

  it("supports max() as a floor", () => {
    const delay = compileRetryDelay("max(10, retried * 500)");
    expect([0, 1, 4].map((n) => delay.evaluate(n))).toEqual([10, 500, 2000]);
  });

  it("exposes the source text", () => {
    expect(compileRetryDelay(" 1000 + retried ").source).toBe(" 1000 + retried ");
  });

  it.each([
    ["42", 42],
    ["1.5", 1.5],
    ["1.", 1],
    [".5", 0.5],
    ["1 + 2 * 3", 7],
    ["(1 + 2) * 3", 9],
    ["10 - 4 - 3", 3],
    ["100 / 10 / 2", 5],
    ["17 % 5", 2],
    ["2 * 3 % 4", 2],
    ["2 ^ 10", 1024],
    ["2 ^ 3 ^ 2", 512],
    ["(2 ^ 3) ^ 2", 64],
    ["2 ^ -1 * 8", 4],
    ["-2 ^ 2 + 10", 6],
    ["(-2) ^ 2", 4],
    ["- -5", 5],
    ["--5", 5],
    ["10 - -5", 15],
    ["3 * -2 + 10", 4],
    ["pow(3, 2)", 9],
    ["sqrt(16)", 4],
    ["abs(-7)", 7],
    ["exp(0)", 1],
    ["floor(2.7)", 2],
    ["ceil(2.1)", 3],
    ["round(2.5)", 3],
    ["min(5, 3, 9)", 3],
    ["max(5, 3, 9)", 9],
    ["min(4)", 4],
    ["max(min(10, 20), 5)", 10],
    ["POW(2, 3)", 8],
    ["\t1000\n*\r2 ", 2000],
    ["((((((7))))))", 7],
  ])("evaluates %j", (expression, expected) => {
    expect(evaluate(expression)).toBeCloseTo(expected, 10);
  });

  it("binds retried per evaluation", () => {
    const delay = compileRetryDelay("retried * retried + retried");
    expect(delay.evaluate(0)).toBe(0);
    expect(delay.evaluate(3)).toBe(12);
    expect(delay.evaluate(0)).toBe(0);
  });

  it("accepts a variety of realistic backoffs", () => {
    expect(evaluate("min(60000, 1000 * 2 ^ retried)", 10)).toBe(60_000);
    expect(evaluate("1000 * exp(retried)", 1)).toBeCloseTo(2718.28, 1);
    expect(evaluate("floor(sqrt(retried) * 1000)", 2)).toBe(1414);
    expect(evaluate("round(retried / 2) * 100", 3)).toBe(200);
  });
});

describe("clamping", () => {
  it("floors negative results at 0", () => {
    expect(evaluate("-1")).toBe(0);
    expect(evaluate("100 - retried * 1000", 5)).toBe(0);
  });

  it("caps results at one day", () => {
    expect(evaluate("86400000")).toBe(RETRY_DELAY_MAX_MS);
    expect(evaluate("86400001")).toBe(RETRY_DELAY_MAX_MS);
    expect(evaluate("1000 * pow(2, retried)", 40)).toBe(RETRY_DELAY_MAX_MS);
  });

  it("treats non-finite results as the cap", () => {
    expect(evaluate("1 / 0")).toBe(RETRY_DELAY_MAX_MS);
    expect(evaluate("-1 / 0")).toBe(RETRY_DELAY_MAX_MS);
    expect(evaluate("0 / 0")).toBe(RETRY_DELAY_MAX_MS);
    expect(evaluate("5 % 0")).toBe(RETRY_DELAY_MAX_MS);
    expect(evaluate("sqrt(-1)")).toBe(RETRY_DELAY_MAX_MS);
    expect(evaluate("exp(1000)")).toBe(RETRY_DELAY_MAX_MS);
    expect(evaluate("pow(10, 400)")).toBe(RETRY_DELAY_MAX_MS);
    expect(evaluate("retried", Number.NaN)).toBe(RETRY_DELAY_MAX_MS);
  });
});

describe("rejection", () => {
  it.each([
    ["", /empty expression/],
    ["   ", /empty expression/],
    ["x", /unknown identifier "x" at 0/],
    ["1000 * x", /unknown identifier "x" at 7/],
    ["retries", /unknown identifier "retries"/],
    ["Math.pow(2, 3)", /unexpected character "\." at 4/],
    ["Math", /unknown identifier "Math" at 0/],
    ["process", /unknown identifier "process" at 0/],
    ["constructor(1)", /unknown identifier "constructor"/],
    ["__proto__", /unknown identifier "__proto__"/],
    ["toString()", /unknown identifier "toString"/],
    ["retried.constructor", /unexpected character "\." at 7/],
    ["1 +", /unexpected end of expression/],
    ["(1 + 2", /unexpected end of expression/],
    ["1 + 2)", /unexpected token "\)" at 5/],
    ["()", /unexpected token "\)" at 1/],
    ["1 2", /unexpected token "2" at 2/],
    ["2retried", /unexpected token "retried" at 1/],
    ["1 ** 2", /unexpected token "\*" at 3/],
    ["+5", /unexpected token "\+" at 0/],
    ["1.2.3", /unexpected token "\.3" at 3/],
    ["1e3", /unexpected token "e3" at 1/],
    ["retried(1)", /unexpected token "\(" at 7/],
    ["pow", /unexpected end of expression/],
    ["pow 2", /unexpected token "2" at 4/],
    ["pow(2)", /pow\(\) expects 2 arguments, got 1 at 0/],
    ["pow(1, 2, 3)", /pow\(\) expects 2 arguments, got 3/],
    ["sqrt()", /sqrt\(\) expects 1 argument, got 0/],
    ["abs(1, 2)", /abs\(\) expects 1 argument, got 2/],
    ["min()", /min\(\) expects at least 1 argument, got 0/],
    ["max(1,)", /unexpected token "\)" at 6/],
    ["max(,1)", /unexpected token "," at 4/],
    ["1, 2", /unexpected token "," at 1/],
    ["1 & 2", /unexpected character "&" at 2/],
    ["`1`", /unexpected character "`" at 0/],
    ["1;2", /unexpected character ";" at 1/],
    ["'1'", /unexpected character "'" at 0/],
    ["[1]", /unexpected character "\[" at 0/],
    ["1 = 1", /unexpected character "=" at 2/],
    ["１", /unexpected character/],
  ])("rejects %j", (expression, message) => {
    expect(() => compileRetryDelay(expression)).toThrowError(message);
  });

  it("names the expression in the message", () => {
    expect(() => compileRetryDelay("1000 * x")).toThrowError(
      'invalid retry delay expression "1000 * x": unknown identifier "x" at 7',
    );
    expect(() => compileRetryDelay("1 + foo")).toThrowError(/^invalid retry delay expression "1 \+ foo": /);
  });

  it("throws plain Error instances", () => {
    expect(() => compileRetryDelay("?")).toThrow(Error);
  });

  it("bounds the input length", () => {
    const atLimit = `1${" ".repeat(RETRY_DELAY_EXPRESSION_MAX_LENGTH - 1)}`;
    expect(compileRetryDelay(atLimit).evaluate(0)).toBe(1);
    const tooLong = `1${" ".repeat(RETRY_DELAY_EXPRESSION_MAX_LENGTH)}`;
    expect(() => compileRetryDelay(tooLong)).toThrowError(/longer than 512 characters/);
  });

  it("truncates a long expression in the message", () => {
    const long = `${"1+".repeat(100)}?`;
    let message = "";
    try {
      compileRetryDelay(long);
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toContain("…");
    expect(message.length).toBeLessThan(160);
  });

  it("bounds parenthesis nesting", () => {
    const nest = (depth: number) => `${"(".repeat(depth)}1${")".repeat(depth)}`;
    expect(evaluate(nest(RETRY_DELAY_EXPRESSION_MAX_DEPTH - 1))).toBe(1);
    expect(() => compileRetryDelay(nest(RETRY_DELAY_EXPRESSION_MAX_DEPTH))).toThrowError(/nested deeper than/);
  });

  it("bounds unary, power and call nesting", () => {
    expect(() => compileRetryDelay(`${"-".repeat(100)}1`)).toThrowError(/nested deeper than/);
    expect(() => compileRetryDelay(`${"abs(".repeat(40)}1${")".repeat(40)}`)).toThrowError(/nested deeper than/);
    expect(() => compileRetryDelay(Array(60).fill("1").join("^"))).toThrowError(/nested deeper than/);
  });

  it("handles long flat chains without hitting the depth limit", () => {
    expect(evaluate(Array(200).fill("1").join("+"))).toBe(200);
  });
});
