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
