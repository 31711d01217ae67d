# The catalog entrypoint (portier/catalog): which routes and roles the compiled bundle knows, so that
# review tools can enumerate them and ask the decision entrypoint about every cell. Grants are not
# exposed here on purpose: the tools learn them only by evaluating decisions.

# METADATA
# title: Catalog
# description: The routes and roles the bundle knows, for the review tools (no grants).
# scope: package
# entrypoint: true
package portier.catalog

routes := [{"product": r.product, "api": r.api, "template": r.template} | some r in data.catalog.routes]

roles := [{"id": r.id, "label": r.label} | some r in data.catalog.roles]
