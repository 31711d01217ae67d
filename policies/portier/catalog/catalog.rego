# The catalog entrypoint (portier/catalog): which routes, roles, tenants and organisation codes the
# compiled bundle knows, so that review tools can enumerate them and ask the decision entrypoint about
# every cell. Grants and tenant bindings are not exposed here on purpose: the tools learn them only by
# evaluating decisions.

# METADATA
# title: Catalog
# description: The routes, roles, tenants and organisation codes the bundle knows, for the review tools (no grants).
# scope: package
# entrypoint: true
package portier.catalog

# One item per route entry, with the methods it names (GET when it names none; HEAD follows GET).
routes := [{"product": r.product, "api": r.api, "template": r.template, "methods": object.get(r, "methods", ["GET"])} |
	some r in data.catalog.routes
]

roles := [{"id": r.id, "label": r.label} | some r in data.catalog.roles]

tenants := [{"tenant_id": t.tenant_id, "name": object.get(t, "name", "")} | some t in data.catalog.tenants]

codes := sort({code | some t in data.catalog.tenants; some code in t.codeOrganisme})

# How explanations name the route table's role lists (data/project.json), for the review tools' wording.
default role_list := {"name": "the role list of the route table", "deprecated": false}

role_list := data.catalog.project.role_list
