# A second project's catalog for the policy tests: the Todo API of test/fixtures/todo/data, with writes (one
# route entry per template and set of methods), as src/catalog builds its data document. The tests replace
# data.catalog with it (`with data.catalog as todo.catalog`). test/catalog/todo-fixture.test.ts checks that this
# is exactly what the loader builds from the fixture's files, so the two cannot drift apart.
package portier.todo_fixture_test

routes := [
	{"product": "Todo", "api": "Users", "template": "/users/{userId}", "allowed": ["viewer", "editor", "admin"]},
	{
		"product": "Todo", "api": "Todos", "template": "/todos", "methods": ["GET"],
		"allowed": ["viewer", "editor", "admin"],
	},
	{"product": "Todo", "api": "Todos", "template": "/todos", "methods": ["POST"], "allowed": ["editor", "admin"]},
	{"product": "Todo", "api": "Todo", "template": "/todos/{todoId}", "methods": ["PUT"], "allowed": ["editor", "admin"]},
	{"product": "Todo", "api": "Todo", "template": "/todos/{todoId}", "methods": ["DELETE"], "allowed": ["admin"]},
	{"product": "Todo", "api": "Todos", "template": "/todos", "methods": ["HEAD", "OPTIONS"], "allowed": "all_synced"},
]

_todos_methods := {"GET": 1, "POST": 2, "HEAD": 5, "OPTIONS": 5}

_todo_methods := {"PUT": 3, "DELETE": 4}

catalog := {
	"roles": [
		{"id": "viewer", "label": "Viewer", "aliases": []},
		{"id": "editor", "label": "Editor", "aliases": []},
		{"id": "admin", "label": "Admin", "aliases": []},
	],
	"routes": routes,
	"tenants": [],
	"route_index": {
		"shapes": [
			[],
			[{"literals": [0], "routes": {"todos": 1}, "mask": [false], "specificity": "0"}],
			[{"literals": [0], "routes": {"users": 0, "todos": 3}, "mask": [false, true], "specificity": "01"}],
		],
		"by_key": {"users/{}": 0, "todos": 1, "todos/{}": 3},
		"patterns": [
			{"parameters": [[1, "userId"]], "specificity": "01"},
			{"parameters": [], "specificity": "0"},
			{"parameters": [], "specificity": "0"},
			{"parameters": [[1, "todoId"]], "specificity": "01"},
			{"parameters": [[1, "todoId"]], "specificity": "01"},
			{"parameters": [], "specificity": "0"},
		],
		"methods": [
			{"GET": 0, "HEAD": 0},
			_todos_methods, _todos_methods,
			_todo_methods, _todo_methods,
			_todos_methods,
		],
	},
	"tenant_index": {"owners": {}, "spellings": {}, "listed": {}},
	"project": {
		"role_checked_flows": ["accessCode"],
		"user_token": {"claims": ["auth_time", "idp"], "scope": null},
		"tenant_binding": null,
		"role_list": {"name": "the Todo role table", "deprecated": false},
	},
}
