/**
 * Redacts secrets from URLs wherever they are shown (status, /ready, logs, error messages): userinfo
 * becomes `***`, every query value becomes `***` (names are kept, so X-Amz-Signature stays recognisable),
 * and a fragment is dropped. Works on a bare URL or on any text that contains URLs.
 */

const URL_IN_TEXT = /\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>`]+/gi;

function redactOne(raw: string): string {
  // Trailing punctuation of a sentence ("...failed: http://x/a?b=c.") is not part of the URL.
  const trail = /[).,;:!]+$/.exec(raw)?.[0] ?? "";
  const url = trail ? raw.slice(0, -trail.length) : raw;
  const scheme = url.indexOf("://");
  let rest = url.slice(scheme + 3);
  const head = url.slice(0, scheme + 3);
  const pathStart = rest.search(/[/?#]/);
  const authority = pathStart < 0 ? rest : rest.slice(0, pathStart);
  const at = authority.lastIndexOf("@");
  if (at >= 0) rest = `***@${rest.slice(at + 1)}`;
  const hash = rest.indexOf("#");
  if (hash >= 0) rest = rest.slice(0, hash);
  const q = rest.indexOf("?");
  if (q >= 0) {
    const query = rest
      .slice(q + 1)
      .split("&")
      .map((pair) => {
        const eq = pair.indexOf("=");
        return eq < 0 ? (pair === "" ? "" : "***") : `${pair.slice(0, eq)}=***`;
      })
      .join("&");
    rest = `${rest.slice(0, q)}?${query}`;
  }
  return head + rest + trail;
}

/** The text with every URL in it redacted (a bare URL is text too). */
export function redactUrls(text: string): string {
  return text.replace(URL_IN_TEXT, redactOne);
}
