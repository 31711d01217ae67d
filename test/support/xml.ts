/**
 * Test support: a small strict XML reader, enough to check that generated reports (JUnit) are well-formed
 * and to read them back: elements, attributes, text, the five predefined entities and numeric character
 * references. Throws, naming the offset, on anything malformed (unclosed or crossed tags, a raw `<` or
 * `&` in text, duplicate attributes, unquoted values, characters XML 1.0 forbids, text after the root).
 */
export interface XmlElement {
  name: string;
  attributes: Record<string, string>;
  children: XmlElement[];
  text: string;
}

const NAME = /[A-Za-z_:][\w.:-]*/y;
const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };
const FORBIDDEN = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;

function decode(raw: string, at: number): string {
  if (FORBIDDEN.test(raw)) throw new Error(`xml: character not allowed in XML 1.0 near offset ${at}`);
  if (raw.includes("<")) throw new Error(`xml: raw "<" near offset ${at}`);
  return raw.replace(/&([^;]*);|&/g, (whole, ref: string | undefined) => {
    if (ref === undefined) throw new Error(`xml: bare "&" near offset ${at}`);
    if (ref in ENTITIES) return ENTITIES[ref] as string;
    const num = /^#(x[0-9a-fA-F]+|[0-9]+)$/.exec(ref);
    if (!num) throw new Error(`xml: unknown entity "${whole}" near offset ${at}`);
    const code = (num[1] as string).startsWith("x")
      ? parseInt((num[1] as string).slice(1), 16)
      : parseInt(num[1] as string, 10);
    const char = String.fromCodePoint(code);
    if (FORBIDDEN.test(char)) throw new Error(`xml: character reference ${whole} not allowed near offset ${at}`);
    return char;
  });
}

export function parseXml(xml: string): XmlElement {
  let pos = 0;
  const skipSpace = () => {
    while (pos < xml.length && /\s/.test(xml[pos] as string)) pos++;
  };
  const name = (): string => {
    NAME.lastIndex = pos;
    const m = NAME.exec(xml);
    if (!m) throw new Error(`xml: name expected at offset ${pos}`);
    pos += m[0].length;
    return m[0];
  };
  const skipMisc = () => {
    for (;;) {
      skipSpace();
      const [open, close] = xml.startsWith("<?", pos)
        ? ["<?", "?>"]
        : xml.startsWith("<!--", pos)
          ? ["<!--", "-->"]
          : [];
      if (!open || !close) return;
      const end = xml.indexOf(close, pos + open.length);
      if (end === -1) throw new Error(`xml: unterminated ${open} at offset ${pos}`);
      pos = end + close.length;
    }
  };
  const element = (): XmlElement => {
    if (xml[pos] !== "<") throw new Error(`xml: "<" expected at offset ${pos}`);
    pos++;
    const el: XmlElement = { name: name(), attributes: {}, children: [], text: "" };
    for (;;) {
      const before = pos;
      skipSpace();
      if (xml.startsWith("/>", pos)) {
        pos += 2;
        return el;
      }
      if (xml[pos] === ">") {
        pos++;
        break;
      }
      if (pos === before) throw new Error(`xml: space expected before attribute at offset ${pos}`);
      const key = name();
      if (key in el.attributes) throw new Error(`xml: duplicate attribute ${key} at offset ${pos}`);
      skipSpace();
      if (xml[pos] !== "=") throw new Error(`xml: "=" expected at offset ${pos}`);
      pos++;
      skipSpace();
      const quote = xml[pos];
      if (quote !== '"' && quote !== "'") throw new Error(`xml: quoted value expected at offset ${pos}`);
      const end = xml.indexOf(quote, pos + 1);
      if (end === -1) throw new Error(`xml: unterminated attribute value at offset ${pos}`);
      el.attributes[key] = decode(xml.slice(pos + 1, end), pos);
      pos = end + 1;
    }
    for (;;) {
      const next = xml.indexOf("<", pos);
      if (next === -1) throw new Error(`xml: <${el.name}> is never closed`);
      el.text += decode(xml.slice(pos, next), pos);
      pos = next;
      if (xml.startsWith("</", pos)) {
        pos += 2;
        const closing = name();
        if (closing !== el.name) throw new Error(`xml: </${closing}> closes <${el.name}> at offset ${pos}`);
        skipSpace();
        if (xml[pos] !== ">") throw new Error(`xml: ">" expected at offset ${pos}`);
        pos++;
        return el;
      }
      if (xml.startsWith("<!--", pos)) {
        const end = xml.indexOf("-->", pos);
        if (end === -1) throw new Error(`xml: unterminated comment at offset ${pos}`);
        pos = end + 3;
        continue;
      }
      el.children.push(element());
    }
  };
  skipMisc();
  const root = element();
  skipMisc();
  if (pos !== xml.length) throw new Error(`xml: content after the root element at offset ${pos}`);
  return root;
}

/** Every element below `el` (depth first) with this name. */
export function findAll(el: XmlElement, name: string): XmlElement[] {
  return el.children.flatMap((c) => [...(c.name === name ? [c] : []), ...findAll(c, name)]);
}
