package specschema

import (
	"testing"
)

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		rev, def, raw string
		ok            bool
	}{
		{"2025-11-25", "ListToolsResult", `{"tools":[{"name":"a","inputSchema":{"type":"object"}}]}`, true},
		{"2025-11-25", "ListToolsResult", `{"tools":[{"inputSchema":{"type":"object"}}]}`, false},
		{"2024-11-05", "ListToolsResult", `{"tools":[{"name":"a","inputSchema":{"type":"object"}}]}`, true},
		{"2026-07-28", "ListToolsResult", `{"tools":[{"name":"a","inputSchema":{"type":"object"}}],"resultType":"complete","ttlMs":0,"cacheScope":"public"}`, true},
		{"2026-07-28", "ListToolsResult", `{"tools":[{"name":"a","inputSchema":{"type":"object"}}]}`, false},
		{"2025-11-25", "ReadResourceResult", `{"contents":[{"uri":"x","text":"t"}]}`, true},
		{"2025-11-25", "ReadResourceResult", `{"contents":[{"text":"t"}]}`, false},
	} {
		ps, err := Validate(tc.rev, tc.def, []byte(tc.raw))
		if err != nil {
			t.Fatalf("%s %s: %v", tc.rev, tc.def, err)
		}
		if (ps == nil) != tc.ok {
			t.Errorf("%s %s %s: problems %v, want ok=%v", tc.rev, tc.def, tc.raw, ps, tc.ok)
		}
	}
	if _, err := Validate("2025-11-25", "NoSuchResult", []byte(`{}`)); err == nil {
		t.Error("an unknown definition was accepted")
	}
	for _, rev := range []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"} {
		for method, def := range ResultOf {
			if !Has(rev, def) {
				continue
			}
			if _, err := definition(rev, def); err != nil {
				t.Errorf("%s %s (%s): %v", rev, def, method, err)
			}
		}
	}
}

func BenchmarkCompile(b *testing.B) {
	for b.Loop() {
		mu.Lock()
		clear(compiled)
		mu.Unlock()
		definition("2026-07-28", "ListToolsResult")
	}
}
