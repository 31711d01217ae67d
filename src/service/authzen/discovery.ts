/**
 * GET /.well-known/authzen-configuration: the PDP metadata (AuthZEN 1.0, "Policy Decision Point Metadata"), from the
 * configured identifier (--authzen-pdp-id, an https URL without query or fragment): the identifier itself and the
 * absolute URL of each endpoint Portier serves. With a path in the identifier (https://pdp.example/tenant1), the
 * document is served at /.well-known/authzen-configuration/tenant1 and the endpoints are under that path (a proxy in
 * front strips it).
 */
export const ENDPOINTS = {
  access_evaluation_endpoint: "/access/v1/evaluation",
  access_evaluations_endpoint: "/access/v1/evaluations",
  search_subject_endpoint: "/access/v1/search/subject",
  search_resource_endpoint: "/access/v1/search/resource",
  search_action_endpoint: "/access/v1/search/action",
} as const;

export const WELL_KNOWN = "/.well-known/authzen-configuration";

export interface PdpMetadata {
  policy_decision_point: string;
  access_evaluation_endpoint: string;
  access_evaluations_endpoint: string;
  search_subject_endpoint: string;
  search_resource_endpoint: string;
  search_action_endpoint: string;
}

/** The metadata document and the path it is served at. */
export function pdpMetadata(pdpId: string): { path: string; document: PdpMetadata } {
  const url = new URL(pdpId);
  const base = pdpId.replace(/\/+$/, "");
  const suffix = url.pathname.replace(/\/+$/, "");
  const endpoints = Object.fromEntries(Object.entries(ENDPOINTS).map(([key, path]) => [key, `${base}${path}`]));
  return {
    path: `${WELL_KNOWN}${suffix}`,
    document: { policy_decision_point: pdpId, ...(endpoints as Omit<PdpMetadata, "policy_decision_point">) },
  };
}
