/**
 * One linear scan of a JSON text that reports the first object member name seen twice in the same
 * object (JSON.parse silently keeps the last one, which lets a token say two things at once).
 * Strings are skipped with indexOf, so the scan costs about what JSON.parse of the same text costs.
 */
function escaped(json: string, quote: number): boolean {
  let n = 0;
  while (json.charCodeAt(quote - 1 - n) === 0x5c /* \ */) n++;
  return n % 2 === 1;
}

export function findDuplicateKey(json: string): string | undefined {
  const stack: Array<Set<string> | null> = []; // Set for an object, null for an array
  let expectKey = false;
  for (let i = 0; i < json.length; i++) {
    const c = json.charCodeAt(i);
    if (c === 0x22 /* " */) {
      let end = json.indexOf('"', i + 1);
      while (end !== -1 && escaped(json, end)) end = json.indexOf('"', end + 1);
      if (end === -1) return undefined; // an unterminated string: not JSON at all; JSON.parse will say so
      const top = stack[stack.length - 1];
      if (expectKey && top) {
        let name = json.slice(i + 1, end);
        if (name.includes("\\")) {
          try {
            name = JSON.parse(`"${name}"`) as string;
          } catch {
            return undefined; // not JSON at all; JSON.parse will say so
          }
        }
        if (top.has(name)) return name;
        top.add(name);
        expectKey = false;
      }
      i = end;
    } else if (c === 0x7b /* { */) {
      stack.push(new Set());
      expectKey = true;
    } else if (c === 0x5b /* [ */) {
      stack.push(null);
      expectKey = false;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      stack.pop();
      expectKey = false;
    } else if (c === 0x2c /* , */) {
      expectKey = stack[stack.length - 1] != null;
    }
  }
  return undefined;
}
