# Matches the request path against the route table of spec 4.3 (data.catalog.routes).
# The path arrives normalised by the engine (decoded once, NFC, no query); here:
# - literal segments compare case-insensitively (lower() folds Unicode: "ÉCOLES" = "écoles");
# - a {parameter} matches exactly one non-empty segment;
# - one trailing slash is ignored;
# - when several templates match, the most specific wins: at the first segment where two templates
#   differ, a literal beats a parameter.
# Templates are pre-split at build time into data.catalog.route_index (see src/catalog/load-catalog.ts),
# because a wasm evaluation keeps nothing from the previous one: for each path length, the distinct
# parameter shapes; for each shape, the request gives one key ("v2/{}/centres") looked up in by_key.
package portier.routes

index := data.catalog.route_index

match := {
	"product": route.product,
	"api": route.api,
	"template": route.template,
	"parameters": {name: request_segments[j] | some [j, name] in index.patterns[best_candidate].parameters},
	"allowed": route.allowed,
} if {
	route := data.catalog.routes[best_candidate]
}

best_candidate := min({i | some i in candidates; index.patterns[i].specificity == best_specificity})

best_specificity := min({index.patterns[i].specificity | some i in candidates})

candidates contains index.by_key[key] if {
	some shape in index.shapes[count(request_segments)]
	key := concat("/", [part | some j, is_parameter in shape.mask; part := key_part(is_parameter, lowered_segments[j])])
}

request_segments := split(substring(path_without_trailing_slash, 1, -1), "/") if startswith(input.path, "/")

lowered_segments := split(lower(substring(path_without_trailing_slash, 1, -1)), "/") if startswith(input.path, "/")

path_without_trailing_slash := trim_suffix(input.path, "/") if {
	endswith(input.path, "/")
	input.path != "/"
} else := input.path

# A parameter matches one non-empty segment; a literal position contributes the lower-cased segment.
key_part(true, "") := "{empty}"

key_part(true, segment) := "{}" if segment != ""

key_part(false, segment) := segment
