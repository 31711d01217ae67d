/**
 * A URL made safe to print in errors and logs: the password of the user-info and the values of query
 * parameters that look like credentials (token, secret, key, password, signature, code) become "***".
 */

const SECRET_PARAM = /token|secret|key|pass|pwd|sig|auth|code|credential/i;

export function redactUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return raw.replace(/\/\/[^/@\s]*@/, "//***@");
  }
  if (url.password) url.password = "***";
  else if (url.username) url.username = "***";
  for (const name of [...url.searchParams.keys()]) if (SECRET_PARAM.test(name)) url.searchParams.set(name, "***");
  // URLSearchParams encodes "*" as is; keep the result readable.
  return url.toString().replace(/%2A/g, "*");
}
