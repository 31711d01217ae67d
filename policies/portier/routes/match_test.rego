package portier.routes_test

import data.portier.fixture
import data.portier.routes
import data.portier.todo_fixture_test as todo

# path -> the template that must win (null: no route).
match_cases := [
	# the most specific template wins: a literal beats a parameter at the first differing segment
	{"path": "/v2/ecoles/E1", "template": "/v2/ecoles/{idEcole}"},
	{"path": "/v2/ecoles/centres", "template": "/v2/ecoles/{idEcole}"},
	{"path": "/v2/ORG001/centres", "template": "/v2/{codeOrganisme}/centres"},
	{"path": "/v2/ecoles/écoles", "template": "/v2/ecoles/{idEcole}"},
	{"path": "/v2/ORG001/écoles", "template": "/v2/{codeOrganisme}/écoles"},
	{"path": "/v2/ORG001", "template": "/v2/{codeOrganisme}"},
	{"path": "/v2/roles", "template": "/v2/{codeOrganisme}"},
	{"path": "/v1/roles", "template": "/v1/roles"},
	{"path": "/v1/centres/C1", "template": "/v1/centres/{idCentre}"},
	{"path": "/organisations/O1", "template": "/organisations/{idOrganisation}"},
	{"path": "/v3/utilisateurs/moi", "template": "/v3/utilisateurs/moi"},
	{
		"path": "/v3/O1/accesModulePlateforme/M1",
		"template": "/v3/{idOrganisation}/accesModulePlateforme/{idModulePlateforme}",
	},
	{
		"path": "/v2/ORG001/ecoles/E1/grillesHoraires/G1/calendrierScolaire",
		"template": "/v2/{codeOrganisme}/ecoles/{idEcole}/grillesHoraires/{idGrilleHoraire}/calendrierScolaire",
	},
	# case-insensitive literals, accented literals folded too
	{"path": "/V1/ROLES", "template": "/v1/roles"},
	{"path": "/v2/ORG001/ÉCOLES", "template": "/v2/{codeOrganisme}/écoles"},
	{"path": "/v2/ORG001/BÂTIMENTS", "template": "/v2/{codeOrganisme}/bâtiments"},
	{
		"path": "/v2/ORG001/elevesAdultes/A1/PRÉSENCES",
		"template": "/v2/{codeOrganisme}/elevesAdultes/{idEleveAdulte}/présences",
	},
	# one trailing slash is ignored
	{"path": "/v1/roles/", "template": "/v1/roles"},
	{"path": "/v2/ORG001/elevesJeunes/", "template": "/v2/{codeOrganisme}/elevesJeunes"},
	# unknown routes
	{"path": "/v1/roles//", "template": null},
	{"path": "/v1//roles", "template": null},
	{"path": "/v2//centres", "template": null},
	{"path": "/v2/ORG001/ecoles", "template": null},
	{"path": "/v2/ORG001/presences", "template": null},
	{"path": "/v2/ORG001/elevesJeunes/J1/absences/extra", "template": null},
	{"path": "/v2", "template": null},
	{"path": "/", "template": null},
	{"path": "//", "template": null},
	{"path": "", "template": null},
	{"path": "v1/roles", "template": null},
	{"path": "/v4/utilisateurs/moi", "template": null},
]

test_each_path_matches_its_template[c.path] if {
	some c in match_cases
	_template_of(c.path) == c.template
}

# path -> the parameters of the match, with their case.
parameter_cases := [
	{
		"path": "/v2/Org001/ECOLES/E-7/grillesHoraires/g 1/calendrierScolaire",
		"parameters": {"codeOrganisme": "Org001", "idEcole": "E-7", "idGrilleHoraire": "g 1"},
	},
	{"path": "/v2/ORG001/elevesJeunes/J1/", "parameters": {"codeOrganisme": "ORG001", "idEleveJeune": "J1"}},
	{"path": "/v1/roles", "parameters": {}},
]

test_parameters_are_extracted_with_their_case[c.path] if {
	some c in parameter_cases
	routes.match.parameters == c.parameters with input as {"path": c.path} with data.catalog as fixture.catalog
}

# path -> what the match and the route's role list hold besides the template.
entry_cases := [
	{
		"path": "/v2/ORG001/elevesAdultes",
		"match": {"product": "Élève", "api": "Élève", "template": "/v2/{codeOrganisme}/elevesAdultes"},
		"allowed": ["enseignant_adulte"],
	},
	{
		"path": "/v1/roles",
		"match": {"product": "identity platform", "api": "Rôles", "template": "/v1/roles"},
		"allowed": "all_synced",
	},
]

test_match_carries_the_route_entry[c.path] if {
	some c in entry_cases
	object.remove(routes.match, ["parameters"]) == c.match with input as {"method": "GET", "path": c.path} with data.catalog as fixture.catalog
	routes.allowed == c.allowed with input as {"method": "GET", "path": c.path} with data.catalog as fixture.catalog
}

# Every template of the project's own data, with its parameters filled in, matches itself and no other template.
test_every_template_matches_itself[r.template] if {
	some r in data.catalog.routes
	_own_template_of(_sample_path(r.template)) == r.template
}

# A synthetic table where both templates match /a/b: "/a/{y}" (mask 01) beats "/{x}/b" (mask 10).
test_specificity_breaks_ties_by_first_differing_segment if {
	table := [
		{"product": "p", "api": "a", "template": "/{x}/b", "allowed": "all_synced"},
		{"product": "p", "api": "a", "template": "/a/{y}", "allowed": "all_synced"},
	]
	table_index := {
		"shapes": [[], [], [{"literals": [0], "routes": {"a": 1}}, {"literals": [1], "routes": {"b": 0}}]],
		"patterns": [{"parameters": [[0, "x"]]}, {"parameters": [[1, "y"]]}],
	}
	m := routes.match with input as {"path": "/a/b"} with data.catalog as fixture.catalog
		with data.catalog.routes as table
		with data.catalog.route_index as table_index
	m.template == "/a/{y}"
	m.parameters == {"y": "b"}
}

# The spec's routes each answer GET and HEAD (an entry without methods), and nothing else.
test_spec_routes_answer_get_and_head[r.template] if {
	some r in fixture.catalog.routes
	routes.methods == ["GET", "HEAD"] with input as {"method": "POST", "path": _sample_path(r.template)}
		with data.catalog as fixture.catalog
}

# The Todo fixture, one entry per method of a route: [method, path] -> [template, api, the entry's roles or
# null when no entry answers the method, the route's methods]
method_cases := [
	["GET", "/todos", "/todos", "Todos", ["viewer", "editor", "admin"], ["GET", "HEAD", "OPTIONS", "POST"]],
	["post", "/todos/", "/todos", "Todos", ["editor", "admin"], ["GET", "HEAD", "OPTIONS", "POST"]],
	["HEAD", "/todos", "/todos", "Todos", "all_synced", ["GET", "HEAD", "OPTIONS", "POST"]],
	["OPTIONS", "/TODOS", "/todos", "Todos", "all_synced", ["GET", "HEAD", "OPTIONS", "POST"]],
	["DELETE", "/todos", "/todos", "Todos", null, ["GET", "HEAD", "OPTIONS", "POST"]],
	["PUT", "/todos/t1", "/todos/{todoId}", "Todo", ["editor", "admin"], ["DELETE", "PUT"]],
	["DELETE", "/todos/t1", "/todos/{todoId}", "Todo", ["admin"], ["DELETE", "PUT"]],
	["GET", "/todos/t1", "/todos/{todoId}", "Todo", null, ["DELETE", "PUT"]],
	["HEAD", "/todos/t1", "/todos/{todoId}", "Todo", null, ["DELETE", "PUT"]],
	["HEAD", "/users/u1", "/users/{userId}", "Users", ["viewer", "editor", "admin"], ["GET", "HEAD"]],
	["OPTIONS", "/users/u1", "/users/{userId}", "Users", null, ["GET", "HEAD"]],
]

test_entry_of_the_method[[method, path]] if {
	some [method, path, template, api, allowed, methods] in method_cases
	r := _todo_route(method, path)
	[r.match.template, r.match.api, r.allowed, r.methods] == [template, api, allowed, methods]
	r.answers == allowed != null
}

# method -> [its upper-case form, its kind]
kind_cases := {
	"get": ["GET", "a read"], "HEAD": ["HEAD", "a read"], "OPTIONS": ["OPTIONS", "a read"],
	"post": ["POST", "a write"], "PUT": ["PUT", "a write"], "PATCH": ["PATCH", "a write"], "DELETE": ["DELETE", "a write"],
}

test_method_kind[method] if {
	some method, [upper_method, kind] in kind_cases
	[routes.method, routes.method_kind] == [upper_method, kind] with input as {"method": method, "path": "/v1/roles"}
		with data.catalog as fixture.catalog
}

test_method_problem_names_route_and_methods if {
	problem := routes.method_problem with input as {"method": "get", "path": "/todos/t1"} with data.catalog as todo.catalog
	problem == "method GET is not allowed on /todos/{todoId}: no entry of this route for GET (it answers DELETE, PUT)"
}

_todo_route(method, path) := r if {
	r := {"match": routes.match, "allowed": _allowed, "methods": routes.methods, "answers": _answers}
		with input as {"method": method, "path": path}
		with data.catalog as todo.catalog
}

default _allowed := null

_allowed := routes.allowed

default _answers := false

_answers if routes.route_answers_method

default _template_of(_) := null

_template_of(path) := template if {
	template := routes.match.template with input as {"path": path} with data.catalog as fixture.catalog
}

# The template a path matches in the project's own route table (whichever project the run loads).
_own_template_of(path) := template if {
	template := routes.match.template with input as {"path": path}
}

_sample_path(template) := concat("/", [s | some seg in split(template, "/"); s := _sample_segment(seg)])

_sample_segment(seg) := "X1" if startswith(seg, "{")

else := seg
