package resources

import (
	"slices"
	"testing"
)

func TestExpand(t *testing.T) {
	vals := map[string]string{"lang": "fr", "name": "Amélie", "q": "a b", "path": "x/y", "empty": ""}
	for _, tc := range []struct{ tmpl, want string }{
		{"demo://greeting/{lang}/{name}", "demo://greeting/fr/Am%C3%A9lie"},
		{"file:///{+path}", "file:///x/y"},
		{"s://h/search{?q,lang}", "s://h/search?q=a%20b&lang=fr"},
		{"s://h/x{?missing}", "s://h/x"},
		{"s://h{/lang,name}", "s://h/fr/Am%C3%A9lie"},
		{"s://h/x{?empty}", "s://h/x?empty="},
	} {
		if got := Expand(tc.tmpl, vals); got != tc.want {
			t.Errorf("Expand(%q) = %q, want %q", tc.tmpl, got, tc.want)
		}
	}
	if got, want := TemplateVars("a://{x}/{+y}{?z,x}{/w*}{v:3}"), []string{"x", "y", "z", "w", "v"}; !slices.Equal(got, want) {
		t.Errorf("TemplateVars = %v, want %v", got, want)
	}
}
