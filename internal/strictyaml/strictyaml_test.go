package strictyaml_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/mcpi-dev/mcpi/internal/strictyaml"
)

type entry struct {
	URL  string `yaml:"url"`
	Keys []struct {
		Name string `yaml:"name"`
	} `yaml:"keys"`
}

type doc struct {
	Title   string           `yaml:"title"`
	Entries map[string]entry `yaml:"entries"`
	List    []entry          `yaml:"list"`
}

func TestDecode(t *testing.T) {
	var d doc
	root, err := strictyaml.Decode([]byte("title: t\nentries:\n  a: {url: u, keys: [{name: n}]}\nlist:\n  - url: v\n"), &d)
	if err != nil || d.Title != "t" || d.Entries["a"].URL != "u" || d.Entries["a"].Keys[0].Name != "n" || d.List[0].URL != "v" {
		t.Fatalf("%+v %v", d, err)
	}
	if strictyaml.Field(root, "title").Value != "t" || strictyaml.Field(root, "none") != nil {
		t.Error("Field")
	}
}

func TestDecodeRefuses(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"titel: t\n", `line 1: unknown key "titel" (want one of title, entries, list)`},
		{"title:\n", "line 1: title: has no value"},
		{"entries:\n  a:\n", "line 2: a: has no value"},
		{"entries:\n  a: {url: u, kyes: []}\n", `line 2: unknown key "kyes"`},
		{"entries:\n  a: {keys: [{name: n, nmae: m}]}\n", `unknown key "nmae"`},
		{"list:\n  - url: u\n  - uri: v\n", `line 3: unknown key "uri"`},
		{"x: &x {bad: 1}\nentries:\n  a: *x\n", `unknown key "x"`},
		{"entries:\n  a: &x {bad: 1}\n  b: *x\n", `line 2: unknown key "bad"`},
		{"[1, 2]\n", "line 1: want a mapping"},
	} {
		var d doc
		_, err := strictyaml.Decode([]byte(tc.in), &d)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.in, err, tc.want)
		}
	}
	var d doc
	if _, err := strictyaml.Decode(nil, &d); !errors.Is(err, strictyaml.ErrEmpty) {
		t.Errorf("empty: %v", err)
	}
}
