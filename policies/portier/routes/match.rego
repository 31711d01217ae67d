# Matches the request path against the route table of spec 4.3 (data.catalog.routes).
# The path arrives normalised by the engine (decoded once, NFC, no query); here:
# - literal segments compare case-insensitively (lower() folds Unicode: "ÉCOLES" = "écoles");
# - a {parameter} matches exactly one non-empty segment;
# - one trailing slash is ignored;
# - when several templates match, the most specific wins: at the first segment where two templates
#   differ, a literal beats a parameter.
package portier.routes

match := {
	"product": route.product,
	"api": route.api,
	"template": route.template,
	"parameters": parameters_of(template_segments(route.template)),
	"allowed": route.allowed,
} if {
	route := data.catalog.routes[best_candidate]
}

best_candidate := min({i | some i in candidates; specificity[i] == best_specificity})

best_specificity := min({key | some i in candidates; key := specificity[i]})

candidates contains i if {
	some i, route in data.catalog.routes
	segments := template_segments(route.template)
	count(segments) == count(request_segments)
	every j, segment in segments {
		segment_matches(segment, request_segments[j])
	}
}

# "0" for a literal, "1" for a parameter, segment by segment: the smallest key is the most specific.
specificity[i] := concat("", [kind |
	some segment in template_segments(data.catalog.routes[i].template)
	kind := segment_kind(segment)
]) if {
	some i in candidates
}

request_segments := split(substring(path_without_trailing_slash, 1, -1), "/") if startswith(input.path, "/")

path_without_trailing_slash := trim_suffix(input.path, "/") if {
	endswith(input.path, "/")
	input.path != "/"
} else := input.path

template_segments(template) := split(substring(template, 1, -1), "/")

is_parameter(segment) if {
	startswith(segment, "{")
	endswith(segment, "}")
}

segment_kind(segment) := "1" if is_parameter(segment)

else := "0"

segment_matches(segment, value) if {
	is_parameter(segment)
	value != ""
}

segment_matches(segment, value) if {
	not is_parameter(segment)
	lower(segment) == lower(value)
}

parameters_of(segments) := {name: request_segments[j] |
	some j, segment in segments
	is_parameter(segment)
	name := trim_suffix(trim_prefix(segment, "{"), "}")
}
