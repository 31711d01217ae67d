# The explain entrypoint (portier/explain/checks): every check of portier/decision, in the decision's
# order, each with its own outcome ("pass", "fail" or "not_applicable"), so that a reviewer sees every
# check a call would fail and not only the first. Only the review tools evaluate it; the decision
# entrypoint does not depend on it.
package portier.explain

import data.portier.access
import data.portier.project
import data.portier.routes
import data.portier.tenancy
import data.portier.token

# METADATA
# title: Checks
# description: Every check of portier/decision in its order, each with its own outcome, for portier explain.
# entrypoint: true
checks := [
	_outcome("token shape", _token_shape),
	_outcome("route", _route),
	_outcome("method", _method),
	_outcome("organisation code", _organisation_code),
	_outcome(_scope_check, _scope),
	_outcome("tenant binding", _tenant_binding),
	_outcome("role list", _role_list),
]

_outcome(name, result) := object.union({"check": name}, result)

_passed(message) := {"outcome": "pass", "reason": "", "message": message}

_failed(reason, message) := {"outcome": "fail", "reason": reason, "message": message}

_not_applicable(message) := {"outcome": "not_applicable", "reason": "", "message": message}

_token_shape := _passed(concat("", ["the token is of flow ", token.flow])) if token.flow

else := _failed("token_shape_unknown", token.shape_problem)

_method := _not_applicable("no route matched, so no method applies") if not routes.match

else := _passed(concat("", [
	routes.match.template, " answers ", routes.method,
	" (", routes.method_kind, ")",
])) if {
	routes.route_answers_method
}

else := _failed("method_not_allowed", routes.method_problem)

_route := _passed(concat("", ["matches ", routes.match.template])) if routes.match

else := _failed("route_unknown", concat("", ["no route of the catalog matches ", input.path]))

_organisation_code := _not_applicable(_no_binding) if not tenancy.code

else := _failed("path_invalid", tenancy.malformed_message) if tenancy.code_malformed

else := _passed(concat("", [project.tenant_parameter, " ", tenancy.code, " is an organisation code"]))

_scope_check := "user scope" if project.user_scope == null

else := concat(" ", [project.user_scope, "scope"])

_scope := _not_applicable("the project requires no scope of user tokens") if project.user_scope == null

else := _not_applicable(concat("", ["only user (accessCode) tokens need the ", _scope_check])) if not _is_user_call

else := _passed(concat("", ["the user token carries the ", _scope_check])) if token.has_user_scope

else := _failed("scope_missing", concat("", ["a user token must carry the ", _scope_check]))

_no_binding := "the project binds no path parameter to tenants" if project.tenant_parameter == null

else := concat("", ["the route has no {", project.tenant_parameter, "}"])

_tenant_binding := _not_applicable(_no_binding) if not tenancy.code

else := _failed("tenant_mismatch", tenancy.message) if tenancy.mismatch

else := _passed(concat("", [project.tenant_parameter, " ", tenancy.code, " may be called by this caller"]))

_role_list := _not_applicable("no token flow, so no role list applies") if not token.flow

else := _not_applicable(concat("", [project.flow_words[token.flow], " calls are not role-restricted"])) if {
	not token.flow in project.role_checked_flows
}

else := _not_applicable("no route matched, so no role list applies") if not routes.match

else := _not_applicable(concat("", ["no entry of the route for ", routes.method, ", so no role list applies"])) if {
	not routes.route_answers_method
}

else := _passed(access.verdict.message) if access.verdict.reason == "allowed"

else := _failed(access.verdict.reason, access.verdict.message)

_is_user_call if token.flow == "accessCode"
