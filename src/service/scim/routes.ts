/**
 * The SCIM 2.0 HTTP endpoints (RFC 7644) under /scim/v2 on the decision port, as an Express router: bearer token
 * check (constant time), bounded JSON bodies (application/scim+json or application/json), Users and Groups
 * (POST, GET by id, GET with filter/sortBy/sortOrder/startIndex/count/attributes/excludedAttributes, PUT, PATCH,
 * DELETE), the discovery endpoints, ETags and If-Match, and every failure as a SCIM error (status, scimType,
 * detail).
 * Filters are parsed by the scim2-parse-filter library (filter.ts); an `eq` on userName, externalId, id or
 * displayName is answered from an index, any other filter by testing each resource.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import express, { type NextFunction, type Request, type Response } from "express";
import type { Logger } from "pino";
import type { Filter } from "scim2-parse-filter";
import { messageOf } from "../../errors/caught.js";
import {
  listResourceTypes,
  listSchemas,
  LIST_SCHEMA,
  resourceType,
  schema,
  serviceProviderConfig,
} from "./discovery.js";
import { compileFilter, parseFilter } from "./filter.js";
import { intOf, param, queryOf, searchOf, type ListQuery } from "./list-query.js";
import { project, selection, type Selection } from "./projection.js";
import { membersOf, type ResourceType, type ScimResource } from "./resources.js";
import { ScimError } from "./scim-error.js";
import type { ScimService } from "./scim-service.js";
import { sortResources } from "./sort.js";

export const SCIM_PREFIX = "/scim/v2";
/** RFC 7644 section 8.1 registers application/scim+json without parameters: no `; charset` (JSON is UTF-8). */
const SCIM_TYPE = "application/scim+json";

export interface ScimHttpOptions {
  /** The bearer token the identity manager presents (read again when its file changes). */
  token: () => string;
  maxBodyBytes: number;
  maxPageSize: number;
  maxOperations: number;
  logger?: Logger;
}

const digest = (s: string) => createHash("sha256").update(s).digest();

function send(res: Response, status: number, body: unknown, etag?: string): void {
  if (etag) res.setHeader("ETag", etag);
  // A Buffer, since Express appends "; charset=utf-8" to the type of a string body.
  res
    .status(status)
    .type(SCIM_TYPE)
    .send(Buffer.from(JSON.stringify(body)));
}

function sendError(res: Response, err: ScimError): void {
  if (err.status === 401) res.setHeader("WWW-Authenticate", 'Bearer realm="portier-scim"');
  if (err.retryAfter !== undefined) res.setHeader("Retry-After", String(err.retryAfter));
  send(res, err.status, err.body());
}

/** `attr eq "value"` on an indexed attribute: the one id it names (or none). */
function indexedEq(f: Filter): { attr: string; value: string } | undefined {
  if (f.op !== "eq" || !("compValue" in f) || typeof f.compValue !== "string") return undefined;
  const path = f.attrPath.replace(/^urn:ietf:params:scim:schemas:core:2\.0:(User|Group):/i, "").toLowerCase();
  return ["username", "externalid", "id", "displayname"].includes(path)
    ? { attr: path, value: f.compValue }
    : undefined;
}

export function scimRouter(service: ScimService, o: ScimHttpOptions): express.Router {
  const router = express.Router({ caseSensitive: false });
  const state = service.state;

  router.use((req, _res, next) => {
    const header = req.headers.authorization ?? "";
    const m = /^Bearer +(\S+) *$/i.exec(header);
    if (!m) return next(new ScimError(401, undefined, "authenticate with Authorization: Bearer <token>"));
    if (!timingSafeEqual(digest(m[1]!), digest(o.token())))
      return next(new ScimError(401, undefined, "the bearer token is not the SCIM token"));
    next();
  });
  router.use(
    express.json({
      limit: o.maxBodyBytes,
      type: ["application/scim+json", "application/json", "application/*+json"],
      strict: true,
    }),
  );

  const location = (req: Request, type: ResourceType, id: string) =>
    `${req.protocol}://${req.get("host") ?? "localhost"}${req.baseUrl}/${type}s/${id}`;

  /** A resource as answered: meta.location, and a user's groups (read-only, from the groups' members). */
  const shown = (req: Request, type: ResourceType, r: ScimResource): Record<string, unknown> => {
    const out: Record<string, unknown> = { ...r, meta: { ...r.meta, location: location(req, type, r.id) } };
    if (type === "User") {
      const groups = [...state.groupsOf(r.id)].flatMap((g) => {
        const group = state.groups.get(g);
        return group ? [{ value: g, display: group.displayName, $ref: location(req, "Group", g), type: "direct" }] : [];
      });
      if (groups.length) out.groups = groups;
    }
    if (type === "Group")
      out.members = membersOf(r).map((m) => ({
        ...m,
        $ref: location(req, state.users.has(m.value) ? "User" : "Group", m.value),
      }));
    return out;
  };

  const resources = (type: ResourceType) => (type === "User" ? state.users : state.groups);

  const list = (req: Request, res: Response, type: ResourceType, q: ListQuery) => {
    const only = selection(q.attributes);
    const excluded = selection(q.excludedAttributes);
    const startIndex = Math.max(1, intOf(q, "startIndex", 1));
    const count = Math.min(o.maxPageSize, Math.max(0, intOf(q, "count", o.maxPageSize)));
    const text = q.filter;
    let matches: ScimResource[];
    const all = resources(type);
    const sorted = q.sortBy !== undefined && q.sortBy.trim() !== "";
    if (text === undefined || text.trim() === "") {
      if (!sorted) {
        // Every resource, in order: only the page's are read (users are parsed from their text when read).
        const ids = [...all.keys()].slice(startIndex - 1, startIndex - 1 + count);
        const page = ids.flatMap((id) => all.get(id) ?? []);
        sendPage(req, res, type, all.size, startIndex, page, only, excluded);
        return;
      }
      matches = [...all.values()];
    } else {
      const ast = parseFilter(text);
      const eq = indexedEq(ast);
      if (eq) {
        const id =
          eq.attr === "id"
            ? eq.value
            : type === "User"
              ? eq.attr === "username"
                ? state.userIdByName(eq.value)
                : eq.attr === "externalid"
                  ? state.userIdByExternalId(eq.value)
                  : undefined
              : eq.attr === "displayname"
                ? state.groupIdByName(eq.value)
                : undefined;
        const found = id === undefined ? undefined : all.get(id);
        // A group's externalId (no index) is tested like any other filter.
        matches =
          type === "Group" && eq.attr === "externalid"
            ? [...all.values()].filter(compileFilter(ast))
            : found
              ? [found]
              : [];
      } else {
        const test = compileFilter(ast);
        matches = [...all.values()].filter((r) => test(shown(req, type, r)));
      }
    }
    if (sorted) matches = sortResources(matches, q.sortBy ?? "", q.sortOrder);
    const page = matches.slice(startIndex - 1, startIndex - 1 + count);
    sendPage(req, res, type, matches.length, startIndex, page, only, excluded);
  };

  const sendPage = (
    req: Request,
    res: Response,
    type: ResourceType,
    total: number,
    startIndex: number,
    page: ScimResource[],
    only: Selection | undefined,
    excluded: Selection | undefined,
  ) =>
    send(res, 200, {
      schemas: [LIST_SCHEMA],
      totalResults: total,
      startIndex,
      itemsPerPage: page.length,
      Resources: page.map((r) => project(shown(req, type, r), only, excluded)),
    });

  const one = (req: Request, res: Response, type: ResourceType) => {
    const r = resources(type).get(String(req.params.id));
    if (!r) throw new ScimError(404, undefined, `${type} ${String(req.params.id)} not found`);
    const only = selection(param(req, "attributes"));
    const excluded = selection(param(req, "excludedAttributes"));
    send(res, 200, project(shown(req, type, r), only, excluded), r.meta.version);
  };

  const write =
    (type: ResourceType, kind: "create" | "replace" | "patch" | "delete") =>
    (req: Request, res: Response, next: NextFunction) => {
      const id = String(req.params.id ?? "");
      const ifMatch = req.get("if-match");
      const body = req.body as unknown;
      const request =
        kind === "create"
          ? { kind, type, body }
          : kind === "delete"
            ? { kind, type, id, ifMatch }
            : { kind, type, id, body, ifMatch };
      service.write(request).then((result) => {
        if (!result.resource) {
          res.status(result.status).end();
          return;
        }
        if (kind === "create") res.setHeader("Location", location(req, type, result.resource.id));
        send(res, result.status, shown(req, type, result.resource), result.resource.meta.version);
      }, next);
    };

  for (const type of ["User", "Group"] as const) {
    const path = `/${type}s`;
    router.get(path, (req, res) => list(req, res, type, queryOf(req)));
    router.post(`${path}/.search`, (req, res) => list(req, res, type, searchOf(req.body)));
    router.post(path, write(type, "create"));
    router.get(`${path}/:id`, (req, res) => one(req, res, type));
    router.put(`${path}/:id`, write(type, "replace"));
    router.patch(`${path}/:id`, write(type, "patch"));
    router.delete(`${path}/:id`, write(type, "delete"));
  }
  // RFC 7644 section 4: the discovery endpoints ignore list parameters, and answer a filter 403 so that no client
  // takes its conditions as true.
  router.get(["/ServiceProviderConfig", "/ResourceTypes{/:id}", "/Schemas{/:id}"], (req, _res, next) => {
    if (param(req, "filter") !== undefined)
      throw new ScimError(403, undefined, `filter: ${SCIM_PREFIX}${req.path} is not filtered (RFC 7644 section 4)`);
    next();
  });
  router.get("/ServiceProviderConfig", (_req, res) =>
    send(res, 200, serviceProviderConfig(o.maxPageSize, o.maxBodyBytes, o.maxOperations)),
  );
  router.get("/ResourceTypes", (_req, res) => send(res, 200, listResourceTypes()));
  router.get("/ResourceTypes/:id", (req, res) => {
    const r = resourceType(String(req.params.id));
    if (!r) throw new ScimError(404, undefined, `no resource type ${String(req.params.id)}`);
    send(res, 200, r);
  });
  router.get("/Schemas", (_req, res) => send(res, 200, listSchemas()));
  router.get("/Schemas/:id", (req, res) => {
    const s = schema(String(req.params.id));
    if (!s) throw new ScimError(404, undefined, `no schema ${String(req.params.id)}`);
    send(res, 200, s);
  });
  // Bulk (RFC 7644 3.7), /Me (3.11, which says 501 when not supported) and a search across resource types (3.4.3).
  const notImplemented = /^\/(bulk|me|\.search)(\/|$)/i;
  router.use((req) => {
    throw new ScimError(
      notImplemented.test(req.path) ? 501 : 404,
      undefined,
      `${req.method} ${SCIM_PREFIX}${req.path}: not an endpoint of this SCIM service (Users, Groups, ` +
        "ServiceProviderConfig, ResourceTypes, Schemas; Bulk, /Me and /.search at the root are not supported)",
    );
  });
  router.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    if (res.headersSent) return;
    if (err instanceof ScimError) return sendError(res, err);
    const e = err as { type?: string; status?: number };
    if (e.type === "entity.too.large")
      return sendError(
        res,
        new ScimError(413, undefined, `the body is larger than ${o.maxBodyBytes} bytes (--scim-max-body-bytes)`),
      );
    if (e.type === "entity.parse.failed")
      return sendError(res, new ScimError(400, "invalidSyntax", `the body is not valid JSON: ${messageOf(err)}`));
    if (typeof e.status === "number" && e.status >= 400 && e.status < 500)
      return sendError(res, new ScimError(e.status, "invalidSyntax", messageOf(err)));
    // The store failed (a disk, PostgreSQL away): nothing was applied; the detail stays in the log.
    o.logger?.error({ event: "scim_write_failed", error: messageOf(err) }, "SCIM change not stored");
    sendError(
      res,
      new ScimError(503, undefined, "the change could not be stored; nothing was applied, retry it later", 5),
    );
  });
  return router;
}
