/**
 * Who a grant change reaches: the people of the synced-users directory (`--directory`) and the subjects and
 * clients a decision log saw, each judged on both sides from the access matrices' cells (a user is allowed a
 * route when one of their roles is, or, with no role, as a synced user without a listed role; a user whose names
 * a side cannot resolve is not synced; an application as an application), so a person is listed under a row only
 * when their own access to one of the row's routes changes the row's way. Lists are bounded: the first few names
 * and the count.
 */
import { entryRoles, loadDirectoryFile, roleResolver, type DirectoryEntry } from "../directory/index.js";
import type { CatalogRole } from "../engine/index.js";
import type { AccessMatrix, MatrixCell } from "./compute-matrix.js";

/** How many names a list shows; the count says how many there are. */
export const SHOWN_PEOPLE = 5;

/** A bounded list of people: the first `shown`, and how many in all. */
export interface PeopleList {
  count: number;
  shown: string[];
}

/** A kind of caller as both sides see it: its roles (undefined: not synced), or an application. */
export interface Holder {
  flow: "accessCode" | "application";
  /** Role names as the directory or the log gives them. */
  names: readonly string[];
  /** True when `names` are role ids already (a log's input), false when a side resolves them (a directory). */
  resolved: boolean;
  synced: boolean;
  /** The tenant of the directory entry or of the logged token. */
  tenantId: string | undefined;
  people: PeopleList;
}

/** Adds a name to a bounded list. */
export function addPerson(list: PeopleList, name: string): void {
  list.count++;
  if (list.shown.length < SHOWN_PEOPLE) list.shown.push(name);
}

export function personName(who: { sub?: unknown; client_id?: unknown; tenant_id?: unknown }): string {
  const id =
    typeof who.sub === "string"
      ? `sub ${who.sub}`
      : typeof who.client_id === "string"
        ? `client ${who.client_id}`
        : "?";
  return typeof who.tenant_id === "string" ? `${id} (tenant ${who.tenant_id})` : id;
}

/** The directory's people, one holder per distinct (tenant, role names) entry. */
export async function directoryHolders(file: string): Promise<Holder[]> {
  const byEntry = new Map<DirectoryEntry, Holder>();
  await loadDirectoryFile(file, {
    onRecord: (sub, entry) => {
      let h = byEntry.get(entry);
      if (!h) {
        h = {
          flow: "accessCode",
          names: entry.names,
          resolved: false,
          synced: true,
          tenantId: entry.tenant_id,
          people: { count: 0, shown: [] },
        };
        byEntry.set(entry, h);
      }
      addPerson(h.people, personName({ sub, tenant_id: entry.tenant_id }));
    },
  });
  return [...byEntry.values()];
}

/** One side: its matrix and role catalog, to say what a holder may call there. */
export class SideAccess {
  private readonly resolve: (names: readonly string[]) => readonly string[] | undefined;
  private readonly rows: Map<string, Record<string, MatrixCell>>;

  constructor(matrix: AccessMatrix, roles: readonly CatalogRole[]) {
    const byEntry = entryRoles(roleResolver(roles));
    this.resolve = (names) => byEntry({ tenant_id: "", names });
    this.rows = new Map(matrix.rows.map((r) => [`${r.method ?? "GET"} ${r.template}`, r.cells]));
  }

  /** The holder's role ids on this side; undefined when it is not synced here (a name this side does not know). */
  roleIds(h: Holder): readonly string[] | undefined {
    if (!h.synced) return undefined;
    return h.resolved ? h.names : this.resolve(h.names);
  }

  /** Whether the holder may call the route with the method (a row of the grid: GET unless routes name methods). */
  allows(h: Holder, template: string, method = "GET"): boolean {
    const cells = this.rows.get(`${method} ${template}`);
    if (!cells) return false;
    if (h.flow === "application") return cells.application?.allow === true;
    const ids = this.roleIds(h);
    if (ids === undefined) return cells.not_synced?.allow === true;
    if (ids.length === 0) return cells.synced_without_role?.allow === true;
    return ids.some((id) => cells[id]?.allow === true);
  }
}

/** The column of the grid a holder is in on a side (a role id means: holds that role). */
function inColumn(h: Holder, column: string, side: SideAccess): boolean {
  if (column === "application") return h.flow === "application";
  if (h.flow === "application") return false;
  const ids = side.roleIds(h);
  if (column === "not_synced") return ids === undefined;
  if (column === "synced_without_role") return ids !== undefined && ids.length === 0;
  return ids?.includes(column) === true;
}

/**
 * The people among `holders` of the grid's `column` whose access to one of `templates` goes the `change` way
 * from `base` to `head`.
 */
export function peopleOf(
  holders: Holder[],
  row: { column: string; change: "gained" | "lost"; method?: string; templates: string[] },
  base: SideAccess,
  head: SideAccess,
): PeopleList {
  const out: PeopleList = { count: 0, shown: [] };
  const once = new Set<string>();
  for (const h of holders) {
    if (!inColumn(h, row.column, head) && !inColumn(h, row.column, base)) continue;
    const moved = row.templates.some((t) => {
      const before = base.allows(h, t, row.method);
      const after = head.allows(h, t, row.method);
      return row.change === "gained" ? !before && after : before && !after;
    });
    if (!moved) continue;
    merge(out, h, once);
  }
  return out;
}

/**
 * Adds a holder's people to a list. A holder of one person (a log's caller) is added once by name, whatever the
 * roles it was seen with; the directory holds each sub once, so its holders are added whole.
 */
function merge(out: PeopleList, h: Holder, once: Set<string>): void {
  const only = h.people.count === 1 ? h.people.shown[0] : undefined;
  if (only !== undefined) {
    if (once.has(only)) return;
    once.add(only);
  }
  out.count += h.people.count;
  for (const name of h.people.shown) if (out.shown.length < SHOWN_PEOPLE) out.shown.push(name);
}

/**
 * The people among `holders` a tenant-binding change reaches: those of the row's tenant and flow who may call one
 * of its routes at all on the side where the code is allowed (HEAD for a gain, BASE for a loss): their
 * organisation now includes, or no longer includes, the code asked.
 */
export function tenantPeopleOf(
  holders: Holder[],
  row: { tenantId: string; flow: Holder["flow"]; change: "gained" | "lost"; templates: string[] },
  base: SideAccess,
  head: SideAccess,
): PeopleList {
  const side = row.change === "gained" ? head : base;
  const out: PeopleList = { count: 0, shown: [] };
  const once = new Set<string>();
  for (const h of holders) {
    if (h.tenantId !== row.tenantId || h.flow !== row.flow) continue;
    if (!row.templates.some((t) => side.allows(h, t))) continue;
    merge(out, h, once);
  }
  return out;
}

/** A bounded list in words: "a, b and 3 more". */
export function peopleText(list: PeopleList): string {
  const more = list.count - list.shown.length;
  return more > 0 ? `${list.shown.join(", ")} and ${more} more` : list.shown.join(", ");
}
