/**
 * The search APIs, each an evaluation per candidate (every one a recorded decision, as the evaluation endpoints'):
 *   - subject (/access/v1/search/subject): the directory's users, in file order (then the SCIM overlay's), who may
 *     call this method on this route, walked by the index of users per entry (directory/search-subjects.ts: one
 *     question per entry, then one per user of the entries that may); results {type (the searched type), id};
 *   - resource (/access/v1/search/resource): the catalog's route templates, in catalog order, this subject may call
 *     with this method; results {type: "route", id: template};
 *   - action (/access/v1/search/action): the HTTP methods this subject may call on this route; results {name}.
 * A page holds at most page.limit results (at most --authzen-max-page, its default) and looks at most
 * --authzen-search-budget candidates, so that one request is bounded in time whatever the directory's size; a page
 * that stops early carries a next_token (page-token.ts), "" on the last one.
 */
import type { Directory } from "../../directory/index.js";
import type { RequestTrace } from "../decide/types.js";
import type { Evaluate } from "./evaluate.js";
import { pageToken, queryDigest, readPageToken } from "./page-token.js";
import type { Parsed, SearchBody, SearchKind } from "./parse-body.js";
import type { EvaluationRequest, SearchAnswer } from "./types.js";

/** The methods an action search asks about, in this order. */
export const SEARCHED_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"] as const;

export interface SearchDeps {
  evaluate: Evaluate;
  directory: Pick<Directory, "searchSubjects"> | undefined;
  /** The live bundle's route templates (catalog order). */
  templates: () => readonly string[];
  maxPage: number;
  budget: number;
}

type Result = { type: string; id: string } | { name: string };

/** Walks a list from `position`: the results, and where the next page starts (-1: the end). */
function walkList<T>(
  list: readonly T[],
  position: number,
  budget: number,
  limit: number,
  allowed: (candidate: T) => boolean,
): { found: T[]; next: number } {
  const found: T[] = [];
  const end = Math.min(list.length, position + budget);
  let at = position;
  while (at < end && found.length < limit) {
    const candidate = list[at++] as T;
    if (allowed(candidate)) found.push(candidate);
  }
  return { found, next: at >= list.length ? -1 : at };
}

/** A search for another type than Portier's (subjects: user or identity; resources: route) finds nothing. */
function searchable(kind: SearchKind, body: SearchBody): boolean {
  if (kind === "subject") return body.subject.type === "user" || body.subject.type === "identity";
  if (kind === "resource") return body.resource.type === "route";
  return true;
}

export function search(
  kind: SearchKind,
  body: SearchBody,
  deps: SearchDeps,
  trace?: RequestTrace,
): Parsed<SearchAnswer<Result>> {
  const { page, ...query } = body;
  const limit = Math.min(page?.limit ?? deps.maxPage, deps.maxPage);
  const digest = queryDigest({ kind, query, limit, properties: page?.properties ?? null });
  let position = 0;
  if (page?.token) {
    const read = readPageToken(page.token, digest);
    if (!read.ok) return read;
    position = read.position;
  }
  const endpoint = `authzen_search_${kind}`;
  const allowed = (req: EvaluationRequest) => deps.evaluate(req, endpoint, trace).decision;
  const context = body.context !== undefined ? { context: body.context } : {};
  const resource = { type: body.resource.type, id: body.resource.id ?? "" };
  const subject = { type: body.subject.type, id: body.subject.id ?? "" };
  let results: Result[] = [];
  let next = -1;
  if (limit === 0) next = position;
  else if (!searchable(kind, body)) next = -1;
  else if (kind === "subject") {
    const action = body.action!;
    const question = (sub: string): EvaluationRequest => ({
      subject: { type: subject.type, id: sub },
      action,
      resource: body.resource as typeof resource,
      ...context,
    });
    // A representative's answer is its own too: it is not asked again as a candidate.
    const decided = new Map<string, boolean>();
    if (deps.directory)
      next = deps.directory.searchSubjects(position, deps.budget, {
        entryMayAllow: (_entry, sub) => {
          const ok = allowed(question(sub));
          decided.set(sub, ok);
          return ok;
        },
        visit: (sub) => {
          if (decided.get(sub) ?? allowed(question(sub))) results.push({ type: subject.type, id: sub });
          return results.length < limit;
        },
      });
  } else if (kind === "resource") {
    const action = body.action!;
    const walked = walkList(deps.templates(), position, deps.budget, limit, (template) =>
      allowed({ subject, action, resource: { ...body.resource, type: "route", id: template }, ...context }),
    );
    results = walked.found.map((id) => ({ type: "route", id }));
    next = walked.next;
  } else {
    const walked = walkList(SEARCHED_METHODS, position, deps.budget, limit, (name) =>
      allowed({ subject, action: { name }, resource, ...context }),
    );
    results = walked.found.map((name) => ({ name }));
    next = walked.next;
  }
  return {
    ok: true,
    value: { page: { next_token: next === -1 ? "" : pageToken(digest, next), count: results.length }, results },
  };
}
