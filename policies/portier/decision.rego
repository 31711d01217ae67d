# The decision entrypoint (portier/decision): may this verified token call this method and path?
# Checks run in this order and the first failure is the answer:
#   token shape -> route -> an entry of the route for the method -> organisation code well-formed -> scope (user tokens) -> tenant binding
#   -> role list (the flows the project role-checks; data/project.json, read through portier/project).
# In role-check mode "audit" a failed role check allows and reports would_deny instead.
package portier

import data.portier.access
import data.portier.project
import data.portier.routes
import data.portier.tenancy
import data.portier.token

# METADATA
# title: Decision
# description: Allow or deny one call, with status, reason and message; the service evaluates this rule.
# entrypoint: true
decision := {
	"allow": _verdict.reason == "allowed",
	"status": _verdict.status,
	"reason": _verdict.reason,
	"message": _verdict.message,
	"flow": _flow,
	"route": _route,
	"deprecated": _deprecated,
	"mode": _mode,
	"would_deny": _would_deny,
}

_verdict := _deny(401, "token_shape_unknown", token.shape_problem) if {
	not token.flow
} else := _deny(403, "route_unknown", concat("", ["no route of the catalog matches ", input.path])) if {
	not routes.match
} else := _deny(403, "method_not_allowed", routes.method_problem) if {
	not routes.route_answers_method
} else := _deny(403, "path_invalid", tenancy.malformed_message) if {
	tenancy.code_malformed
} else := _deny(403, "scope_missing", concat("", ["a user token must carry the ", project.user_scope, " scope"])) if {
	token.flow == "accessCode"
	project.user_scope != null
	not token.has_user_scope
	not token.named_by_pep
} else := _deny(403, "tenant_mismatch", tenancy.message) if {
	tenancy.mismatch
} else := _enforced_role_verdict if {
	token.flow in project.role_checked_flows
} else := _allow(concat("", [project.flow_words[token.flow], " tokens are not role-restricted"]))

_role_check_failed if access.verdict.reason != "allowed"

_enforced_role_verdict := _deny(403, access.verdict.reason, access.verdict.message) if {
	_role_check_failed
	_mode == "enforce"
} else := _allow(concat("", ["audit mode: would deny (", access.verdict.message, ")"])) if {
	_role_check_failed
} else := _allow(access.verdict.message)

default _would_deny := null

_would_deny := {"reason": access.verdict.reason, "message": access.verdict.message} if {
	_mode == "audit"
	_reached_role_check
	_role_check_failed
}

# The answer relied on the role list (deprecated, in the spec's project) whenever a call reached the role check.
default _deprecated := false

_deprecated if {
	project.role_list_deprecated
	_reached_role_check
}

_reached_role_check if {
	token.flow in project.role_checked_flows
	_verdict.reason in {"allowed", "role_not_allowed", "not_synced"}
}

default _flow := null

_flow := token.flow

default _route := null

_route := routes.match

default _mode := "enforce"

_mode := "audit" if input.role_check == "audit"

_deny(status, reason, message) := {"status": status, "reason": reason, "message": message}

_allow(message) := {"status": 200, "reason": "allowed", "message": message}
