/**
 * The token of an `Authorization: Bearer <token>` header (RFC 6750 2.1), for every place that reads one:
 * the decision service's gateway adapters and the development issuer's userinfo endpoint.
 */

/** No header -> {}; one Bearer credential -> its token; another scheme, shape or a repeated header -> invalid. */
export function bearerToken(header: string | string[] | undefined): { token?: string; invalid?: boolean } {
  if (header === undefined) return {};
  if (Array.isArray(header)) return { invalid: true };
  const m = /^Bearer +([^\s]+) *$/i.exec(header);
  return m?.[1] ? { token: m[1] } : { invalid: true };
}
