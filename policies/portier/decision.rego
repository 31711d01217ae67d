# The decision entrypoint (portier/decision): may this verified token call this method and path?
# Checks run in this order and the first failure is the answer:
#   token shape -> method -> route -> organisation code well-formed -> scope (user tokens) -> tenant binding
#   -> role list (user tokens).
# In role-check mode "audit" a failed role check allows and reports would_deny instead.
package portier

import data.portier.access
import data.portier.routes
import data.portier.tenancy
import data.portier.token

# METADATA
# title: Decision
# description: Allow or deny one call, with status, reason and message; the service evaluates this rule.
# entrypoint: true
decision := {
	"allow": verdict.reason == "allowed",
	"status": verdict.status,
	"reason": verdict.reason,
	"message": verdict.message,
	"flow": flow,
	"route": route,
	"deprecated": deprecated,
	"mode": mode,
	"would_deny": would_deny,
}

verdict := deny(401, "token_shape_unknown", token.shape_problem) if {
	not token.flow
} else := deny(403, "method_not_allowed", concat("", ["method ", input.method, " is not allowed: these routes answer GET and HEAD only"])) if {
	not method_is_allowed
} else := deny(403, "route_unknown", concat("", ["no route of the catalog matches ", input.path])) if {
	not routes.match
} else := deny(403, "path_invalid", tenancy.malformed_message) if {
	tenancy.code_malformed
} else := deny(403, "scope_missing", "a user token must carry the apiclients scope") if {
	token.flow == "accessCode"
	not token.has_apiclients_scope
} else := deny(403, "tenant_mismatch", tenancy.message) if {
	tenancy.mismatch
} else := enforced_role_verdict if {
	token.flow == "accessCode"
} else := allow("application tokens are not role-restricted")

method_is_allowed if upper(input.method) in {"GET", "HEAD"}

role_check_failed if access.verdict.reason != "allowed"

enforced_role_verdict := deny(403, access.verdict.reason, access.verdict.message) if {
	role_check_failed
	mode == "enforce"
} else := allow(concat("", ["audit mode: would deny (", access.verdict.message, ")"])) if {
	role_check_failed
} else := allow(access.verdict.message)

default would_deny := null

would_deny := {"reason": access.verdict.reason, "message": access.verdict.message} if {
	mode == "audit"
	deprecated
	role_check_failed
}

# The answer relied on the deprecated role list whenever a user call reached the role check.
default deprecated := false

deprecated if {
	token.flow == "accessCode"
	verdict.reason in {"allowed", "role_not_allowed", "not_synced"}
}

default flow := null

flow := token.flow

default route := null

route := object.remove(routes.match, ["allowed"])

default mode := "enforce"

mode := "audit" if input.role_check == "audit"

deny(status, reason, message) := {"status": status, "reason": reason, "message": message}

allow(message) := {"status": 200, "reason": "allowed", "message": message}
