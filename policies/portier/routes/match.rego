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
# A template may have several entries, one per set of methods: the shapes key a template by its first entry,
# and route_index.methods[i] maps each method the template answers to the entry answering it (HEAD follows
# GET unless an entry names HEAD; src/catalog/route-methods.ts). An entry without methods answers GET.
package portier.routes

import data.catalog.route_index

# The matched route as the decision document shows it: product, api, template and parameters (product and api
# of the entry answering the method, or of the template's first entry when none does).
match := {
	"product": _shown.product,
	"api": _shown.api,
	"template": _shown.template,
	"parameters": {name: _segments[j] | some [j, name] in route_index.patterns[_found[0]].parameters},
}

# The roles the entry answering the request's method allows (a list of role ids), or "all_synced".
allowed := _entry.allowed

# The matched route has an entry for the request's method.
route_answers_method if _entry

# The methods the matched route answers, sorted.
methods := sort([method | some method, _ in _method_entries])

# The request's method, upper-case, and whether it is safe (a read) or a write.
method := upper(input.method)

method_kind := "a read" if method in {"GET", "HEAD", "OPTIONS"}

else := "a write"

# Why the matched route does not answer the request's method.
method_problem := concat("", [
	"method ", method, " is not allowed on ", match.template,
	": no entry of this route for ", method, " (it answers ", concat(", ", methods), ")",
])

_method_entries := route_index.methods[_found[0]]

_entry := data.catalog.routes[_method_entries[method]]

_shown := _entry if route_answers_method

else := data.catalog.routes[_found[0]]

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
