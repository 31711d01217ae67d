package portier.access_test

import data.portier.access
import data.portier.fixture
import data.portier.todo_fixture_test as todo

# A route that lists roles and one open to all synced users, read from the fixture catalog (not copied
# here): a change of the table is caught by the spec table's oracle (spec_table_test.rego), not by these tests
# of the role check's logic. A path of each: every parameter given a sample value.
listed_route := [route |
	some route in fixture.catalog.routes
	is_array(route.allowed)
][0]

open_route := [route |
	some route in fixture.catalog.routes
	route.allowed == "all_synced"
][0]

listed_path := regex.replace(listed_route.template, `\{[^}]+\}`, "ORG001")

open_path := regex.replace(open_route.template, `\{[^}]+\}`, "ORG001")

# A role the listed route allows, and one it does not.
listed_role := listed_route.allowed[0]

unlisted_role := [role.id |
	some role in fixture.catalog.roles
	not role.id in listed_route.allowed
][0]

# [path, roles, synced, expected reason]
role_cases := [
	[listed_path, [listed_role], true, "allowed"],
	[listed_path, [unlisted_role, listed_role], true, "allowed"],
	[listed_path, [unlisted_role], true, "role_not_allowed"],
	[listed_path, [], true, "role_not_allowed"],
	[listed_path, [], false, "role_not_allowed"],
	[open_path, [], true, "allowed"],
	[open_path, [unlisted_role], true, "allowed"],
	[open_path, [], false, "not_synced"],
	[open_path, [unlisted_role], false, "not_synced"],
]

test_role_verdicts[[path, roles, synced]] if {
	some [path, roles, synced, reason] in role_cases
	access.verdict.reason == reason with input as {"method": "GET", "path": path, "roles": roles, "synced": synced} with data.catalog as fixture.catalog
}

# [path, roles, synced, the exact message]
message_cases := [
	[
		listed_path, array.concat([unlisted_role], listed_route.allowed), false,
		concat("", ["user role ", concat(", ", sort(listed_route.allowed)), " is allowed on ", listed_route.template]),
	],
	[
		listed_path, [unlisted_role], true,
		concat("", [
			"none of the caller's roles [", unlisted_role, "] may call ", listed_route.template,
			" (allowed: ", concat(", ", listed_route.allowed), ")",
		]),
	],
	[open_path, [], true, concat("", ["synced users may call ", open_route.template])],
	[
		open_path, [unlisted_role], false,
		concat("", [open_route.template, " is open to synced users only, and the caller is not synced in identity management"]),
	],
]

test_messages_name_roles_and_route[[path, roles, synced]] if {
	some [path, roles, synced, message] in message_cases
	access.verdict.message == message with input as {"method": "GET", "path": path, "roles": roles, "synced": synced} with data.catalog as fixture.catalog
}

# The role list of the entry answering the method (the Todo fixture: one entry per method of a route).
# [method, path, roles, synced, expected reason]
method_cases := [
	["GET", "/todos", ["viewer"], true, "allowed"],
	["POST", "/todos", ["viewer"], true, "role_not_allowed"],
	["POST", "/todos", ["editor"], true, "allowed"],
	["put", "/todos/t1", ["editor"], true, "allowed"],
	["DELETE", "/todos/t1", ["editor"], true, "role_not_allowed"],
	["DELETE", "/todos/t1", ["admin"], false, "allowed"],
	["HEAD", "/todos", [], true, "allowed"],
	["HEAD", "/todos", ["viewer"], false, "not_synced"],
	["HEAD", "/users/u1", ["viewer"], false, "allowed"],
	["HEAD", "/users/u1", [], true, "role_not_allowed"],
]

test_role_list_of_the_method[[method, path, roles, synced]] if {
	some [method, path, roles, synced, reason] in method_cases
	v := access.verdict with input as {"method": method, "path": path, "roles": roles, "synced": synced}
		with data.catalog as todo.catalog
	v.reason == reason
}
