package portier.catalog_test

import data.portier.catalog
import data.portier.todo_fixture_test as todo

test_lists_every_route_without_grants if {
	count(catalog.routes) == count(data.catalog.routes)
	every r in catalog.routes {
		object.keys(r) == {"product", "api", "template", "methods"}
	}
	catalog.routes[0].template == data.catalog.routes[0].template
}

# An entry without methods lists GET (HEAD follows GET); one with methods lists them as written.
test_lists_each_entry_with_its_methods if {
	[[r.template, r.methods] | some r in catalog.routes] == [
		["/users/{userId}", ["GET"]],
		["/todos", ["GET"]],
		["/todos", ["POST"]],
		["/todos/{todoId}", ["PUT"]],
		["/todos/{todoId}", ["DELETE"]],
		["/todos", ["HEAD", "OPTIONS"]],
	] with data.catalog as todo.catalog
}

test_lists_roles_with_labels if {
	{r.id | some r in catalog.roles} == {r.id | some r in data.catalog.roles}
	every r in catalog.roles {
		r.label != ""
	}
}

fixture_tenants := [
	{"tenant_id": "t-b", "name": "B", "codeOrganisme": ["ORG9", "ORG2"]},
	{"tenant_id": "t-a", "codeOrganisme": ["ORG1"]},
]

# rule of portier/catalog -> what it lists for fixture_tenants: tenants without their codes, every code once, sorted
fixture_cases := {
	"tenants": [{"tenant_id": "t-b", "name": "B"}, {"tenant_id": "t-a", "name": ""}],
	"codes": ["ORG1", "ORG2", "ORG9"],
}

test_lists_from_the_tenants[rule] if {
	some rule, listed in fixture_cases
	catalog[rule] == listed with data.catalog.tenants as fixture_tenants
}
