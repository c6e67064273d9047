package schema

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// suiteSkips are the JSON Schema Test Suite cases mcpi does not pass on
// purpose, as "dir/file.json" (the whole file) or "dir/file.json: group
// description" → reason.
var suiteSkips = map[string]string{
	"draft2020-12/refRemote.json": "remote references are never fetched",
	"draft7/refRemote.json":       "remote references are never fetched",

	"draft2020-12/defs.json: validate definition against metaschema":                               "needs the 2020-12 meta-schema, which is a remote reference",
	"draft7/definitions.json: validate definition against metaschema":                              "needs the draft-07 meta-schema, which is a remote reference",
	"draft2020-12/ref.json: remote ref, containing refs itself":                                    "needs the 2020-12 meta-schema, which is a remote reference",
	"draft7/ref.json: remote ref, containing refs itself":                                          "needs the draft-07 meta-schema, which is a remote reference",
	"draft2020-12/dynamicRef.json: strict-tree schema, guards against misspelled properties":       "refers to tree.json, a remote schema",
	"draft2020-12/dynamicRef.json: tests for implementation dynamic anchor and reference link":     "refers to extendible-dynamic-ref.json, a remote schema",
	"draft2020-12/dynamicRef.json: $ref and $dynamicAnchor are independent of order - $defs first": "refers to extendible-dynamic-ref.json, a remote schema",
	"draft2020-12/dynamicRef.json: $ref and $dynamicAnchor are independent of order - $ref first":  "refers to extendible-dynamic-ref.json, a remote schema",
	"draft2020-12/dynamicRef.json: $ref to $dynamicRef finds detached $dynamicAnchor":              "refers to detached-dynamicref.json, a remote schema",
}

type suiteGroup struct {
	Description string          `json:"description"`
	Schema      json.RawMessage `json:"schema"`
	Tests       []struct {
		Description string          `json:"description"`
		Data        json.RawMessage `json:"data"`
		Valid       bool            `json:"valid"`
	} `json:"tests"`
}

func TestSuite(t *testing.T) {
	files, err := filepath.Glob("testdata/suite/*/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no suite files: %v", err)
	}
	ran := 0
	for _, path := range files {
		name := strings.TrimPrefix(filepath.ToSlash(path), "testdata/suite/")
		if reason, ok := suiteSkips[name]; ok {
			t.Logf("skip %s: %s", name, reason)
			continue
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var groups []suiteGroup
		if err := json.Unmarshal(data, &groups); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		draft7 := strings.HasPrefix(name, "draft7/")
		for _, g := range groups {
			key := name + ": " + g.Description
			if reason, ok := suiteSkips[key]; ok {
				t.Logf("skip %s: %s", key, reason)
				continue
			}
			raw := g.Schema
			if draft7 {
				raw = withSchema(raw, "http://json-schema.org/draft-07/schema#")
			}
			s, err := Compile(raw)
			if err != nil {
				t.Errorf("%s: %v", key, err)
				continue
			}
			for _, tc := range g.Tests {
				ran++
				ps := s.Validate(tc.Data)
				if (ps == nil) != tc.Valid {
					t.Errorf("%s / %s: valid=%v, want %v (%v)", key, tc.Description, ps == nil, tc.Valid, ps)
				}
			}
		}
	}
	t.Logf("%d cases", ran)
}

// withSchema adds $schema to a draft-07 suite schema that lacks it (the
// draft-07 files leave it out), so it is not read as 2020-12.
func withSchema(raw json.RawMessage, uri string) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return raw // a boolean schema
	}
	if _, ok := m["$schema"]; ok {
		return raw
	}
	m["$schema"], _ = json.Marshal(uri)
	b, _ := json.Marshal(m)
	return b
}
