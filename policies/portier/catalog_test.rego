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

test_lists_tenants_without_their_codes if {
	catalog.tenants == [{"tenant_id": "t-b", "name": "B"}, {"tenant_id": "t-a", "name": ""}] with data.catalog.tenants as fixture_tenants
}

test_lists_every_code_once_sorted if {
	catalog.codes == ["ORG1", "ORG2", "ORG9"] with data.catalog.tenants as fixture_tenants
}
