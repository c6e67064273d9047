// Package specschema holds the JSON Schema of every MCP revision, as the
// specification publishes it (see README.md), and checks a message against
// one of its definitions.
//
// It imports schema (the validator) and nothing else of mcpi.
package specschema

import (
	"embed"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/mcpi-dev/mcpi/internal/schema"
)

//go:embed *.json
var files embed.FS

// ResultOf names the definition of each method's result.
var ResultOf = map[string]string{
	"initialize":               "InitializeResult",
	"server/discover":          "DiscoverResult",
	"ping":                     "EmptyResult",
	"tools/list":               "ListToolsResult",
	"tools/call":               "CallToolResult",
	"resources/list":           "ListResourcesResult",
	"resources/templates/list": "ListResourceTemplatesResult",
	"resources/read":           "ReadResourceResult",
	"prompts/list":             "ListPromptsResult",
	"prompts/get":              "GetPromptResult",
	"completion/complete":      "CompleteResult",
}

var (
	mu       sync.Mutex
	docs     = map[string]map[string]any{}
	compiled = map[string]*schema.Schema{}
)

// Has reports whether revision rev has a definition named def.
func Has(rev, def string) bool {
	doc, err := load(rev)
	if err != nil {
		return false
	}
	_, ok := defs(doc)[def]
	return ok
}

// Validate checks the JSON text raw against definition def of revision
// rev. It returns the problems found (nil when it conforms), or an error
// when the revision or the definition does not exist.
func Validate(rev, def string, raw []byte) (schema.Problems, error) {
	s, err := definition(rev, def)
	if err != nil {
		return nil, err
	}
	return s.Validate(json.RawMessage(raw)), nil
}

func definition(rev, def string) (*schema.Schema, error) {
	mu.Lock()
	defer mu.Unlock()
	key := rev + "#" + def
	if s := compiled[key]; s != nil {
		return s, nil
	}
	doc, err := loadLocked(rev)
	if err != nil {
		return nil, err
	}
	d := defs(doc)
	if _, ok := d[def]; !ok {
		return nil, fmt.Errorf("revision %s defines no %s", rev, def)
	}
	defsKey := "$defs"
	if _, ok := doc["definitions"]; ok {
		defsKey = "definitions"
	}
	root := map[string]any{"$ref": "#/" + defsKey + "/" + def, defsKey: d}
	if v, ok := doc["$schema"]; ok {
		root["$schema"] = v
	}
	b, err := json.Marshal(root)
	if err != nil {
		return nil, err
	}
	s, err := schema.Compile(b)
	if err != nil {
		return nil, fmt.Errorf("the schema of %s does not compile: %v", rev, err)
	}
	compiled[key] = s
	return s, nil
}

func defs(doc map[string]any) map[string]any {
	if d, ok := doc["$defs"].(map[string]any); ok {
		return d
	}
	d, _ := doc["definitions"].(map[string]any)
	return d
}

func load(rev string) (map[string]any, error) {
	mu.Lock()
	defer mu.Unlock()
	return loadLocked(rev)
}

func loadLocked(rev string) (map[string]any, error) {
	if d := docs[rev]; d != nil {
		return d, nil
	}
	b, err := files.ReadFile(rev + ".json")
	if err != nil {
		return nil, fmt.Errorf("no schema for revision %q", rev)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	docs[rev] = doc
	return doc, nil
}
