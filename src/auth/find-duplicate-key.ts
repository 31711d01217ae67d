/**
 * One linear scan of a JSON text that reports the first object member name seen twice in the same
 * object (JSON.parse silently keeps the last one, which lets a token say two things at once).
 */
export function findDuplicateKey(json: string): string | undefined {
  const stack: Array<Set<string> | null> = []; // Set for an object, null for an array
  let expectKey = false;
  for (let i = 0; i < json.length; i++) {
    const c = json.charCodeAt(i);
    if (c === 0x22 /* " */) {
      const start = i;
      for (i++; i < json.length; i++) {
        const d = json.charCodeAt(i);
        if (d === 0x5c /* \ */) i++;
        else if (d === 0x22) break;
      }
      const top = stack[stack.length - 1];
      if (expectKey && top) {
        const raw = json.slice(start, i + 1);
        let name: string;
        try {
          name = raw.includes("\\") ? (JSON.parse(raw) as string) : raw.slice(1, -1);
        } catch {
          return undefined; // not JSON at all; JSON.parse will say so
        }
        if (top.has(name)) return name;
        top.add(name);
        expectKey = false;
      }
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
