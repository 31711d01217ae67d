/**
 * Loads the issuer's users and clients and validates each file against its JSON schema with ajv; every error
 * names the file and the field path. (The synced-users directory is the service's: src/directory loads it.)
 */
import { PortierError } from "../errors/portier-error.js";
import { Ajv, type ErrorObject, type ValidateFunction } from "ajv";
import addFormatsModule from "ajv-formats";
import usersSchema from "./schemas/users.schema.json" with { type: "json" };
import clientsSchema from "./schemas/clients.schema.json" with { type: "json" };
import { messageOf } from "../errors/caught.js";
import { InputFileError, readInputFileSync } from "../files/read-input-file.js";

/** The largest users or clients file the issuer reads (a development sample is a few KiB). */
const MAX_DATA_FILE_BYTES = 16 * 1024 * 1024;

export interface IssuerUser {
  sub: string;
  preferred_username: string;
  /** Development password, in clear on purpose (dev issuer). */
  password: string;
  email: string;
  email_verified: boolean;
  given_name: string;
  family_name: string;
  name: string;
  tenant_id: string;
  idp: string;
  amr: string[];
  description?: string;
}

export type GrantType = "authorization_code" | "client_credentials";

export interface IssuerClient {
  client_id: string;
  client_name?: string;
  type: "public" | "confidential";
  client_secret?: string;
  grant_types: GrantType[];
  redirect_uris?: string[];
  scopes: string[];
  /** Tenant of a machine client; copied into its `application` tokens. */
  tenant_id?: string;
}

export class DataFileError extends PortierError {
  static override readonly code = "sample_data_invalid";
  constructor(
    readonly file: string,
    readonly path: string,
    detail: string,
  ) {
    super(`${file}: ${path || "(root)"}: ${detail}`);
  }
}

// ajv-formats is CommonJS; its default export arrives wrapped under NodeNext.
const addFormats = addFormatsModule.default;
const ajv = new Ajv({
  allErrors: true,
  strict: true,
  strictRequired: false,
  strictTypes: false,
  allowUnionTypes: true,
});
addFormats(ajv);
const validateUsers = ajv.compile<{ users: IssuerUser[] }>(usersSchema);
const validateClients = ajv.compile<{ clients: IssuerClient[] }>(clientsSchema);

export function loadUsers(file: string): IssuerUser[] {
  const doc = readValidated(file, validateUsers);
  assertUnique(file, doc.users, "users", "sub");
  assertUnique(file, doc.users, "users", "preferred_username");
  return doc.users;
}

export function loadClients(file: string): IssuerClient[] {
  const doc = readValidated(file, validateClients);
  assertUnique(file, doc.clients, "clients", "client_id");
  doc.clients.forEach((client, i) => {
    (client.redirect_uris ?? []).forEach((uri, j) => {
      // RFC 6749 3.1.2: absolute, no fragment.
      if (new URL(uri).hash || uri.includes("#"))
        throw new DataFileError(file, `/clients/${i}/redirect_uris/${j}`, "must not contain a fragment");
    });
  });
  return doc.clients;
}

function readValidated<T>(file: string, validate: ValidateFunction<T>): T {
  let text: string;
  try {
    text = readInputFileSync(file, MAX_DATA_FILE_BYTES).toString("utf8");
  } catch (err) {
    throw new DataFileError(file, "", err instanceof InputFileError ? err.why : `cannot read: ${messageOf(err)}`);
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new DataFileError(file, "", `not valid JSON: ${messageOf(err)}`);
  }
  if (!validate(doc)) {
    const first = (validate.errors ?? [])[0];
    throw new DataFileError(file, first?.instancePath ?? "", describe(first, validate.errors ?? []));
  }
  return doc;
}

function describe(first: ErrorObject | undefined, all: ErrorObject[]): string {
  if (!first) return "invalid";
  const extra = first.keyword === "additionalProperties" ? ` (${String(first.params["additionalProperty"])})` : "";
  const more = all.length > 1 ? ` (+${all.length - 1} more error(s))` : "";
  return `${first.message ?? "invalid"}${extra}${more}`;
}

function assertUnique<T>(file: string, items: T[], listName: string, key: keyof T): void {
  const seen = new Set<unknown>();
  items.forEach((item, i) => {
    if (seen.has(item[key]))
      throw new DataFileError(file, `/${listName}/${i}/${String(key)}`, `duplicate value ${String(item[key])}`);
    seen.add(item[key]);
  });
}
