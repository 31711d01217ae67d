/**
 * HTML of the development login page (sample users, username + password form) and of the 400 error page
 * shown when the authorization request cannot be redirected back (RFC 6749 4.1.2.1).
 */
import type { Response } from "express";
import type { IssuerUser } from "./sample-data.js";

function escapeHtml(value: string): string {
  return value.replace(
    /[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] ?? c,
  );
}

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="fr"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>body{font-family:system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem}
.warn{background:#fff3cd;border:1px solid #e0c36c;padding:.5rem 1rem}.error{color:#a40000}
table{border-collapse:collapse}td,th{border-bottom:1px solid #ddd;padding:.25rem .5rem;text-align:left}
label{display:block;margin:.5rem 0}</style></head>
<body>${body}</body></html>`;
}

function sendHtml(res: Response, status: number, html: string): void {
  res
    .status(status)
    .set({
      "Cache-Control": "no-store",
      "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
      "X-Frame-Options": "DENY",
      "Referrer-Policy": "no-referrer",
    })
    .type("html")
    .send(html);
}

export interface LoginPageModel {
  requestId: string;
  clientId: string;
  loginAction: string;
  users: readonly IssuerUser[];
  username?: string;
  error?: string;
  /** Shown only for the bundled sample users, whose documented password it is. */
  passwordHint?: string;
  /** Dev mode: a one-click sign-in button per sample user (posts login_hint, accepted only in dev mode). */
  oneClick?: boolean;
}

export function sendLoginPage(res: Response, status: number, model: LoginPageModel): void {
  const oneClick = (u: IssuerUser) =>
    `<td><form method="post" action="${escapeHtml(model.loginAction)}" class="one-click">` +
    `<input type="hidden" name="request_id" value="${escapeHtml(model.requestId)}">` +
    `<input type="hidden" name="login_hint" value="${escapeHtml(u.preferred_username)}">` +
    `<button type="submit">Sign in as ${escapeHtml(u.preferred_username)}</button></form></td>`;
  const rows = model.users
    .map(
      (u) =>
        `<tr>${model.oneClick ? oneClick(u) : ""}<td><code>${escapeHtml(u.preferred_username)}</code></td>` +
        `<td>${escapeHtml(u.name)}</td><td>${escapeHtml(u.description ?? "")}</td></tr>`,
    )
    .join("\n");
  const oneClickNote = model.oneClick ? "<p>Dev mode: one click signs a sample user in without a password.</p>\n" : "";
  const oneClickHead = model.oneClick ? "<th></th>" : "";
  const options = model.users.map((u) => `<option value="${escapeHtml(u.preferred_username)}">`).join("");
  sendHtml(
    res,
    status,
    page(
      "Portier development issuer: sign in",
      // In this template a backslash ending a line continues it: the page keeps the line unbroken.
      `<h1>Sign in</h1>
<p class="warn">Portier local issuer: for development only, not for production.${
        model.passwordHint ? ` Password of every sample user: <code>${escapeHtml(model.passwordHint)}</code>.` : ""
      }</p>
<p>Application: <code>${escapeHtml(model.clientId)}</code></p>
${model.error ? `<p class="error" role="alert">${escapeHtml(model.error)}</p>` : ""}
<form method="post" action="${escapeHtml(model.loginAction)}">
<input type="hidden" name="request_id" value="${escapeHtml(model.requestId)}">
<label>Username <input name="username" list="sample-users" autocomplete="username" required \
value="${escapeHtml(model.username ?? "")}"></label>
<datalist id="sample-users">${options}</datalist>
<label>Password <input name="password" type="password" autocomplete="current-password" required></label>
<button type="submit">Sign in</button>
</form>
<h2>Sample users</h2>
${oneClickNote}<table><thead><tr>${oneClickHead}<th>Username</th><th>Name</th><th>Directory</th></tr></thead><tbody>
${rows}
</tbody></table>`,
    ),
  );
}

export function sendErrorPage(res: Response, status: number, error: string, description: string): void {
  sendHtml(
    res,
    status,
    page(
      "Portier development issuer: error",
      `<h1>Authorization request refused</h1>
<p><code>${escapeHtml(error)}</code>: ${escapeHtml(description)}</p>
<p>The request cannot be sent back to the application because its client or redirect address is not valid.</p>`,
    ),
  );
}
