/**
 * The discovery endpoints of RFC 7644 section 4: /ServiceProviderConfig (what this provider supports),
 * /ResourceTypes (User and Group) and /Schemas (RFC 7643 section 7: the attributes of RFC 7643 sections 4.1 to 4.3,
 * which Portier keeps as sent and answers, so that every attribute of an answer is one a schema declares).
 */
import { ENTERPRISE_USER_SCHEMA, GROUP_SCHEMA, USER_SCHEMA } from "./resources.js";

const LIST = "urn:ietf:params:scim:api:messages:2.0:ListResponse";
/** Every Schema resource names its own schema (RFC 7643 section 7, as in the examples of section 8.7). */
const SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:Schema";

export function serviceProviderConfig(maxResults: number, maxPayloadSize: number, maxOperations: number) {
  return {
    schemas: ["urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig"],
    patch: { supported: true },
    bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
    filter: { supported: true, maxResults },
    changePassword: { supported: false },
    sort: { supported: true },
    etag: { supported: true },
    authenticationSchemes: [
      {
        type: "oauthbearertoken",
        name: "Bearer token",
        description:
          `The token of --scim-token-file in Authorization: Bearer; bodies up to ${maxPayloadSize} bytes, ` +
          `${maxOperations} operations per PATCH`,
        primary: true,
      },
    ],
    meta: { resourceType: "ServiceProviderConfig", location: "/scim/v2/ServiceProviderConfig" },
  };
}

const resourceTypes = [
  {
    schemas: ["urn:ietf:params:scim:schemas:core:2.0:ResourceType"],
    id: "User",
    name: "User",
    endpoint: "/Users",
    description: "A synced user: mapped to a directory record (sub, tenant_id, roles)",
    schema: USER_SCHEMA,
    schemaExtensions: [{ schema: ENTERPRISE_USER_SCHEMA, required: false }],
    meta: { resourceType: "ResourceType", location: "/scim/v2/ResourceTypes/User" },
  },
  {
    schemas: ["urn:ietf:params:scim:schemas:core:2.0:ResourceType"],
    id: "Group",
    name: "Group",
    endpoint: "/Groups",
    description: "A group: its displayName is a role name of its members",
    schema: GROUP_SCHEMA,
    meta: { resourceType: "ResourceType", location: "/scim/v2/ResourceTypes/Group" },
  },
];

type Attr = Record<string, unknown>;

function attr(name: string, type: string, extra: Attr = {}): Attr {
  return {
    name,
    type,
    multiValued: false,
    required: false,
    caseExact: false,
    mutability: "readWrite",
    returned: "default",
    uniqueness: "none",
    ...extra,
  };
}

const memberLike = (name: string, mutability: string, description: string) =>
  attr(name, "complex", {
    multiValued: true,
    mutability,
    description,
    subAttributes: [
      attr("value", "string", { mutability: mutability === "readOnly" ? "readOnly" : "immutable" }),
      attr("$ref", "reference", { referenceTypes: ["User", "Group"], mutability: "immutable" }),
      attr("display", "string", { mutability: "readOnly" }),
      attr("type", "string", { canonicalValues: ["User", "Group"], mutability: "immutable" }),
    ],
  });

/** A multi-valued attribute of RFC 7643 section 2.4's shape: value, display, type, primary. */
const plural = (name: string, valueType = "string", description?: string) =>
  attr(name, "complex", {
    multiValued: true,
    ...(description ? { description } : {}),
    subAttributes: [
      attr("value", valueType),
      attr("display", "string"),
      attr("type", "string"),
      attr("primary", "boolean"),
    ],
  });

const schemas = [
  {
    schemas: [SCHEMA],
    id: USER_SCHEMA,
    name: "User",
    description: "User Account",
    attributes: [
      attr("userName", "string", { required: true, uniqueness: "server" }),
      attr("externalId", "string", { caseExact: true, uniqueness: "server" }),
      attr("displayName", "string"),
      attr("nickName", "string"),
      attr("profileUrl", "reference", { referenceTypes: ["external"] }),
      attr("title", "string"),
      attr("userType", "string"),
      attr("preferredLanguage", "string"),
      attr("locale", "string"),
      attr("timezone", "string"),
      attr("active", "boolean", { description: "false: the user is not synced (every user-flow call denied)" }),
      attr("password", "string", {
        mutability: "writeOnly",
        returned: "never",
        description: "accepted and dropped: never kept nor returned",
      }),
      attr("name", "complex", {
        subAttributes: ["formatted", "familyName", "givenName", "middleName", "honorificPrefix", "honorificSuffix"].map(
          (n) => attr(n, "string"),
        ),
      }),
      ...["emails", "phoneNumbers", "ims", "entitlements"].map((n) => plural(n)),
      plural("photos", "reference"),
      plural("x509Certificates", "binary"),
      attr("addresses", "complex", {
        multiValued: true,
        subAttributes: [
          ...["formatted", "streetAddress", "locality", "region", "postalCode", "country", "type"].map((n) =>
            attr(n, "string"),
          ),
          attr("primary", "boolean"),
        ],
      }),
      plural("roles", "string", "role names, resolved like the directory file's"),
      memberLike("groups", "readOnly", "the groups the user is a direct member of"),
    ],
    meta: { resourceType: "Schema", location: `/scim/v2/Schemas/${USER_SCHEMA}` },
  },
  {
    schemas: [SCHEMA],
    id: GROUP_SCHEMA,
    name: "Group",
    description: "Group",
    attributes: [
      attr("displayName", "string", { required: true, uniqueness: "server" }),
      attr("externalId", "string", { caseExact: true }),
      memberLike("members", "readWrite", "users (and groups, which give no roles) of the group"),
    ],
    meta: { resourceType: "Schema", location: `/scim/v2/Schemas/${GROUP_SCHEMA}` },
  },
  {
    schemas: [SCHEMA],
    id: ENTERPRISE_USER_SCHEMA,
    name: "EnterpriseUser",
    description: "Enterprise User",
    attributes: [
      ...["employeeNumber", "costCenter", "organization", "division", "department"].map((n) => attr(n, "string")),
      attr("manager", "complex", {
        subAttributes: [
          attr("value", "string"),
          attr("$ref", "reference", { referenceTypes: ["User"] }),
          attr("displayName", "string", { mutability: "readOnly" }),
        ],
      }),
    ],
    meta: { resourceType: "Schema", location: `/scim/v2/Schemas/${ENTERPRISE_USER_SCHEMA}` },
  },
];

function listOf(resources: unknown[]) {
  return {
    schemas: [LIST],
    totalResults: resources.length,
    startIndex: 1,
    itemsPerPage: resources.length,
    Resources: resources,
  };
}

export const listResourceTypes = () => listOf(resourceTypes);
export const resourceType = (id: string) => resourceTypes.find((r) => r.id === id);
export const listSchemas = () => listOf(schemas);
export const schema = (id: string) => schemas.find((s) => s.id === id);
export { LIST as LIST_SCHEMA };
