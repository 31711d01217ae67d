/**
 * Where a JSON text that JSON.parse refused first goes wrong: the offset of the first character that cannot
 * continue a JSON value (its length when the text ends too early), found by scanning the text against JSON's
 * grammar (RFC 8259). It reads no error message, so the position does not depend on the Node version.
 * Iterative (an explicit stack of open containers), so deep nesting cannot overflow the call stack.
 */

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

/** The end of the string starting at `i` (a quote), just past its closing quote; or the offset of its fault. */
function stringEnd(text: string, i: number): { end: number } | { fault: number } {
  for (let k = i + 1; k < text.length; k++) {
    const c = text.charCodeAt(k);
    if (c === QUOTE) return { end: k + 1 };
    if (c < 32) return { fault: k };
    if (c !== BACKSLASH) continue;
    const e = text.charCodeAt(++k);
    if (k >= text.length) return { fault: k };
    if (e === 117 /* u */) {
      for (let h = 1; h <= 4; h++) if (!isHex(text.charCodeAt(k + h))) return { fault: Math.min(k + h, text.length) };
      k += 4;
    } else if (!'"\\/bfnrt'.includes(text[k]!)) return { fault: k };
  }
  return { fault: text.length };
}

/** The end of the number starting at `i` (a '-' or a digit); or the offset of its fault. */
function numberEnd(text: string, i: number): { end: number } | { fault: number } {
  let k = i;
  const at = (n: number) => text.charCodeAt(n);
  if (at(k) === 45 /* - */) k++;
  if (at(k) === 48 /* 0 */) k++;
  else if (isDigit(at(k))) while (isDigit(at(k))) k++;
  else return { fault: Math.min(k, text.length) };
  if (at(k) === 46 /* . */) {
    k++;
    if (!isDigit(at(k))) return { fault: Math.min(k, text.length) };
    while (isDigit(at(k))) k++;
  }
  if (at(k) === 101 /* e */ || at(k) === 69 /* E */) {
    k++;
    if (at(k) === 43 /* + */ || at(k) === 45 /* - */) k++;
    if (!isDigit(at(k))) return { fault: Math.min(k, text.length) };
    while (isDigit(at(k))) k++;
  }
  return { end: k };
}

/** The end of the literal `word` at `i`; or the offset of the first character that differs. */
function literalEnd(text: string, i: number, word: string): { end: number } | { fault: number } {
  for (let k = 0; k < word.length; k++) if (text[i + k] !== word[k]) return { fault: Math.min(i + k, text.length) };
  return { end: i + word.length };
}

/** The end of the scalar value at `i`, or the offset of its fault. */
function scalarEnd(text: string, i: number): { end: number } | { fault: number } {
  const c = text.charCodeAt(i);
  if (c === QUOTE) return stringEnd(text, i);
  if (c === 45 || isDigit(c)) return numberEnd(text, i);
  if (c === 116 /* t */) return literalEnd(text, i, "true");
  if (c === 102 /* f */) return literalEnd(text, i, "false");
  if (c === 110 /* n */) return literalEnd(text, i, "null");
  return { fault: i };
}

/**
 * The offset of the first fault in `text` as a JSON text: where the scan cannot go on, `text.length` when it
 * ends early, or undefined when the text is valid JSON (then JSON.parse would not have refused it).
 */
export function jsonFaultOffset(text: string): number | undefined {
  const open: number[] = [];
  let expect = Expect.Value;
  let i = 0;
  const n = text.length;
  for (;;) {
    while (i < n && isSpace(text.charCodeAt(i))) i++;
    if (i >= n) return expect === Expect.After && open.length === 0 ? undefined : n;
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
          if ("fault" in scalar) return scalar.fault;
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
          if ("fault" in name) return name.fault;
          i = name.end;
          expect = Expect.Colon;
        } else return i;
        break;
      case Expect.Colon:
        if (c !== 58 /* : */) return i;
        i++;
        expect = Expect.Value;
        break;
      case Expect.After: {
        const inner = open.at(-1);
        if (inner === undefined) return i;
        if (c === 44 /* , */) {
          i++;
          expect = inner === OBJECT ? Expect.Name : Expect.Value;
        } else if (c === (inner === OBJECT ? OBJECT_END : ARRAY_END)) {
          open.pop();
          i++;
        } else return i;
        break;
      }
    }
  }
}
