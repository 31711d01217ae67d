# Matches the request path against the route table of spec 4.3 (data.catalog.routes).
# The path arrives normalised by the engine (decoded once, NFC, no query); here:
# - literal segments compare case-insensitively (lower() folds Unicode: "ÉCOLES" = "écoles");
# - a {parameter} matches exactly one non-empty segment;
# - one trailing slash is ignored;
# - when several templates match, the most specific wins: at the first segment where two templates
#   differ, a literal beats a parameter.
# Templates are pre-split at build time into data.catalog.route_index (see src/catalog/load-catalog.ts),
# because a wasm evaluation keeps nothing from the previous one: for each path length, the parameter
# shapes most specific first, each with its literal positions and its routes keyed by those literals.
# The policy looks keys up and never iterates over the routes.
package portier.routes

import data.catalog.route_index

# The matched route as the decision document shows it: product, api, template and parameters.
match := {
	"product": _route.product,
	"api": _route.api,
	"template": _route.template,
	"parameters": {name: _segments[j] | some [j, name] in route_index.patterns[_found[0]].parameters},
}

# The roles the matched route allows (a list of role ids), or "all_synced".
allowed := _route.allowed

_route := data.catalog.routes[_found[0]]

# The routes whose literals the request has, most specific shape first.
_found := [i |
	some shape in route_index.shapes[count(_segments)]
	i := shape.routes[concat("/", [lower(_segments[j]) | some j in shape.literals])]
]

# Every segment is non-empty: a literal never is, and a parameter must not be.
_segments := segments if {
	segments := split(_path, "/")
	not "" in segments
}

# The path without its leading "/" and without one trailing "/".
_path := trim_suffix(substring(input.path, 1, -1), "/") if startswith(input.path, "/")
