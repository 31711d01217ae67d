# The explain entrypoint (portier/explain/checks): every check of portier/decision, in the decision's
# order, each with its own outcome ("pass", "fail" or "not_applicable"), so that a reviewer sees every
# check a call would fail and not only the first. Only the review tools evaluate it; the decision
# entrypoint does not depend on it.
package portier.explain

import data.portier
import data.portier.access
import data.portier.routes
import data.portier.tenancy
import data.portier.token

# METADATA
# title: Checks
# description: Every check of portier/decision in its order, each with its own outcome, for portier explain.
# entrypoint: true
checks := [
	outcome("token shape", token_shape),
	outcome("method", method),
	outcome("route", route),
	outcome("organisation code", organisation_code),
	outcome("apiclients scope", scope),
	outcome("tenant binding", tenant_binding),
	outcome("role list", role_list),
]

outcome(name, result) := object.union({"check": name}, result)

passed(message) := {"outcome": "pass", "reason": "", "message": message}

failed(reason, message) := {"outcome": "fail", "reason": reason, "message": message}

not_applicable(message) := {"outcome": "not_applicable", "reason": "", "message": message}

token_shape := passed(concat("", ["the token is of flow ", token.flow])) if token.flow

else := failed("token_shape_unknown", token.shape_problem)

method := passed(concat("", [input.method, " is a read"])) if portier.method_is_allowed

else := failed("method_not_allowed", concat("", ["method ", input.method, " is not allowed: GET and HEAD only"]))

route := passed(concat("", ["matches ", routes.match.template])) if routes.match

else := failed("route_unknown", concat("", ["no route of the catalog matches ", input.path]))

organisation_code := not_applicable("the route has no {codeOrganisme}") if not routes.match.parameters.codeOrganisme

else := failed("path_invalid", tenancy.malformed_message) if tenancy.code_malformed

else := passed(concat("", ["codeOrganisme ", routes.match.parameters.codeOrganisme, " is an organisation code"]))

scope := not_applicable("only user (accessCode) tokens need the apiclients scope") if not is_user_call

else := passed("the user token carries the apiclients scope") if token.has_apiclients_scope

else := failed("scope_missing", "a user token must carry the apiclients scope")

tenant_binding := not_applicable("the route has no {codeOrganisme}") if not routes.match.parameters.codeOrganisme

else := failed("tenant_mismatch", tenancy.message) if tenancy.mismatch

else := passed(concat("", ["codeOrganisme ", routes.match.parameters.codeOrganisme, " may be called by this caller"]))

role_list := not_applicable("only user (accessCode) calls are role-restricted") if not is_user_call

else := not_applicable("no route matched, so no role list applies") if not routes.match

else := passed(access.verdict.message) if access.verdict.reason == "allowed"

else := failed(access.verdict.reason, access.verdict.message)

is_user_call if token.flow == "accessCode"
