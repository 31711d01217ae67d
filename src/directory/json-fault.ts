/**
 * Where a JSON text that JSON.parse refused first goes wrong, and why: the offset of the first character that
 * cannot continue a JSON value (its length when the text ends too early), found by scanning the text against
 * JSON's grammar (RFC 8259), and the fault in words (V8's words, without its position or a copy of the text).
 * It reads no error message, so neither the position nor the words depend on the Node version.
 * Iterative (an explicit stack of open containers), so deep nesting cannot overflow the call stack.
 */

export interface JsonFault {
  offset: number;
  why: string;
}

const enum Expect {
  /** A value (a top-level one, an array element after ',', an object member's value after ':'). */
  Value,
  /** A value or ']' (right after '['). */
  ValueOrClose,
  /** A member name or '}' (right after '{'). */
  NameOrClose,
  /** A member name (after ',' in an object). */
  Name,
  /** ':' after a member name. */
  Colon,
  /** ',' or the closing bracket of the innermost container, or the end of the text at the top level. */
  After,
}

const OBJECT = 123; // {
const OBJECT_END = 125; // }
const ARRAY = 91; // [
const ARRAY_END = 93; // ]
const QUOTE = 34;
const BACKSLASH = 92;

const isSpace = (c: number): boolean => c === 32 || c === 10 || c === 13 || c === 9;
const isDigit = (c: number): boolean => c >= 48 && c <= 57;
const isHex = (c: number): boolean => isDigit(c) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102);

type Scan = { end: number } | JsonFault;

const END = "Unexpected end of JSON input";

/** What an unexpected character is called: the character, or the end of the text. */
function unexpected(text: string, i: number): JsonFault {
  if (i >= text.length) return { offset: text.length, why: END };
  const c = text.charCodeAt(i);
  const shown =
    c < 32 || c === 127 ? `\\u${c.toString(16).padStart(4, "0")}` : String.fromCodePoint(text.codePointAt(i)!);
  return { offset: i, why: `Unexpected token '${shown}'` };
}

/** The end of the string starting at `i` (a quote), just past its closing quote; or its fault. */
function stringEnd(text: string, i: number): Scan {
  for (let k = i + 1; k < text.length; k++) {
    const c = text.charCodeAt(k);
    if (c === QUOTE) return { end: k + 1 };
    if (c < 32) return { offset: k, why: "Bad control character in string literal" };
    if (c !== BACKSLASH) continue;
    const e = text.charCodeAt(++k);
    if (k >= text.length) return { offset: k, why: END };
    if (e === 117 /* u */) {
      for (let h = 1; h <= 4; h++)
        if (!isHex(text.charCodeAt(k + h))) return { offset: Math.min(k + h, text.length), why: "Bad Unicode escape" };
      k += 4;
    } else if (!'"\\/bfnrt'.includes(text[k]!)) return { offset: k, why: "Bad escaped character" };
  }
  return { offset: text.length, why: "Unterminated string" };
}

/** The end of the number starting at `i` (a '-' or a digit); or its fault. */
function numberEnd(text: string, i: number): Scan {
  let k = i;
  const at = (n: number) => text.charCodeAt(n);
  if (at(k) === 45 /* - */) k++;
  if (at(k) === 48 /* 0 */) {
    k++;
    if (isDigit(at(k))) return { offset: k, why: "Unexpected number" };
  } else if (isDigit(at(k))) while (isDigit(at(k))) k++;
  else return { offset: Math.min(k, text.length), why: "No number after minus sign" };
  if (at(k) === 46 /* . */) {
    k++;
    if (!isDigit(at(k))) return { offset: Math.min(k, text.length), why: "Unterminated fractional number" };
    while (isDigit(at(k))) k++;
  }
  if (at(k) === 101 /* e */ || at(k) === 69 /* E */) {
    k++;
    if (at(k) === 43 /* + */ || at(k) === 45 /* - */) k++;
    if (!isDigit(at(k))) return { offset: Math.min(k, text.length), why: "Exponent part is missing a number" };
    while (isDigit(at(k))) k++;
  }
  return { end: k };
}

/** The end of the literal `word` at `i`; or the first character that differs. */
function literalEnd(text: string, i: number, word: string): Scan {
  for (let k = 0; k < word.length; k++) if (text[i + k] !== word[k]) return unexpected(text, i + k);
  return { end: i + word.length };
}

/** The end of the scalar value at `i`, or its fault. */
function scalarEnd(text: string, i: number): Scan {
  const c = text.charCodeAt(i);
  if (c === QUOTE) return stringEnd(text, i);
  if (c === 45 || isDigit(c)) return numberEnd(text, i);
  if (c === 116 /* t */) return literalEnd(text, i, "true");
  if (c === 102 /* f */) return literalEnd(text, i, "false");
  if (c === 110 /* n */) return literalEnd(text, i, "null");
  return unexpected(text, i);
}

/** What was expected where the scan stopped (a character that does not fit, or the end of the text). */
function expected(expect: Expect, inner: number | undefined, text: string, i: number): JsonFault {
  switch (expect) {
    case Expect.NameOrClose:
      return { offset: i, why: "Expected property name or '}'" };
    case Expect.Name:
      return { offset: i, why: "Expected double-quoted property name" };
    case Expect.Colon:
      return { offset: i, why: "Expected ':' after property name" };
    case Expect.After:
      if (inner === OBJECT) return { offset: i, why: "Expected ',' or '}' after property value" };
      if (inner === ARRAY) return { offset: i, why: "Expected ',' or ']' after array element" };
      return { offset: i, why: "Unexpected non-whitespace character after JSON" };
    default:
      return unexpected(text, i);
  }
}

/**
 * The first fault in `text` as a JSON text: where the scan cannot go on (`text.length` when it ends early) and
 * why, or undefined when the text is valid JSON (then JSON.parse would not have refused it).
 */
export function jsonFault(text: string): JsonFault | undefined {
  const open: number[] = [];
  let expect = Expect.Value;
  let i = 0;
  const n = text.length;
  for (;;) {
    while (i < n && isSpace(text.charCodeAt(i))) i++;
    if (i >= n)
      return expect === Expect.After && open.length === 0 ? undefined : expected(expect, open.at(-1), text, n);
    const c = text.charCodeAt(i);
    switch (expect) {
      case Expect.Value:
      case Expect.ValueOrClose:
        if (c === ARRAY_END && expect === Expect.ValueOrClose) {
          open.pop();
          i++;
          expect = Expect.After;
        } else if (c === OBJECT || c === ARRAY) {
          open.push(c);
          i++;
          expect = c === OBJECT ? Expect.NameOrClose : Expect.ValueOrClose;
        } else {
          const scalar = scalarEnd(text, i);
          if ("why" in scalar) return scalar;
          i = scalar.end;
          expect = Expect.After;
        }
        break;
      case Expect.NameOrClose:
      case Expect.Name:
        if (c === OBJECT_END && expect === Expect.NameOrClose) {
          open.pop();
          i++;
          expect = Expect.After;
        } else if (c === QUOTE) {
          const name = stringEnd(text, i);
          if ("why" in name) return name;
          i = name.end;
          expect = Expect.Colon;
        } else return expected(expect, open.at(-1), text, i);
        break;
      case Expect.Colon:
        if (c !== 58 /* : */) return expected(expect, open.at(-1), text, i);
        i++;
        expect = Expect.Value;
        break;
      case Expect.After: {
        const inner = open.at(-1);
        if (inner === undefined) return expected(expect, inner, text, i);
        if (c === 44 /* , */) {
          i++;
          expect = inner === OBJECT ? Expect.Name : Expect.Value;
        } else if (c === (inner === OBJECT ? OBJECT_END : ARRAY_END)) {
          open.pop();
          i++;
        } else return expected(expect, inner, text, i);
        break;
      }
    }
  }
}
