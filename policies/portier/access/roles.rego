# The role check of spec 4.3 (deprecated list) for user (accessCode) calls: a route either names the
# roles allowed to call it, or is open to "all synced" users (anyone synchronised in identity management).
package portier.access

import data.portier.routes

verdict := {"reason": "allowed", "message": concat("", [
	"user role ", concat(", ", sort(_granted_roles)),
	" is allowed on ", routes.match.template,
])} if {
	count(_granted_roles) > 0
} else := {"reason": "allowed", "message": concat("", ["synced users may call ", routes.match.template])} if {
	_route_is_open_to_all_synced
	input.synced == true
} else := {"reason": "not_synced", "message": concat("", [
	routes.match.template,
	" is open to synced users only, and the caller is not synced in identity management",
])} if {
	_route_is_open_to_all_synced
} else := {"reason": "role_not_allowed", "message": concat("", [
	"none of the caller's roles [", concat(", ", input.roles), "] may call ", routes.match.template,
	" (allowed: ", concat(", ", routes.allowed), ")",
])}

# The caller's roles that the matched route allows.
_granted_roles contains role if {
	is_array(routes.allowed)
	some role in input.roles
	role in routes.allowed
}

_route_is_open_to_all_synced if routes.allowed == "all_synced"
