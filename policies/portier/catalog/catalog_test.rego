package portier.catalog_test

import data.portier.catalog

test_lists_every_route_without_grants if {
	count(catalog.routes) == count(data.catalog.routes)
	every r in catalog.routes {
		object.keys(r) == {"product", "api", "template"}
	}
	catalog.routes[0].template == data.catalog.routes[0].template
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
